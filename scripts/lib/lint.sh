# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lint.sh - the lint stage of scripts/ibpost.sh (sourced): the kernel's
# own checkers on ibpost's sources.

# The kernel's own checkers: lint_sources (checkpatch --strict and
# kernel-doc, which read the sources alone, so one kernel's scripts do)
# and lint_build (sparse and W=1, per kernel: each kernel's headers give
# other findings). Any finding fails the run.

# checkpatch --strict and kernel-doc of kernel source $1; logs in $2.
lint_sources() {
	local src=$1 out=$2 files
	local exc=$REPO/scripts/checkpatch-exceptions f
	files=$(cd "$REPO" && ls drivers/*.c drivers/*.h drivers/*/*.c \
		drivers/*/*.h include/rdma/*.h kunit/*.c kunit/*.h \
		kunit/lib/*.c kunit/lib/*.h 2>/dev/null |
		grep -v '\.mod\.c$' || true)
	log "lint ($(basename "$src")): checkpatch --strict (exceptions: scripts/checkpatch-exceptions)"
	# One checkpatch per file (its exceptions are per file), as many at
	# once as there are CPUs: a file's findings go to its own log, the
	# failures to a list.
	rm -rf "$out/checkpatch" && mkdir -p "$out/checkpatch"
	for f in $files; do
		echo "$f"
	done | xargs -P "$(nproc)" -I{} sh -c '
		f=$1 types=$(awk -v f="$1" "\$1 == f { print \$2 }" "$3")
		log=$4/$(echo "$1" | tr / _).log
		cd "$5" && "$2/scripts/checkpatch.pl" --no-tree --strict \
			--terse --show-types ${types:+--ignore "$types"} \
			-f "$f" > "$log" 2>&1 || echo "$f" >> "$4/failed"' \
		sh {} "$src" "$exc" "$out/checkpatch" "$REPO"
	cat "$out"/checkpatch/*.log > "$out/checkpatch.log"
	if [ -s "$out/checkpatch/failed" ]; then
		cat "$out/checkpatch.log" >&2
		die "checkpatch findings in $(tr '\n' ' ' < "$out/checkpatch/failed")"
	fi
	# A skip must go through ibpost_test_skip() (kunit/lib/helpers.c):
	# it fails a case that failed a check before it and logs the reason
	# where 6.1's output has none.
	if grep -n 'kunit_skip(' "$REPO"/kunit/*.[ch] "$REPO"/kunit/lib/*.[ch] |
		grep -v '^[^:]*/lib/helpers\.c:' >&2; then
		die "kunit_skip() outside kunit/lib/helpers.c: use ibpost_test_skip()"
	fi
	reports_selftest "$REPO/scripts/report-samples.txt" ||
		die "the log check misses a kind of kernel report"
	log "lint ($(basename "$src")): kernel-doc"
	(cd "$REPO" && "$src/scripts/kernel-doc" -none -Werror \
		include/rdma/*.h drivers/*.h drivers/*.c drivers/bench/*.[ch] kunit/*.[ch] \
		kunit/lib/*.[ch]) 2>&1 |
		tee "$out/kernel-doc.log" >&2
	[ -s "$out/kernel-doc.log" ] && die "kernel-doc findings"
	log "lint ($(basename "$src")): checkpatch and kernel-doc clean"
}

# sparse (C=2) and W=1: ibpost, its tests, the demo and the bench built
# against the kernel built in $2 (source $1), in $3/build, the build the
# test run's guests then load; log in $3/sparse.log.
lint_build() {
	local src=$1 kdir=$2 out=$3 b=$3/build
	log "lint ($(basename "$src")): sparse (C=2) and W=1"
	rm -rf "$b" && mkdir -p "$b"
	rsync -a --exclude=.git --exclude=out "$REPO/" "$b/"
	make -j"$(nproc)" -C "$b" KDIR="$kdir" C=2 W=1 modules demo bench \
		> "$out/sparse.log" 2>&1 ||
		{ cat "$out/sparse.log" >&2; die "sparse build failed"; }
	if grep -E "warning:|error:" "$out/sparse.log" >&2; then
		die "sparse or W=1 findings"
	fi
	log "lint ($(basename "$src")): sparse and W=1 clean"
}

# Every lint of the test run, each a line of report $1: the source
# checkers once, with the newest kernel's scripts, and the builds on
# every kernel.
lint_all() {
	local report=$1 k t newest=${KERNELS##* }
	mkdir -p "$OUTROOT/$newest"
	t=$(date +%s)
	lint_sources "${SRC[$newest]}" "$OUTROOT/$newest"
	report "$report" all lint "checkpatch --strict and kernel-doc (Linux $newest's scripts): clean" 0 "$t"
	for k in $KERNELS; do
		mkdir -p "$OUTROOT/$k"
		t=$(date +%s)
		lint_build "${SRC[$k]}" "${BDIR[$k]}" "$OUTROOT/$k"
		report "$report" "$k" sparse "sparse C=2 and W=1 against Linux $k: clean" 0 "$t"
	done
}
