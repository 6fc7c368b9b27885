#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dkms-post-build.sh - dkms.conf's POST_BUILD: keep ibpost's Module.symvers
#
# Usage (by dkms, in its build directory):
#   scripts/dkms-post-build.sh <dkms_tree>/ibpost/<version>/<kernel>/<arch>
#
# dkms deletes its build directory after a build and keeps only the
# modules. Consumers built against a DKMS-installed ibpost need its
# Module.symvers for that kernel (KBUILD_EXTRA_SYMBOLS), so keep it next to
# them; dkms removes it with the build (dkms remove/unbuild).
set -eu
[ -d "$1" ] || { echo "$0: no directory $1" >&2; exit 1; }
cp Module.symvers "$1/Module.symvers"
