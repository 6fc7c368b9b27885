# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# kernel.sh - the kernels of scripts/ibpost.sh (sourced): each series'
# source, unpacked (and for the test kernel patched) once, and its test
# or bench kernel, built once, in the cache.

# The kernel source of series $1 (6.1, 6.12), unpacked once per
# linux-source package version; prints its directory. With $2 "fixed",
# the test kernel's source: the series' provider fixes
# (scripts/kernel-patches/<series>/*.patch) applied, in a directory of
# its own named by their hash.
src_dir() {
	local series=$1 ver dir tag="" p
	local pdir=$REPO/scripts/kernel-patches/$series
	ver=$(dpkg-query -W -f='${Version}' "linux-source-$series") ||
		die "linux-source-$series is not installed"
	if [ "${2:-}" = fixed ] && ls "$pdir"/*.patch > /dev/null 2>&1; then
		tag=-fixed-$(cat "$pdir"/*.patch | sha256sum | cut -c1-8)
	fi
	dir=$CACHE/src-$ver$tag
	if [ ! -e "$dir/.ibpost-unpacked" ]; then
		log "unpacking linux-source-$series $ver${tag:+ with its fixes}"
		rm -rf "$dir" && mkdir -p "$dir" || die "cannot make $dir"
		tar -C "$dir" --strip-components=1 \
			-xf "/usr/src/linux-source-$series.tar.xz" ||
			{ rm -rf "$dir"; die "unpacking linux-source-$series failed"; }
		if [ -n "$tag" ]; then
			for p in "$pdir"/*.patch; do
				patch -d "$dir" -p1 -s < "$p" ||
					{ rm -rf "$dir"; die "applying $p failed"; }
			done
		fi
		touch "$dir/.ibpost-unpacked"
	fi
	echo "$dir"
}

# Build (or reuse) a kernel of series $1 for a kunitconfig ($2, default
# the test kernel's); prints the build directory. The cache key covers
# the config fragment's options (its "# CONFIG_... is not set" lines
# among them, not its comments), the source version with its fixes, and
# the kunit.py architecture fragment. The test kernel
# carries the series' provider fixes (src_dir); the bench kernel, which
# measures the provider users have, does not.
kernel() {
	local series=$1 cfg=${2:-$KUNITCONFIG} src key bdir start
	if [ "$cfg" = "$KUNITCONFIG" ]; then
		src=$(src_dir "$series" fixed)
	else
		src=$(src_dir "$series")
	fi
	key=$( (grep -e '^CONFIG_' -e '^# CONFIG_[A-Z0-9_]* is not set$' "$cfg"
		echo "$src";
		cat "$src/tools/testing/kunit/qemu_configs/x86_64.py") |
		sha256sum | cut -c1-16)
	bdir=$CACHE/kernel-$key
	if [ -e "$bdir/.ibpost-built" ]; then
		log "reusing cached kernel $bdir"
		echo "$bdir"
		return 0
	fi
	log "building kernel into $bdir (cold build, takes a while)"
	start=$(date +%s)
	rm -rf "$bdir" && mkdir -p "$bdir"
	(cd "$src" && python3 tools/testing/kunit/kunit.py build \
		--arch=x86_64 --kunitconfig="$cfg" --build_dir="$bdir" \
		--jobs="$(nproc)") > "$CACHE/kernel-$key.log" 2>&1 ||
		{ tail -40 "$CACHE/kernel-$key.log" >&2; die "kernel build failed"; }
	make -C "$src" O="$bdir" ARCH=x86_64 -s \
		INSTALL_MOD_PATH="$bdir/modroot" modules_install \
		>> "$CACHE/kernel-$key.log" 2>&1 || die "modules_install failed"
	echo $(( $(date +%s) - start )) > "$bdir/.ibpost-build-seconds"
	touch "$bdir/.ibpost-built"
	log "kernel built in $(cat "$bdir/.ibpost-build-seconds") s"
	echo "$bdir"
}

# The report's line for series $1's test kernel (in BDIR), got since $2
# (date +%s): $3 the seconds kernel() took; $4 "background" when
# bg_wait got it (the line's time is then the foreground's wait).
report_kernel() {
	local k=$1 t=$2 took=${3:-0} how=
	[ -f "$REPORT" ] || return 0
	[ "${4:-}" != background ] || how=" in the background ($took s, alongside the earlier stages)"
	if [ "$took" -gt 60 ]; then
		report "$REPORT" "$k" "test kernel" "built $(basename "${BDIR[$k]}") (cold)$how" 0 "$t"
	else
		report "$REPORT" "$k" "test kernel" "cached $(basename "${BDIR[$k]}")" 0 "$t"
	fi
}

# The source tree and the debug test kernel of every series to run, built
# (or found in the cache) before any stage starts.
declare -A SRC BDIR
prepare_kernels() {
	local k t
	for k in $KERNELS; do
		t=$(date +%s)
		SRC[$k]=$(src_dir "$k")
		BDIR[$k]=$(kernel "$k")
		report_kernel "$k" "$t" $(( $(date +%s) - t ))
	done
}
