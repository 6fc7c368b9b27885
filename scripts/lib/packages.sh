# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# packages.sh - the Debian packages scripts/ibpost.sh needs, installed
# when missing. Sourced by scripts/ibpost.sh, like every file here;
# its functions read the globals set there when they are called.

PACKAGES="linux-source-6.1 linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
	  dwarves python3 qemu-system-x86 busybox-static iproute2 kmod cpio
	  xz-utils sparse rsync binutils patch"

# Install the Debian packages named (by default $PACKAGES) that are
# missing.
deps() {
	[ "${IBPOST_NO_APT:-0}" = 1 ] && return 0
	local missing="" p pkgs="${*:-$PACKAGES}"
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || die "run as root to install:$missing"
	log "installing:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
}
