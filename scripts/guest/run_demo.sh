# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The job of mode demo.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

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
