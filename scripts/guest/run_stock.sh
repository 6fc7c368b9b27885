# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The job of mode stock.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

# Debian's stock kernel, ibpost installed by DKMS: loaded by name from
# updates/dkms, the demo's data checks, the scenarios that need no KUnit,
# unloaded at the end. One KTAP suite, "ibpost_stock".
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
