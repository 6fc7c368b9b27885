# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# stock.sh - the stock-kernel stage of scripts/ibpost.sh (sourced): ibpost
# the way users install it, on Debian's own kernels.
#
# For a kernel series (6.1, 6.12) and flavour (amd64, or rt-amd64: the
# PREEMPT_RT build, where spinlocks sleep and softirqs run in threads) it
# takes the Debian kernel release the archive's metapackage points at,
# downloads that release's unmodified
# linux-image and linux-headers packages (apt-get download) and unpacks
# them into the cache with dpkg -x, never onto the system. Then
#
#   1. scripts/dkms-check.sh builds ibpost through DKMS against those
#      headers and "dkms install"s it into a staging tree;
#   2. the test consumers (ibpost_holder, ibpost_traffic) are built
#      against the Module.symvers DKMS kept, as a user's own ULP would be;
#   3. QEMU boots the package's vmlinuz with its own modules (rdma_rxe,
#      ib_core, ...) plus the DKMS-installed ones in updates/dkms; the
#      guest runs depmod, loads ibpost and the demo by name (modprobe),
#      checks the demo's data, runs the device add/remove scenarios that
#      need no KUnit, and unloads everything.
#
# Needs common.sh's functions; every function here takes what it needs
# as arguments.

# The Debian kernel release (e.g. 6.12.117+deb12-amd64) of series $1,
# flavour $2 (amd64 or rt-amd64).
stock_kver() {
	local meta
	case $1 in
	6.1) meta=linux-image-$2 ;;
	*) meta=linux-image-$1-$2 ;;
	esac
	apt-cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([0-9].*-amd64\)$/\1/p' |
		head -n 1
}

# The packages of release $1 the stage unpacks: its image, its headers
# and what the headers need to build a module (common headers, kbuild).
stock_packages() {
	local kver=$1
	echo "linux-image-$kver linux-headers-$kver"
	apt-cache depends "linux-headers-$kver" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-\(headers\|kbuild\)-[^ <>]*\)$/\1/p'
}

# Download and unpack release $1's packages under cache $2, once; prints
# the root they are unpacked in.
stock_root() {
	local kver=$1 root=$2/stock-$1 p dl
	if [ ! -e "$root/.ibpost-unpacked" ]; then
		log "stock $kver: apt-get download and dpkg -x of $(stock_packages "$kver" | xargs)"
		rm -rf "$root" && mkdir -p "$root/debs" "$root/root"
		dl=$root/debs
		bg_net_begin
		# shellcheck disable=SC2046 # one word per package
		if ! (cd "$dl" && apt-get download -q $(stock_packages "$kver")) \
			> "$root/download.log" 2>&1; then
			bg_net_end
			cat "$root/download.log" >&2
			return 1
		fi
		bg_net_end
		for p in "$dl"/*.deb; do
			dpkg -x "$p" "$root/root" || return 1
		done
		# The headers' Makefile includes the common headers by their
		# absolute /usr/src path: point it into the unpacked tree.
		sed -i "s|/usr/src/|$root/root/usr/src/|" \
			"$root/root/usr/src/linux-headers-$kver/Makefile" ||
			return 1
		rm -rf "$dl"
		touch "$root/.ibpost-unpacked"
	fi
	echo "$root/root"
}

# The package's modules the guest loads (and those they depend on), from
# unpacked root $1 of release $2 into initramfs root $3, with the files
# depmod reads; the whole tree would not fit a guest's memory.
STOCK_MODULES="rdma_rxe rdma_cm dummy crc32_generic"
stock_modules() {
	local root=$1 kver=$2 ir=$3 m f list
	depmod -b "$root" "$kver" || return 1
	mkdir -p "$ir/lib/modules/$kver" || return 1
	cp "$root/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} \
		"$ir/lib/modules/$kver/" || return 1
	for m in $STOCK_MODULES; do
		list=$(modprobe -d "$root" -S "$kver" --show-depends "$m") ||
			{ log "stock $kver: no module $m"; return 1; }
		echo "$list"
	done | awk '$1 == "insmod" { print $2 }' | sort -u > "$ir/.modules" ||
		return 1
	while read -r f; do
		mkdir -p "$ir$(dirname "${f#"$root"}")" &&
			cp "$f" "$ir${f#"$root"}" || return 1
	done < "$ir/.modules"
	rm -f "$ir/.modules"
}

# Build the test consumers of repository $1 against the headers in $2 and
# ibpost's Module.symvers $3, into $4.
stock_consumers() {
	local repo=$1 ksrc=$2 symvers=$3 dir=$4
	rm -rf "$dir" && mkdir -p "$dir/lib" || return 1
	cp "$repo"/kunit/holder.c "$repo"/kunit/traffic.c "$dir/" &&
		cp "$repo"/kunit/lib/cm_connect.[ch] "$dir/lib/" || return 1
	cat > "$dir/Kbuild" <<-EOK
	ccflags-y += -I$repo/include
	obj-m := ibpost_holder.o ibpost_traffic.o ibpost_test_cm.o
	ibpost_holder-y := holder.o
	ibpost_traffic-y := traffic.o
	ibpost_test_cm-y := lib/cm_connect.o
	EOK
	make -C "$ksrc" M="$dir" KBUILD_EXTRA_SYMBOLS="$symvers" W=1 modules \
		> "$dir/build.log" 2>&1 || { cat "$dir/build.log" >&2; return 1; }
	if grep -E "warning:|error:" "$dir/build.log" >&2; then
		return 1
	fi
}

# Prepare the stage for series $1, flavour $5 (amd64 or rt-amd64):
# repository $2, cache $3, results in $4/<stage name>. Downloads the
# release's packages, builds ibpost through DKMS and the consumers
# against them, and packs the guest's initramfs. Writes the stage
# directory's "prepared" file, read by stock_stage: the release, the
# DKMS result and seconds, the preparation's result and seconds. The test
# command runs it in the background while the guests run
# (scripts/lib/background.sh); its output is in the stage's prepare.log.
stock_prepare() {
	local series=$1 repo=$2 cache=$3 out=$4 flavour=${5:-amd64}
	local kver root ksrc stage ir t dkms=1 dkms_s=0 prep=1 name=stock
	[ "$flavour" = amd64 ] || name=stock-${flavour%-amd64}
	stage=$out/$name
	rm -rf "$stage" && mkdir -p "$stage" || return 1
	exec 3>&2 2> "$stage/prepare.log"
	t=$(date +%s)
	kver=$(stock_kver "$series" "$flavour")
	if [ -z "$kver" ]; then
		bg_net_begin
		apt-get update -qq >&2
		bg_net_end
		kver=$(stock_kver "$series" "$flavour")
	fi
	if [ -n "$kver" ] && root=$(stock_root "$kver" "$cache"); then
		ksrc=$root/usr/src/linux-headers-$kver
		IBPOST_DKMS_KVER=$kver IBPOST_DKMS_KSRC=$ksrc \
			IBPOST_DKMS_STAGE=$stage/dkms \
			"$repo/scripts/dkms-check.sh" "$repo" >&2 && dkms=0
		dkms_s=$(( $(date +%s) - t ))
	fi
	t=$(date +%s)
	ir=$stage/initramfs
	if [ $dkms = 0 ] &&
	   stock_consumers "$repo" "$ksrc" "$stage/dkms/Module.symvers" \
		"$stage/consumers" &&
	   guest_userspace "$ir" "$repo/scripts/guest-init.sh" \
		"$repo/scripts/guest" &&
	   stock_modules "$root" "$kver" "$ir" &&
	   mkdir -p "$ir/lib/modules/$kver/updates" &&
	   cp -a "$stage/dkms/updates/dkms" "$ir/lib/modules/$kver/updates/" &&
	   cp "$stage"/consumers/*.ko "$ir/ibpost/" &&
	   pack_initramfs "$ir" "$stage/initramfs.cpio.gz"; then
		prep=0
	fi
	exec 2>&3 3>&-
	echo "${kver:--} $dkms $dkms_s $prep $(( $(date +%s) - t ))" \
		> "$stage/prepared"
	[ $prep = 0 ]
}

# The stage for series $1, flavour $8 (amd64 or rt-amd64): repository
# $2, cache $3, results in $4, the series' kernel source $5 (for
# kunit.py), guest timeout $6 s, report file $7 (a line per step). Uses
# what the background process's stock_prepare left in the stage
# directory, or prepares it now.
stock_stage() {
	local series=$1 repo=$2 cache=$3 out=$4 src=$5 timeout=$6 rep=$7
	local flavour=${8:-amd64} kver root stage r fail=0 t name=stock
	local dkms dkms_s prep prep_s how=
	t=$(date +%s)
	[ "$flavour" = amd64 ] || name=stock-${flavour%-amd64}
	stage=$out/$name
	if [ -n "$BG_DIR" ] && [ -e "$BG_DIR/stock-$series-$flavour" ] &&
	   [ -e "$stage/prepared" ]; then
		how=", in the background beside the guests: wall time, held periods included"
		prep_s=0
	else
		stock_prepare "$series" "$repo" "$cache" "$out" "$flavour" ||
			true
	fi
	read -r kver dkms dkms_s prep r < "$stage/prepared" || return 1
	# Failed in the background (a download, a build beside the guests):
	# once more here, alone: the background process is stopped first (it
	# would run its next item's apt-get beside this one's); the items it
	# leaves are prepared here in turn.
	if [ -n "$how" ] && { [ "$kver" = - ] || [ "$prep" != 0 ]; }; then
		log "Linux $series: the background preparation of the stock $flavour stage failed; preparing it again"
		bg_stop
		how=
		stock_prepare "$series" "$repo" "$cache" "$out" "$flavour" ||
			true
		read -r kver dkms dkms_s prep r < "$stage/prepared" || return 1
	fi
	[ -n "$how" ] || prep_s=$r
	log "==== Linux $series: Debian's stock kernel $kver, ibpost through DKMS ===="
	if [ "$kver" = - ]; then
		cat "$stage/prepare.log" >&2
		report "$rep" "$series" "$name kernel" "no Debian $flavour kernel release found for $series, or its packages could not be downloaded" 1 "$t"
		return 1
	fi
	[ "$dkms" = 0 ] || cat "$stage/prepare.log" >&2
	report "$rep" "$series" "dkms" "dkms build + install against linux-headers-$kver$how" "$dkms" $(( $(date +%s) - dkms_s ))
	[ "$dkms" = 0 ] || return 1
	if [ "$prep" != 0 ]; then
		cat "$stage/prepare.log" >&2
		report "$rep" "$series" "$name kernel" "the guest for $kver could not be prepared" 1 "$t"
		return 1
	fi
	t=$(date +%s)
	root=$cache/stock-$kver/root
	boot_guest "$root/boot/vmlinuz-$kver" "$stage/initramfs.cpio.gz" stock \
		"$out/console-$name.log" "$timeout" "" || fail=1
	# A stock kernel that died before it ran the guest's init, so before
	# ibpost was loaded (seen once: Debian's 6.12 trapped on a boot-time
	# text patch under TCG, an int3 in sched_clock_cpu), boots once more;
	# its first console is kept beside, and a second such death fails.
	if ! grep -q 'Run /init as init process' "$out/console-$name.log"; then
		mv "$out/console-$name.log" "$out/console-$name-boot1.log"
		log "Debian $kver died before its init ran (console-$name-boot1.log): booting it once more"
		fail=0
		boot_guest "$root/boot/vmlinuz-$kver" "$stage/initramfs.cpio.gz" \
			stock "$out/console-$name.log" "$timeout" "" || fail=1
	fi
	r=$(ktap_parse "$out/console-$name.log" "$src" "$out/kunit-$name") ||
		fail=1
	set -- $r
	[ "$1" = 1 ] && [ "$2" -gt 0 ] && [ "$2" = "$3" ] || fail=1
	ktap_why "$out/kunit-$name" "$out/console-$name.log"
	check_log "$out/console-$name.log" || fail=1
	report "$rep" "$series" "$name kernel" "Debian $kver: $3 of $2 checks passed (modprobe by name, demo, add/remove, modprobe -r)" $fail $(( t - prep_s ))
	return $fail
}
