#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the bench guest's console lines into ibpost's benchmark table.

Usage: bench-report.py <console log>

Reads every "ibpost-bench: mode=... key=value ..." line (scripts/
bench-guest.sh), takes each figure's median over the rounds, and prints
the side-by-side table with the project's ratios: ibpost-chain and
ibpost-seed against raw verbs, ibpost against userspace perftest, and each
bandwidth as a fraction of the guest's calibrated per-byte floor; then
the latency rows (softirq and busy-polled), the scaling rows (many pairs,
two threads on one QP) and the memory rows, with the spread of the rounds
(min-max) beside the medians. A smoke console (one round, few iterations,
maybe no perftest) gives the same tables with what is there.
"""
import re
import statistics
import sys
from collections import Counter, defaultdict

LINE = re.compile(r"ibpost-bench: (mode=\S+(?: \S+=\S+)*)\s*$")
FAILED = re.compile(r"ibpost-bench: .* failed: (mode=\S+(?: \S+=\S+)*)\s*$")
# Rounds in which a row's mode failed, by (table, key): such a figure is
# printed as failed and kept out of every ratio and target, never the
# median of the rounds that did not fail.
FAILS = Counter()


class Failed(list):
    """A figure that failed in @n rounds: no values, printed as failed."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def __bool__(self):
        return True     # a row to print, as failed


def row_key(kv):
    """The table a result line belongs to, and its key there."""
    mode = kv["mode"]
    if mode.startswith("scale-"):
        return "scale", (mode, kv.get("op"), int(kv.get("size", 0)),
                         int(kv.get("pairs", 1)), int(kv.get("threads", 1)),
                         int(kv.get("chain", 1)),
                         int(kv.get("shared_cq", 0)))
    if mode.startswith("destroy-"):
        return "destroy", (mode, int(kv.get("depth", 0)))
    if mode.startswith("mem-"):
        qp = kv.get("obj") == "qp"
        return "mem", (mode, kv.get("obj"), None if qp else kv.get("op"),
                       int(kv.get("size", 0)) if not qp else None,
                       int(kv.get("depth", 0)) if qp else None)
    if kv.get("dev", "rxe0") != "rxe0":
        return "siw", (mode, kv.get("op"), int(kv.get("size", 0)),
                       int(kv.get("chain", 1)), int(kv.get("signal", 1)),
                       kv["dev"])
    if (int(kv.get("mrs", 1)) > 1 or int(kv.get("inline", 0)) or
            int(kv.get("sges", 1)) > 1):
        return "var", (mode, kv.get("op"), int(kv.get("size", 0)),
                       int(kv.get("chain", 1)), int(kv.get("signal", 1)),
                       int(kv.get("mrs", 1)), int(kv.get("inline", 0)),
                       int(kv.get("sges", 1)))
    return "rows", (mode, kv.get("op"), int(kv.get("size", 0)),
                    int(kv.get("chain", 1)), int(kv.get("signal", 1)),
                    int(kv.get("bh", 0)))


def parse(path):
    tables = {"rows": defaultdict(list), "scale": defaultdict(list),
              "mem": defaultdict(list), "var": defaultdict(list),
              "destroy": defaultdict(list), "siw": defaultdict(list)}
    calib, failures, notes, prof, smoke = [], [], [], [], []
    taskruns = []
    # The round a result belongs to; None once the rounds are done (the
    # task counts and the profile run rows of their own, no round's).
    rnd = 0
    with open(path, errors="replace") as f:
        for raw in f:
            raw = re.sub(r"^\[ *[0-9.]+\] ", "", raw.rstrip("\r\n"))
            m = re.match(r"ibpost-bench: round (\d+)$", raw)
            if m:
                rnd = int(m.group(1))
                continue
            if raw.startswith("ibpost-bench: rounds done"):
                rnd = None
                continue
            if raw.startswith("ibpost-bench: smoke "):
                smoke.append(raw.split(": ", 1)[1])
                continue
            if "ibpost-bench:" in raw and "failed" in raw:
                failures.append(raw.split("ibpost-bench: ", 1)[1])
                m = FAILED.search(raw)
                if m and rnd is not None:
                    kv = dict(p.split("=", 1) for p in m.group(1).split())
                    FAILS[row_key(kv)] += 1
                continue
            if raw.startswith("ibpost-bench: guest:"):
                notes.append(raw.split(": ", 1)[1])
            if raw.startswith("ibpost-bench: taskruns "):
                kv = dict(p.split("=", 1) for p in raw.split()[2:])
                taskruns.append(kv)
                continue
            if raw.startswith("ibpost-bench: profile "):
                kv = dict(p.split("=", 1) for p in raw.split()[2:])
                prof.append(kv)
                continue
            m = LINE.search(raw)
            if not m:
                continue
            kv = dict(p.split("=", 1) for p in m.group(1).split())
            if "error" in kv:
                failures.append(m.group(1))
                continue
            if kv["mode"] == "calib":
                if "floor_mib_per_s" in kv:
                    calib.append(kv)
                continue
            if rnd is None:
                continue
            kv["_round"] = rnd
            table, key = row_key(kv)
            tables[table][key].append(kv)
    for (table, key), n in FAILS.items():
        tables[table][key] = Failed(n)
    return tables, calib, failures, notes, prof, smoke, taskruns


def vals(kvs, field, scale=1.0):
    return [float(kv[field]) * scale for kv in kvs or [] if field in kv]


def med(kvs, field, scale=1.0):
    v = vals(kvs, field, scale)
    return statistics.median(v) if v else None


def spread(kvs, field, scale=1.0, prec=0):
    """The min-max of a figure over the rounds, "(lo-hi)"; "" for none."""
    v = vals(kvs, field, scale)
    if not v:
        return ""
    sep = ".." if min(v) < 0 else "-"
    return f"({min(v):.{prec}f}{sep}{max(v):.{prec}f})"


def medspread(kvs, field, width, scale=1.0, prec=0):
    """A figure's median and, beside it, its spread over the rounds."""
    if isinstance(kvs, Failed):
        return f"failed in {kvs.n}".rjust(width)
    m = med(kvs, field, scale)
    if m is None:
        return " " * (width - 1) + "-"
    return f"{m:.{prec}f} {spread(kvs, field, scale, prec)}".rjust(width)


def by_round(a, b):
    """The pairs of figures of a and b measured in the same round."""
    rb = {y.get("_round"): y for y in b or []}
    return [(x, rb[x.get("_round")]) for x in a or []
            if x.get("_round") in rb]


def head(p, hdr):
    """A table's column header and its rule."""
    p(hdr)
    p("-" * len(hdr))


def post_cells(r, c, s):
    """The post step of raw, chain and seed: median (min-max) each."""
    return (f"{medspread(r, 'post_ns', 17)} {medspread(c, 'post_ns', 19)} "
            f"{medspread(s, 'post_ns', 19)}")


def round_vals(a, b, field):
    """a/b per round (the rows ran back to back in each)."""
    return [float(x[field]) / float(y[field]) for x, y in by_round(a, b)
            if field in x and field in y and float(y[field])]


def round_ratios(a, b, field):
    """a/b per round, as "lo-hi"."""
    r = round_vals(a, b, field)
    return f"{min(r):.3f}-{max(r):.3f}" if r else "-"


def spread_verdict(median, rounds, goal):
    """A higher-is-better ratio against @goal: met or MISSED where every
    round's figure is on one side of it, else within the rounds' spread
    (a median alone claims nothing)."""
    if rounds and min(rounds) >= goal:
        return "met"
    if rounds and max(rounds) < goal:
        return "MISSED"
    if not rounds:
        return "met (one figure)" if median >= goal else "MISSED (one figure)"
    return "within the rounds' spread"


def ratio(a, b):
    return f"{a / b:5.3f}" if a is not None and b else "  -  "


def fmt(v, width=8, prec=0):
    return f"{v:{width}.{prec}f}" if v is not None else " " * (width - 1) + "-"


def fails(table, key):
    """Rounds in which the figure of @key failed."""
    return FAILS[(table, key)]


def bench_rows(rows, bh, failed):
    """Each bandwidth row in table order, with its raw, chain and seed runs
    (seed only on one-WR rows) for bottom halves enabled (0) or not (1).
    A mode that failed in any round gives a Failed figure and its name in
    @failed, keyed by the row."""
    for op in ("send", "write", "read"):
        for size in (64, 4096, 65536):
            for sig in (1, 16, 64):
                for chain in (1, 8, 32):
                    got = []
                    for mode in ("raw", "chain", "seed"):
                        key = (mode, op, size, chain, sig, bh)
                        if mode == "seed" and chain != 1:
                            got.append(None)
                        else:
                            got.append(rows.get(key))
                        if fails("rows", key):
                            failed.setdefault((op, size, chain, sig), []) \
                                .append(f"{mode} {fails('rows', key)}")
                    yield (op, size, chain, sig) + tuple(got)


def rounds_of(*kvs):
    """Rounds measured for a row: the fewest of its modes'."""
    n = [len(k) for k in kvs if k]
    return min(n) if n else 0


def failed_note(p, failed):
    """The rows with a mode that failed in some round."""
    if not failed:
        return
    p("Failed (mode and rounds; its figures are left out above): " +
      "; ".join(f"{op} {size} B chain {chain} sig {sig}: {', '.join(f)}"
                for (op, size, chain, sig), f in failed.items()))


def split(p, rows):
    """What ibpost adds to raw per post call and per WR, from the one-WR
    and 32-WR post rows: added = a + b / chain per WR, per op."""
    ops = [op for op in ("send", "write", "read")
           if 1 in rows.get(op, {}) and 32 in rows.get(op, {})]
    if not ops:
        return
    p("")
    p("ibpost's addition to raw's post step (chain - raw), split into per call")
    p("(a) and per WR (b) from the 1- and 32-WR rows of signal 16: added per")
    p("WR = a/chain + b")
    p("(under IBPOST_BENCH_ICOUNT=1 every ns is one instruction; targets")
    p("a <= 60, b <= 50); [range]: the same from each round's pair of figures")
    for op in ops:
        d1, c1, r1 = rows[op][1]
        d32, c32, r32 = rows[op][32]
        a = (d1 - d32) * 32 / 31
        b = d1 - a
        per = []
        d1s = {x["_round"]: float(x["post_ns"]) - float(y["post_ns"])
               for x, y in by_round(c1, r1)}
        for x, y in by_round(c32, r32):
            if x["_round"] not in d1s:
                continue
            e1 = d1s[x["_round"]]
            e32 = float(x["post_ns"]) - float(y["post_ns"])
            per.append(((e1 - e32) * 32 / 31, e1 - (e1 - e32) * 32 / 31))
        rng = (f" [a {min(v[0] for v in per):.0f}-{max(v[0] for v in per):.0f},"
               f" b {min(v[1] for v in per):.0f}-{max(v[1] for v in per):.0f}]"
               if per else "")
        p(f"  {op:5}: added {d1:6.1f} per one-WR call, {d32:6.1f} per WR in "
          f"chains of 32 -> a {a:6.1f} per call, b {b:6.1f} per WR{rng}")


def variants(p, rows, var):
    """The post step of the post rows' variants: the source rotating over
    N MRs, the data inline, the source in N SGEs; beside the post row
    itself."""
    if not var:
        return
    p("")
    p("Variants of the post rows (bh=1): 'N MRs': each WR's source the next")
    p("of N buffers registered one by one (raw: the PD's local_dma_lkey;")
    p("ibpost: an MR each, looked up per SGE); 'inline': the data inline in")
    p("the WR (IB_SEND_INLINE); 'N SGEs': the source in N pieces of one")
    p("buffer, each an SGE (seed: the vector operations); 'post row': none")
    p("of these. ns per WR of the post step, median (min-max) over n rounds")
    hdr = ("op    chain sig variant   n |  raw ns (min-max)  chain ns (min-max)"
           "   seed ns (min-max) | chain/raw seed/raw")
    head(p, hdr)
    keys = sorted({(k[1], k[2], k[3], k[4]) for k in var})
    for op, size, chain, sig in keys:
        vs = sorted({k[5:] for k in var if k[1:5] == (op, size, chain, sig)},
                    key=lambda v: (v[1], v[2], v[0]))
        for v in [None] + vs:
            if v is None:
                r, c, s = (rows.get((m, op, size, chain, sig, 1))
                           for m in ("raw", "chain", "seed"))
                name = "post row"
            else:
                r, c, s = (var.get((m, op, size, chain, sig) + v)
                           for m in ("raw", "chain", "seed"))
                name = ("inline" if v[1] else f"{v[2]} SGEs" if v[2] > 1
                        else f"{v[0]} MRs")
            if chain != 1:
                s = None
            rp, cp = med(r or [], "post_ns"), med(c or [], "post_ns")
            sp = med(s, "post_ns") if s else None
            p(f"{op:5} {chain:5} {sig:3} {name:8} {rounds_of(r, c, s):2} | "
              f"{post_cells(r, c, s)} | {ratio(cp, rp):>9} "
              f"{ratio(sp, rp):>8}")


def polled(p, rows):
    """Throughput with completions busy-polled (the poll rows)."""
    keys = sorted({k[1:] for k in rows if k[0] == "raw-poll"},
                  key=lambda k: (k[0] != "write", k[1], k[2], k[3]))
    if not keys:
        return
    p("")
    p("Polled throughput: completions busy-polled on IB_POLL_DIRECT CQs by the")
    p("poster after each post call and while it waits (ib_process_cq_direct()")
    p("for raw, ibpost_poll() for ibpost); k msgs/s, median (min-max) over n")
    p("rounds; chain/raw: ratio of the medians [per-round range]")
    hdr = ("op     size chain sig  n |   raw-poll k/s (min-max) "
           " chain-poll k/s (min-max)   seed-poll k/s (min-max) |"
           " chain/raw [rounds]      seed/raw")
    head(p, hdr)
    for op, size, chain, sig, bh in keys:
        r, c, s = (rows.get((m, op, size, chain, sig, bh))
                   for m in ("raw-poll", "chain-poll", "seed-poll"))
        rm, cm = med(r or [], "msgs_per_s"), med(c or [], "msgs_per_s")
        sm = med(s, "msgs_per_s") if s else None
        p(f"{op:5} {size:5} {chain:5} {sig:3} {rounds_of(r, c, s):2} | "
          f"{medspread(r, 'msgs_per_s', 24, 0.001, 1)} "
          f"{medspread(c, 'msgs_per_s', 25, 0.001, 1)} "
          f"{medspread(s, 'msgs_per_s', 25, 0.001, 1)} | "
          f"{ratio(cm, rm):>9} [{round_ratios(c, r, 'msgs_per_s'):>11}] "
          f"{ratio(sm, rm):>8}")


def latency(p, rows):
    p("Latency, 64 B, one way (ping-pong round trip / 2); -poll: completions")
    p("busy-polled on IB_POLL_DIRECT CQs in the spin loop (ib_process_cq_direct()")
    p("for raw, ibpost_poll() for ibpost); median over rounds, (min-max) of the")
    p("rounds' figures")
    p("mode            op    |       median ns (min-max) |   p99 ns   min ns")
    for op in ("write", "send"):
        for mode in ("lat-raw", "lat-chain", "lat-seed", "lat-raw-poll",
                     "lat-chain-poll", "lat-seed-poll"):
            r = rows.get((mode, op, 64, 1, 1, 0))
            if r:
                p(f"{mode:15} {op:5} | {medspread(r, 'median_ns', 25)} | "
                  f"{fmt(med(r, 'p99_ns'), 8)} {fmt(med(r, 'min_ns'), 8)}")
        pl = rows.get(("perftest-lat", op, 64, 1, 1, 0))
        if pl:
            p(f"{'perftest':15} {op:5} | "
              f"{medspread(pl, 'median_us', 25, 1000)} | "
              f"{fmt(med(pl, 'p99_us', 1000), 8)} "
              f"{fmt(med(pl, 'min_us', 1000), 8)}"
              f"   (ib_{op}_lat t_typical, 99%, t_min)")
    p("Ratios of the medians (per-round range where both ran in each round):")
    for op in ("write", "send"):
        rp = rows.get(("lat-raw-poll", op, 64, 1, 1, 0))
        pl = rows.get(("perftest-lat", op, 64, 1, 1, 0))
        pf = med(pl, "median_us", 1000) if pl else None
        for mode in ("lat-chain-poll", "lat-seed-poll"):
            ip = rows.get((mode, op, 64, 1, 1, 0))
            if not ip:
                continue
            im = med(ip, "median_ns")
            p(f"  {op:5} {mode}: /lat-raw-poll {ratio(im, med(rp, 'median_ns'))}"
              f" ({round_ratios(ip, rp, 'median_ns')}), /perftest "
              f"{ratio(im, pf)}")


def scaling(p, scale):
    if not scale:
        return
    p("")
    p("Scaling: aggregate WRITE throughput of pairs posting at once, signal 16,")
    p("queues of 64 WRs; one posting kthread per CPU, each driving its own")
    p("pairs round-robin (threads > pairs: the threads share the pairs; raw")
    p("then serializes its posts with a spinlock). cqs: each QP's CQs its own,")
    p("or 'shared' from ib_core's CQ pool with the other pairs' QPs (raw:")
    p("ib_cq_pool_get(); ibpost: shared_cq), 2 QPs a pair. Median over rounds")
    p("(min-max); ib/raw: ratio of the medians, [per-round range]")
    hdr = ("size  pairs thr chain cqs    |     raw k/s (min-max)  ibpost k/s (min-max) |"
           " ib/raw [rounds]     |   raw MiB/s ibpost MiB/s | ib/raw")
    head(p, hdr)
    keys = sorted({k[1:] for k in scale})
    for op, size, pairs, threads, chain, shared in keys:
        r = scale.get(("scale-raw", op, size, pairs, threads, chain, shared))
        c = scale.get(("scale-chain", op, size, pairs, threads, chain,
                       shared))
        rm, cm = med(r, "msgs_per_s"), med(c, "msgs_per_s")
        rb, cb = med(r, "mib_per_s"), med(c, "mib_per_s")
        cqs = "shared" if shared else "own"
        p(f"{size:5} {pairs:5} {threads:3} {chain:5} {cqs:6} | "
          f"{medspread(r, 'msgs_per_s', 21, 0.001, 1)} "
          f"{medspread(c, 'msgs_per_s', 21, 0.001, 1)} | "
          f"{ratio(cm, rm)} [{round_ratios(c, r, 'msgs_per_s'):>11}] | "
          f"{fmt(rb, 11, 1)} {fmt(cb, 12, 1)} | {ratio(cb, rb)}")


def second_provider(p, tab, worst):
    """The bandwidth rows on the second provider (siw), one table; each
    row's chain/raw with its rounds goes to @worst for its target."""
    if not tab:
        return
    p("")
    p("A second provider: Soft-iWARP (siw0 on a dummy netdev, pairs")
    p("connected through rdma_cm over lo), signal 16, raw and chain back to")
    p("back in each round (ABBA), seed on one-WR rows; msgs/s in thousands,")
    p("median (min-max) over n rounds; chain/raw: ratio of the medians")
    p("[per-round range]")
    hdr = ("dev   op     size chain  n |    raw k/s (min-max)  chain k/s (min-max)"
           "   seed k/s | chain/raw [rounds]      seed/raw | raw MiB chainMiB")
    head(p, hdr)
    failed = {}
    ops = ("send", "write", "read")
    rows = {(k[5], k[1], k[2], k[3], k[4]) for k in tab}
    for dev, op, size, chain, sig in sorted(
            rows, key=lambda k: (k[0], ops.index(k[1]), k[2], k[3], k[4])):
        got = []
        for mode in ("raw", "chain", "seed"):
            key = (mode, op, size, chain, sig, dev)
            got.append(tab.get(key))
            if fails("siw", key):
                failed.setdefault((op, size, chain, sig), []) \
                    .append(f"{mode} {fails('siw', key)}")
        r, c, s = got
        if not r and not c:
            continue
        rm, cm = med(r or [], "msgs_per_s"), med(c or [], "msgs_per_s")
        sm = med(s, "msgs_per_s") if s else None
        rb, cb = med(r or [], "mib_per_s"), med(c or [], "mib_per_s")
        if rm and cm:
            worst.append((cm / rm, op, size, chain, sig,
                          round_vals(c, r, "msgs_per_s")))
        p(f"{dev:5} {op:5} {size:5} {chain:5} {rounds_of(r, c, s):2} | "
          f"{medspread(r, 'msgs_per_s', 20, 0.001, 1)} "
          f"{medspread(c, 'msgs_per_s', 20, 0.001, 1)} "
          f"{fmt(sm and sm / 1000, 10, 1)} | {ratio(cm, rm):>9}"
          f" [{round_ratios(c, r, 'msgs_per_s'):>11}] {ratio(sm, rm):>8} |"
          f" {fmt(rb, 7, 1)} {fmt(cb, 8, 1)}")
    failed_note(p, failed)


def memory(p, mem):
    if not mem:
        return
    counts = sorted({kv.get("count") for v in mem.values() for kv in v})
    p("")
    p("Memory: kernel memory taken per object, in bytes: all pages drawn from")
    p("the page allocator while creating them (PGALLOC - PGFREE events: slab")
    p("pages, vmalloc'd queues, large kmallocs), and the slab pages among them")
    p(f"(NR_SLAB_*_B); over {'/'.join(counts)} objects created at once,")
    p("since per-CPU caches, partly used slabs and other kernel activity make")
    p("one object's delta noise (negative values are noise). QP: send and receive")
    p("queue of that depth with their CQs (raw: also its ring of send contexts);")
    p("MR: a 4 KiB buffer registered (raw: DMA-mapped, plus ib_alloc_mr() and")
    p("IB_WR_REG_MR when remote). Median over rounds (min-max)")
    hdr = ("object                      |        raw bytes (min-max)     slab |"
           "     ibpost bytes (min-max)     slab | ib/raw")
    head(p, hdr)
    def positive(v):
        return v if v is not None and v > 0 else None

    for key in sorted({k[1:] for k in mem},
                      key=lambda k: (k[0] != "qp", k[3] or 0, k[1] or "")):
        obj, op, size, depth = key
        r = mem.get(("mem-raw",) + key)
        i = mem.get(("mem-ibpost",) + key)
        if obj == "qp":
            name = f"QP + CQs, depth {depth}"
        else:
            use = "local (msgs)" if op == "send" else f"remote {op}"
            name = f"MR {size} B, {use}"
        p(f"{name:27} | {medspread(r, 'bytes_per_obj', 26)} "
          f"{fmt(med(r, 'slab_bytes_per_obj'), 8)} | "
          f"{medspread(i, 'bytes_per_obj', 26)} "
          f"{fmt(med(i, 'slab_bytes_per_obj'), 8)} | "
          f"{ratio(positive(med(i, 'bytes_per_obj')), positive(med(r, 'bytes_per_obj')))}")


def lat_targets(p, rows):
    """Polled latency through ibpost against raw polled and perftest."""
    for op in ("write", "send"):
        ip = med(rows.get(("lat-chain-poll", op, 64, 1, 1, 0)), "median_ns")
        rp = med(rows.get(("lat-raw-poll", op, 64, 1, 1, 0)), "median_ns")
        pf = med(rows.get(("perftest-lat", op, 64, 1, 1, 0)), "median_us",
                 1000)
        if ip is None:
            p(f"  polled {op} latency: no data")
            continue
        for name, ref, goal in (("raw polled", rp, 1.05),
                                ("perftest", pf, 1.0)):
            if not ref:
                p(f"  ibpost-poll/{name} {op} latency: no data")
                continue
            ok = ip / ref <= goal
            p(f"  ibpost-poll/{name} one-way {op} latency: {ip / ref:.3f} "
              f"({ip:.0f} / {ref:.0f} ns, goal <= {goal}) "
              f"{'met' if ok else 'MISSED'}")


def scale_targets(p, scale, mem):
    """Scaling at 64 pairs and with 2 threads; memory per QP at depth 128."""
    for (mode, op, size, pairs, threads, chain, shared), c in \
            sorted(scale.items()):
        if mode != "scale-chain" or not (pairs == 64 or threads == 2 or
                                         shared):
            continue
        r = scale.get(("scale-raw", op, size, pairs, threads, chain, shared))
        cm, rm = med(c, "msgs_per_s"), med(r, "msgs_per_s")
        if cm and rm:
            ok = spread_verdict(cm / rm, round_vals(c, r, "msgs_per_s"),
                                0.95)
            cqs = ", shared CQs" if shared else ""
            p(f"  ibpost/raw aggregate msgs/s, {size} B, {pairs} pairs{cqs}, "
              f"{threads} threads, chain {chain}: {cm / rm:.3f} "
              f"[{round_ratios(c, r, 'msgs_per_s')}] (goal >= 0.95) {ok}")
    for key, i in sorted(mem.items(), key=lambda kv: str(kv[0])):
        if key[0] != "mem-ibpost" or key[1] != "qp" or key[4] != 128:
            continue
        r = mem.get(("mem-raw",) + key[1:])
        im, rm = med(i, "bytes_per_obj"), med(r, "bytes_per_obj")
        if im and rm and rm > 0:
            ok = im / rm <= 1.5
            p(f"  ibpost/raw bytes per QP, depth 128: {im / rm:.3f} "
              f"({im:.0f} / {rm:.0f}, goal <= 1.5) "
              f"{'met' if ok else 'MISSED'}")


def destroy(p, tab):
    if not tab:
        return
    p("")
    p("Destroy: the teardown of a loopback pair whose receive queues are full")
    p("(every receive granted posted, none consumed, nothing sent), every")
    p("receive flushed back once: raw drains both QPs and frees QPs, CQs and")
    p("buffers; ibpost destroys both QPs and frees the buffers. us per")
    p("teardown, median (min-max) over n rounds; recvs: receives flushed")
    p("per teardown, raw/ibpost (the rings are as deep when they are equal);")
    p("ns per receive flushed; ib/raw: ratio of the medians, [per-round")
    p("range]")
    hdr = ("depth     recvs  n |       raw us (min-max)    ibpost us (min-max) |"
           " raw ns/WR ib ns/WR | ib/raw [rounds]")
    head(p, hdr)
    for depth in sorted({k[1] for k in tab}):
        r = tab.get(("destroy-raw", depth))
        i = tab.get(("destroy-ibpost", depth))
        rt, it = med(r, "destroy_ns"), med(i, "destroy_ns")
        rw, iw = med(r, "wrs"), med(i, "wrs")
        recvs = f"{int(rw or 0)}/{int(iw or 0)}"
        p(f"{depth:5} {recvs:>9} {rounds_of(r, i):2} | "
          f"{medspread(r, 'destroy_ns', 22, 0.001)} "
          f"{medspread(i, 'destroy_ns', 22, 0.001)} | "
          f"{fmt(rt and rw and rt / rw, 9, 0)} {fmt(it and iw and it / iw, 8, 0)} | "
          f"{ratio(it, rt)} [{round_ratios(i, r, 'destroy_ns'):>11}]")
    # A teardown's fixed part (RCU grace periods, drain markers, MRs)
    # dominates its time; the slope between two depths is per receive.
    depths = sorted({k[1] for k in tab})
    for lo, hi in zip(depths, depths[1:]):
        slope = []
        for mode in ("destroy-raw", "destroy-ibpost"):
            a, b = tab.get((mode, lo)), tab.get((mode, hi))
            ta, tb = med(a, "destroy_ns"), med(b, "destroy_ns")
            wa, wb = med(a, "wrs"), med(b, "wrs")
            slope.append(f"{(tb - ta) / (wb - wa):.0f}"
                         if None not in (ta, tb, wa, wb) and wb != wa
                         else "-")
        p(f"  per receive flushed, depth {lo} -> {hi} (the slope of the "
          f"medians): raw {slope[0]} ns, ibpost {slope[1]} ns")


def main():
    tables, calib, failures, notes, prof, smoke, taskruns = parse(sys.argv[1])
    rows = tables["rows"]
    floor = statistics.median(float(c["floor_mib_per_s"]) for c in calib) \
        if calib else None
    out = []
    p = out.append
    # The guest says how many rounds it ran ("guest: ..., rounds 3"); a
    # figure measured twice a round must not count as more rounds.
    said = [re.search(r"rounds (\d+)", n) for n in notes]
    said = [int(m.group(1)) for m in said if m]
    nrounds = said[0] if said else max(
        (len(v) for t in tables.values() for v in t.values()), default=0)
    p("ibpost benchmark: one VM boot, rxe0 loopback RC pair, medians over "
      f"{nrounds} rounds")
    for n in notes:
        p(f"  {n}")
    for n in smoke:
        p(f"  {n} (a smoke run: few iterations, the figures mean nothing)")
    if calib:
        c = calib[0]
        p(f"  calibration (64 KiB): memcpy {c['memcpy_mib_per_s']} MiB/s, "
          f"crc32 {c['crc32_mib_per_s']} MiB/s -> per-byte floor of rxe "
          f"1/(2/memcpy + 2/crc32) = {floor:.0f} MiB/s")
    p("")
    p("Throughput (msgs/s in thousands; MiB/s as perftest computes it)")
    p("(chain/raw: ratio of the medians, [its range over the rounds, raw and")
    p("chain back to back in each])")
    hdr = ("op     size chain sig  n |   raw k/s chain k/s  seed k/s | chain/raw"
           " [rounds]      seed/raw |  raw MiB chainMiB  pf MiB | ch/raw ch/pf"
           " ch/floor")
    head(p, hdr)
    worst = {"msgs": [], "mib64k": [], "post": [], "pf": [], "split": {},
             "siw": []}
    failed = {}
    for op, size, chain, sig, r, c, s in bench_rows(rows, 0, failed):
        # perftest only where it signals as the row does (the same CQ
        # moderation; its post list must be a multiple of it).
        pf = rows.get(("perftest", op, size, chain, sig, 0))
        if not r and not c:
            continue
        rm, cm = med(r or [], "msgs_per_s"), med(c or [], "msgs_per_s")
        sm = med(s, "msgs_per_s") if s else None
        rb, cb = med(r or [], "mib_per_s"), med(c or [], "mib_per_s")
        pb = med(pf, "mib_per_s") if pf else None
        if rm and cm:
            worst["msgs"].append((cm / rm, op, size, chain, sig,
                                  round_vals(c, r, "msgs_per_s")))
        if size == 65536 and rb and cb:
            worst["mib64k"].append((cb / rb, op, size, chain, sig,
                                    round_vals(c, r, "mib_per_s")))
        if pb and cb:
            worst["pf"].append((cb / pb, op, size, chain, sig))
        p(f"{op:5} {size:5} {chain:5} {sig:3} {rounds_of(r, c, s):2} | "
          f"{fmt(rm and rm / 1000, 9, 1)} {fmt(cm and cm / 1000, 9, 1)}"
          f" {fmt(sm and sm / 1000, 9, 1)} | {ratio(cm, rm):>9}"
          f" [{round_ratios(c, r, 'msgs_per_s'):>11}]"
          f" {ratio(sm, rm):>8} | {fmt(rb, 8, 1)} {fmt(cb, 8, 1)}"
          f" {fmt(pb, 7, 1)} | {ratio(cb, rb):>6} {ratio(cb, pb):>5}"
          f" {ratio(cb, floor):>8}")
    failed_note(p, failed)
    p("")
    p("Post-call cost (ns per WR of the post step: the post call, the making")
    p("of its WRs and raw's own slot accounting; bottom halves disabled around")
    p("every call in all modes, so rxe's tasklets run after it: bh=1; median")
    p("(min-max) over n rounds)")
    hdr = ("op     size chain sig  n |  raw ns (min-max)  chain ns (min-max)"
           "   seed ns (min-max) | seed/raw chain/raw"
           " | msgs/s chain/raw seed/raw")
    head(p, hdr)
    failed = {}
    for op, size, chain, sig, r, c, s in bench_rows(rows, 1, failed):
        if not r:
            continue
        rp, cp = med(r or [], "post_ns"), med(c or [], "post_ns")
        sp = med(s, "post_ns") if s else None
        if sp and rp:
            worst["post"].append((sp / rp, op, size, chain, sig))
        if cp and rp:
            worst["post"].append((cp / rp, op, size, chain, sig))
            if sig == 16:
                worst["split"].setdefault(op, {})[chain] = (cp - rp, c, r)
        rm = med(r or [], "msgs_per_s")
        cm = med(c or [], "msgs_per_s")
        sm = med(s, "msgs_per_s") if s else None
        p(f"{op:5} {size:5} {chain:5} {sig:3} {rounds_of(r, c, s):2} | "
          f"{post_cells(r, c, s)} | {ratio(sp, rp):>8} "
          f"{ratio(cp, rp):>9} |        {ratio(cm, rm):>9} "
          f"{ratio(sm, rm):>8}")
    failed_note(p, failed)
    split(p, worst["split"])
    variants(p, rows, tables["var"])
    polled(p, rows)
    p("")
    latency(p, rows)
    scaling(p, tables["scale"])
    memory(p, tables["mem"])
    destroy(p, tables["destroy"])
    second_provider(p, tables["siw"], worst["siw"])
    if prof:
        p("")
        p("Profile: ibpost_post_send_mrs() and its direct callees, one-WR")
        p("chained WRITE posts, bh=1, ftrace function graph (its own overhead")
        p("included)")
        p("function                         calls   avg ns")
        for kv in sorted(prof, key=lambda k: -int(k["avg_ns"]) * int(k["calls"])):
            p(f"{kv['func'][:32]:32} {int(kv['calls']):6} {int(kv['avg_ns']):8}")
    if taskruns:
        p("")
        p("rxe's task runs per 1000 WRs, one 64 B WRITE row of chain 1, signal")
        p("16 (function profiler hit counts; raw:1 is raw with bottom halves")
        p("disabled around each post call, so that its pending softirq work runs")
        p("right after every call; rxe_do_task: a tasklet run (6.1),")
        p("do_task/do_work: a work item run (6.12); the others run per step)")
        fns = sorted({k for kv in taskruns for k in kv
                      if k not in ("mode", "wrs")})
        p("mode    " + "".join(f"{f[:14]:>15}" for f in fns))
        for kv in taskruns:
            n = int(kv.get("wrs", 0)) or 1
            p(f"{kv['mode']:7} " + "".join(
                f"{1000 * int(kv.get(f, 0)) / n:15.1f}" for f in fns))
    p("")
    p("Targets")

    def target(name, vals, goal, better_high=True):
        """Worst row; with per-round figures, a row counts as missed only
        where every round is on the wrong side of the goal (the spread
        clears it), as within the noise where the rounds straddle it."""
        if not vals:
            p(f"  {name}: no data")
            return
        w = min(vals) if better_high else max(vals)
        ok = w[0] >= goal if better_high else w[0] <= goal
        p(f"  {name}: worst {w[0]:.3f} at {w[1]} {w[2]} B chain {w[3]} "
          f"signal {w[4]} (goal {'>=' if better_high else '<='} {goal}) "
          f"{'met' if ok else 'MISSED'}")
        if not better_high or len(w) < 6:
            return
        met = sum(1 for v in vals if v[0] >= goal)
        missed = [v for v in vals if v[5] and max(v[5]) < goal]
        p(f"    {met} of {len(vals)} rows met, "
          f"{len(vals) - met - len(missed)} within the rounds' spread, "
          f"{len(missed)} below it in every round"
          + (": " + ", ".join(f"{v[1]} {v[2]} B ch {v[3]} sig {v[4]} "
                              f"({min(v[5]):.2f}-{max(v[5]):.2f})"
                              for v in missed) if missed else ""))
    target("ibpost-chain/raw msgs/s, every row", worst["msgs"], 0.97)
    target("ibpost-chain/raw MiB/s, 64 KiB rows", worst["mib64k"], 0.97)
    target("ibpost/raw post-call ns per WR, seed, chain 1 and 32",
           worst["post"], 1.25, better_high=False)
    if tables["siw"]:
        target("ibpost-chain/raw msgs/s on siw, every row", worst["siw"],
               0.97)
    lat_targets(p, rows)
    scale_targets(p, tables["scale"], tables["mem"])
    if worst["pf"]:
        vals = sorted(v[0] for v in worst["pf"])
        p(f"  ibpost-chain/perftest MiB/s: min {vals[0]:.3f}, median "
          f"{statistics.median(vals):.3f}, max {vals[-1]:.3f} over "
          f"{len(vals)} rows")
    if failures:
        p("")
        p("Runs that failed:")
        for f in failures:
            p(f"  {f}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
