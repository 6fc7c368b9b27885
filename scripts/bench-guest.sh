#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark, run in the guest by /init for ibpost.mode=bench (see
# scripts/ibpost.sh bench). rxe0 exists, ibpost is loaded. Every figure is
# printed on the console as one "ibpost-bench: ..." line; the host turns
# them into the table (scripts/bench-report.py).
#
# In each round every bandwidth row runs raw, ibpost-chain and ibpost-seed
# back to back, so that machine noise hits the three alike, in that order
# in odd rounds and the reverse in even ones (ABBA: a drift within a row
# favours no mode); the report takes each figure's median over the rounds
# and shows its range and the rounds that failed. Userspace perftest runs
# on the same device with the same sizes, post lists and signal intervals
# (CQ moderation). The latency, scaling and memory rows run their modes the
# same way.
#
# BENCH_SMOKE=1 (set by /init from ibpost.bench_smoke=1): one round of
# every mode with very few iterations, perftest only where installed, and
# a last line "smoke ok modes=<n>" when every command succeeded, else
# "smoke FAILED: <what>". A check that everything runs, not figures.
#
# BENCH_ROWS (set by /init from ibpost.bench_rows=, comma-separated: bw,
# post, var, poll, lat, scale, mem, destroy, siw, perftest, taskruns,
# profile): only those sections, for a focused run while working on one
# figure; every section when unset.
#
# BENCH_PCPROF=1 (set by /init from ibpost.bench_pcprof=1; QEMU runs the
# pcprof plugin, scripts/pcprof): one round of the post and var rows, each
# measured phase marked for the plugin (ibpost_bench pcprof=1), and the
# load addresses of the modules' text printed for the report.
CMD=/sys/kernel/debug/ibpost_bench/cmd
SMOKE=${BENCH_SMOKE:-0}
PCPROF=${BENCH_PCPROF:-0}
ROUNDS=${ROUNDS:-6}
[ "$SMOKE" = 1 ] && ROUNDS=1
if [ "$PCPROF" = 1 ]; then
	ROUNDS=1 BENCH_ROWS=post,var
fi
PF="-d rxe0 -x 1 -F"
SP="[[:space:]]"
NCPU=$(nproc)
MODES=""	# the modes that ran and succeeded
FAILED=""	# the first five that did not, "; "-separated
NFAILED=0

say() { echo "ibpost-bench: $*"; }

want() {	# whether section $1 runs
	case ",${BENCH_ROWS:-$1}," in
	*",$1,"*) return 0 ;;
	*) return 1 ;;
	esac
}

failed() {	# record a failure for the smoke verdict
	NFAILED=$((NFAILED + 1))
	[ $NFAILED -le 5 ] && FAILED="${FAILED:+$FAILED; }$*"
}

ran() {		# record a mode that succeeded
	case " $MODES " in
	*" $1 "*) ;;
	*) MODES="$MODES $1" ;;
	esac
}

run() {		# one command to the bench module; prints its result
	if echo "$*" > $CMD 2>/dev/null; then
		say "$(cat $CMD)"
		ran "$(echo "$*" | sed -n 's/.*mode=\([^ ]*\).*/\1/p')"
	else
		say "$(cat $CMD) failed: $*"
		failed "$*"
	fi
}

if [ "$SMOKE" = 1 ]; then
	LAT_ITERS=100 LAT_WARMUP=10 POST_ITERS=256 MEM_COUNT=4
	CALIB_ITERS=100 SCALE_PAIRS="1 8" SHARED_PAIRS=2 ROT_MRS=16
	DESTROY_DEPTHS=64
else
	LAT_ITERS=5000 LAT_WARMUP=500 POST_ITERS=20000 MEM_COUNT=32
	CALIB_ITERS=2000 SCALE_PAIRS="1 8 64" SHARED_PAIRS="32 512"
	ROT_MRS="2 16 1000" DESTROY_DEPTHS="256 1024"
fi

iters() {	# WRs per row: about the same time for every size, and a
		# multiple of every post list (perftest insists)
	# (The smoke run is for a debug kernel, where KASAN makes a 64 KiB
	# WR take some 50 ms: a few MiB per row.)
	if [ "$SMOKE" = 1 ]; then
		case $1 in
		64) echo 256 ;;
		4096) echo 64 ;;
		*) echo 32 ;;
		esac
		return
	fi
	case $1 in
	64) echo 20000 ;;
	4096) echo 10240 ;;
	*) echo 2048 ;;
	esac
}

order() {	# the modes $@ in this round's order (round $r)
	if [ $((r % 2)) = 1 ]; then
		echo "$*"
		return
	fi
	o=""
	for m in "$@"; do
		o="$m $o"
	done
	echo "$o"
}

trio() {	# one bandwidth row ($@): raw and chain, and seed on one-WR rows
	case " $* " in
	*" chain=1 "*) set -- "$@" raw chain seed ;;
	*) set -- "$@" raw chain ;;
	esac
	row=""
	while [ $# -gt 0 ] && [ "${1#*=}" != "$1" ]; do
		row="$row $1"
		shift
	done
	for m in $(order "$@"); do
		run "mode=$m$row"
	done
}

bw_rows() {
	sizes="64 4096 65536" sigs="1 16"
	# Smoke: every mode, post list and size class once, not every row.
	[ "$SMOKE" = 1 ] && sizes="64 65536" sigs=16
	for op in send write read; do
		for size in $sizes; do
			n=$(iters $size)
			w=$((n / 10))
			for sig in $sigs; do
				for chain in 1 8 32; do
					trio op=$op size=$size chain=$chain signal=$sig iters=$n warmup=$w
				done
			done
		done
	done
}

# The post-call cost with bottom halves disabled around every post call
# (bh=1), so that rxe's tasklets run after the call in every mode, never
# inside one (an interrupt's exit within the call would run them).
# WRITE also signaled every WR and every 64th.
post_rows() {
	for spec in send:16 write:1 write:16 write:64 read:16; do
		for chain in 1 32; do
			trio op=${spec%:*} size=64 chain=$chain signal=${spec#*:} iters=$POST_ITERS warmup=$((POST_ITERS / 10)) bh=1
		done
	done
}

# Variants of the post rows' 64 B WRITEs: MR rotation, each WR taking its
# source from the next of 2, 16 or 1,000 buffers registered one by one
# (raw: mapped, used through the PD's local_dma_lkey; ibpost: an MR each,
# so that its post looks the SGE's MR up rather than finding it in the
# queue's hit); the data inline (IB_SEND_INLINE) in SENDs and WRITEs;
# and the source in 4 SGEs of one buffer (ibpost: the SGE loop of a WR
# with more than one; seed: the vector operations).
var_rows() {
	for chain in 1 32; do
		a="size=64 chain=$chain signal=16 iters=$POST_ITERS warmup=$((POST_ITERS / 10)) bh=1"
		for mrs in $ROT_MRS; do
			trio op=write $a mrs=$mrs
		done
		trio op=send $a inline=1
		trio op=write $a inline=1
		trio op=write $a sges=4
	done
}

# Polled throughput: 64 B WRITEs and SENDs, chains of 1 and 32, signal 16,
# completions busy-polled (IB_POLL_DIRECT CQs reaped by the poster after
# each post call and while it waits).
poll_rows() {
	for op in write send; do
		for chain in 1 32; do
			a="op=$op size=64 chain=$chain signal=16 iters=$POST_ITERS warmup=$((POST_ITERS / 10))"
			if [ $chain = 1 ]; then
				set -- raw-poll chain-poll seed-poll
			else
				set -- raw-poll chain-poll
			fi
			for m in $(order "$@"); do
				run "mode=$m $a"
			done
		done
	done
}

# Ping-pong, completions delivered by softirq, then busy-polled
# (IB_POLL_DIRECT CQs reaped in the spin loop).
lat_rows() {
	for op in write send; do
		for mode in $(order lat-raw lat-chain lat-seed) \
			    $(order lat-raw-poll lat-chain-poll lat-seed-poll); do
			run "mode=$mode op=$op size=64 iters=$LAT_ITERS warmup=$LAT_WARMUP"
		done
	done
}

# Aggregate WRITE bandwidth of 1, 8 and 64 pairs posting at once, one
# posting thread per CPU (a pair belongs to one thread, as a ULP's QP to
# one CPU), and of one and two threads on one QP; then of 64 and 1,024
# QPs (32 and 512 pairs) whose CQs are shared ones from ib_core's pool, as
# a ULP with a QP per CPU per target takes them. iters counts the WRs of
# all pairs together (for the shared rows at least 128 per pair); queues
# of 64 WRs keep the pairs' memory modest.
scale_rows() {
	t=$((NCPU > 8 ? 8 : NCPU))
	for size in 64 65536; do
		n=$(iters $size)
		for pairs in $SCALE_PAIRS; do
			if [ "$pairs" = 1 ]; then
				specs="1 2"
			else
				specs=$t
			fi
			for threads in $specs; do
				for chain in 1 8; do
					[ $size != 64 ] && [ $chain != 1 ] && continue
					a="op=write size=$size pairs=$pairs threads=$threads chain=$chain signal=16 depth=64 iters=$n warmup=$((n / 10))"
					for m in $(order scale-raw scale-chain); do
						run "mode=$m $a"
					done
				done
			done
		done
	done
	for pairs in $SHARED_PAIRS; do
		n=$(iters 64)
		[ $((pairs * 128)) -gt "$n" ] && n=$((pairs * 128))
		for chain in 1 8; do
			a="op=write size=64 pairs=$pairs threads=$t shared_cq=1 chain=$chain signal=16 depth=64 iters=$n warmup=$((n / 10))"
			for m in $(order scale-raw scale-chain); do
				run "mode=$m $a"
			done
		done
	done
}

# Kernel memory per QP (with its CQs) of depth 128 and 1024, and per
# registration of a 4 KiB buffer for local use and for remote writes.
mem_rows() {
	for depth in 128 1024; do
		a="obj=qp depth=$depth count=$MEM_COUNT"
		for m in $(order mem-raw mem-ibpost); do
			run "mode=$m $a"
		done
	done
	for op in send write; do
		a="obj=mr op=$op size=4096 count=$MEM_COUNT"
		for m in $(order mem-raw mem-ibpost); do
			run "mode=$m $a"
		done
	done
}

# The teardown of a pair whose receive queues are full (every receive
# granted posted, none consumed; nothing sent), every receive flushed back
# once: raw drains and destroys, ibpost destroys. Timed per teardown.
destroy_rows() {
	for depth in $DESTROY_DEPTHS; do
		for m in $(order destroy-raw destroy-ibpost); do
			run "mode=$m op=send size=64 depth=$depth"
		done
	done
}

# A second provider: Soft-iWARP (siw0 on a dummy netdev of its own, whose
# address its pairs connect to through rdma_cm, over lo), the bandwidth
# rows' SEND, WRITE and READ of 64 B and 64 KiB in chains of 1 and 32,
# signal 16. siw's post hands the WR to its TCP transmit path, far more
# work per WR than rxe's queueing, so ibpost's share of a message is
# smaller there. Set up once (siw_setup), before the rounds.
SIW_ADDR=10.97.0.1
siw_setup() {
	modprobe siw &&
		ip link add s0 type dummy &&
		ip link set s0 up &&
		ip addr add $SIW_ADDR/24 dev s0 &&
		rdma link add siw0 type siw netdev s0
}

siw_iters() {	# WRs per siw row: siw moves far fewer WRs a second
	if [ "$SMOKE" = 1 ]; then
		echo 32
		return
	fi
	case $1 in
	64) echo 5000 ;;
	*) echo 1024 ;;
	esac
}

siw_rows() {
	if [ "$SIW_UP" != 1 ]; then
		say "siw failed: no siw0 (modprobe siw, s0 or rdma link add)"
		failed "siw set-up"
		return
	fi
	for op in send write read; do
		for size in 64 65536; do
			n=$(siw_iters $size)
			for chain in 1 32; do
				trio dev=siw0 addr=$SIW_ADDR op=$op size=$size chain=$chain signal=16 iters=$n warmup=$((n / 10))
			done
		done
	done
}

# perftest: server and client on this guest, exchanging through loopback.
perftest_bw() {	# tool op size chain signal
	tool=$1 op=$2 size=$3 chain=$4 sig=$5
	n=$(iters "$size")
	opt="--cq-mod=$sig"
	[ "$chain" -gt 1 ] && opt="--post_list=$chain $opt"
	timeout 120 "$tool" $PF -s "$size" -n "$n" $opt > /tmp/pf-s.txt 2>&1 &
	sleep 1
	timeout 120 "$tool" $PF -s "$size" -n "$n" $opt 127.0.0.1 \
		> /tmp/pf-c.txt 2>&1
	wait
	# "#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]"
	line=$(grep -E "^$SP*[0-9]+$SP+[0-9]+$SP+[0-9.]+$SP+[0-9.]+$SP+[0-9.]+" \
		/tmp/pf-c.txt | tail -1)
	if [ -z "$line" ]; then
		say "perftest op=$op size=$size chain=$chain signal=$sig failed: $(tail -3 /tmp/pf-c.txt | tr '\n' ' ')"
		failed "perftest $tool size=$size chain=$chain signal=$sig"
		return
	fi
	set -- $line
	say "mode=perftest op=$op size=$size chain=$chain signal=$sig iters=$2 mib_per_s=$4 mpps=$5"
	ran perftest
}

perftest_rows() {
	for size in 64 4096 65536; do
		# Post list and CQ moderation of the bandwidth rows; perftest
		# wants the list a multiple of the moderation (so no 8/16).
		for spec in "1 1" "1 16" "8 1" "32 1" "32 16"; do
			set -- $spec
			perftest_bw ib_send_bw send $size $1 $2
			perftest_bw ib_write_bw write $size $1 $2
			perftest_bw ib_read_bw read $size $1 $2
		done
	done
}

perftest_lat() {	# op (write or send)
	op=$1
	timeout 120 "ib_${op}_lat" $PF -s 64 -n $LAT_ITERS > /tmp/pf-s.txt 2>&1 &
	sleep 1
	timeout 120 "ib_${op}_lat" $PF -s 64 -n $LAT_ITERS 127.0.0.1 \
		> /tmp/pf-c.txt 2>&1
	wait
	# "#bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%"
	line=$(grep -E "^$SP*64$SP+[0-9]+$SP+[0-9.]+" /tmp/pf-c.txt | tail -1)
	if [ -z "$line" ]; then
		say "perftest-lat op=$op failed: $(tail -3 /tmp/pf-c.txt | tr '\n' ' ')"
		failed "perftest ib_${op}_lat"
		return
	fi
	set -- $line
	say "mode=perftest-lat op=$op size=64 iters=$2 min_us=$3 median_us=$5 p99_us=$8"
	ran perftest-lat
}

# perftest, unless a smoke run finds it not installed.
perftest_all() {
	if [ "$SMOKE" = 1 ] && ! command -v ib_write_bw > /dev/null; then
		say "perftest not installed: skipped"
		return
	fi
	perftest_rows
	perftest_lat write
	perftest_lat send
}

# Where a one-WR chained post spends its time: ftrace's function graph
# on ibpost_post_send_mrs(), its direct callees summed up.
profile() {
	T=/sys/kernel/tracing
	[ -d $T/events ] || mount -t tracefs nodev $T || return
	echo ibpost_post_send_mrs > $T/set_graph_function || return
	echo 2 > $T/max_graph_depth
	echo 1 > $T/options/funcgraph-tail
	echo function_graph > $T/current_tracer
	echo > $T/trace
	echo "mode=chain op=write size=64 chain=1 signal=16 iters=2000 warmup=500 bh=1" > $CMD
	echo 0 > $T/tracing_on	# (a tracer change would empty the buffer)
	# "  0.350 us    |    ibpost_mr_find();" or "... | } /* fn */"
	sed -n 's/.* \([0-9.]*\) us *| *\(.*\)$/\1 \2/p' $T/trace |
		sed 's/[{};]//g; s|/\*||; s|\*/||; s/()//; s/  */ /g' |
		awk '{ t[$2] += $1; n[$2]++ }
		     END { for (f in t) printf "profile func=%s calls=%d avg_ns=%d\n",
				f, n[f], t[f] * 1000 / n[f] }' |
		while read -r l; do say "$l"; done
	# The tracer stays set: switching it back patches kernel text, which
	# TCG with two vCPUs has been seen to fault on (int3 in another CPU).
}

# How often rxe runs its tasks per WR, by mode: the function profiler's
# hit counts over one 64 B WRITE row, chain 1 (rxe_do_task: a tasklet run
# in 6.1; do_task/do_work: a work item run in 6.12; the loop bodies
# rxe_requester etc. run once per packet or WQE step). Printed as
# "taskruns mode=M wrs=N fn=hits ...".
taskruns() {
	T=/sys/kernel/tracing
	[ -d $T/events ] || mount -t tracefs nodev $T || return
	[ -e $T/function_profile_enabled ] || return
	: > $T/set_ftrace_filter
	for f in rxe_do_task do_task:mod:rdma_rxe do_work:mod:rdma_rxe \
		rxe_requester rxe_completer rxe_responder rxe_sender \
		rxe_receiver; do
		echo "$f" >> $T/set_ftrace_filter 2>/dev/null
	done
	# raw with bh=1 is raw whose pending softirq work runs right after
	# every post call.
	for mode in raw raw:1 chain seed; do
		n=${1:-20000} bh=0
		[ "$mode" = raw:1 ] && bh=1
		echo 1 > $T/function_profile_enabled	# (resets the counts)
		run "mode=${mode%:1} op=write size=64 chain=1 signal=16 iters=$n warmup=0 bh=$bh"
		echo 0 > $T/function_profile_enabled
		say "taskruns mode=$mode wrs=$n $(cat $T/trace_stat/function* |
			awk '$2 ~ /^[0-9]+$/ { n[$1] += $2 }
			     END { for (f in n) printf "%s=%d ", f, n[f] }')"
	done
	: > $T/set_ftrace_filter
}

# The smoke verdict, one line.
smoke_verdict() {
	set -- $MODES
	if [ -z "$FAILED" ]; then
		say "smoke ok modes=$#"
	else
		say "smoke FAILED: $NFAILED commands: $FAILED"
	fi
}

modprobe ib_uverbs
ip link set lo up
if ! insmod /ibpost/ibpost_bench.ko pcprof=$PCPROF; then
	say "cannot load ibpost_bench"
	[ "$SMOKE" = 1 ] && say "smoke FAILED: cannot load ibpost_bench"
	exit 1
fi
if [ "$SMOKE" = 1 ]; then
	say "guest: $NCPU CPUs, $(uname -r), smoke run"
else
	say "guest: $NCPU CPUs, $(uname -r), rounds $ROUNDS"
fi
run "mode=calib size=65536 iters=$CALIB_ITERS"
if [ "$PCPROF" = 1 ]; then
	for m in ibpost rdma_rxe ib_core ibpost_bench; do
		for s in .text .text.unlikely; do
			say "pcprof section $m $s $(cat /sys/module/$m/sections/$s)"
		done
	done
fi
SIW_UP=0
if want siw && siw_setup; then
	SIW_UP=1
fi
r=1
while [ $r -le "$ROUNDS" ]; do
	say "round $r"
	want bw && bw_rows
	want post && post_rows
	want var && var_rows
	want poll && poll_rows
	want lat && lat_rows
	want scale && scale_rows
	want mem && mem_rows
	want destroy && destroy_rows
	want siw && siw_rows
	want perftest && perftest_all
	r=$((r + 1))
done
# What runs from here on (task counts, profile) is no round's figure.
say "rounds done"
run "mode=calib size=65536 iters=$CALIB_ITERS"
if [ "$SMOKE" != 1 ]; then
	want taskruns && taskruns
	want profile && profile
fi
rmmod ibpost_bench || failed "rmmod ibpost_bench"
[ "$SMOKE" = 1 ] && smoke_verdict
say "done"
