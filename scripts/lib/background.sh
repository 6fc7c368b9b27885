# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# background.sh - the work the test command does while its guests run
# (sourced by scripts/ibpost.sh).
#
# A TCG guest leaves about 40 % of the 2-core host idle: a vmstat of a
# 6.12 rxe guest read 35 to 85 % idle after its boot, while the suites
# wait for completions, sleep between removal cycles and hand work to
# rxe's threads. The test command uses that time for the work no guest
# needs yet, one item after the other in a process of its own (the
# "background" command of scripts/ibpost.sh):
#
#   1. the debug test kernels of the later series that are not cached (a
#      cold run: the 6.12 kernel builds while 6.1's guests run);
#   2. each stock flavour's preparation (stock_prepare: the Debian
#      packages, the DKMS build, the consumers, the guest's initramfs).
#
# It runs at SCHED_IDLE priority (chrt --idle, inherited by every make
# and compiler it starts) and in the idle I/O class, so it only takes a
# CPU that no guest thread wants. It still costs the guests: TCG loses
# its caches to a compiler beside it. Measured in a cold run (2026-12-05):
# the 6.12 kernel built beside 6.1's guests in 1,104 s, and slowed the
# single and siw guests from 217 and 191 s to 323 and 339 s (the
# two-guest stages not at all), then the foreground waited 266 s for the
# rest; about 170 s less than building it first (690 s). The stock
# preparations beside 6.12's single guest slowed it from 205 to 333 s
# for about 230 s of work, and the sparse build from 63 to 126 s: the
# foreground holds the process (SIGSTOP, bg_pause) during a sparse
# build, and during the single guests once it is past the kernels
# (bg_hold). When the foreground needs an item (bg_wait) and nothing
# else runs, the item has both CPUs. Each item leaves a marker in
# $BG_DIR: "<item>" with its result when done, "<item>.failed" when it
# failed. The process never outlives the run: a watcher in a session of
# its own (so that holding the process does not hold it) ends the
# process group once the foreground is gone, killed or not. Downloads
# (apt-get update and download of a new stock release) are never held: a
# hold while "$BG_DIR/net" exists is let go at once, and the process
# waits at the download's end while "$BG_DIR/hold" stays. Once it has
# finished ("$BG_DIR/finished"), nothing signals its process group again
# (the number may belong to another group by then).

BG_DIR=
BG_PID=

# Start the background process for the series in $@ whose kernels the
# foreground has not built (may be none); the stock preparations follow.
bg_start() {
	BG_DIR=$OUTROOT/background
	rm -rf "$BG_DIR" && mkdir -p "$BG_DIR"
	IBPOST_BG_PARENT=$$ setsid "$REPO/scripts/ibpost.sh" background \
		"$BG_DIR" "$@" > "$BG_DIR/log" 2>&1 < /dev/null &
	# Its own pid (a session and process group of its own) once it runs.
	while [ ! -s "$BG_DIR/pid" ]; do
		kill -0 $! 2> /dev/null || [ -s "$BG_DIR/pid" ] ||
			die "the background process did not start: $(cat "$BG_DIR/log")"
		sleep 0.1
	done
	BG_PID=$(cat "$BG_DIR/pid")
	trap bg_stop EXIT
}

# Stop the background process and everything it started (the run ends
# or failed before it needed the rest), and wait up to 10 s for the group
# to be gone: the foreground may then redo an item in the same place.
bg_stop() {
	local n=0
	[ -n "$BG_PID" ] || return 0
	rm -f "$BG_DIR/hold"
	# Finished, or stopped already (by a subshell's bg_wait): its group
	# number is no longer ours to signal.
	if [ ! -e "$BG_DIR/finished" ] && [ ! -e "$BG_DIR/stopped" ]; then
		kill -- "-$BG_PID" 2> /dev/null || true
		kill -CONT -- "-$BG_PID" 2> /dev/null || true
		while [ $n -lt 50 ] && kill -0 -- "-$BG_PID" 2> /dev/null; do
			sleep 0.2
			n=$((n + 1))
		done
		# Still there after 10 s: no longer asked.
		if kill -0 -- "-$BG_PID" 2> /dev/null; then
			kill -KILL -- "-$BG_PID" 2> /dev/null || true
		fi
		: > "$BG_DIR/stopped"
	fi
	BG_PID=
}

# Hold the background process while the foreground runs a CPU-bound step
# (a sparse build: it took 63 s alone and 126 s beside a DKMS build), and
# let it go on after it.
bg_pause() {
	[ -n "$BG_PID" ] && [ ! -e "$BG_DIR/finished" ] &&
		[ ! -e "$BG_DIR/stopped" ] || return 0
	: > "$BG_DIR/hold"
	kill -STOP -- "-$BG_PID" 2> /dev/null || true
	# Stopped while downloading (the marker is made before the download
	# starts): let it go on; it waits at the download's end while held.
	[ ! -e "$BG_DIR/net" ] ||
		kill -CONT -- "-$BG_PID" 2> /dev/null || true
}

# The same while a single guest runs, once the background is past the
# kernels: a test kernel's build is worth the single guests' slowdown
# beside it, the stock preparations are not (measured, see the head).
bg_hold() {
	[ -z "$BG_DIR" ] || [ ! -e "$BG_DIR/kernels-done" ] || bg_pause
}

bg_resume() {
	[ -n "$BG_PID" ] || return 0
	rm -f "$BG_DIR/hold"
	[ -e "$BG_DIR/finished" ] || [ -e "$BG_DIR/stopped" ] ||
		kill -CONT -- "-$BG_PID" 2> /dev/null || true
}

# Wait for background item $1; prints its result. Fails if the item
# failed or the background process ended without it; the process is
# then stopped, so that the foreground may do the item itself.
bg_wait() {
	local item=$1
	while [ ! -e "$BG_DIR/$item" ]; do
		# Stopped already (the foreground redid an item).
		[ -n "$BG_PID" ] && [ ! -e "$BG_DIR/stopped" ] || return 1
		if [ -e "$BG_DIR/$item.failed" ] ||
		   ! kill -0 "$BG_PID" 2> /dev/null; then
			[ -e "$BG_DIR/$item" ] && break
			log "background item $item failed; its log:"
			tail -40 "$BG_DIR/log" >&2
			bg_stop
			return 1
		fi
		sleep 2
	done
	cat "$BG_DIR/$item"
}

# Around a download in the background process (bg_pause lets it go on);
# nothing outside it.
bg_net_begin() {
	[ -z "${BG_NET:-}" ] || : > "$BG_NET"
}

bg_net_end() {
	[ -n "${BG_NET:-}" ] || return 0
	rm -f "$BG_NET"
	# Held meanwhile (let go for the download): wait for the resume.
	while [ -e "${BG_NET%/*}/hold" ]; do
		sleep 1
	done
}

# The background process's watcher: ends process group $2 (stopped or
# not) once process $1, the foreground, is gone.
bg_watch() {
	local dir=$3
	while kill -0 "$1" 2> /dev/null; do
		[ ! -e "$dir/finished" ] && [ ! -e "$dir/stopped" ] || return 0
		sleep 5
	done
	[ ! -e "$dir/finished" ] && [ ! -e "$dir/stopped" ] || return 0
	kill -- "-$2" 2> /dev/null || true
	kill -CONT -- "-$2" 2> /dev/null || true
}

# The background process itself: $1 the marker directory, then the series
# whose kernels to build. Lowers its own priority first; every child
# inherits it.
cmd_background() {
	local dir=$1 k f bdir t
	shift
	chrt --idle -p 0 $$ > /dev/null
	ionice -c 3 -p $$
	BG_NET=$dir/net
	if [ -n "${IBPOST_BG_PARENT:-}" ]; then
		setsid "$REPO/scripts/ibpost.sh" background-watch \
			"$IBPOST_BG_PARENT" $$ "$dir" < /dev/null > /dev/null 2>&1 &
	fi
	# No kernel to build: past them before the foreground looks.
	[ $# -gt 0 ] || touch "$dir/kernels-done"
	echo $$ > "$dir/pid"
	for k in "$@"; do
		t=$(date +%s)
		if bdir=$(kernel "$k"); then
			# Whole when seen: the foreground reads it at once.
			echo "$bdir $(( $(date +%s) - t ))" > "$dir/kernel-$k.tmp"
			mv "$dir/kernel-$k.tmp" "$dir/kernel-$k"
		else
			touch "$dir/kernel-$k.failed"
			return 1
		fi
	done
	touch "$dir/kernels-done"
	for k in $KERNELS; do
		for f in $STOCK_FLAVOURS; do
			# Its result (and failure) is the stage's: the foreground
			# reports it.
			stock_prepare "$k" "$REPO" "$CACHE" "$OUTROOT/$k" "$f" ||
				true
			touch "$dir/stock-$k-$f"
		done
	done
	touch "$dir/finished"
}
