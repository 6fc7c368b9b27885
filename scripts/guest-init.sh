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
if [ "$mode" = stock ]; then
	load_ibpost() { modprobe ibpost; }
	unload_ibpost() { modprobe -r ibpost; }
else
	load_ibpost() { insmod /ibpost/ibpost.ko; }
	unload_ibpost() { rmmod ibpost; }
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

# The netdev of $DEV1, up (and addressed, for siw).
nd1_add() {
	ip link add $ND1 type dummy && ip link set $ND1 up || return 1
	[ $PROV = rxe ] || ip addr add 10.96.0.1/24 dev $ND1
}

sc_dev1_add_appears() {
	nd1_add && rdma link add $DEV1 type $PROV netdev $ND1 && listed $DEV1
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
# $1 (see drivers/ibpost_trace.h): the last ibpost_post_send event that
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
	# The post is recorded before anything it queued completes.
	awk -v p="$post" -v e="$(cat /tmp/follow-end.txt)" \
		'$0 == p { seen = 1 } seen && $0 == e { ok = 1 } END { exit !ok }' \
		"$1" || { echo "the end of cid $cid precedes its post"; return 1; }
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

# The holder, loaded with ibpost's trace events on: its QPs, CQs and MR
# are credited to it in rdma restrack, and its RDMA WRITE, followed by its
# completion id from its post to its completion, is on a QP and CQ whose
# ids match "rdma resource show".
sc_holder_credit_and_trace() {
	trace_start || return 1
	insmod /ibpost/ibpost_holder.ko || return 1
	trace_stop /tmp/trace.txt
	cat /tmp/trace.txt
	grep -q "ibpost_client_register: client=ibpost_holder" /tmp/trace.txt &&
	grep -Eq "ibpost_post_recv: dev\.id=[0-9]+ cq\.id=[0-9]+ cid=[0-9]+ posted=16 qpn=[0-9]+ chain=16 ret=0 bad_wr=-1" \
		/tmp/trace.txt || return 1
	# The holder's QPs on $DEV1, and its write there: its completion, by
	# its id.
	qpns=$(sed -n "s/.*ibpost_qp_create: dev=$DEV1 qpn=\([0-9]*\) type=RC .*caller=ibpost_holder.*/\1/p" \
		/tmp/trace.txt | paste -sd'|' -)
	[ -n "$qpns" ] || { echo "no QP of ibpost_holder on $DEV1"; return 1; }
	trace_follow /tmp/trace.txt "posted=1 qpn=($qpns) chain=1 ret=0 " \
		> /tmp/follow.txt || { cat /tmp/follow.txt; return 1; }
	cat /tmp/follow.txt
	comp=$(grep "ibpost_send_comp: .* status=SUCCESS .* returned" /tmp/follow.txt)
	[ -n "$comp" ] || return 1
	qpn=$(echo "$comp" | sed -n 's/.* qpn=\([0-9]*\) .*/\1/p')
	cq=$(echo "$comp" | sed -n 's/.* cq\.id=\([0-9]*\) .*/\1/p')
	rdma resource show qp link $DEV1/1
	rdma resource show cq dev $DEV1
	rdma resource show mr dev $DEV1
	rdma resource show qp link $DEV1/1 | grep -E "lqpn $qpn .*ibpost_holder" &&
	rdma resource show cq dev $DEV1 | grep -E "cqn $cq .*ibpost_holder" &&
	rdma resource show mr dev $DEV1 | grep -q "ibpost_holder" || return 1
	# The device's counters: the pair, its receives, the write.
	st=/sys/kernel/debug/ibpost/$DEV1/stats
	cat $st
	grep -q "^qps 2$" $st && grep -q "^recv_posted 16$" $st &&
	grep -q "^recv_in_use 16$" $st && grep -q "^send_completed [1-9]" $st
}

sc_dev1_delete_with_qps() {
	grep -q "^ibpost_holder " /proc/modules ||
		insmod /ibpost/ibpost_holder.ko || return 1
	d=/sys/kernel/debug/ibpost/$DEV1
	grep -q "^qpn" $d/qps || return 1
	cat $d/qps
	# The holder's receives show in its QP's counters (root only file).
	grep -l "^recv_posted 16$" $d/qp[0-9]* || return 1
	[ "$(stat -c %a $d/qp* | sort -u)" = 400 ] || return 1
	rdma link delete $DEV1 || { rmmod ibpost_holder; return 1; }
	rmmod ibpost_holder || return 1
	not_listed $DEV1 || return 1
	dmesg | grep "ibpost_holder: $DEV1 removed:" | tail -1 |
		grep -q "posted 16 returned 16 flushed 16 post -19"
}

sc_reload_3_times() {
	for i in 1 2 3; do
		unload_ibpost || return 1
		load_ibpost || return 1
		listed $DEV0 || return 1
	done
}

sc_load_before_device() {
	unload_ibpost || return 1
	for d in $(rdma link show | sed -n 's/^link \([^/]*\)\/.*/\1/p'); do
		rdma link delete $d || return 1
	done
	load_ibpost || return 1
	[ ! -s /sys/kernel/debug/ibpost/devices ] || return 1
	rdma link add $DEV0 type $PROV netdev $ND0 || return 1
	listed $DEV0 && cat /sys/kernel/debug/ibpost/devices
}

# Device removal under traffic, alternating rdma link delete and netdev
# unregister, then ibpost itself unloaded and reloaded. Each cycle takes
# about 3 s under TCG (the add, the pairs' set-up, 0.3 s of traffic, the
# removal): ten, five of each kind of removal.
REMOVAL_CYCLES=10
sc_removal_under_traffic() {
	ip link del $ND1 2>/dev/null
	insmod /ibpost/ibpost_traffic.ko ibdev=$DEV1 || return 1
	tr=/sys/kernel/debug/ibpost_traffic
	i=1
	while [ $i -le $REMOVAL_CYCLES ]; do
		nd1_add || return 1
		# ib_core frees the old device's name asynchronously: until
		# it has, the add fails with ENFILE. Retry for up to 20 s.
		n=0
		until rdma link add $DEV1 type $PROV netdev $ND1 2> /tmp/add.err; do
			n=$((n + 1))
			[ $n -lt 200 ] || { cat /tmp/add.err; return 1; }
			sleep 0.1
		done
		# Its pairs connected (through rdma_cm on iWARP: seconds under
		# TCG) and WRs posted, then a little more traffic.
		n=0
		until grep -q "^$DEV1 live posted [1-9][0-9]* setup 0$" $tr ||
			[ $n -ge 300 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		grep "^$DEV1 live posted [1-9][0-9]* setup 0$" $tr || { cat $tr; return 1; }
		sleep 0.3
		if [ $((i % 2)) = 1 ]; then
			rdma link delete $DEV1 || return 1
			ip link del $ND1
		else
			ip link del $ND1 || return 1
		fi
		# Netdev unregister removes the device asynchronously.
		n=0
		while listed $DEV1 && [ $n -lt 100 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		not_listed $DEV1 || return 1
		r=$(cat $tr)
		echo "cycle $i: $r"
		kmsg "ibpost-removal: cycle $i: $r"
		# <dev> posted P returned R flushed F removes 1 post_after -19
		# inflight I missing 0 dups 0: every context back exactly
		# once, and WRs in flight when the device went, flushed (the
		# pairs keep receives posted beyond their sends). I, what
		# ibpost_traffic saw outstanding at its remove callback, is
		# only reported: after a netdev unregister siw has flushed
		# its QPs before the device's removal begins.
		set -- $r
		[ "$1" = $DEV1 ] && [ "$3" -gt 0 ] && [ "$3" = "$5" ] &&
			[ "$7" -gt 0 ] && [ "${9}" = 1 ] && [ "${11}" = -19 ] &&
			[ "${12}" = inflight ] &&
			[ "${14}" = missing ] && [ "${15}" = 0 ] &&
			[ "${16}" = dups ] && [ "${17}" = 0 ] || return 1
		i=$((i + 1))
	done
	rmmod ibpost_traffic && unload_ibpost && load_ibpost &&
		listed $DEV0
}

# Fault injection, on a kernel with CONFIG_FAULT_INJECTION (it has
# /proc/self/fail-nth): fail_ibpost/ holds the framework's knobs and
# ibpost's errno, root only, disarmed and -EIO at load; errno takes a
# negative errno only. A stock kernel has no fail_ibpost/. Neither has the
# old fault_inject file.
sc_fail_ibpost_files() {
	d=/sys/kernel/debug/ibpost/fail_ibpost
	[ -e /sys/kernel/debug/ibpost/devices ] &&
		[ ! -e /sys/kernel/debug/ibpost/fault_inject ] || return 1
	if [ ! -e /proc/self/fail-nth ]; then
		[ ! -e $d ]
		return
	fi
	for f in probability interval times space verbose task-filter errno; do
		[ "$(stat -c %a $d/$f)" = 600 ] || return 1
	done
	[ "$(cat $d/probability)" = 0 ] && [ "$(cat $d/errno)" = -5 ] ||
		return 1
	echo -12 > $d/errno && [ "$(cat $d/errno)" = -12 ] || return 1
	for e in 12 0 -4095 x; do
		! echo $e > $d/errno 2>/dev/null || return 1
	done
	[ "$(cat $d/errno)" = -12 ] && echo -5 > $d/errno
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

# The device scenarios both the test guest and the stock-kernel guest run
# (seven cases).
sc_device_scenarios() {
	sc_result ${DEV1}_add_appears sc_dev1_add_appears
	sc_result holder_credit_and_trace sc_holder_credit_and_trace
	sc_result ${DEV1}_delete_with_qps sc_dev1_delete_with_qps
	sc_result reload_3_times sc_reload_3_times
	sc_result load_before_device sc_load_before_device
	sc_result fail_ibpost_files sc_fail_ibpost_files
	sc_result removal_under_traffic_${REMOVAL_CYCLES}_cycles sc_removal_under_traffic
}

run_tests() {
	nsuites=$(cat /ibpost/nsuites)
	ktap_module_header "$nsuites"
	insmod /ibpost/ibpost_kunit.ko
	rmmod ibpost_kunit

	ktap_guest_document
	sc_suite_begin ibpost_scenarios 7
	sc_device_scenarios
	sc_suite_end ibpost_scenarios
}

# Guest A of the two-host stage: serves guest B until B asks it to stop,
# then reports what it saw as the KTAP suite "ibpost_xhost_server".
XS=/sys/kernel/debug/ibpost_xhost_server/status
xs() { sed -n "s/^$1 //p" $XS; }

run_xhost_a() {
	insmod /ibpost/ibpost_xhost_server.ko
	# The address comes last: once B can ping it, the server listens.
	ip addr add 10.77.0.1/24 dev eth0
	kmsg "ibpost-guest: A: $(ip -4 -o addr show dev eth0)"
	n=0
	while [ "$(xs shutdown)" != 1 ] && [ $n -lt 450 ]; do
		sleep 2
		n=$((n + 1))
	done
	# The last connection closes after B's shutdown request.
	n=0
	while [ "$(xs established)" != "$(xs disconnected)" ] && [ $n -lt 60 ]; do
		sleep 1
		n=$((n + 1))
	done
	cat $XS | while read -r l; do kmsg "ibpost-xhost-server: $l"; done
	ktap_guest_document
	sc_suite_begin ibpost_xhost_server 5
	sc_result shutdown_requested_by_b [ "$(xs shutdown)" = 1 ]
	sc_result served_at_least_5_connections [ "$(xs established)" -ge 5 ]
	# Exactly what B's suite sends: 5 window checks (seed operations 2,
	# partial post 3) and ECHO payloads (seed operations 2, the link
	# case's reconnection 1); B's stream of 10,000 DATA messages. Over
	# iWARP neither the stream (its only flow control is RNR retry) nor
	# the link case runs: no DATA at all, and 2 ECHOs.
	data=10000 echo=3
	[ "$mode" = xhost-a-siw ] && data=0 echo=2
	sc_result data_verified_byte_for_byte \
		sh -c "[ $(xs data_ok) = $data ] && [ $(xs echo_ok) = $echo ] && [ $(xs checks_ok) = 5 ] && [ $(xs data_bad) = 0 ] && [ $(xs checks_bad) = 0 ]"
	sc_result every_receive_returned \
		[ "$(xs recv_posted)" = "$(xs recv_returned)" ]
	sc_result server_unloads rmmod ibpost_xhost_server
	sc_suite_end ibpost_xhost_server
}

# Guest B: runs the ibpost_xhost KUnit suite against A through rdma_cm.
run_xhost_b() {
	ip addr add 10.77.0.2/24 dev eth0
	n=0
	until ping -c 1 -W 1 10.77.0.1 > /dev/null 2>&1 || [ $n -ge 180 ]; do
		n=$((n + 1))
	done
	kmsg "ibpost-guest: 10.77.0.1 answered after $n pings"
	if [ $n -ge 180 ]; then	# what the suite will fail on
		ip -s -o link show dev eth0 | while read -r l; do kmsg "ibpost-guest: B: $l"; done
		ip neigh | while read -r l; do kmsg "ibpost-guest: B: $l"; done
		while read -r l; do kmsg "ibpost-guest: B: $l"; done < /proc/interrupts
	fi
	ktap_module_header 1
	insmod /ibpost/ibpost_xhost_kunit.ko
	rmmod ibpost_xhost_kunit
}

# Debian's stock kernel, ibpost installed by DKMS: loaded by name from
# updates/dkms, the demo's data checks, the scenarios that need no KUnit,
# unloaded at the end. One KTAP suite, "ibpost_stock".
sc_modprobe_by_name() {
	modprobe ibpost || return 1
	modinfo -n ibpost | grep -q "/updates/dkms/ibpost.ko" &&
		grep -q "^ibpost " /proc/modules && listed rxe0
}

sc_demo_checks() {
	trace_start || return 1
	modprobe ibpost_demo || return 1
	# rmmod, not modprobe -r: that would unload ibpost with it.
	rmmod ibpost_demo || return 1
	trace_stop /tmp/trace.txt
	dmesg | sed -n '/ibpost_demo: ==== ibpost demo on/,$p' | grep ibpost_demo
	dmesg | grep -Eq "ibpost demo: ([1-9][0-9]*) of \1 checks passed" &&
	demo_trace_follow /tmp/trace.txt
}

sc_unload() {
	unload_ibpost && ! grep -q "^ibpost " /proc/modules
}

run_stock() {
	kmsg "ibpost-guest: $(uname -r), $(uname -v)"
	ktap_guest_document
	sc_suite_begin ibpost_stock 10
	sc_result modprobe_ibpost_by_name sc_modprobe_by_name
	sc_result demo_data_checks sc_demo_checks
	sc_device_scenarios
	sc_result unload_ibpost sc_unload
	sc_suite_end ibpost_stock
}

run_demo() {
	trace_start || echo "ibpost-guest: no ibpost trace events"
	insmod /ibpost/ibpost_demo.ko
	echo "==== ibpost devices ===="
	cat /sys/kernel/debug/ibpost/devices
	for d in /sys/kernel/debug/ibpost/*/qps; do
		echo "==== QPs on $(basename "$(dirname "$d")") ===="
		cat "$d"
	done
	echo "==== rdma resource show qp ===="
	rdma resource show qp
	rmmod ibpost_demo
	trace_stop /tmp/trace.txt
	echo "==== one WR followed by its completion id (ibpost trace events) ===="
	if demo_trace_follow /tmp/trace.txt; then
		echo "ibpost-trace: WR followed from its post to its completion"
	else
		echo "ibpost-trace: FAILED to follow a WR by its completion id"
	fi
}

case "$mode" in
test) run_tests ;;
test-siw)
	# Every suite again, on siw0: the knob names the device under test.
	# siw's TCP under TCG moves a WR in milliseconds, not microseconds:
	# the concurrency suite posts 20,000 WRs there and the fuzz suite
	# 5,000 chains (unless told).
	a=$(cat /ibpost/kunit_args)
	case " $a" in *" stress_wrs="*) ;; *) a="$a stress_wrs=20000" ;; esac
	case " $a" in *" fuzz_chains="*) ;; *) a="$a fuzz_chains=5000" ;; esac
	echo "$a ibdev=siw0" > /ibpost/kunit_args
	run_tests
	;;
demo) run_demo ;;
bench)
	BENCH_ROWS=$(sed -n 's/.*ibpost\.bench_rows=\([a-z,]*\).*/\1/p' /proc/cmdline) \
		sh /ibpost/bench.sh
	;;
bench-smoke) BENCH_SMOKE=1 sh /ibpost/bench.sh ;;
xhost-a|xhost-a-siw) run_xhost_a ;;
xhost-b|xhost-b-siw) run_xhost_b ;;
stock) run_stock ;;
*) kmsg "ibpost-guest: unknown mode '$mode'" ;;
esac
finish
