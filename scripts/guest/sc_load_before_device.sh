# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Device scenario load_before_device: ibpost loaded with no RDMA
# device, then rxe0 (siw0) added.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

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
