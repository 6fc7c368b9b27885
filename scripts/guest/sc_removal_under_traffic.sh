# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Device scenario removal_under_traffic_<n>_cycles.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

# Device removal under traffic, alternating rdma link delete and netdev
# unregister, then ibpost itself unloaded and reloaded. Each cycle takes
# about 3 s under TCG (the add, the pairs' set-up, 0.3 s of traffic, the
# removal): six, three of each kind of removal.
REMOVAL_CYCLES=6
sc_removal_under_traffic() {
	ip link del $ND1 2>/dev/null
	load_test_libs ibpost_test_cm || return 1
	insmod /ibpost/ibpost_traffic.ko ibdev=$DEV1 || return 1
	tr=/sys/kernel/debug/ibpost_traffic
	i=1
	while [ $i -le $REMOVAL_CYCLES ]; do
		nd1_add || return 1
		# ib_core frees the old device's name asynchronously: until
		# it has, the add fails with ENFILE. Retry for up to 20 s.
		n=0
		until rdma link add $DEV1 type $PROV netdev $ND1 2> /tmp/add.err; do
			n=$((n + 1))
			[ $n -lt 200 ] || { cat /tmp/add.err; return 1; }
			sleep 0.1
		done
		# Its pairs connected (through rdma_cm on iWARP: seconds under
		# TCG) and WRs posted, then a little more traffic.
		n=0
		until grep -q "^$DEV1 live posted [1-9][0-9]* setup 0$" $tr ||
			[ $n -ge 300 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		grep "^$DEV1 live posted [1-9][0-9]* setup 0$" $tr || { cat $tr; return 1; }
		sleep 0.3
		if [ $((i % 2)) = 1 ]; then
			rdma link delete $DEV1 || return 1
			ip link del $ND1
		else
			ip link del $ND1 || return 1
		fi
		# Netdev unregister removes the device asynchronously.
		n=0
		while listed $DEV1 && [ $n -lt 100 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		not_listed $DEV1 || return 1
		r=$(cat $tr)
		echo "cycle $i: $r"
		kmsg "ibpost-removal: cycle $i: $r"
		# <dev> posted P returned R flushed F removes 1 post_after -19
		# inflight I missing 0 dups 0: every context back exactly
		# once, and WRs in flight when the device went, flushed (the
		# pairs keep receives posted beyond their sends). I, what
		# ibpost_traffic saw outstanding at its remove callback, is
		# only reported: after a netdev unregister siw has flushed
		# its QPs before the device's removal begins.
		set -- $r
		[ "$1" = $DEV1 ] && [ "$3" -gt 0 ] && [ "$3" = "$5" ] &&
			[ "$7" -gt 0 ] && [ "${9}" = 1 ] && [ "${11}" = -19 ] &&
			[ "${12}" = inflight ] &&
			[ "${14}" = missing ] && [ "${15}" = 0 ] &&
			[ "${16}" = dups ] && [ "${17}" = 0 ] || return 1
		i=$((i + 1))
	done
	rmmod ibpost_traffic && unload_ibpost && load_ibpost &&
		listed $DEV0
}
