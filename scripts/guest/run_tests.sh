# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The job of modes test and test-siw: the KUnit module's suites, then
# the device scenarios.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

run_tests() {
	nsuites=$(cat /ibpost/nsuites)
	ktap_module_header "$nsuites"
	load_test_libs ibpost_test_cm ibpost_test_helpers
	insmod /ibpost/ibpost_kunit.ko
	rmmod ibpost_kunit

	ktap_guest_document
	sc_suite_begin ibpost_scenarios 7
	sc_device_scenarios
	sc_suite_end ibpost_scenarios
}
