# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Device scenario <dev1>_add_appears: rxe1 (siw1 in the siw guest),
# added, shows in ibpost's device list.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

sc_dev1_add_appears() {
	nd1_add && rdma link add $DEV1 type $PROV netdev $ND1 && listed $DEV1
}
