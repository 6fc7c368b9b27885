# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Stock-kernel scenario modprobe_ibpost_by_name.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

sc_modprobe_by_name() {
	modprobe ibpost || return 1
	modinfo -n ibpost | grep -q "/updates/dkms/ibpost.ko" &&
		grep -q "^ibpost " /proc/modules && listed rxe0
}
