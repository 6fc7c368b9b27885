# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The job of modes xhost-a and xhost-a-siw.
# Sourced by the guest's /init (scripts/guest-init.sh), from
# /ibpost/guest/; it uses /init's helpers and settings.

# Guest A of the two-host stage: serves guest B until B asks it to stop,
# then reports what it saw as the KTAP suite "ibpost_xhost_server".
XS=/sys/kernel/debug/ibpost_xhost_server/status
xs() { sed -n "s/^$1 //p" $XS; }

run_xhost_a() {
	insmod /ibpost/ibpost_xhost_server.ko
	# The address comes last: once B can ping it, the server listens.
	ip addr add 10.77.0.1/24 dev eth0
	kmsg "ibpost-guest: A: $(ip -4 -o addr show dev eth0)"
	n=0
	while [ "$(xs shutdown)" != 1 ] && [ $n -lt 450 ]; do
		sleep 2
		n=$((n + 1))
	done
	# The last connection closes after B's shutdown request.
	n=0
	while [ "$(xs established)" != "$(xs disconnected)" ] && [ $n -lt 60 ]; do
		sleep 1
		n=$((n + 1))
	done
	cat $XS | while read -r l; do kmsg "ibpost-xhost-server: $l"; done
	ktap_guest_document
	sc_suite_begin ibpost_xhost_server 5
	sc_result shutdown_requested_by_b [ "$(xs shutdown)" = 1 ]
	sc_result served_at_least_5_connections [ "$(xs established)" -ge 5 ]
	# Exactly what B's suite sends: 6 checks (seed operations 2, partial
	# post 3, the sg WRITE's map 1) and ECHO payloads (seed operations 2,
	# the link case's reconnection 1); B's stream of 10,000 DATA messages. Over
	# iWARP neither the stream (its only flow control is RNR retry) nor
	# the link case runs: no DATA at all, and 2 ECHOs.
	data=10000 echo=3
	[ "$mode" = xhost-a-siw ] && data=0 echo=2
	sc_result data_verified_byte_for_byte \
		sh -c "[ $(xs data_ok) = $data ] && [ $(xs echo_ok) = $echo ] && [ $(xs checks_ok) = 6 ] && [ $(xs data_bad) = 0 ] && [ $(xs checks_bad) = 0 ]"
	sc_result every_receive_returned \
		[ "$(xs recv_posted)" = "$(xs recv_returned)" ]
	sc_result server_unloads rmmod ibpost_xhost_server
	sc_suite_end ibpost_xhost_server
}
