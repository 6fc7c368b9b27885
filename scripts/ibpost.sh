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
#                     "test", about 3x its usual time; 3600 for a bench
#                     boot; 1800 elsewhere)
#   IBPOST_NO_APT=1   skip the package installation step
#   IBPOST_STOCK_FLAVOURS  the Debian kernel flavours the stock stage
#                     boots, "amd64 rt-amd64" (generic and PREEMPT_RT)
#   BOOT_APPEND       more kernel command line for the test, demo and
#                     bench guests (e.g. "rdma_rxe.dyndbg=+p")
#   IBPOST_BENCH_ROWS bench: only these sections, comma-separated (bw,
#                     post, var, poll, lat, scale, mem, destroy, siw,
#                     perftest, taskruns, profile)
#   IBPOST_BENCH_ICOUNT=1  bench: QEMU counts instructions (-icount
#                     shift=0,sleep=off, one vCPU): the guest's clock
#                     advances 1 ns per guest instruction, so every "ns"
#                     figure is instructions executed, not host time: the
#                     post rows count the post call's, the bandwidth rows
#                     the whole guest's per message, rxe's included, and
#                     on 6.1 the latency rows (6.12's polled ones do not
#                     finish on one vCPU; scaling needs two)
#   IBPOST_BENCH_PCPROF=1  bench: IBPOST_BENCH_ICOUNT=1 with QEMU's
#                     pcprof plugin (scripts/pcprof), one round of the post
#                     and var rows: every kernel instruction of each row's
#                     measured phase counted by address, reported per WR
#                     by module and by ibpost function, ibpost's part over
#                     raw verbs, and ibpost's own by stage (per call, WR,
#                     completion, reclaim), appended to the bench table
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
# The totals and skips a test run must show (scripts/lib/common.sh:
# expect_check).
EXPECTED=$REPO/kunit/expected.txt
QUICK=
# CI's limit for a whole run of "test", in seconds.
CI_BUDGET=5400

# The report's last lines: how long the run took since $1 (date +%s)
# against CI's budget.
budget() {
	local used=$(( $(date +%s) - $1 ))
	echo "test run took $used s; CI budget $CI_BUDGET s ($((CI_BUDGET / 60)) min): $((CI_BUDGET - used)) s left ($(( (CI_BUDGET - used) / 60 )) min)"
}

# The stages' functions, a file each under scripts/lib/, sourced once
# the globals above are set (they read them when called).
# shellcheck source=scripts/lib/common.sh
. "$REPO/scripts/lib/common.sh"
# shellcheck source=scripts/lib/stock.sh
. "$REPO/scripts/lib/stock.sh"
# shellcheck source=scripts/lib/packages.sh
. "$REPO/scripts/lib/packages.sh"
# shellcheck source=scripts/lib/kernel.sh
. "$REPO/scripts/lib/kernel.sh"
# shellcheck source=scripts/lib/lint.sh
. "$REPO/scripts/lib/lint.sh"
# shellcheck source=scripts/lib/guests.sh
. "$REPO/scripts/lib/guests.sh"
# shellcheck source=scripts/lib/bench.sh
. "$REPO/scripts/lib/bench.sh"
# shellcheck source=scripts/lib/background.sh
. "$REPO/scripts/lib/background.sh"

cmd_test() {
	local start k out fail=0 t r first=${KERNELS%% *} rest=
	start=$(date +%s)
	report_reset
	t=$(date +%s)
	deps
	report "$REPORT" all packages "Debian packages present or installed" 0 "$t"
	# The first series' kernel now; the others' (when not cached) and the
	# stock stages' preparation in the background while the first
	# guests run (scripts/lib/background.sh).
	for k in $KERNELS; do
		SRC[$k]=$(src_dir "$k")
		[ "$k" = "$first" ] || rest="$rest $k"
	done
	t=$(date +%s)
	BDIR[$first]=$(kernel "$first")
	report_kernel "$first" "$t" $(( $(date +%s) - t ))
	t=$(date +%s)
	lint_sources "${SRC[${KERNELS##* }]}" "$OUTROOT/${KERNELS##* }"
	report "$REPORT" all lint "checkpatch --strict and kernel-doc (Linux ${KERNELS##* }'s scripts): clean" 0 "$t"
	for k in $KERNELS; do
		out=$OUTROOT/$k
		mkdir -p "$out"
		if [ -z "${BDIR[$k]:-}" ]; then
			t=$(date +%s)
			r=$(bg_wait "kernel-$k") || die "the Linux $k test kernel could not be built"
			BDIR[$k]=${r% *}
			report_kernel "$k" "$t" "${r#* }" background
		fi
		log "==== Linux $k: debug test kernel $(basename "${BDIR[$k]}") ===="
		t=$(date +%s)
		bg_pause
		lint_build "${SRC[$k]}" "${BDIR[$k]}" "$out"
		bg_resume
		report "$REPORT" "$k" sparse "sparse C=2 and W=1 against Linux $k: clean" 0 "$t"
		# Once the CPU-bound lint is over: the guests leave CPU time.
		# shellcheck disable=SC2086 # one word per series
		[ -n "$BG_DIR" ] || bg_start $rest
		t=$(date +%s)
		# The modules of lint_build's build of this kernel, in $out/build.
		make_initramfs "${BDIR[$k]}" "$out" kunit > /dev/null
		bg_hold
		single_run "${BDIR[$k]}" "${SRC[$k]}" "$out/initramfs.cpio.gz" \
			"$out" "$k" || fail=1
		log "Linux $k: single guest took $(( $(date +%s) - t )) s"
		t=$(date +%s)
		# Past the kernels meanwhile: held for this one too.
		bg_hold
		single_run "${BDIR[$k]}" "${SRC[$k]}" "$out/initramfs.cpio.gz" \
			"$out" "$k" test-siw || fail=1
		bg_resume
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
			# Prepared in the background; prepared here if that
			# process died first. The wait is reported.
			bg_wait "stock-$k-$f" > /dev/null || true
			[ $(( $(date +%s) - t )) -lt 2 ] ||
				report "$REPORT" "$k" "stock wait" "waited for the background preparation of the stock $f stage" 0 "$t"
			t=$(date +%s)
			stock_stage "$k" "$REPO" "$CACHE" "$OUTROOT/$k" \
				"${SRC[$k]}" "$(stage_timeout stock)" "$REPORT" \
				"$f" || fail=1
			log "Linux $k: DKMS and stock $f kernel took $(( $(date +%s) - t )) s"
		done
	done
	bg_stop
	budget "$start" >> "$REPORT"
	log "report ($REPORT):"
	cat "$REPORT" >&2
	print_why
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
	report_reset
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
	print_why
	[ $fail = 0 ] || die "the quick run failed (consoles in $OUTROOT/<kernel>/)"
	log "PASS (quick run)"
}

cmd_stock() {
	local k fail=0
	deps
	report_reset
	for k in $KERNELS; do
		mkdir -p "$OUTROOT/$k"
		for f in $STOCK_FLAVOURS; do
			stock_stage "$k" "$REPO" "$CACHE" "$OUTROOT/$k" \
				"$(src_dir "$k")" "$(stage_timeout stock)" \
				"$REPORT" "$f" || fail=1
		done
	done
	cat "$REPORT" >&2
	print_why
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
		demo "$out/console-demo.log" "$VM_TIMEOUT" \
		"$TEST_CMDLINE ${BOOT_APPEND:-}" ||
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

mkdir -p "$OUTROOT"
case "${1:-}" in
test) cmd_test ;;
quick) cmd_quick ;;
stock) cmd_stock ;;
lint)
	deps; prepare_kernels; : > "$OUTROOT/lint-report.txt"
	lint_all "$OUTROOT/lint-report.txt"
	cat "$OUTROOT/lint-report.txt" >&2 ;;
demo) cmd_demo ;;
bench) cmd_bench ;;
xhost)	# only the two-host stage of "test", for working on it
	deps; prepare_kernels; report_reset
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
	deps; prepare_kernels; report_reset
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
background) # the test command's own background process (never by hand)
	shift; cmd_background "$@" ;;
background-watch) # its watcher (never by hand)
	shift; bg_watch "$@" ;;
*) echo "usage: $0 {test|quick|stock|demo|bench|smoke|lint|deps|kernel|bench-kernel|xhost}" >&2; exit 2 ;;
esac
