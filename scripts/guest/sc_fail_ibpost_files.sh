# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Device scenario fail_ibpost_files.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

# Fault injection, on a kernel with CONFIG_FAULT_INJECTION (it has
# /proc/self/fail-nth): fail_ibpost/ holds the framework's knobs and
# ibpost's errno, root only, disarmed and -EIO at load; errno takes a
# negative errno only. A stock kernel has no fail_ibpost/. Neither has the
# old fault_inject file.
sc_fail_ibpost_files() {
	d=/sys/kernel/debug/ibpost/fail_ibpost
	[ -e /sys/kernel/debug/ibpost/devices ] &&
		[ ! -e /sys/kernel/debug/ibpost/fault_inject ] || return 1
	if [ ! -e /proc/self/fail-nth ]; then
		[ ! -e $d ]
		return
	fi
	for f in probability interval times space verbose task-filter errno; do
		[ "$(stat -c %a $d/$f)" = 600 ] || return 1
	done
	[ "$(cat $d/probability)" = 0 ] && [ "$(cat $d/errno)" = -5 ] ||
		return 1
	echo -12 > $d/errno && [ "$(cat $d/errno)" = -12 ] || return 1
	for e in 12 0 -4095 x; do
		! echo $e > $d/errno 2>/dev/null || return 1
	done
	[ "$(cat $d/errno)" = -12 ] && echo -5 > $d/errno
}
