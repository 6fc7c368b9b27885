# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Device scenario holder_credit_and_trace.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

# The holder, loaded with ibpost's trace events on: its QPs, CQs and MR
# are credited to it in rdma restrack, and its RDMA WRITE, followed by its
# completion id from its post to its completion, is on a QP and CQ whose
# ids match "rdma resource show".
sc_holder_credit_and_trace() {
	load_test_libs ibpost_test_cm || return 1
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
