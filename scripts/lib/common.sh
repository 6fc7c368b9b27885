# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# common.sh - what the stages of scripts/ibpost.sh (scripts/lib/*.sh)
# share: logging, booting a guest, packing binaries into an initramfs,
# checking a kernel log and parsing its KTAP documents. Sourced, never
# run; every function takes what it needs as arguments.

log() { printf '[ibpost %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

# Copy an executable and the shared libraries it links into root $2.
copy_with_libs() {
	local bin=$1 root=$2 lib
	mkdir -p "$root$(dirname "$bin")"
	cp -L "$bin" "$root$bin"
	for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# The userspace every guest has: busybox, iproute2's ip and rdma
# (busybox's ip cannot add dummy links), and kmod's module tools (they
# read the compressed modules of Debian's 6.12 packages, busybox's do
# not). Into root $1, with /init from $2 and the files /init sources
# (its scenarios and jobs) from directory $3 in /ibpost/guest/.
guest_userspace() {
	local root=$1 init=$2 sourced=$3 t
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,ibpost,lib/modules}
	cp /bin/busybox "$root/bin/busybox"
	ln -s busybox "$root/bin/sh"
	copy_with_libs "$(command -v rdma)" "$root"
	copy_with_libs "$(command -v ip)" "$root"
	copy_with_libs /usr/bin/kmod "$root"
	for t in modprobe insmod rmmod lsmod depmod modinfo; do
		ln -s /usr/bin/kmod "$root/sbin/$t"
	done
	cp "$init" "$root/init"
	mkdir -p "$root/ibpost/guest"
	cp "$sourced"/*.sh "$root/ibpost/guest/"
}

# Pack root $1 into the gzipped cpio $2.
pack_initramfs() {
	(cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) > "$2"
}

# Boot kernel image $1 with initramfs $2 in job mode $3, console to $4,
# killed after $5 seconds, with $6 added to the kernel command line;
# further arguments go to QEMU (the two-guest link). TCG, two vCPUs, no
# NIC attached to the host.
boot_guest() {
	local image=$1 initrd=$2 mode=$3 console=$4 timeout=$5 append=$6 rc=0
	shift 6
	log "booting $(basename "$image") (mode $mode, TCG, 2 vCPUs, no host NIC), console in $console"
	timeout --foreground -k 10 "$timeout" \
		qemu-system-x86_64 -accel tcg -nodefaults -no-reboot \
		-nographic -serial stdio -nic none -bios qboot.rom \
		-m 2048 -smp 2 -kernel "$image" -initrd "$initrd" "$@" \
		-append "console=ttyS0 log_buf_len=4M printk.time=1 printk.devkmsg=on panic=-1 oops=panic kasan_multi_shot ibpost.mode=$mode $append" \
		< /dev/null > "$console" 2>&1 || rc=$?
	[ $rc = 124 ] && log "guest timed out after $timeout s"
	return $rc
}

# Kernel reports that fail a run, wherever they appear in the log.
# RCU stalls (rcu_tasks' too), soft and hard lockups, stalled workqueues
# and RT throttling are reports too: a run that starves the CPU is not a
# clean run. A "Call Trace:" with no header of its own (a page allocation
# failure, a duplicate sysfs name) is one; so are the OOM killer, printk
# dropping messages (a report may be among them) and kmemleak turning
# itself off (later leaks would go unreported). The fault-injection knobs
# the suites arm run with verbose 0, so no expected stack dump remains.
REPORTS='BUG:|WARNING:|Oops|KASAN|INFO: (task .* blocked|possible|lockdep|trying to register)|unreferenced object|kmemleak-report: |kmemleak: .*(disabled|[Cc]annot|failed)|ODEBUG|Kernel panic|general protection fault|UBSAN|list_(add|del) corruption|circular locking|inconsistent lock state|RESTRACK|rcu: INFO|rcu_(preempt|sched|bh|tasks[a-z_]*) (self-)?detected stall|detected stalls on CPUs|soft lockup|hard LOCKUP|RT throttling|workqueue lockup|Call Trace:|Out of memory|oom-kill|invoked oom-killer|printk messages dropped|page allocation failure|cannot create duplicate filename'

# The guest of console $1 powered off by itself, and its log holds no
# kernel report.
check_log() {
	local console=$1 fail=0
	if ! grep -q "ibpost-guest: done, powering off" "$console"; then
		log "the guest did not reach power-off ($console)"
		fail=1
	fi
	if grep -nE "$REPORTS" "$console" >&2; then
		log "the kernel log $console holds the reports above"
		fail=1
	fi
	return $fail
}

# Parse the KTAP documents of console $1 with kunit.py of kernel source
# $2: the KUnit module's (between the guest's two markers) and the
# guest's own results (after the second), each on its own, since 6.12
# prints a KUnit module's header itself. Results go to $3-{module,guest}
# .{log,txt,json}. Prints "suites tests passed skipped", summed over
# both; fails when a document that is there does not parse or does not
# pass. With $4 "iwarp" a case may be skipped, but only for a reason that
# starts with "iWARP:" or "siw " (listed in $3-skips.txt); otherwise
# "skipped" is 0
# and a skip is a case that did not pass.
ktap_parse() {
	local console=$1 src=$2 base=$3 iwarp=${4:-} part fail=0 suites=0
	local tests=0 passed=0 skipped=0 j
	rm -f "$base"-*
	sed -n '/ibpost-guest: KUnit module follows/,/ibpost-guest: guest results follow/p' \
		"$console" > "$base-module.log"
	sed -n '/ibpost-guest: guest results follow/,$p' "$console" \
		> "$base-guest.log"
	for part in module guest; do
		# A document the guest announced must be there.
		if ! grep -q "KTAP version" "$base-$part.log"; then
			[ -s "$base-$part.log" ] && fail=1
			continue
		fi
		python3 "$src/tools/testing/kunit/kunit.py" parse \
			--json="$base-$part.json" "$base-$part.log" \
			> "$base-$part.txt" 2>&1 || fail=1
		cat "$base-$part.txt" >&2
		j=$(python3 - "$base-$part.json" "$base-$part.log" "$iwarp" \
			"$base-skips.txt" <<'PY' 2>/dev/null || echo "0 1 0 0"
import json, re, sys
d = json.load(open(sys.argv[1]))
def cases(g):
    for s in g.get("sub_groups", []):
        yield from cases(s)
    for t in g.get("test_cases", []):
        yield t
all_cases = list(cases(d))
passed = sum(1 for t in all_cases if t.get("status") == "PASS")
skipped = sum(1 for t in all_cases if t.get("status") == "SKIP")
# Failed cases by name, for the report line (the parse above may scroll
# out of a CI log's tail).
with open(sys.argv[4].replace("-skips.txt", "-failed.txt"), "a") as f:
    for t in all_cases:
        if t.get("status") not in ("PASS", "SKIP"):
            f.write(t.get("name", "?") + "\n")
# Every skip's reason, by the case (and parameter) it belongs to.
# (6.1's KUnit prints a skipped parameter as "ok": the suites log its
# reason as "ibpost-skip: ..." too, and the case's own line counts its
# parameters: "# <case>: pass:N fail:N skip:N total:N".)
reasons, bad, logged, params = [], [], {}, {}
for line in open(sys.argv[2], errors="replace"):
    m = re.search(r"# (\S+): pass:(\d+) fail:(\d+) skip:(\d+) total:(\d+)", line)
    if m:
        params[m.group(1)] = int(m.group(4))
        continue
    m = re.search(r"\bok \d+ (.*?) # SKIP ?(.*)$", line) or \
        re.search(r"# (\S+): ibpost-skip: ()(.*)$", line)
    if not m:
        continue
    why = m.group(m.lastindex).strip()
    case = m.group(1).strip()
    if m.re.pattern.startswith("# "):
        logged[case] = logged.get(case, 0) + 1
    r = "%s: %s" % (case, why)
    if r not in reasons:
        reasons.append(r)
    # A skip needs a reason, and only iWARP's are accepted (on siw).
    if not why or sys.argv[3] != "iwarp" or \
            not why.startswith(("iWARP:", "siw ")):
        bad.append("%s (skip: %s)" % (case, why or "no reason"))
# A case whose parameters were skipped (6.1 prints them "ok") without a
# reason logged for each is a case that did not pass. (Suites and the
# document print such a line too, "# Totals: ...": only the
# parameterised cases, a suite's groups, count.)
pcases = {c.get("name") for g in d.get("sub_groups", [])
          for c in g.get("sub_groups", [])}
for case, n in params.items():
    if case not in pcases:
        continue
    if n > logged.get(case, 0):
        bad.append("%s (%d parameters skipped, %d reasons logged)" %
                   (case, n, logged.get(case, 0)))
with open(sys.argv[4], "a") as f:
    for r in reasons:
        f.write(r + "\n")
if bad:
    with open(sys.argv[4].replace("-skips.txt", "-failed.txt"), "a") as f:
        for b in bad:
            f.write(b + "\n")
    skipped = 0
    passed = min(passed, len(all_cases) - 1)
print(len(d.get("sub_groups", [])), len(all_cases), passed, skipped)
PY
)
		set -- $j
		suites=$((suites + $1)) tests=$((tests + $2))
		passed=$((passed + $3)) skipped=$((skipped + $4))
	done
	echo "$suites $tests $passed $skipped"
	return $fail
}

# The failed cases ktap_parse listed for $1 (its base), as " (failed:
# a, b)", or nothing.
ktap_failed() {
	[ -s "$1-failed.txt" ] || return 0
	printf ' (failed: %s)' "$(sort -u "$1-failed.txt" | head -8 | paste -sd, - | sed 's/,/, /g')"
}

# Why the cases ktap_parse listed for $1 (its base) failed: each one's
# own lines of console $2 ("# <case>: ..."; a scenario prints what it
# saw there, a KUnit case its failed expectations), with the lines a
# failed expectation or assertion continues on (one printk: the same
# timestamp, "Expected ..., but" and the values), the last 40, into
# $1-why.txt, which the end of the run prints after the report (a CI log
# keeps its tail; the consoles may be gone by then). Never fails: a case
# with no such line (or no console) gets none.
ktap_why() {
	local name
	[ -s "$1-failed.txt" ] || return 0
	cut -d' ' -f1 "$1-failed.txt" | sort -u | while read -r name; do
		echo "-- $name, in $2:"
		[ -r "$2" ] || continue
		awk -v tag="# $name: " '
			index($0, tag) {
				print
				cont = $0 ~ /(EXPECTATION|ASSERTION) FAILED/
				ts = cont ? substr($0, 1, index($0, "]")) : ""
				next
			}
			cont && ts != "" && index($0, ts) == 1 { print; next }
			{ cont = 0 }' "$2" | tail -40 | cut -c1-300
	done >> "$1-why.txt"
}

# A command's start: an empty report, and no stage's why-file from an
# earlier run (print_why prints every one it finds).
report_reset() {
	: > "$REPORT"
	rm -f "$OUTROOT"/*/kunit*-why.txt
}

# After the report: every stage's ktap_why, kernel by kernel.
print_why() {
	local f
	for f in "$OUTROOT"/*/kunit*-why.txt; do
		[ -s "$f" ] || continue
		log "why the failed cases failed (${f#"$OUTROOT"/}):"
		cat "$f" >&2
	done
}

# The raw-versus-ibpost provider table of Linux $1 from the consoles $3...
# (the suite ibpost_provider's "ibpost-provider:" lines), into file $2.
provider_table() {
	local series=$1 out=$2
	shift 2
	python3 - "$series" "$@" > "$out" <<'PY'
import errno, re, sys
series, consoles = sys.argv[1], sys.argv[2:]
rows, order = {}, []
for c in consoles:
    for line in open(c, errors="replace"):
        m = re.search(r"ibpost-provider: (\S+) (\S+) raw (-?\d+) (\S+) (\d+) (\d+) ibpost (-?\d+) (\S+)", line)
        if not m:
            continue
        dev, row = m.group(1), m.group(2)
        if row not in order:
            order.append(row)
        rows[(row, dev)] = m.groups()[2:]
devs = sorted({d for _, d in rows}, key=lambda d: (not d.startswith("rxe"), d))
def en(v):
    v = int(v)
    return "0" if v == 0 else "-" + errno.errorcode.get(-v, str(-v))
print("Linux %s: the same chain (WRITE, the row's WR, WRITE) posted raw with" % series)
print("ib_post_send() on the provider's QP and through ibpost_post_send_list().")
print("bad_wr: index of the WR named (unset: left as it was); later: error")
print("completions of the raw chain within 200 ms (how many, the first's status).")
print()
# enum ib_wc_status, for the errors that came later
wcs = {"1": "LOC_LEN", "2": "LOC_QP_OP", "4": "LOC_PROT", "5": "FLUSH",
       "9": "REM_INV_REQ", "10": "REM_ACCESS", "11": "REM_OP",
       "12": "RETRY_EXC", "13": "RNR_RETRY_EXC"}
hdr = "%-20s %-5s | %-9s %-6s %-14s | %-9s %-6s" % ("row", "dev", "raw", "bad_wr",
                                                   "later", "ibpost", "bad_wr")
print(hdr)
print("-" * len(hdr))
for row in order:
    for d in devs:
        g = rows.get((row, d))
        if not g:
            continue
        raw, rpos, nerr, st, ret, ipos = g
        later = "0" if nerr == "0" else "%s %s" % (nerr, wcs.get(st, st))
        print(("%-20s %-5s | %-9s %-6s %-14s | %-9s %-6s" %
               (row, d, en(raw), rpos if raw != "0" else "-", later, en(ret),
                ipos if ret != "0" else "-")).rstrip())
PY
}

# One line of the report $1: kernel series, stage, whether it failed ($5,
# 0 for ok), what it showed, and how long it took from $6 (date +%s).
report() {
	printf '%-5s %-13s %-4s %s (%d s)\n' "$2" "$3" \
		"$([ "$5" = 0 ] && echo ok || echo FAIL)" "$4" \
		$(( $(date +%s) - $6 )) >> "$1"
}

# The totals a run must show, checked in as kunit/expected.txt: per
# kernel series and stage, "<series> <stage> suites <n> cases <n> skipped
# <n>", and the skips accepted, "skip <stage> <case>: <reason>". A run
# that shows other totals (a suite or case lost, a skip more or less) or
# a skip not listed fails; adding a case means updating the file. With
# IBPOST_EXPECT_UPDATE=1 (never in CI) the totals seen are written to
# $OUTROOT/expected-seen.txt instead, for review and check-in.
# Arguments: file, series, stage, suites, cases, skipped, the stage's
# skips file ("case: reason" lines).
expect_check() {
	local file=$1 series=$2 stage=$3 suites=$4 cases=$5 skipped=$6
	local skips=$7 want got fail=0 r
	got="$series $stage suites $suites cases $cases skipped $skipped"
	if [ "${IBPOST_EXPECT_UPDATE:-0}" = 1 ]; then
		echo "$got" >> "$OUTROOT/expected-seen.txt"
		[ -s "$skips" ] && sed "s/^/skip $stage /" "$skips" |
			sort -u >> "$OUTROOT/expected-seen.txt"
		return 0
	fi
	want=$(grep -E "^$series $stage suites " "$file" || true)
	if [ "$want" != "$got" ]; then
		log "expected totals ($(basename "$file")): ${want:-none for $series $stage}; this run: $got"
		fail=1
	fi
	if [ -s "$skips" ]; then
		while IFS= read -r r; do
			grep -qxF "skip $stage $r" "$file" && continue
			log "skip not accepted in $(basename "$file"): $stage $r"
			fail=1
		done < "$skips"
	fi
	return $fail
}

# The log check sees every kind of report: each "report" line of
# scripts/report-samples.txt (as the kernels print them) matches
# REPORTS, and no "ok" line does. Run by the lint.
reports_selftest() {
	local f=$1 kind line fail=0
	while read -r kind line; do
		case $kind in
		report) echo "$line" | grep -qE "$REPORTS" && continue ;;
		ok) echo "$line" | grep -qE "$REPORTS" || continue ;;
		*) continue ;;
		esac
		log "log check: $kind line misjudged: $line"
		fail=1
	done < "$f"
	return $fail
}
