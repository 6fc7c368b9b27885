# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Stock-kernel scenario unload_ibpost.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

sc_unload() {
	unload_ibpost && ! grep -q "^ibpost " /proc/modules
}
