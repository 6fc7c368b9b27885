#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-check.sh - build ibpost through DKMS for the installed Debian kernel
#
# Usage: scripts/dkms-check.sh [-v] [SOURCE_DIR]
#
#   -v          also print dkms's output and the modules' modinfo
#   SOURCE_DIR  the tree to package (default: the tree holding this script)
#
# As root on Debian 12. Installs dkms and linux-headers-amd64 with apt when
# they are missing (not with IBPOST_NO_APT=1), copies the source tree (its
# git-tracked and untracked, not ignored files; without git, everything but
# .git and out/) to a temporary directory, and runs
#
#   dkms add --sourcetree <tmp> <tmp>/ibpost-<version>
#   dkms build -m ibpost -v <version> -k <kernel version>
#
# for the newest installed /usr/src/linux-headers-*-amd64 (or the kernel
# version in IBPOST_DKMS_KVER), always with -k: the running kernel need
# not be a Debian one. IBPOST_DKMS_KSRC names a headers tree that is not
# installed (a linux-headers package unpacked with dpkg -x), passed to dkms
# as --kernelsourcedir. With IBPOST_DKMS_STAGE=<dir>, it also runs
#
#   dkms install -m ibpost -v <version> -k <kernel version> \
#        --installtree <tmp> --no-depmod
#
# and copies what dkms installed (updates/dkms/*.ko) and the kept
# Module.symvers into <dir>, for a guest booting that kernel to depmod
# and modprobe. It checks that ibpost.ko, ibpost_demo.ko and, when
# the tree has drivers/bench, ibpost_bench.ko were built, what modinfo says
# about them, that the post calls' own functions carry no stack protector
# canary, and that the Module.symvers kept for consumers lists ibpost's
# exports in namespace IBPOST. Then, whatever happened, it removes the
# package from DKMS (dkms remove --all) and deletes the copy.
#
# dkms works in a private tree (--dkmstree, --installtree, --no-depmod
# under the temporary directory): nothing is installed into /lib/modules
# or /var/lib/dkms, and a DKMS-installed ibpost of the host is left alone.
# dkms itself is installed with apt when missing, and signs modules with
# the host's /var/lib/dkms/mok.key (making one if there is none), as it
# does for any user.
#
# Prints "dkms: build ok for <kernel version> (<n> modules)", or fails with
# the reason and the tail of dkms's make.log.

set -euo pipefail

verbose=
if [[ ${1:-} == -v ]]; then
	verbose=1
	shift
fi
src=$(readlink -f "${1:-$(dirname "$0")/..}")
tmp=$(readlink -f "$(mktemp -d /tmp/ibpost-dkms.XXXXXX)")
readonly dkms_tree=$tmp/dkms install_tree=$tmp/installtree
added=

die() {
	echo "dkms-check: $*" >&2
	exit 1
}

# Print a captured log: all of it with -v, else only on failure.
show() {
	[[ -n $verbose ]] && cat "$1"
	return 0
}

cleanup() {
	local rc=$?

	if [[ -n $added ]]; then
		dkms remove -m ibpost -v "$version" --all \
			--dkmstree "$dkms_tree" --installtree "$install_tree" \
			--no-depmod >"$tmp/remove.log" 2>&1 ||
			{ echo "dkms-check: dkms remove failed:" >&2
			  cat "$tmp/remove.log" >&2; rc=1; }
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT

[[ $(id -u) == 0 ]] || die "must run as root (dkms and apt need it)"
[[ -f $src/dkms.conf && -f $src/VERSION ]] ||
	die "$src has no dkms.conf and VERSION"

newest_headers() {
	local d

	for d in /usr/src/linux-headers-*-amd64; do
		[[ -d $d ]] && echo "${d#/usr/src/linux-headers-}"
	done | sort -V | tail -n 1
}

if ! command -v dkms >/dev/null ||
   { [[ -z ${IBPOST_DKMS_KSRC:-} ]] && [[ -z $(newest_headers) ]]; }; then
	[[ ${IBPOST_NO_APT:-} == 1 ]] &&
		die "dkms or linux-headers-amd64 missing and IBPOST_NO_APT=1"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -q update
	pkgs=(dkms)
	# An unpacked headers tree (IBPOST_DKMS_KSRC) needs no headers package.
	[[ -n ${IBPOST_DKMS_KSRC:-} ]] || pkgs+=(linux-headers-amd64)
	apt-get -q install -y --no-install-recommends "${pkgs[@]}"
fi

kver=${IBPOST_DKMS_KVER:-$(newest_headers)}
[[ -n $kver ]] || die "no /usr/src/linux-headers-*-amd64 installed"
ksrc=${IBPOST_DKMS_KSRC:-/lib/modules/$kver/build}
[[ -d $ksrc ]] || die "no $ksrc: install linux-headers-$kver"
ksrc_opt=()
[[ -n ${IBPOST_DKMS_KSRC:-} ]] && ksrc_opt=(--kernelsourcedir "$ksrc")
arch=$(uname -m)

# dkms.conf is a bash fragment dkms sources; read it the same way.
read -r name version < <(
	set +u	# dkms sets more variables than these
	# shellcheck disable=SC2034 # dkms.conf's MAKE uses them
	kernel_source_dir=$ksrc kernelver=$kver
	# shellcheck source=/dev/null
	. "$src/dkms.conf"
	echo "$PACKAGE_NAME $PACKAGE_VERSION")
[[ $name == ibpost ]] || die "dkms.conf: PACKAGE_NAME is '$name', not ibpost"
[[ $version == "$(<"$src/VERSION")" ]] ||
	die "dkms.conf: PACKAGE_VERSION $version differs from VERSION" \
	    "$(<"$src/VERSION")"

mkdir -p "$dkms_tree" "$install_tree/$kver"
modules=(ibpost ibpost_demo)
[[ -d $src/drivers/bench ]] && modules+=(ibpost_bench)

pkg=$tmp/ibpost-$version
mkdir "$pkg"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$src" ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			# Tracked files deleted in the work tree are left out.
			[[ -e $src/$f || -L $src/$f ]] && printf '%s\0' "$f"
		done |
		tar -C "$src" --null -T - -cf - | tar -C "$pkg" -xf -
else
	tar -C "$src" --exclude=./.git --exclude=./out -cf - . |
		tar -C "$pkg" -xf -
fi

# --sourcetree: dkms links to the copy instead of copying it to /usr/src.
if ! dkms add --sourcetree "$tmp" --dkmstree "$dkms_tree" "$pkg" \
	>"$tmp/add.log" 2>&1; then
	cat "$tmp/add.log" >&2
	die "dkms add failed"
fi
added=1
show "$tmp/add.log"

if ! dkms build -m ibpost -v "$version" -k "$kver" "${ksrc_opt[@]}" \
	--dkmstree "$dkms_tree" >"$tmp/build.log" 2>&1; then
	cat "$tmp/build.log" >&2
	log=$dkms_tree/ibpost/$version/build/make.log
	if [[ -f $log ]]; then
		echo "---- tail of $log ----" >&2
		tail -n 40 "$log" >&2
	fi
	die "dkms build failed for $kver"
fi
show "$tmp/build.log"

# Field $1 of modinfo output $2, one line per occurrence.
field() {
	sed -n "s/^$1: *//p" <<<"$2"
}

moddir=$dkms_tree/ibpost/$version/$kver/$arch/module
n=0
for m in "${modules[@]}"; do
	ko=$(compgen -G "$moddir/$m.ko*" | head -n 1) ||
		die "dkms built no $m.ko in $moddir"
	info=$(modinfo "$ko") || die "modinfo $ko failed"
	[[ -n $verbose ]] && printf '%s\n' "---- modinfo $ko" "$info"

	[[ -n $(field description "$info") ]] || die "$m.ko has no description"
	[[ $(field license "$info") == GPL ]] || die "$m.ko: license is not GPL"
	[[ $(field vermagic "$info") == "$kver "* ]] ||
		die "$m.ko: vermagic '$(field vermagic "$info")' is not for $kver"
	if [[ $m == ibpost ]]; then
		[[ ,$(field depends "$info"), == *,ib_core,* ]] ||
			die "ibpost.ko does not depend on ib_core"
	else
		field import_ns "$info" | grep -qx IBPOST ||
			die "$m.ko does not import namespace IBPOST"
		[[ ,$(field depends "$info"), == *,ibpost,* ]] ||
			die "$m.ko does not depend on ibpost"
	fi
	# "parm: name:description (type)"; without a description, "name:type".
	if grep -E '^parm:' <<<"$info" |
		grep -Evq '^parm: +[^:]+:.+ \([^()]+\)$'; then
		die "$m.ko has parameters without MODULE_PARM_DESC"
	fi
	n=$((n + 1))
done

# Whether function $1 of the module $2 calls __stack_chk_fail: a
# relocation to it inside the function's bytes of .text.
calls_stack_chk_fail() {
	local f=$1 ko=$2 start size off
	read -r start size < <(nm -S "$ko" |
		awk -v f="$f" '$4 == f { print $1, $2; exit }')
	[[ -n ${size:-} ]] || die "ibpost.ko has no $f()"
	while read -r off _; do
		((16#$off >= 16#$start && 16#$off < 16#$start + 16#$size)) &&
			return 0
	done < <(objdump -r -j .text "$ko" | grep '__stack_chk_fail')
	return 1
}

# The post calls' own functions carry no stack protector canary: no local
# of theirs has its address taken (drivers/post.c, drivers/ring_post.h),
# and a change that brings one back costs every post call its load and
# check. Debian's kernels build with CONFIG_STACKPROTECTOR_STRONG, which
# gives every function with such a local a call of __stack_chk_fail.
# (The fast-registration copy, ibpost_post_send_frwr(), keeps one: it
# stages through the post's address.)
if grep -qx 'CONFIG_STACKPROTECTOR_STRONG=y' "$ksrc/.config"; then
	ko=$(compgen -G "$moddir/ibpost.ko*" | head -n 1)
	case $ko in
	*.xz) xz -dc "$ko" > "$tmp/ibpost.ko" && ko=$tmp/ibpost.ko ;;
	*.zst) zstd -dcq "$ko" > "$tmp/ibpost.ko" && ko=$tmp/ibpost.ko ;;
	*.gz) gzip -dc "$ko" > "$tmp/ibpost.ko" && ko=$tmp/ibpost.ko ;;
	esac
	for f in ibpost_post_send_list_one ibpost_post_send_list_chain \
		 ibpost_post_send_mrs ibpost_post_recv_mrs \
		 ibpost_post_srq_recv_mrs; do
		if calls_stack_chk_fail "$f" "$ko"; then
			die "$f() has a stack protector canary: a local of the" \
			    "post path has its address taken (drivers/post.c)"
		fi
	done
	# The copy that keeps one shows that the check sees a canary.
	calls_stack_chk_fail ibpost_post_send_frwr "$ko" ||
		die "no canary found in ibpost_post_send_frwr() either:" \
		    "the check cannot see one, or that copy lost its own"
fi

# POST_BUILD kept ibpost's Module.symvers for consumers; every export is
# EXPORT_SYMBOL_NS_GPL(..., IBPOST).
symvers=$dkms_tree/ibpost/$version/$kver/$arch/Module.symvers
[[ -f $symvers ]] || die "dkms kept no Module.symvers in ${symvers%/*}"
awk -F '\t' '$3 ~ /(^|\/)ibpost$/ { n++ }
	$3 ~ /(^|\/)ibpost$/ && ($4 != "EXPORT_SYMBOL_GPL" || $5 != "IBPOST") {
		print "dkms-check: " $2 " is exported as " $4 " in \"" $5 "\""
		bad = 1
	}
	END { exit (bad || !n) }' "$symvers" >&2 ||
	die "ibpost's exports are not all GPL in namespace IBPOST ($symvers)"

if [[ -n ${IBPOST_DKMS_STAGE:-} ]]; then
	if ! dkms install -m ibpost -v "$version" -k "$kver" "${ksrc_opt[@]}" \
		--dkmstree "$dkms_tree" --installtree "$install_tree" \
		--no-depmod >"$tmp/install.log" 2>&1; then
		cat "$tmp/install.log" >&2
		die "dkms install failed for $kver"
	fi
	show "$tmp/install.log"
	inst=$install_tree/$kver/updates/dkms
	for m in "${modules[@]}"; do
		compgen -G "$inst/$m.ko*" >/dev/null ||
			die "dkms install put no $m.ko into $inst"
	done
	mkdir -p "$IBPOST_DKMS_STAGE/updates"
	cp -a "$inst" "$IBPOST_DKMS_STAGE/updates/"
	cp "$symvers" "$IBPOST_DKMS_STAGE/Module.symvers"
	echo "dkms: installed into $IBPOST_DKMS_STAGE for $kver"
fi

echo "dkms: build ok for $kver ($n modules)"
