# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Stock-kernel scenario demo_data_checks.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

sc_demo_checks() {
	trace_start || return 1
	modprobe ibpost_demo || return 1
	# rmmod, not modprobe -r: that would unload ibpost with it.
	rmmod ibpost_demo || return 1
	trace_stop /tmp/trace.txt
	dmesg | sed -n '/ibpost_demo: ==== ibpost demo on/,$p' | grep ibpost_demo
	dmesg | grep -Eq "ibpost demo: ([1-9][0-9]*) of \1 checks passed" &&
	demo_trace_follow /tmp/trace.txt
}
