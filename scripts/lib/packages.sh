# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# packages.sh - the Debian packages scripts/ibpost.sh needs, installed
# when missing. Sourced by scripts/ibpost.sh, like every file here;
# its functions read the globals set there when they are called.

PACKAGES="linux-source-6.1 linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
	  dwarves python3 qemu-system-x86 busybox-static iproute2 kmod cpio
	  xz-utils sparse rsync binutils patch"
# Without their recommendations (dkms's would pull linux-headers-amd64):
# installed here, in the foreground, not by the stock stages' preparation
# in the background process, which the foreground may hold (SIGSTOP) with
# dpkg's lock taken.
PACKAGES_NOREC="dkms"

# The packages named in $@ that are not installed.
deps_missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || printf ' %s' "$p"
	done
}

# Install the Debian packages named (by default $PACKAGES and
# $PACKAGES_NOREC) that are missing.
deps() {
	[ "${IBPOST_NO_APT:-0}" = 1 ] && return 0
	local missing norec=""
	if [ $# -gt 0 ]; then
		missing=$(deps_missing "$@")
	else
		missing=$(deps_missing $PACKAGES)
		norec=$(deps_missing $PACKAGES_NOREC)
	fi
	[ -z "$missing$norec" ] && return 0
	[ "$(id -u)" = 0 ] || die "run as root to install:$missing$norec"
	log "installing:$missing$norec"
	apt-get update -qq
	[ -z "$missing" ] ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			$missing > /dev/null
	[ -z "$norec" ] ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $norec > /dev/null
}
