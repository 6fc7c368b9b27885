#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibpost.sh - the one entry point for building, testing and demonstrating
# ibpost on a fresh Debian 12 machine (run as root).
#
#   scripts/ibpost.sh test   build a debug test kernel (cached), ibpost and
#                            its KUnit module, boot a QEMU guest with
#                            Soft-RoCE, run every suite and the device
#                            add/remove scenarios, check the kernel log
#   scripts/ibpost.sh demo   boot the guest, load ibpost and the demo ULP,
#                            print its report
#   scripts/ibpost.sh bench  build a non-debug kernel (cached), boot it
#                            once, run ibpost against raw verbs and
#                            userspace perftest; print the table
#   scripts/ibpost.sh lint   checkpatch --strict, sparse, W=1, kernel-doc
#                            (the test command runs it first)
#   scripts/ibpost.sh deps   only install the Debian packages
#   scripts/ibpost.sh kernel only build (or reuse) the test kernel
#   scripts/ibpost.sh quick  the single guest of "test" only (suites and
#                            scenarios), for working on them
#
# Environment:
#   IBPOST_CACHE      cache directory for kernel source and builds
#                     (default /var/cache/ibpost, outside the repository)
#   IBPOST_VM_TIMEOUT seconds before a guest that has not powered off is
#                     killed and the run fails (default 1800)
#   IBPOST_NO_APT=1   skip the package installation step
#   IBPOST_KUNIT_ARGS knobs for the KUnit suites, e.g. "fuzz_seed=0x1234"
#                     to replay a fuzz run (see kunit/main.c)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${IBPOST_CACHE:-/var/cache/ibpost}
VM_TIMEOUT=${IBPOST_VM_TIMEOUT:-1800}
KUNITCONFIG=$REPO/kunit/.kunitconfig
BENCHCONFIG=$REPO/scripts/bench.kunitconfig
OUT=${IBPOST_OUT:-$REPO/out}

log() { printf '[ibpost %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

PACKAGES="linux-source-6.1 build-essential bc bison flex libelf-dev libssl-dev
	  dwarves python3 qemu-system-x86 busybox-static iproute2 kmod cpio
	  xz-utils sparse rsync binutils"

deps() {
	[ "${IBPOST_NO_APT:-0}" = 1 ] && return 0
	local missing=""
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || die "run as root to install:$missing"
	log "installing:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
}

# The kernel source, unpacked once per linux-source package version.
src_dir() {
	local ver
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	local dir=$CACHE/src-$ver
	if [ ! -e "$dir/.ibpost-unpacked" ]; then
		log "unpacking linux-source-6.1 $ver"
		rm -rf "$dir" && mkdir -p "$dir"
		tar -C "$dir" --strip-components=1 -xf /usr/src/linux-source-6.1.tar.xz
		touch "$dir/.ibpost-unpacked"
	fi
	echo "$dir"
}

# Build (or reuse) a kernel for a kunitconfig; prints the build directory.
# The cache key covers the config fragment, the source version and the
# kunit.py architecture fragment.
kernel() {
	local cfg=${1:-$KUNITCONFIG} src key bdir start
	src=$(src_dir)
	key=$( (cat "$cfg"; echo "$src";
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

# Build ibpost and its test modules against kernel tree $1 into $OUT/build.
build_modules() {
	local kdir=$1 b=$OUT/build
	mkdir -p "$b"
	rsync -a --delete --exclude=.git --exclude=out "$REPO/" "$b/"
	make -C "$b" KDIR="$kdir" W=1 modules > "$OUT/build.log" 2>&1 ||
		{ cat "$OUT/build.log" >&2; die "module build failed"; }
	make -C "$b" KDIR="$kdir" W=1 demo bench >> "$OUT/build.log" 2>&1 ||
		{ cat "$OUT/build.log" >&2; die "demo or bench build failed"; }
	if grep -E "warning:|error:" "$OUT/build.log" >&2; then
		die "the module build is not warning-free"
	fi
}

# Copy an executable and the shared libraries it links into $2.
copy_with_libs() {
	local bin=$1 root=$2 lib
	mkdir -p "$root$(dirname "$bin")"
	cp -L "$bin" "$root$bin"
	for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# Pack the guest's initramfs for kernel build $1 (with userspace verbs
# and perftest when $2 is "perftest"); prints its path.
make_initramfs() {
	local bdir=$1 root=$OUT/initramfs kver t
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,ibpost,lib/modules}
	cp /bin/busybox "$root/bin/busybox"
	ln -s busybox "$root/bin/sh"
	# iproute2's ip and rdma (busybox's ip cannot add dummy links).
	copy_with_libs "$(command -v rdma)" "$root" >&2
	copy_with_libs "$(command -v ip)" "$root" >&2
	kver=$(ls "$bdir/modroot/lib/modules")
	cp -a "$bdir/modroot/lib/modules/$kver" "$root/lib/modules/"
	cp "$OUT"/build/*.ko "$root/ibpost/"
	cp "$OUT"/build/drivers/demo/*.ko "$OUT"/build/drivers/bench/*.ko \
		"$root/ibpost/"
	if [ -e "$OUT/build/ibpost_kunit.ko" ]; then
		count_suites "$OUT/build/ibpost_kunit.ko" > "$root/ibpost/nsuites"
	fi
	if [ "${2:-}" = perftest ]; then
		for t in ib_send_bw ib_write_bw ib_read_bw ib_write_lat; do
			copy_with_libs "/usr/bin/$t" "$root" >&2
		done
		# The rxe provider is dlopen()ed by libibverbs.
		mkdir -p "$root/etc/libibverbs.d"
		cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
		copy_with_libs "$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so)" \
			"$root" >&2
		cp "$REPO/scripts/bench-guest.sh" "$root/ibpost/bench.sh"
	fi
	echo "${IBPOST_KUNIT_ARGS:-}" > "$root/ibpost/kunit_args"
	cp "$REPO/scripts/guest-init.sh" "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) \
		> "$OUT/initramfs.cpio.gz"
	echo "$OUT/initramfs.cpio.gz"
}

# How many suites a KUnit module holds: its .kunit_test_suites section
# is an array of pointers.
count_suites() {
	local size
	size=$(objdump -h "$1" | awk '$2 == ".kunit_test_suites" { print $3 }')
	[ -n "$size" ] || die "no .kunit_test_suites section in $1"
	echo $(( 0x$size / 8 ))
}

# Boot kernel build $1 with initramfs $2 in job mode $3; console to $4;
# further arguments go to QEMU (the two-guest link).
boot_guest() {
	local bdir=$1 initrd=$2 mode=$3 log=$4 rc=0
	shift 4
	log "booting the guest (mode $mode, TCG, no host NIC), console in $log"
	timeout --foreground -k 10 "$VM_TIMEOUT" \
		qemu-system-x86_64 -accel tcg -nodefaults -no-reboot \
		-nographic -serial stdio -nic none -bios qboot.rom \
		-m 2048 -smp 2 -kernel "$bdir/arch/x86/boot/bzImage" \
		-initrd "$initrd" "$@" \
		-append "console=ttyS0 printk.time=1 printk.devkmsg=on panic=-1 oops=panic kasan_multi_shot ibpost.mode=$mode ${BOOT_APPEND:-}" \
		< /dev/null > "$log" 2>&1 || rc=$?
	[ $rc = 124 ] && log "guest timed out after $VM_TIMEOUT s"
	return $rc
}

# Kernel reports that fail a run, wherever they appear in the log.
# RCU stalls, soft and hard lockups and RT throttling are reports too: a
# run that starves the CPU is not a clean run.
REPORTS='BUG:|WARNING:|Oops|KASAN|INFO: (task .* blocked|possible|lockdep|trying to register)|unreferenced object|kmemleak-report: |ODEBUG|Kernel panic|general protection fault|UBSAN|list_(add|del) corruption|circular locking|inconsistent lock state|RESTRACK|rcu: INFO|rcu_(preempt|sched|bh) (self-)?detected stall|detected stalls on CPUs|soft lockup|hard LOCKUP|RT throttling|watchdog: '

check_log() {
	local log=$1 fail=0
	if ! grep -q "ibpost-guest: done, powering off" "$log"; then
		log "the guest did not reach power-off"
		fail=1
	fi
	if grep -nE "$REPORTS" "$log" >&2; then
		log "the kernel log holds the reports above"
		fail=1
	fi
	return $fail
}

# The kernel's own checkers: checkpatch --strict, sparse (C=2) and W=1
# builds, kernel-doc. Any finding fails the run.
lint() {
	local src=$1 kdir=$2 b=$OUT/lint files
	local exc=$REPO/scripts/checkpatch-exceptions f types
	files=$(cd "$REPO" && ls drivers/*.c drivers/*.h drivers/*/*.c \
		drivers/*/*.h include/rdma/*.h kunit/*.c kunit/*.h 2>/dev/null |
		grep -v '\.mod\.c$' || true)
	log "lint: checkpatch --strict (exceptions: scripts/checkpatch-exceptions)"
	: > "$OUT/checkpatch.log"
	for f in $files; do
		types=$(awk -v f="$f" '$1 == f { print $2 }' "$exc")
		(cd "$REPO" && "$src/scripts/checkpatch.pl" --no-tree --strict \
			--terse --show-types ${types:+--ignore "$types"} -f "$f") \
			>> "$OUT/checkpatch.log" 2>&1 ||
			{ cat "$OUT/checkpatch.log" >&2; die "checkpatch findings in $f"; }
	done
	log "lint: kernel-doc"
	(cd "$REPO" && "$src/scripts/kernel-doc" -none -Werror \
		include/rdma/ibpost.h drivers/*.c drivers/bench/*.[ch]) 2>&1 |
		tee "$OUT/kernel-doc.log" >&2
	[ -s "$OUT/kernel-doc.log" ] && die "kernel-doc findings"
	log "lint: sparse (C=2) and W=1"
	rm -rf "$b" && mkdir -p "$b"
	rsync -a --exclude=.git --exclude=out "$REPO/" "$b/"
	make -C "$b" KDIR="$kdir" C=2 W=1 modules demo bench \
		> "$OUT/sparse.log" 2>&1 ||
		{ cat "$OUT/sparse.log" >&2; die "sparse build failed"; }
	if grep -E "warning:|error:" "$OUT/sparse.log" >&2; then
		die "sparse or W=1 findings"
	fi
	log "lint: clean"
}

# The reliability figures of a test run (Documentation/reliability.rst).
figures() {
	local log=$1 suites=$2 s
	s() { sed 's/\r$//; s/^\[ *[0-9.]*\] //' "$log"; }
	echo "run:              $(date -u +%Y-%m-%d), $suites suites, kunit.py: $(
		grep -o 'Ran [0-9]* tests: .*' "$OUT/kunit-summary.txt" 2>/dev/null)"
	echo "chains fuzzed:    $(s | awk '/^ibpost_fuzz: [0-9]+ chains/{n+=$2} END{print n+0}')" \
		"(seed $(s | sed -n 's/^ibpost_fuzz: seed \([0-9a-fx]*\) half 1$/\1/p'))"
	echo "WRs concurrently: $(s | awk '/^ibpost_stress: /{n+=$2; l+=$NF} END{print n" posted by 4 threads + receiver, contexts lost " l}')"
	echo "removal cycles:   $(s | grep -c '^ibpost-removal: cycle .* posted')" \
		"($(s | awk '/^ibpost-removal: cycle/{p+=$6; r+=$8} END{print p" contexts posted, " p-r " lost"}'))"
	echo "faults injected:  $(s | grep -c 'fault_inject: refusing a WR')"
	echo "kernel reports:   $(grep -cE "$REPORTS" "$log")"
}

# The two-host stage (issue 7): guests A and B, each with one virtio-net
# NIC joined to the other's by a QEMU socket netdev on 127.0.0.1 only, and
# rxe0 on it. A serves (ibpost_xhost_server), B runs the ibpost_xhost
# KUnit suite against it through rdma_cm. Both consoles are parsed.
xhost_run() {
	local bdir=$1 initrd=$2 port fail=0 pa pb a b g
	port=$(( 40000 + $$ % 20000 ))
	# A point-to-point UDP socket netdev: each guest sends to the other's
	# port on 127.0.0.1 and listens on its own there, nothing else.
	a=$OUT/console-xhost-a.log
	b=$OUT/console-xhost-b.log
	log "two-host stage: guests A and B linked through 127.0.0.1:$port/$((port + 1)) (UDP)"
	# virtio-net uses MSI-X: keep the kernel from evaluating ACPI's _PRT
	# for its INTx, which under KASAN and TCG runs into the AML loop
	# timeout (30 s) with the CPU held, and RCU then warns.
	local BOOT_APPEND="pci=noacpi"
	boot_guest "$bdir" "$initrd" xhost-a "$a" \
		-netdev "socket,id=link,udp=127.0.0.1:$((port + 1)),localaddr=127.0.0.1:$port" \
		-device virtio-net-pci,netdev=link,mac=52:54:00:77:00:01 &
	pa=$!
	boot_guest "$bdir" "$initrd" xhost-b "$b" \
		-netdev "socket,id=link,udp=127.0.0.1:$port,localaddr=127.0.0.1:$((port + 1))" \
		-device virtio-net-pci,netdev=link,mac=52:54:00:77:00:02 &
	pb=$!
	wait $pb || fail=1
	wait $pa || fail=1
	for g in a b; do
		log "kunit.py parse (guest $g):"
		python3 "$src/tools/testing/kunit/kunit.py" parse \
			--json="$OUT/kunit-xhost-$g.json" "$OUT/console-xhost-$g.log" |
			tee "$OUT/kunit-xhost-$g.txt" || fail=1
		grep -q "Ran [1-9][0-9]* tests" "$OUT/kunit-xhost-$g.txt" ||
			fail=1
		check_log "$OUT/console-xhost-$g.log" || fail=1
	done
	grep -q "ibpost_xhost_server" "$OUT/kunit-xhost-a.txt" &&
		grep -q "ibpost_xhost " "$OUT/kunit-xhost-b.txt" ||
		{ log "a two-host suite did not run"; fail=1; }
	return $fail
}

cmd_test() {
	local bdir src initrd log=$OUT/console-test.log fail=0 expected ran
	local start
	start=$(date +%s)
	deps
	bdir=$(kernel)
	src=$(src_dir)
	lint "$src" "$bdir"
	log "packaging: dkms build for Debian's linux-headers-amd64"
	"$REPO/scripts/dkms-check.sh" "$REPO" >&2 || die "dkms build failed"
	build_modules "$bdir"
	initrd=$(make_initramfs "$bdir")
	boot_guest "$bdir" "$initrd" test "$log" || fail=1

	log "kunit.py parse:"
	python3 "$src/tools/testing/kunit/kunit.py" parse \
		--json="$OUT/kunit.json" "$log" | tee "$OUT/kunit-summary.txt" ||
		fail=1
	expected=$(( $(cat "$OUT/initramfs/ibpost/nsuites") + 1 ))
	ran=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["sub_groups"]))' \
		"$OUT/kunit.json" 2>/dev/null || echo 0)
	if [ "$ran" != "$expected" ]; then
		log "$ran suites ran, the modules hold $expected"
		fail=1
	fi
	check_log "$log" || fail=1
	xhost_run "$bdir" "$initrd" || fail=1
	figures "$log" "$ran" > "$OUT/reliability-figures.txt"
	cat "$OUT/reliability-figures.txt" >&2
	log "test run took $(( $(date +%s) - start )) s"
	[ $fail = 0 ] || die "the test run failed (console: $log)"
	log "PASS: $ran suites, kernel log clean"
}

# The single guest only (no lint, DKMS or two-host stage), for working on
# the suites; IBPOST_KUNIT_SUITES="race_test life_test" builds only those
# (the suite count then follows the module).
cmd_quick() {
	local bdir src initrd log=$OUT/console-test.log fail=0
	deps
	bdir=$(kernel)
	src=$(src_dir)
	build_modules "$bdir"
	initrd=$(make_initramfs "$bdir")
	boot_guest "$bdir" "$initrd" test "$log" || fail=1
	python3 "$src/tools/testing/kunit/kunit.py" parse \
		--json="$OUT/kunit.json" "$log" | tee "$OUT/kunit-summary.txt" ||
		fail=1
	check_log "$log" || fail=1
	[ $fail = 0 ] || die "the quick run failed (console: $log)"
	log "PASS (quick run)"
}

cmd_demo() {
	local bdir initrd log=$OUT/console-demo.log
	deps
	bdir=$(kernel)
	build_modules "$bdir"
	initrd=$(make_initramfs "$bdir")
	boot_guest "$bdir" "$initrd" demo "$log" || true
	sed -n '/ibpost_demo: ==== ibpost demo on/,/ibpost-guest: done/p' "$log" |
		grep -v "speed is unknown" |
		sed 's/\r$//; s/^\[ *[0-9.]*\] //' | tee "$OUT/demo-report.txt"
	check_log "$log" || die "the demo failed (console: $log)"
	grep -Eq "ibpost demo: ([0-9]+) of \1 checks passed" "$log" ||
		die "the demo's checks did not all pass (console: $log)"
	log "demo passed; report in $OUT/demo-report.txt"
}

# The benchmark (issue 5): a non-debug kernel, one boot, ibpost against
# raw verbs and userspace perftest side by side; the table goes to
# $OUT/bench-table.txt.
cmd_bench() {
	local bdir initrd log=$OUT/console-bench.log start
	start=$(date +%s)
	deps
	PACKAGES="perftest ibverbs-providers libibverbs1" deps
	bdir=$(kernel "$BENCHCONFIG")
	build_modules "$bdir"
	initrd=$(make_initramfs "$bdir" perftest)
	boot_guest "$bdir" "$initrd" bench "$log" || true
	python3 "$REPO/scripts/bench-report.py" "$log" > "$OUT/bench-table.txt"
	{
		echo "machine: $(nproc) host CPUs ($(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -1)), QEMU TCG guest with 2 vCPUs, 2 GiB"
		echo "kernel:  $(basename "$bdir") (scripts/bench.kunitconfig), $(date -u +%Y-%m-%d)"
	} >> "$OUT/bench-table.txt"
	cat "$OUT/bench-table.txt"
	check_log "$log" || die "the benchmark boot failed (console: $log)"
	grep -q "ibpost-bench: done" "$log" ||
		die "the benchmark did not finish (console: $log)"
	log "bench took $(( $(date +%s) - start )) s; table in $OUT/bench-table.txt"
}

mkdir -p "$OUT"
case "${1:-}" in
test) cmd_test ;;
quick) cmd_quick ;;
lint) deps; lint "$(src_dir)" "$(kernel)" ;;
demo) cmd_demo ;;
bench) cmd_bench ;;
xhost)	# only the two-host stage of "test", for working on it
	deps; bdir=$(kernel); src=$(src_dir); build_modules "$bdir"
	xhost_run "$bdir" "$(make_initramfs "$bdir")" ;;
deps) deps ;;
kernel) deps; kernel ;;
bench-kernel) deps; kernel "$BENCHCONFIG" ;;
*) echo "usage: $0 {test|quick|demo|bench|lint|deps|kernel|bench-kernel|xhost}" >&2; exit 2 ;;
esac
