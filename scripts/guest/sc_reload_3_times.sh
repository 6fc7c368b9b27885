# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Device scenario reload_3_times: ibpost unloaded and loaded three
# times, rxe0 (siw0) listed each time.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

sc_reload_3_times() {
	for i in 1 2 3; do
		unload_ibpost || return 1
		load_ibpost || return 1
		listed $DEV0 || return 1
	done
}
