#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark, run in the guest by /init for ibpost.mode=bench (see
# scripts/ibpost.sh bench). rxe0 exists, ibpost is loaded. Every figure is
# printed on the console as one "ibpost-bench: ..." line; the host turns
# them into the table (scripts/bench-report.py).
#
# In each round every bandwidth row runs raw, then ibpost-chain, then
# ibpost-seed, back to back, so that machine noise hits the three alike;
# the report takes each figure's median over the rounds. Userspace perftest
# runs on the same device with the same sizes, post lists and CQ
# moderation.
CMD=/sys/kernel/debug/ibpost_bench/cmd
ROUNDS=${ROUNDS:-3}
PF="-d rxe0 -x 1 -F"
SP="[[:space:]]"

say() { echo "ibpost-bench: $*"; }

run() {		# one command to the bench module; prints its result
	if echo "$*" > $CMD 2>/dev/null; then
		say "$(cat $CMD)"
	else
		say "$(cat $CMD) failed: $*"
	fi
}

iters() {	# WRs per row: about the same time for every size, and a
		# multiple of every post list (perftest insists)
	case $1 in
	64) echo 20000 ;;
	4096) echo 10240 ;;
	*) echo 2048 ;;
	esac
}

bw_rows() {
	for op in send write read; do
		for size in 64 4096 65536; do
			n=$(iters $size)
			w=$((n / 10))
			for sig in 1 16; do
				for chain in 1 8 32; do
					a="op=$op size=$size chain=$chain signal=$sig iters=$n warmup=$w"
					run "mode=raw $a"
					run "mode=chain $a"
					[ $chain = 1 ] && run "mode=seed $a"
				done
			done
		done
	done
}

# The post-call cost with bottom halves disabled around every post call
# (bh=1), so that rxe's tasklets run after the call in every mode, not
# inside ibpost's (the unlock of its _bh queue lock runs them).
post_rows() {
	for op in send write read; do
		for chain in 1 32; do
			a="op=$op size=64 chain=$chain signal=16 iters=20000 warmup=2000 bh=1"
			run "mode=raw $a"
			run "mode=chain $a"
			[ $chain = 1 ] && run "mode=seed $a"
		done
	done
}

lat_rows() {
	for op in write send; do
		for mode in lat-raw lat-chain lat-seed; do
			run "mode=$mode op=$op size=64 iters=5000 warmup=500"
		done
	done
}

# perftest: server and client on this guest, exchanging through loopback.
perftest_bw() {	# tool op size chain signal
	tool=$1 op=$2 size=$3 chain=$4 sig=$5
	n=$(iters "$size")
	if [ "$chain" -gt 1 ]; then
		opt="--post_list=$chain"
	else
		opt="--cq-mod=$sig"
	fi
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
		return
	fi
	set -- $line
	say "mode=perftest op=$op size=$size chain=$chain signal=$sig iters=$2 mib_per_s=$4 mpps=$5"
}

perftest_rows() {
	for size in 64 4096 65536; do
		for spec in "1 1" "1 16" "8 8" "32 32"; do
			set -- $spec
			perftest_bw ib_send_bw send $size $1 $2
			perftest_bw ib_write_bw write $size $1 $2
			perftest_bw ib_read_bw read $size $1 $2
		done
	done
}

perftest_lat() {
	timeout 120 ib_write_lat $PF -s 64 -n 5000 > /tmp/pf-s.txt 2>&1 &
	sleep 1
	timeout 120 ib_write_lat $PF -s 64 -n 5000 127.0.0.1 \
		> /tmp/pf-c.txt 2>&1
	wait
	# "#bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%"
	line=$(grep -E "^$SP*64$SP+[0-9]+$SP+[0-9.]+" /tmp/pf-c.txt | tail -1)
	if [ -z "$line" ]; then
		say "perftest-lat failed: $(tail -3 /tmp/pf-c.txt | tr '\n' ' ')"
		return
	fi
	set -- $line
	say "mode=perftest-lat op=write size=64 iters=$2 min_us=$3 median_us=$5 p99_us=$8"
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
	# every post call: what a _bh lock in the post path amounts to.
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

modprobe ib_uverbs
ip link set lo up
insmod /ibpost/ibpost_bench.ko || { say "cannot load ibpost_bench"; exit 1; }
say "guest: $(nproc) CPUs, $(uname -r), rounds $ROUNDS"
run "mode=calib size=65536 iters=2000"
r=1
while [ $r -le "$ROUNDS" ]; do
	say "round $r"
	bw_rows
	post_rows
	lat_rows
	perftest_rows
	perftest_lat
	r=$((r + 1))
done
run "mode=calib size=65536 iters=2000"
taskruns
profile
rmmod ibpost_bench
say "done"
