# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The device scenarios, in the order they run.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

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
