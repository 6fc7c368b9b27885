#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the ibpost test guest (busybox). The kernel command line picks
# the job: ibpost.mode=test runs the KUnit suites and the device
# add/remove scenarios, ibpost.mode=demo runs the demo ULP, xhost-a and
# xhost-b are the two guests of the two-host stage, and ibpost.mode=stock
# runs on Debian's own kernel with ibpost installed by DKMS (modprobe by
# name, the demo's checks, the scenarios that need no KUnit); bench runs
# the benchmark, bench-smoke one short round of it. Results go to
# the kernel log (/dev/kmsg) so they interleave in order with the kernel's
# own KTAP output on the console; the host parses them with kunit.py.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug

kmsg() { echo "$*" > /dev/kmsg; }
mode=$(sed -n 's/.*ibpost\.mode=\([a-z-]*\).*/\1/p' /proc/cmdline)
KL=/sys/kernel/debug/kmemleak

# A KUnit case may legitimately keep insmod waiting for minutes under
# TCG with KASAN; hung tasks are still reported, after 240 s.
echo 240 > /proc/sys/kernel/hung_task_timeout_secs

# Forget what boot left behind, so a later scan shows only our leaks.
[ -e $KL ] && { echo scan=off > $KL; echo scan > $KL; echo clear > $KL; }

# kmod's tools (Debian's 6.12 modules are xz-compressed); functions, since
# busybox's shell would run its own applets of the same names.
for t in modprobe insmod rmmod lsmod depmod modinfo; do
	eval "$t() { /sbin/$t \"\$@\"; }"
done
echo /sbin/modprobe > /proc/sys/kernel/modprobe
# The stock kernel's module tree holds what DKMS installed: index it, as
# the package's postinst would.
[ "$mode" = stock ] && depmod -a
modprobe crc32_generic
modprobe rdma_rxe
modprobe rdma_cm
modprobe dummy
case "$mode" in
test*|demo|xhost-*) modprobe kunit ;;
esac
case "$mode" in
xhost-*-siw)
	# Two guests over Soft-iWARP: siw0 alone on the NIC that joins them
	# (rdma_cm picks the device by the address's netdev).
	modprobe virtio_net
	modprobe siw
	ip link set lo up
	ip link set eth0 up
	rdma link add siw0 type siw netdev eth0
	;;
xhost-*)
	# Two guests: rxe0 on the virtio-net NIC that joins them.
	modprobe virtio_net
	ip link set eth0 up
	rdma link add rxe0 type rxe netdev eth0
	;;
*)
	ip link add d0 type dummy
	ip link set d0 up
	# ibpost_cm connects through rdma_cm to this address (cm_test.c).
	ip addr add 10.99.0.1/24 dev d0
	rdma link add rxe0 type rxe netdev d0
	;;
esac
case "$mode" in
test-siw)
	# Soft-iWARP: siw0 on a dummy netdev of its own; its QPs connect
	# through rdma_cm (iw_cm over TCP) to this address.
	modprobe siw
	# siw's TCP to an address of this guest runs over lo.
	ip link set lo up
	ip link add s0 type dummy
	ip link set s0 up
	ip addr add 10.98.0.1/24 dev s0
	rdma link add siw0 type siw netdev s0
	;;
esac

# ibpost itself: the build's module in the test guests, the one DKMS
# installed (found by name) on a stock kernel.
# The test modules' helper modules (ibpost_test_cm, ibpost_test_helpers,
# built from kunit/lib/) are loaded before the modules that use them and
# unloaded with ibpost, whose symbols they use.
load_test_libs() {
	for m in "$@"; do
		grep -q "^$m " /proc/modules || insmod /ibpost/$m.ko || return 1
	done
}
unload_test_libs() {
	for m in ibpost_test_helpers ibpost_test_cm; do
		! grep -q "^$m " /proc/modules || rmmod $m || return 1
	done
}
if [ "$mode" = stock ]; then
	load_ibpost() { modprobe ibpost; }
	unload_ibpost() { unload_test_libs && modprobe -r ibpost; }
else
	load_ibpost() { insmod /ibpost/ibpost.ko; }
	unload_ibpost() { unload_test_libs && rmmod ibpost; }
	load_ibpost
fi

finish() {
	if [ -e $KL ]; then
		# Objects must be unreferenced across two scans, and older
		# than kmemleak's minimum age (5 s) at the second, to be
		# reported: a scan under TCG takes longer than that, so sleep
		# only for what the first one did not take.
		t=$(date +%s)
		echo scan > $KL
		t=$(( $(date +%s) - t ))
		[ $t -ge 6 ] || sleep $(( 6 - t ))
		echo scan > $KL
		kmsg "ibpost-guest: kmemleak report follows"
		cat $KL | while read -r l; do kmsg "kmemleak-report: $l"; done
	fi
	kmsg "ibpost-guest: done, powering off"
	sync
	# The test kernel has no ACPI to power off with; QEMU runs with
	# -no-reboot, so a reboot ends it on every kernel.
	reboot -f
}

# Scenario results as guest KTAP suites ("ibpost_scenarios", ...).
SC_N=0
sc_result() {	# name, then a command whose status is the result
	name=$1; shift
	SC_N=$((SC_N + 1))
	if "$@" > /tmp/sc.out 2>&1; then
		kmsg "    ok $SC_N $name"
	else
		while read -r l; do kmsg "    # $name: $l"; done < /tmp/sc.out
		kmsg "    not ok $SC_N $name"
		SC_FAIL=1
	fi
}

# A guest KTAP suite: its header (name, number of cases), and its result
# line once every case has reported.
sc_suite_begin() {
	kmsg "    KTAP version 1"
	kmsg "    # Subtest: $1"
	kmsg "    1..$2"
	SC_N=0
	SC_FAIL=0
}

sc_suite_end() {
	if [ $SC_FAIL = 0 ]; then
		kmsg "ok 1 $1"
	else
		kmsg "not ok 1 $1"
	fi
}

listed() { grep -q "^$1 " /sys/kernel/debug/ibpost/devices; }
not_listed() { ! listed "$1"; }

# The provider the device scenarios run on: rxe (rxe0 on d0; they add and
# remove rxe1 on d1), or siw in the siw guest (siw0 on s0; siw1 on s1,
# with an address of its own, since iWARP pairs connect through rdma_cm).
if [ "$mode" = test-siw ]; then
	PROV=siw DEV0=siw0 ND0=s0 DEV1=siw1 ND1=s1
else
	PROV=rxe DEV0=rxe0 ND0=d0 DEV1=rxe1 ND1=d1
fi

# Until netdev $1's IPv6 link-local address is usable (5 s at most):
# /proc/net/if_inet6's fields are address, index, prefix length, scope
# (20: link), flags (40: tentative) and name.
ll_wait() {
	n=0
	while :; do
		while read -r _ _ _ s f d; do
			[ "$d" = "$1" ] && [ "$s" = 20 ] &&
				[ $((0x$f & 0x40)) = 0 ] && return 0
		done < /proc/net/if_inet6
		[ $n -lt 50 ] || { echo "$1: no usable link-local address"; return 1; }
		sleep 0.1
		n=$((n + 1))
	done
}

# The netdev of $DEV1, up (and addressed, for siw). The device's first
# traffic (the holder's pair) follows at once, and rxe's RoCE v2 packets
# go from the link-local address: wait until it is no longer tentative,
# as ibpost_test_dev2() (kunit/main.c) does. (A dummy netdev is
# IFF_NOARP, so addrconf runs no DAD on it: the address is tentative
# only until the DAD work item has run.)
nd1_add() {
	ip link add $ND1 type dummy && ip link set $ND1 up || return 1
	[ $PROV = rxe ] || ip addr add 10.96.0.1/24 dev $ND1 || return 1
	ll_wait $ND1
}

# ibpost's trace events: trace_start empties the buffer and turns them
# on (ibpost must be loaded), stamped by a clock all CPUs share so that
# the lines are in event order; trace_stop turns them off and writes
# their lines to file $1.
TRACEFS=/sys/kernel/tracing
trace_start() {
	[ -d $TRACEFS/events ] || mount -t tracefs nodev $TRACEFS || return 1
	[ -d $TRACEFS/events/ibpost ] || return 1
	# No command-line recording: turning it on and off patches the
	# scheduler's sched_switch tracepoint live, and a stock 6.12 guest
	# under TCG once took an int3 Oops in __schedule() right there.
	echo 0 > $TRACEFS/options/record-cmd
	echo global > $TRACEFS/trace_clock
	echo > $TRACEFS/trace
	echo 1 > $TRACEFS/events/ibpost/enable
}

trace_stop() {
	echo 0 > $TRACEFS/events/ibpost/enable
	grep ibpost_ $TRACEFS/trace | sed 's/^ *//' > "$1"
}

# Follow one send WR by its completion id through the trace lines of file
# $1 (see drivers/ring_trace.h): the last ibpost_post_send event that
# also matches the extended regex $2 names the CQ, the first cid and how
# many WRs it queued; its last WR (cid first + posted - 1) must have
# exactly one event that ends it, with the same dev.id, cq.id, cid and
# qpn, after the post. Prints the two lines.
trace_follow() {
	post=$(grep -E "ibpost_post_send: dev\.id=[0-9]+ cq\.id=[0-9]+ cid=[0-9]+ posted=[1-9]" "$1" |
		grep -E -- "$2" | tail -1)
	[ -n "$post" ] || { echo "no ibpost_post_send event matches '$2'"; return 1; }
	# shellcheck disable=SC2046 # the five numbers, split on purpose
	set -- "$1" $(echo "$post" |
		sed -n 's/.* dev\.id=\([0-9]*\) cq\.id=\([0-9]*\) cid=\([0-9]*\) posted=\([0-9]*\) qpn=\([0-9]*\) .*/\1 \2 \3 \4 \5/p')
	[ $# = 6 ] || { echo "cannot parse: $post"; return 1; }
	# From here: $2 dev.id, $3 cq.id, $4 first cid, $5 posted, $6 qpn.
	cid=$(($4 + $5 - 1))
	[ $cid -le 4294967295 ] || cid=$((cid - 4294967296))
	grep -E "ibpost_send_(comp|flush|reclaim|reclaim_drained): dev\.id=$2 cq\.id=$3 cid=$cid qpn=$6 " \
		"$1" > /tmp/follow-end.txt
	if [ "$(grep -c . /tmp/follow-end.txt)" != 1 ]; then
		echo "dev.id=$2 cq.id=$3 cid=$cid qpn=$6: $(grep -c . /tmp/follow-end.txt) events end it, not one"
		cat /tmp/follow-end.txt
		return 1
	fi
	# The post is recorded before anything it queued completes: its
	# end's stamp is not earlier. Not the lines' order: the global clock
	# gives two CPUs' events of one instant one stamp, and the buffer
	# lists such a tie by CPU, not by event.
	pts=$(echo "$post" | sed -n 's/^.*\] [^ ]*  *\([0-9]*\.[0-9]*\): .*/\1/p')
	ets=$(sed -n 's/^.*\] [^ ]*  *\([0-9]*\.[0-9]*\): .*/\1/p' /tmp/follow-end.txt)
	[ -n "$pts" ] && [ -n "$ets" ] ||
		{ echo "cannot read the stamps of: $post"; return 1; }
	awk -v p="$pts" -v e="$ets" 'BEGIN { exit !(e + 0 >= p + 0) }' ||
		{ echo "the end of cid $cid ($ets) precedes its post ($pts)"; return 1; }
	echo "post of dev.id=$2 cq.id=$3 cid=$4..$cid (posted $5; WR $(($5 - 1)) of the chain is cid $cid):"
	echo "  $post"
	echo "its end, found by dev.id=$2 cq.id=$3 cid=$cid:"
	echo "  $(cat /tmp/follow-end.txt)"
}

# The demo's resumed chain (three WRITEs reposted from bad_wr), followed
# from its post to its last WR's completion, through trace file $1.
demo_trace_follow() {
	trace_follow "$1" "posted=([2-9]|[1-9][0-9]+) qpn=[0-9]+ chain=[0-9]+ ret=0 " ||
		return 1
	echo "the refused WR of the first post (its rule):"
	echo "  $(grep "ibpost_post_send_err: " "$1" | tail -1)"
}

# The KTAP header of a KUnit module's suites. 6.12 prints it itself when
# the module loads (kunit_module_init() in lib/kunit/test.c); 6.1 prints
# the suites only, so there the guest supplies the version and the plan.
ktap_module_header() {
	kmsg "ibpost-guest: KUnit module follows"
	case "$(uname -r)" in
	6.1.*) kmsg "KTAP version 1"; kmsg "1..$1" ;;
	esac
}

# The guest's own results (scenarios, server checks) are a KTAP document
# of their own, after this line; the host parses the two apart.
ktap_guest_document() {
	kmsg "ibpost-guest: guest results follow"
	kmsg "KTAP version 1"
	kmsg "1..1"
}

# The device scenarios (sc_*) and the jobs of the modes (run_*), a file
# each: scripts/guest/ in the repository, /ibpost/guest/ here
# (guest_userspace in scripts/lib/common.sh copies them).
# shellcheck source=scripts/guest/sc_dev1_add_appears.sh
. /ibpost/guest/sc_dev1_add_appears.sh
# shellcheck source=scripts/guest/sc_holder_credit_and_trace.sh
. /ibpost/guest/sc_holder_credit_and_trace.sh
# shellcheck source=scripts/guest/sc_dev1_delete_with_qps.sh
. /ibpost/guest/sc_dev1_delete_with_qps.sh
# shellcheck source=scripts/guest/sc_reload_3_times.sh
. /ibpost/guest/sc_reload_3_times.sh
# shellcheck source=scripts/guest/sc_load_before_device.sh
. /ibpost/guest/sc_load_before_device.sh
# shellcheck source=scripts/guest/sc_removal_under_traffic.sh
. /ibpost/guest/sc_removal_under_traffic.sh
# shellcheck source=scripts/guest/sc_fail_ibpost_files.sh
. /ibpost/guest/sc_fail_ibpost_files.sh
# shellcheck source=scripts/guest/sc_device_scenarios.sh
. /ibpost/guest/sc_device_scenarios.sh
# shellcheck source=scripts/guest/run_tests.sh
. /ibpost/guest/run_tests.sh
# shellcheck source=scripts/guest/run_xhost_a.sh
. /ibpost/guest/run_xhost_a.sh
# shellcheck source=scripts/guest/run_xhost_b.sh
. /ibpost/guest/run_xhost_b.sh
# shellcheck source=scripts/guest/sc_modprobe_by_name.sh
. /ibpost/guest/sc_modprobe_by_name.sh
# shellcheck source=scripts/guest/sc_demo_checks.sh
. /ibpost/guest/sc_demo_checks.sh
# shellcheck source=scripts/guest/sc_unload.sh
. /ibpost/guest/sc_unload.sh
# shellcheck source=scripts/guest/run_stock.sh
. /ibpost/guest/run_stock.sh
# shellcheck source=scripts/guest/run_demo.sh
. /ibpost/guest/run_demo.sh

case "$mode" in
test) run_tests ;;
test-siw)
	# Every suite again, on siw0: the knob names the device under test.
	# siw's TCP under TCG moves a WR in milliseconds, not microseconds:
	# the concurrency suite posts 14,000 WRs there and the fuzz suite
	# 3,000 chains (unless told).
	a=$(cat /ibpost/kunit_args)
	case " $a" in *" stress_wrs="*) ;; *) a="$a stress_wrs=14000" ;; esac
	case " $a" in *" fuzz_chains="*) ;; *) a="$a fuzz_chains=3000" ;; esac
	echo "$a ibdev=siw0" > /ibpost/kunit_args
	run_tests
	;;
demo) run_demo ;;
bench)
	BENCH_ROWS=$(sed -n 's/.*ibpost\.bench_rows=\([a-z,]*\).*/\1/p' /proc/cmdline) \
	BENCH_PCPROF=$(sed -n 's/.*ibpost\.bench_pcprof=\([01]\).*/\1/p' /proc/cmdline) \
		sh /ibpost/bench.sh
	;;
bench-smoke) BENCH_SMOKE=1 sh /ibpost/bench.sh ;;
xhost-a|xhost-a-siw) run_xhost_a ;;
xhost-b|xhost-b-siw) run_xhost_b ;;
stock) run_stock ;;
*) kmsg "ibpost-guest: unknown mode '$mode'" ;;
esac
finish
