#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibpost.sh - the one entry point for building, testing and demonstrating
# ibpost on a fresh Debian 12 machine (run as root).
#
#   scripts/ibpost.sh test   on each kernel (6.1 and 6.12): lint, build a
#                            debug test kernel (cached), run every KUnit
#                            suite and the device add/remove scenarios in
#                            a QEMU guest with Soft-RoCE, the two-guest
#                            stage, then DKMS against Debian's headers and
#                            Debian's stock kernel booted with it; checks
#                            every kernel log and prints a per-kernel report
#   scripts/ibpost.sh demo   boot the guest, load ibpost and the demo ULP,
#                            print its report
#   scripts/ibpost.sh bench  per kernel series, build a non-debug kernel
#                            (cached), boot it once, run ibpost against raw
#                            verbs and userspace perftest; print the table
#   scripts/ibpost.sh smoke  the bench smoke stage of "test" only
#   scripts/ibpost.sh lint   checkpatch --strict, sparse, W=1, kernel-doc
#                            (the test command runs it first)
#   scripts/ibpost.sh deps   only install the Debian packages
#   scripts/ibpost.sh kernel only build (or reuse) the test kernels
#   scripts/ibpost.sh quick  the single guest of "test" only (suites and
#                            scenarios), for working on them
#   scripts/ibpost.sh stock  the DKMS and stock-kernel stage of "test" only
#
# Environment:
#   IBPOST_KERNELS    the kernel series to run on, "6.1 6.12" by default
#                     (CI runs both); IBPOST_KERNELS=6.12 for a quick
#                     local run on one. demo uses the first.
#   IBPOST_CACHE      cache directory for kernel source and builds
#                     (default /var/cache/ibpost, outside the repository)
#   IBPOST_VM_TIMEOUT seconds before a guest that has not powered off is
#                     killed and the run fails (default: per stage in
#                     "test", about 3x its usual time; 1800 elsewhere)
#   IBPOST_NO_APT=1   skip the package installation step
#   IBPOST_STOCK_FLAVOURS  the Debian kernel flavours the stock stage
#                     boots, "amd64 rt-amd64" (generic and PREEMPT_RT)
#   BOOT_APPEND       more kernel command line for the test, demo and
#                     bench guests (e.g. "rdma_rxe.dyndbg=+p")
#   IBPOST_BENCH_ROWS bench: only these sections, comma-separated (bw,
#                     post, lat, scale, mem, perftest, taskruns, profile)
#   IBPOST_BENCH_ICOUNT=1  bench: QEMU counts instructions (-icount
#                     shift=0,sleep=off, one vCPU): the guest's clock
#                     advances 1 ns per guest instruction, so every "ns"
#                     figure is instructions executed, not host time: the
#                     post rows count the post call's, the bandwidth rows
#                     the whole guest's per message, rxe's included, and
#                     on 6.1 the latency rows (6.12's polled ones do not
#                     finish on one vCPU; scaling needs two)
#   IBPOST_KUNIT_ARGS knobs for the KUnit suites, e.g. "fuzz_seed=0x1234"
#                     to replay a fuzz run (see kunit/main.c)
#   IBPOST_MODES      quick: the single-guest runs, "test test-siw" by default
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${IBPOST_CACHE:-/var/cache/ibpost}
VM_TIMEOUT=${IBPOST_VM_TIMEOUT:-1800}
KUNITCONFIG=$REPO/kunit/.kunitconfig
BENCHCONFIG=$REPO/scripts/bench.kunitconfig
KERNELS=${IBPOST_KERNELS:-6.1 6.12}
# Debian's kernel flavours the stock stage boots for each series: the
# generic one and the PREEMPT_RT one.
STOCK_FLAVOURS=${IBPOST_STOCK_FLAVOURS:-amd64 rt-amd64}
# Each kernel's stages write into $OUTROOT/<series>, the report into
# $REPORT.
OUTROOT=${IBPOST_OUT:-$REPO/out}
REPORT=$OUTROOT/report.txt
# The totals and skips a test run must show (lib.sh: expect_check).
EXPECTED=$REPO/kunit/expected.txt
QUICK=
# CI's limit for a whole run of "test", in seconds.
CI_BUDGET=5400

# How long a guest of a stage may run before it is killed and the run
# fails: about three times what the stage takes on the 2-core machine
# (Documentation/testing.rst), so one hung guest fails fast instead of
# eating CI's budget. IBPOST_VM_TIMEOUT overrides every stage's.
stage_timeout() {
	local t
	case $1 in
	single) t=1000 ;;	# 265 to 370 s
	xhost) t=300 ;;		# 51 to 87 s
	smoke) t=300 ;;		# 76 s
	stock) t=450 ;;		# the boot of 114 to 133 s with DKMS
	*) t=1800 ;;
	esac
	echo "${IBPOST_VM_TIMEOUT:-$t}"
}

# The report's last lines: how long the run took since $1 (date +%s)
# against CI's budget.
budget() {
	local used=$(( $(date +%s) - $1 ))
	echo "test run took $used s; CI budget $CI_BUDGET s ($((CI_BUDGET / 60)) min): $((CI_BUDGET - used)) s left ($(( (CI_BUDGET - used) / 60 )) min)"
}

# shellcheck source=scripts/lib.sh
. "$REPO/scripts/lib.sh"
# shellcheck source=scripts/stock.sh
. "$REPO/scripts/stock.sh"

PACKAGES="linux-source-6.1 linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
	  dwarves python3 qemu-system-x86 busybox-static iproute2 kmod cpio
	  xz-utils sparse rsync binutils patch"

# Install the Debian packages named (by default $PACKAGES) that are
# missing.
deps() {
	[ "${IBPOST_NO_APT:-0}" = 1 ] && return 0
	local missing="" p pkgs="${*:-$PACKAGES}"
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || die "run as root to install:$missing"
	log "installing:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
}

# The kernel source of series $1 (6.1, 6.12), unpacked once per
# linux-source package version; prints its directory. With $2 "fixed",
# the test kernel's source: the series' provider fixes
# (scripts/kernel-patches/<series>/*.patch) applied, in a directory of
# its own named by their hash.
src_dir() {
	local series=$1 ver dir tag="" p
	local pdir=$REPO/scripts/kernel-patches/$series
	ver=$(dpkg-query -W -f='${Version}' "linux-source-$series") ||
		die "linux-source-$series is not installed"
	if [ "${2:-}" = fixed ] && ls "$pdir"/*.patch > /dev/null 2>&1; then
		tag=-fixed-$(cat "$pdir"/*.patch | sha256sum | cut -c1-8)
	fi
	dir=$CACHE/src-$ver$tag
	if [ ! -e "$dir/.ibpost-unpacked" ]; then
		log "unpacking linux-source-$series $ver${tag:+ with its fixes}"
		rm -rf "$dir" && mkdir -p "$dir" || die "cannot make $dir"
		tar -C "$dir" --strip-components=1 \
			-xf "/usr/src/linux-source-$series.tar.xz" ||
			{ rm -rf "$dir"; die "unpacking linux-source-$series failed"; }
		if [ -n "$tag" ]; then
			for p in "$pdir"/*.patch; do
				patch -d "$dir" -p1 -s < "$p" ||
					{ rm -rf "$dir"; die "applying $p failed"; }
			done
		fi
		touch "$dir/.ibpost-unpacked"
	fi
	echo "$dir"
}

# Build (or reuse) a kernel of series $1 for a kunitconfig ($2, default
# the test kernel's); prints the build directory. The cache key covers
# the config fragment's options (not its comments), the source version
# with its fixes, and the kunit.py architecture fragment. The test kernel
# carries the series' provider fixes (src_dir); the bench kernel, which
# measures the provider users have, does not.
kernel() {
	local series=$1 cfg=${2:-$KUNITCONFIG} src key bdir start
	if [ "$cfg" = "$KUNITCONFIG" ]; then
		src=$(src_dir "$series" fixed)
	else
		src=$(src_dir "$series")
	fi
	key=$( (grep -v -e '^#' -e '^$' "$cfg"; echo "$src";
		cat "$src/tools/testing/kunit/qemu_configs/x86_64.py") |
		sha256sum | cut -c1-16)
	bdir=$CACHE/kernel-$key
	if [ -e "$bdir/.ibpost-built" ]; then
		log "reusing cached kernel $bdir"
		echo "$bdir"
		return 0
	fi
	log "building kernel into $bdir (cold build, takes a while)"
	start=$(date +%s)
	rm -rf "$bdir" && mkdir -p "$bdir"
	(cd "$src" && python3 tools/testing/kunit/kunit.py build \
		--arch=x86_64 --kunitconfig="$cfg" --build_dir="$bdir" \
		--jobs="$(nproc)") > "$CACHE/kernel-$key.log" 2>&1 ||
		{ tail -40 "$CACHE/kernel-$key.log" >&2; die "kernel build failed"; }
	make -C "$src" O="$bdir" ARCH=x86_64 -s \
		INSTALL_MOD_PATH="$bdir/modroot" modules_install \
		>> "$CACHE/kernel-$key.log" 2>&1 || die "modules_install failed"
	echo $(( $(date +%s) - start )) > "$bdir/.ibpost-build-seconds"
	touch "$bdir/.ibpost-built"
	log "kernel built in $(cat "$bdir/.ibpost-build-seconds") s"
	echo "$bdir"
}

# Build ibpost and its test modules against kernel tree $1 into $2/build
# (log in $2/build.log).
build_modules() {
	local kdir=$1 out=$2 b=$2/build
	mkdir -p "$b"
	rsync -a --delete --exclude=.git --exclude=out "$REPO/" "$b/"
	make -j"$(nproc)" -C "$b" KDIR="$kdir" W=1 modules > "$out/build.log" 2>&1 ||
		{ cat "$out/build.log" >&2; die "module build failed"; }
	make -j"$(nproc)" -C "$b" KDIR="$kdir" W=1 demo bench >> "$out/build.log" 2>&1 ||
		{ cat "$out/build.log" >&2; die "demo or bench build failed"; }
	if grep -E "warning:|error:" "$out/build.log" >&2; then
		die "the module build is not warning-free"
	fi
}

# Pack the guest's initramfs for kernel build $1 with the modules built in
# $2/build (with userspace verbs and perftest when $3 is "perftest"; $3
# "kunit" insists on the KUnit module); prints its path.
make_initramfs() {
	local bdir=$1 out=$2 root=$2/initramfs kver t
	rm -rf "$root"
	guest_userspace "$root" "$REPO/scripts/guest-init.sh" >&2
	kver=$(ls "$bdir/modroot/lib/modules")
	cp -a "$bdir/modroot/lib/modules/$kver" "$root/lib/modules/"
	cp "$out"/build/*.ko "$root/ibpost/"
	cp "$out"/build/drivers/demo/*.ko "$out"/build/drivers/bench/*.ko \
		"$root/ibpost/"
	if [ -e "$out/build/ibpost_kunit.ko" ]; then
		count_suites "$out/build/ibpost_kunit.ko" > "$root/ibpost/nsuites"
	fi
	if [ "${3:-}" = kunit ] && [ ! -s "$root/ibpost/nsuites" ]; then
		die "no KUnit module was built against $bdir"
	fi
	# The benchmark's guest side: the bench proper, or its smoke run.
	cp "$REPO/scripts/bench-guest.sh" "$root/ibpost/bench.sh"
	if [ "${3:-}" = perftest ]; then
		for t in ib_send_bw ib_write_bw ib_read_bw ib_write_lat \
			ib_send_lat; do
			copy_with_libs "/usr/bin/$t" "$root" >&2
		done
		# The rxe provider is dlopen()ed by libibverbs.
		mkdir -p "$root/etc/libibverbs.d"
		cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
		copy_with_libs "$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so)" \
			"$root" >&2
	fi
	echo "${IBPOST_KUNIT_ARGS:-}" > "$root/ibpost/kunit_args"
	pack_initramfs "$root" "$out/initramfs.cpio.gz"
	echo "$out/initramfs.cpio.gz"
}

# How many suites a KUnit module holds: its .kunit_test_suites section
# is an array of pointers.
count_suites() {
	local size
	size=$(objdump -h "$1" | awk '$2 == ".kunit_test_suites" { print $3 }')
	[ -n "$size" ] || die "no .kunit_test_suites section in $1"
	echo $(( 0x$size / 8 ))
}

# The kernel's own checkers, those of kernel source $1, against the
# kernel built in $2: checkpatch --strict, kernel-doc, sparse (C=2) and
# W=1 builds. Logs in $3. Any finding fails the run.
lint() {
	local src=$1 kdir=$2 out=$3 b=$3/lint files
	local exc=$REPO/scripts/checkpatch-exceptions f
	files=$(cd "$REPO" && ls drivers/*.c drivers/*.h drivers/*/*.c \
		drivers/*/*.h include/rdma/*.h kunit/*.c kunit/*.h 2>/dev/null |
		grep -v '\.mod\.c$' || true)
	log "lint ($(basename "$src")): checkpatch --strict (exceptions: scripts/checkpatch-exceptions)"
	# One checkpatch per file (its exceptions are per file), as many at
	# once as there are CPUs: a file's findings go to its own log, the
	# failures to a list.
	rm -rf "$out/checkpatch" && mkdir -p "$out/checkpatch"
	for f in $files; do
		echo "$f"
	done | xargs -P "$(nproc)" -I{} sh -c '
		f=$1 types=$(awk -v f="$1" "\$1 == f { print \$2 }" "$3")
		log=$4/$(echo "$1" | tr / _).log
		cd "$5" && "$2/scripts/checkpatch.pl" --no-tree --strict \
			--terse --show-types ${types:+--ignore "$types"} \
			-f "$f" > "$log" 2>&1 || echo "$f" >> "$4/failed"' \
		sh {} "$src" "$exc" "$out/checkpatch" "$REPO"
	cat "$out"/checkpatch/*.log > "$out/checkpatch.log"
	if [ -s "$out/checkpatch/failed" ]; then
		cat "$out/checkpatch.log" >&2
		die "checkpatch findings in $(tr '\n' ' ' < "$out/checkpatch/failed")"
	fi
	# A skip must go through ibpost_test_skip() (kunit/helpers.c): it
	# fails a case that failed a check before it and logs the reason
	# where 6.1's output has none.
	if grep -n 'kunit_skip(' "$REPO"/kunit/*.[ch] | grep -v '^[^:]*/helpers\.c:' >&2; then
		die "kunit_skip() outside kunit/helpers.c: use ibpost_test_skip()"
	fi
	reports_selftest "$REPO/scripts/report-samples.txt" ||
		die "the log check misses a kind of kernel report"
	log "lint ($(basename "$src")): kernel-doc"
	(cd "$REPO" && "$src/scripts/kernel-doc" -none -Werror \
		include/rdma/*.h drivers/*.h drivers/*.c drivers/bench/*.[ch] kunit/*.[ch]) 2>&1 |
		tee "$out/kernel-doc.log" >&2
	[ -s "$out/kernel-doc.log" ] && die "kernel-doc findings"
	log "lint ($(basename "$src")): sparse (C=2) and W=1"
	rm -rf "$b" && mkdir -p "$b"
	rsync -a --exclude=.git --exclude=out "$REPO/" "$b/"
	make -j"$(nproc)" -C "$b" KDIR="$kdir" C=2 W=1 modules demo bench \
		> "$out/sparse.log" 2>&1 ||
		{ cat "$out/sparse.log" >&2; die "sparse build failed"; }
	if grep -E "warning:|error:" "$out/sparse.log" >&2; then
		die "sparse or W=1 findings"
	fi
	log "lint ($(basename "$src")): clean"
}

# The reliability figures of console $1 (Documentation/reliability.rst);
# $2 is the kernel series, $3 "suites tests passed".
figures() {
	local console=$1 series=$2
	set -- $3
	# The kernel messages of console $1, without their timestamps.
	s() { sed 's/\r$//; s/^\[ *[0-9.]*\] //' "$1"; }
	echo "run:              $(date -u +%Y-%m-%d), Linux $series test kernel, 2 vCPUs, $1 suites, $3 of $2 cases passed"
	echo "chains fuzzed:    $(s "$console" | awk '/^ibpost_fuzz: [0-9]+ chains/{n+=$2} END{print n+0}')" \
		"(seed $(s "$console" | sed -n 's/^ibpost_fuzz: seed \([0-9a-fx]*\) half 1$/\1/p'))"
	echo "WRs concurrently: $(s "$console" | awk '/^ibpost_stress: /{n+=$2; l+=$NF} END{print n" posted by 4 threads + receiver, contexts lost " l}')"
	echo "removal cycles:   $(s "$console" | grep -c '^ibpost-removal: cycle .* posted')" \
		"($(s "$console" | awk '/^ibpost-removal: cycle/{p+=$6; r+=$8} END{print p" contexts posted, " p-r " lost"}'))"
	echo "faults injected:  $(s "$console" | grep -c 'fail_ibpost: refusing a WR')"
	echo "kernel reports:   $(grep -cE "$REPORTS" "$console")"
}

# The single guest: every KUnit suite and the device scenarios on rxe0
# (mode "test"), or all of them again on siw0 (mode "test-siw"), on the
# kernel built in $1 (source $2), initramfs $3, results in $4, series $5,
# mode $6. Appends its line to the report; fails when a suite is missing,
# a case does not pass (a skip included, but for an iWARP reason on
# siw0), or the log is not clean.
single_run() {
	local bdir=$1 src=$2 initrd=$3 out=$4 series=$5 mode=${6:-test}
	local console r fail=0 expected t base=$4/kunit iwarp= stage
	t=$(date +%s)
	console=$out/console-$mode.log
	stage="single guest"
	if [ "$mode" = test-siw ]; then
		base=$out/kunit-siw iwarp=iwarp stage="siw guest"
	fi
	boot_guest "$bdir/arch/x86/boot/bzImage" "$initrd" "$mode" "$console" \
		"$(stage_timeout single)" "${BOOT_APPEND:-}" || fail=1
	r=$(ktap_parse "$console" "$src" "$base" $iwarp) || fail=1
	set -- $r
	expected=$(cat "$out/initramfs/ibpost/nsuites" 2>/dev/null) || expected=
	[ -n "$expected" ] || die "no suite count in $out/initramfs/ibpost/nsuites"
	# The guest adds its device scenarios as a suite of its own.
	expected=$((expected + 1))
	if [ "$1" != "$expected" ]; then
		log "$1 suites ran, the modules hold $expected"
		fail=1
	fi
	if [ "$2" = 0 ] || [ "$2" != $(($3 + $4)) ]; then
		log "$3 of $2 cases passed, $4 skipped for iWARP"
		fail=1
	fi
	if [ -z "$QUICK" ]; then
		expect_check "$EXPECTED" "$series" "$mode" "$1" "$2" "$4" \
			"$base-skips.txt" || fail=1
	fi
	check_log "$console" || fail=1
	if [ "$mode" = test ]; then
		figures "$console" "$series" "$r" > "$out/reliability-figures.txt"
		cat "$out/reliability-figures.txt" >&2
	elif [ -s "$base-skips.txt" ]; then
		log "skipped on siw0 (case: reason):"
		cat "$base-skips.txt" >&2
	fi
	report "$REPORT" "$series" "$stage" "$1 of $expected suites, $3 of $2 cases passed${iwarp:+, $4 skipped (iWARP)}$(ktap_failed "$base")" $fail "$t"
	return $fail
}

# The two-host stage: guests A and B, each with one virtio-net NIC joined
# to the other's by a QEMU socket netdev on 127.0.0.1 only, and rxe0 on
# it. A serves (ibpost_xhost_server), B runs the ibpost_xhost KUnit suite
# against it through rdma_cm. Kernel build $1, source $2, initramfs $3,
# results in $4, series $5; $6 "siw" puts siw0 on the NIC instead of
# rxe0 (cases that cannot apply to iWARP are then skips with a reason).
xhost_run() {
	local bdir=$1 src=$2 initrd=$3 out=$4 series=$5 prov=${6:-} port
	local fail=0 pa pb g r summary="" t sfx="" iwarp="" stage="two guests"
	[ "$prov" = siw ] && sfx=-siw iwarp=iwarp stage="two guests siw"
	t=$(date +%s)
	port=$(( 40000 + $$ % 20000 + ${#sfx} ))
	# A point-to-point UDP socket netdev: each guest sends to the other's
	# port on 127.0.0.1 and listens on its own there, nothing else.
	log "two-host stage: guests A and B linked through 127.0.0.1:$port/$((port + 1)) (UDP)"
	# virtio-net uses MSI-X: keep the kernel from evaluating ACPI's _PRT
	# for its INTx, which under KASAN and TCG runs into the AML loop
	# timeout (30 s) with the CPU held, and RCU then warns.
	boot_guest "$bdir/arch/x86/boot/bzImage" "$initrd" "xhost-a$sfx" \
		"$out/console-xhost$sfx-a.log" "$(stage_timeout xhost)" "pci=noacpi" \
		-netdev "socket,id=link,udp=127.0.0.1:$((port + 1)),localaddr=127.0.0.1:$port" \
		-device virtio-net-pci,netdev=link,mac=52:54:00:77:00:01 &
	pa=$!
	boot_guest "$bdir/arch/x86/boot/bzImage" "$initrd" "xhost-b$sfx" \
		"$out/console-xhost$sfx-b.log" "$(stage_timeout xhost)" "pci=noacpi" \
		-netdev "socket,id=link,udp=127.0.0.1:$port,localaddr=127.0.0.1:$((port + 1))" \
		-device virtio-net-pci,netdev=link,mac=52:54:00:77:00:02 &
	pb=$!
	wait $pb || fail=1
	wait $pa || fail=1
	for g in a b; do
		log "kunit.py parse (guest $g):"
		r=$(ktap_parse "$out/console-xhost$sfx-$g.log" "$src" \
			"$out/kunit-xhost$sfx-$g" $iwarp) || fail=1
		set -- $r
		[ "$1" = 1 ] && [ "$2" -gt 0 ] && [ "$2" = $(($3 + $4)) ] ||
			{ log "guest $g: $1 suites, $3 of $2 cases passed"; fail=1; }
		expect_check "$EXPECTED" "$series" "xhost$sfx-$g" "$1" "$2" "$4" \
			"$out/kunit-xhost$sfx-$g-skips.txt" || fail=1
		summary="$summary${summary:+, }$g $3/$2${iwarp:+ ($4 skipped)}$(ktap_failed "$out/kunit-xhost$sfx-$g")"
		check_log "$out/console-xhost$sfx-$g.log" || fail=1
	done
	grep -q "ibpost_xhost_server" "$out/kunit-xhost$sfx-a-guest.txt" &&
		grep -q "ibpost_xhost " "$out/kunit-xhost$sfx-b-module.txt" ||
		{ log "a two-host suite did not run"; fail=1; }
	[ -s "$out/kunit-xhost$sfx-b-skips.txt" ] &&
		cat "$out/kunit-xhost$sfx-b-skips.txt" >&2
	report "$REPORT" "$series" "$stage" "cases passed: $summary" $fail "$t"
	return $fail
}

# The source tree and the debug test kernel of every series to run, built
# (or found in the cache) before any stage starts.
declare -A SRC BDIR
prepare_kernels() {
	local k t
	for k in $KERNELS; do
		t=$(date +%s)
		SRC[$k]=$(src_dir "$k")
		BDIR[$k]=$(kernel "$k")
		[ -f "$REPORT" ] || continue
		if [ $(( $(date +%s) - t )) -gt 60 ]; then
			report "$REPORT" "$k" "test kernel" "built $(basename "${BDIR[$k]}") (cold)" 0 "$t"
		else
			report "$REPORT" "$k" "test kernel" "cached $(basename "${BDIR[$k]}")" 0 "$t"
		fi
	done
}

cmd_test() {
	local start k out fail=0 t
	start=$(date +%s)
	: > "$REPORT"
	t=$(date +%s)
	deps
	report "$REPORT" all packages "Debian packages present or installed" 0 "$t"
	prepare_kernels
	for k in $KERNELS; do
		mkdir -p "$OUTROOT/$k"
		t=$(date +%s)
		lint "${SRC[$k]}" "${BDIR[$k]}" "$OUTROOT/$k"
		report "$REPORT" "$k" lint "checkpatch --strict, kernel-doc, sparse C=2, W=1 of Linux $k: clean" 0 "$t"
	done
	for k in $KERNELS; do
		out=$OUTROOT/$k
		log "==== Linux $k: debug test kernel $(basename "${BDIR[$k]}") ===="
		t=$(date +%s)
		build_modules "${BDIR[$k]}" "$out"
		make_initramfs "${BDIR[$k]}" "$out" kunit > /dev/null
		single_run "${BDIR[$k]}" "${SRC[$k]}" "$out/initramfs.cpio.gz" \
			"$out" "$k" || fail=1
		log "Linux $k: single guest took $(( $(date +%s) - t )) s"
		t=$(date +%s)
		single_run "${BDIR[$k]}" "${SRC[$k]}" "$out/initramfs.cpio.gz" \
			"$out" "$k" test-siw || fail=1
		log "Linux $k: siw guest took $(( $(date +%s) - t )) s"
		provider_table "$k" "$out/provider-table.txt" \
			"$out/console-test.log" "$out/console-test-siw.log"
		cat "$out/provider-table.txt" >&2
		t=$(date +%s)
		xhost_run "${BDIR[$k]}" "${SRC[$k]}" "$out/initramfs.cpio.gz" \
			"$out" "$k" || fail=1
		log "Linux $k: two guests took $(( $(date +%s) - t )) s"
		t=$(date +%s)
		xhost_run "${BDIR[$k]}" "${SRC[$k]}" "$out/initramfs.cpio.gz" \
			"$out" "$k" siw || fail=1
		log "Linux $k: two guests over siw took $(( $(date +%s) - t )) s"
		# The benchmark's smoke run on the newest kernel only: it
		# checks that the bench runs and reports, which the kernel
		# series does not change (both build it in the lint stage).
		[ "$k" = "${KERNELS##* }" ] || continue
		t=$(date +%s)
		bench_smoke "${BDIR[$k]}" "$out/initramfs.cpio.gz" "$out" "$k" ||
			fail=1
		log "Linux $k: bench smoke took $(( $(date +%s) - t )) s"
	done
	for k in $KERNELS; do
		for f in $STOCK_FLAVOURS; do
			t=$(date +%s)
			stock_stage "$k" "$REPO" "$CACHE" "$OUTROOT/$k" \
				"${SRC[$k]}" "$(stage_timeout stock)" "$REPORT" \
				"$f" || fail=1
			log "Linux $k: DKMS and stock $f kernel took $(( $(date +%s) - t )) s"
		done
	done
	budget "$start" >> "$REPORT"
	log "report ($REPORT):"
	cat "$REPORT" >&2
	[ $fail = 0 ] || die "the test run failed (consoles in $OUTROOT/<kernel>/)"
	log "PASS on $KERNELS, every kernel log clean"
}

# The single guest only (no lint, DKMS or two-host stage), for working on
# the suites; IBPOST_KUNIT_SUITES="race_test life_test" builds only those
# (the suite count then follows the module).
cmd_quick() {
	local k m out fail=0
	QUICK=1
	deps
	prepare_kernels
	: > "$REPORT"
	for k in $KERNELS; do
		out=$OUTROOT/$k
		mkdir -p "$out"
		build_modules "${BDIR[$k]}" "$out"
		make_initramfs "${BDIR[$k]}" "$out" kunit > /dev/null
		for m in ${IBPOST_MODES:-test test-siw}; do
			single_run "${BDIR[$k]}" "${SRC[$k]}" \
				"$out/initramfs.cpio.gz" "$out" "$k" "$m" ||
				fail=1
		done
	done
	cat "$REPORT" >&2
	[ $fail = 0 ] || die "the quick run failed (consoles in $OUTROOT/<kernel>/)"
	log "PASS (quick run)"
}

cmd_stock() {
	local k fail=0
	deps
	: > "$REPORT"
	for k in $KERNELS; do
		mkdir -p "$OUTROOT/$k"
		for f in $STOCK_FLAVOURS; do
			stock_stage "$k" "$REPO" "$CACHE" "$OUTROOT/$k" \
				"$(src_dir "$k")" "$(stage_timeout stock)" \
				"$REPORT" "$f" || fail=1
		done
	done
	cat "$REPORT" >&2
	[ $fail = 0 ] || die "the stock-kernel stage failed"
}

cmd_demo() {
	local k bdir out
	k=${KERNELS%% *}
	out=$OUTROOT/$k
	mkdir -p "$out"
	deps
	bdir=$(kernel "$k")
	build_modules "$bdir" "$out"
	make_initramfs "$bdir" "$out" > /dev/null
	boot_guest "$bdir/arch/x86/boot/bzImage" "$out/initramfs.cpio.gz" \
		demo "$out/console-demo.log" "$VM_TIMEOUT" "${BOOT_APPEND:-}" ||
		true
	sed -n '/ibpost_demo: ==== ibpost demo on/,/ibpost-guest: done/p' \
		"$out/console-demo.log" | grep -v "speed is unknown" |
		sed 's/\r$//; s/^\[ *[0-9.]*\] //' | tee "$OUTROOT/demo-report.txt"
	check_log "$out/console-demo.log" ||
		die "the demo failed (console: $out/console-demo.log)"
	grep -Eq "ibpost demo: ([1-9][0-9]*) of \1 checks passed" "$out/console-demo.log" ||
		die "the demo's checks did not all pass (console: $out/console-demo.log)"
	grep -q "ibpost-trace: WR followed from its post to its completion" \
		"$out/console-demo.log" ||
		die "no WR of the demo could be followed by its completion id in the trace events (console: $out/console-demo.log)"
	log "demo passed on Linux $k; report in $OUTROOT/demo-report.txt"
}

# The benchmark: for each kernel series, a non-debug kernel and one boot,
# ibpost against raw verbs and userspace perftest side by side; each
# series' table goes to $OUTROOT/<series>/bench-table.txt, all of them to
# $OUTROOT/bench-table.txt.
cmd_bench() {
	local k bdir out log start fail=0 icount= vcpus="2 vCPUs"
	start=$(date +%s)
	# Idle jumps the clock to the next timer (sleep=off): no host time
	# at all in the guest's clock. One vCPU: QEMU 7.2 with -icount never
	# brings up the second.
	if [ "${IBPOST_BENCH_ICOUNT:-0}" = 1 ]; then
		icount="-smp 1 -icount shift=0,sleep=off"
		vcpus="1 vCPU"
	fi
	deps
	deps perftest ibverbs-providers libibverbs1
	: > "$OUTROOT/bench-table.txt"
	for k in $KERNELS; do
		out=$OUTROOT/$k
		log=$out/console-bench.log
		mkdir -p "$out"
		bdir=$(kernel "$k" "$BENCHCONFIG")
		build_modules "$bdir" "$out"
		make_initramfs "$bdir" "$out" perftest > /dev/null
		boot_guest "$bdir/arch/x86/boot/bzImage" "$out/initramfs.cpio.gz" \
			bench "$log" "$VM_TIMEOUT" \
			"${BOOT_APPEND:-}${IBPOST_BENCH_ROWS:+ ibpost.bench_rows=$IBPOST_BENCH_ROWS}" \
			$icount || true
		{
			python3 "$REPO/scripts/bench-report.py" "$log"
			echo "machine: $(nproc) host CPUs ($(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -1)), QEMU TCG guest with $vcpus, 2 GiB"
			[ -z "$icount" ] ||
				echo "clock:   QEMU -icount shift=0: every ns figure above is guest instructions"
			echo "kernel:  Linux $k, $(basename "$bdir") (scripts/bench.kunitconfig), $(date -u +%Y-%m-%d)"
		} > "$out/bench-table.txt"
		cat "$out/bench-table.txt" | tee -a "$OUTROOT/bench-table.txt"
		echo >> "$OUTROOT/bench-table.txt"
		if ! check_log "$log" || ! grep -q "ibpost-bench: done" "$log"; then
			log "the benchmark on Linux $k failed or did not finish (console: $log)"
			fail=1
		fi
	done
	log "bench took $(( $(date +%s) - start )) s; tables in $OUTROOT/bench-table.txt"
	[ $fail = 0 ] || die "the benchmark failed"
}

# The benchmark's smoke run in the test run: one round of every mode with
# few iterations on the debug test kernel (kernel build $1, its
# initramfs $2, results in $3, series $4). It asserts that every mode
# runs, every context comes back and the table prints; no figure is
# judged.
bench_smoke() {
	local bdir=$1 initrd=$2 out=$3 series=$4 t fail=0 n="" log
	log=$out/console-bench-smoke.log
	t=$(date +%s)
	boot_guest "$bdir/arch/x86/boot/bzImage" "$initrd" bench-smoke "$log" \
		"$(stage_timeout smoke)" "${BOOT_APPEND:-}" || fail=1
	check_log "$log" || fail=1
	n=$(sed -n 's/.*ibpost-bench: smoke ok modes=\([0-9]*\).*/\1/p' "$log" | tail -1)
	if [ -z "$n" ]; then
		grep -a "ibpost-bench: .*fail" "$log" | head -5 >&2
		log "the bench smoke run did not report success (console: $log)"
		fail=1
	fi
	if ! python3 "$REPO/scripts/bench-report.py" "$log" > "$out/bench-smoke-table.txt" ||
		! grep -q "Throughput" "$out/bench-smoke-table.txt"; then
		log "the bench report did not print from the smoke run"
		fail=1
	fi
	report "$REPORT" "$series" "bench smoke" "${n:-0} bench commands ran, contexts back, table printed (no figures judged)" $fail "$t"
	return $fail
}

mkdir -p "$OUTROOT"
case "${1:-}" in
test) cmd_test ;;
quick) cmd_quick ;;
stock) cmd_stock ;;
lint)
	deps; prepare_kernels
	for k in $KERNELS; do
		mkdir -p "$OUTROOT/$k"
		lint "${SRC[$k]}" "${BDIR[$k]}" "$OUTROOT/$k"
	done ;;
demo) cmd_demo ;;
bench) cmd_bench ;;
xhost)	# only the two-host stage of "test", for working on it
	deps; prepare_kernels; : > "$REPORT"
	for k in $KERNELS; do
		mkdir -p "$OUTROOT/$k"
		build_modules "${BDIR[$k]}" "$OUTROOT/$k"
		make_initramfs "${BDIR[$k]}" "$OUTROOT/$k" > /dev/null
		for p in ${IBPOST_XHOST_PROVIDERS:-rxe siw}; do
			xhost_run "${BDIR[$k]}" "${SRC[$k]}" \
				"$OUTROOT/$k/initramfs.cpio.gz" "$OUTROOT/$k" \
				"$k" "${p#rxe}"
		done
	done ;;
smoke)	# only the bench smoke stage of "test"
	deps; prepare_kernels; : > "$REPORT"
	for k in $KERNELS; do
		mkdir -p "$OUTROOT/$k"
		build_modules "${BDIR[$k]}" "$OUTROOT/$k"
		make_initramfs "${BDIR[$k]}" "$OUTROOT/$k" > /dev/null
		bench_smoke "${BDIR[$k]}" "$OUTROOT/$k/initramfs.cpio.gz" \
			"$OUTROOT/$k" "$k" || fail=1
	done
	cat "$REPORT" >&2
	[ "${fail:-0}" = 0 ] || die "the bench smoke failed" ;;
deps) deps ;;
kernel) deps; prepare_kernels ;;
bench-kernel) deps; kernel "${KERNELS%% *}" "$BENCHCONFIG" ;;
*) echo "usage: $0 {test|quick|stock|demo|bench|smoke|lint|deps|kernel|bench-kernel|xhost}" >&2; exit 2 ;;
esac
