# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# bench.sh - the benchmark of scripts/ibpost.sh (sourced): the bench
# command, and the smoke run of the test command. The guest's side is
# scripts/bench-guest.sh.

# The benchmark: for each kernel series, a non-debug kernel and one boot,
# ibpost against raw verbs and userspace perftest side by side; each
# series' table goes to $OUTROOT/<series>/bench-table.txt, all of them to
# $OUTROOT/bench-table.txt.
cmd_bench() {
	local k bdir out log start fail=0 icount= vcpus="2 vCPUs" plugin= append
	local tree
	start=$(date +%s)
	# The tree the modules are built from, named before they are.
	tree=$(bench_tree)
	# The instruction profile counts under -icount too (pcprof_build).
	if [ "${IBPOST_BENCH_PCPROF:-0}" = 1 ]; then
		IBPOST_BENCH_ICOUNT=1
		pcprof_build
	fi
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
		append="${BOOT_APPEND:-}${IBPOST_BENCH_ROWS:+ ibpost.bench_rows=$IBPOST_BENCH_ROWS}"
		if [ "${IBPOST_BENCH_PCPROF:-0}" = 1 ]; then
			rm -f "$out"/pcprof.[0-9]*
			plugin="-plugin $OUTROOT/pcprof.so,out=$out/pcprof"
			append="$append nokaslr ibpost.bench_pcprof=1"
		fi
		boot_guest "$bdir/arch/x86/boot/bzImage" "$out/initramfs.cpio.gz" \
			bench "$log" "${IBPOST_VM_TIMEOUT:-3600}" "$append" $icount \
			$plugin || true
		{
			python3 "$REPO/scripts/bench-report.py" "$log"
			echo "machine: $(nproc) host CPUs ($(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -1)), QEMU TCG guest with $vcpus, 2 GiB"
			[ -z "$icount" ] ||
				echo "clock:   QEMU -icount shift=0: every ns figure above is guest instructions"
			echo "kernel:  Linux $k, $(basename "$bdir") (scripts/bench.kunitconfig), $(date -u +%Y-%m-%d)"
			echo "tree:    $tree"
		} > "$out/bench-table.txt"
		[ -z "$plugin" ] || pcprof_report "$bdir" "$out" >> "$out/bench-table.txt"
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

# The tree the figures are of: its commit, and whether it had local
# changes, files not committed included ("unknown" outside a git
# checkout).
bench_tree() {
	local rev
	rev=$(git -C "$REPO" rev-parse --short=12 HEAD 2>/dev/null) || {
		echo unknown
		return
	}
	if [ -z "$(git -C "$REPO" status --porcelain 2>/dev/null)" ]; then
		echo "$rev"
	else
		echo "$rev with local changes"
	fi
}

# The pcprof plugin (scripts/pcprof/pcprof.c), built into $OUTROOT.
pcprof_build() {
	cc -O2 -Wall -shared -fPIC -fvisibility=hidden \
		-o "$OUTROOT/pcprof.so" "$REPO/scripts/pcprof/pcprof.c" ||
		die "cannot build the pcprof plugin"
}

# The instruction profile of the bench boot of kernel build $1, results
# in $2 (scripts/pcprof/report.py): instructions per WR by module and by
# function of ibpost, and what ibpost adds to raw verbs.
pcprof_report() {
	local bdir=$1 out=$2
	echo
	echo "Instruction profile (QEMU pcprof plugin: every kernel instruction of each"
	echo "row's measured phase, per WR; one round, -icount, 1 vCPU):"
	python3 "$REPO/scripts/pcprof/report.py" "$out/console-bench.log" \
		"$out/pcprof" "$bdir/System.map" \
		ibpost="$out/build/ibpost.ko" \
		ibpost_bench="$out/build/drivers/bench/ibpost_bench.ko" \
		rdma_rxe="$bdir/drivers/infiniband/sw/rxe/rdma_rxe.ko" \
		ib_core="$bdir/drivers/infiniband/core/ib_core.ko" ||
		echo "(no profile: report.py failed)"
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
		"$(stage_timeout smoke)" "$TEST_CMDLINE ${BOOT_APPEND:-}" ||
		fail=1
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
