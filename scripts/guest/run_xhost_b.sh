# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The job of modes xhost-b and xhost-b-siw.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

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
	load_test_libs ibpost_test_helpers
	insmod /ibpost/ibpost_xhost_kunit.ko
	rmmod ibpost_xhost_kunit
}
