# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Device scenario <dev1>_delete_with_qps: the device deleted under
# the holder's QPs.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

sc_dev1_delete_with_qps() {
	load_test_libs ibpost_test_cm || return 1
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
