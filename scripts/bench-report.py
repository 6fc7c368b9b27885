#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the bench guest's console lines into ibpost's benchmark table.

Usage: bench-report.py <console log>

Reads every "ibpost-bench: mode=... key=value ..." line (scripts/
bench-guest.sh), takes each figure's median over the rounds, and prints
the side-by-side table with the ratios issue 5 asks for: ibpost-chain and
ibpost-seed against raw verbs, ibpost against userspace perftest, and each
bandwidth as a fraction of the guest's calibrated per-byte floor.
"""
import re
import statistics
import sys
from collections import defaultdict

LINE = re.compile(r"ibpost-bench: (mode=\S+(?: \S+=\S+)*)\s*$")


def parse(path):
    rows = defaultdict(list)
    calib, failures, notes, prof = [], [], [], []
    with open(path, errors="replace") as f:
        for raw in f:
            raw = re.sub(r"^\[ *[0-9.]+\] ", "", raw.rstrip("\r\n"))
            if "ibpost-bench:" in raw and "failed" in raw:
                failures.append(raw.split("ibpost-bench: ", 1)[1])
                continue
            if raw.startswith("ibpost-bench: guest:"):
                notes.append(raw.split(": ", 1)[1])
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
                calib.append(kv)
                continue
            key = (kv["mode"], kv.get("op"), int(kv.get("size", 0)),
                   int(kv.get("chain", 1)), int(kv.get("signal", 1)),
                   int(kv.get("bh", 0)))
            rows[key].append(kv)
    return rows, calib, failures, notes, prof


def med(kvs, field):
    vals = [float(kv[field]) for kv in kvs if field in kv]
    return statistics.median(vals) if vals else None


def ratio(a, b):
    return f"{a / b:5.3f}" if a is not None and b else "  -  "


def fmt(v, width=8, prec=0):
    return f"{v:{width}.{prec}f}" if v is not None else " " * (width - 1) + "-"


def bench_rows(rows, bh):
    """Each bandwidth row in table order, with its raw, chain and seed runs
    (seed only on one-WR rows) for bottom halves enabled (0) or not (1)."""
    for op in ("send", "write", "read"):
        for size in (64, 4096, 65536):
            for sig in (1, 16):
                for chain in (1, 8, 32):
                    r = rows.get(("raw", op, size, chain, sig, bh))
                    c = rows.get(("chain", op, size, chain, sig, bh))
                    s = rows.get(("seed", op, size, 1, sig, bh)) \
                        if chain == 1 else None
                    yield op, size, chain, sig, r, c, s


def main():
    rows, calib, failures, notes, prof = parse(sys.argv[1])
    floor = statistics.median(float(c["floor_mib_per_s"]) for c in calib) \
        if calib else None
    out = []
    p = out.append
    p("ibpost benchmark: one VM boot, rxe0 loopback RC pair, medians over "
      f"{max((len(v) for v in rows.values()), default=0)} rounds")
    for n in notes:
        p(f"  {n}")
    if calib:
        c = calib[0]
        p(f"  calibration (64 KiB): memcpy {c['memcpy_mib_per_s']} MiB/s, "
          f"crc32 {c['crc32_mib_per_s']} MiB/s -> per-byte floor of rxe "
          f"1/(2/memcpy + 2/crc32) = {floor:.0f} MiB/s")
    p("")
    p("Throughput (msgs/s in thousands; MiB/s as perftest computes it)")
    hdr = ("op     size chain sig |   raw k/s chain k/s  seed k/s | chain/raw"
           " seed/raw |  raw MiB chainMiB  pf MiB | ch/raw ch/pf ch/floor")
    p(hdr)
    p("-" * len(hdr))
    worst = {"msgs": [], "mib64k": [], "post": [], "pf": []}
    for op, size, chain, sig, r, c, s in bench_rows(rows, 0):
        pfsig = chain if chain > 1 else sig
        pf = rows.get(("perftest", op, size, chain, pfsig, 0))
        if not r and not c:
            continue
        rm, cm = med(r or [], "msgs_per_s"), med(c or [], "msgs_per_s")
        sm = med(s, "msgs_per_s") if s else None
        rb, cb = med(r or [], "mib_per_s"), med(c or [], "mib_per_s")
        pb = med(pf, "mib_per_s") if pf else None
        if op in ("send", "write") and rm and cm:
            worst["msgs"].append((cm / rm, op, size, chain, sig))
        if size == 65536 and rb and cb:
            worst["mib64k"].append((cb / rb, op, size, chain, sig))
        if pb and cb:
            worst["pf"].append((cb / pb, op, size, chain, sig))
        p(f"{op:5} {size:5} {chain:5} {sig:3} | "
          f"{fmt(rm and rm / 1000, 9, 1)} {fmt(cm and cm / 1000, 9, 1)}"
          f" {fmt(sm and sm / 1000, 9, 1)} | {ratio(cm, rm):>9}"
          f" {ratio(sm, rm):>8} | {fmt(rb, 8, 1)} {fmt(cb, 8, 1)}"
          f" {fmt(pb, 7, 1)} | {ratio(cb, rb):>6} {ratio(cb, pb):>5}"
          f" {ratio(cb, floor):>8}")
    p("")
    p("Post-call cost (ns per WR inside the post call, bottom halves disabled")
    p("around every call in all modes, so rxe's tasklets run after it: bh=1)")
    hdr = ("op     size chain sig |   raw ns  chain ns   seed ns | seed/raw chain/raw"
           " | msgs/s chain/raw seed/raw")
    p(hdr)
    p("-" * len(hdr))
    for op, size, chain, sig, r, c, s in bench_rows(rows, 1):
        if not r:
            continue
        rp, cp = med(r, "post_ns"), med(c or [], "post_ns")
        sp = med(s, "post_ns") if s else None
        if sp and rp:
            worst["post"].append((sp / rp, op, size, chain, sig))
        rm = med(r, "msgs_per_s")
        cm = med(c or [], "msgs_per_s")
        sm = med(s, "msgs_per_s") if s else None
        p(f"{op:5} {size:5} {chain:5} {sig:3} | {fmt(rp, 8)} "
          f"{fmt(cp, 9)} {fmt(sp, 9)} | {ratio(sp, rp):>8} "
          f"{ratio(cp, rp):>9} |        {ratio(cm, rm):>9} "
          f"{ratio(sm, rm):>8}")
    p("")
    p("Latency, 64 B, one way (ping-pong round trip / 2)")
    p("mode          op    |  median ns   p99 ns   min ns")
    for op in ("write", "send"):
        for mode in ("lat-raw", "lat-chain", "lat-seed"):
            r = rows.get((mode, op, 64, 1, 1, 0))
            if r:
                p(f"{mode:13} {op:5} | {fmt(med(r, 'median_ns'), 10)} "
                  f"{fmt(med(r, 'p99_ns'), 8)} {fmt(med(r, 'min_ns'), 8)}")
    pl = rows.get(("perftest-lat", "write", 64, 1, 1, 0))
    if pl:
        p(f"{'perftest':13} write | {fmt(med(pl, 'median_us') * 1000, 10)} "
          f"{fmt(med(pl, 'p99_us') * 1000, 8)} {fmt(med(pl, 'min_us') * 1000, 8)}"
          "   (ib_write_lat t_typical, 99%, t_min)")
    if prof:
        p("")
        p("Profile: ibpost_post_send_mrs() and its direct callees, one-WR")
        p("chained WRITE posts, bh=1, ftrace function graph (its own overhead")
        p("included)")
        p("function                         calls   avg ns")
        for kv in sorted(prof, key=lambda k: -int(k["avg_ns"]) * int(k["calls"])):
            p(f"{kv['func'][:32]:32} {int(kv['calls']):6} {int(kv['avg_ns']):8}")
    p("")
    p("Targets (issue 5)")

    def target(name, vals, goal, better_high=True):
        if not vals:
            p(f"  {name}: no data")
            return
        w = min(vals) if better_high else max(vals)
        ok = w[0] >= goal if better_high else w[0] <= goal
        p(f"  {name}: worst {w[0]:.3f} at {w[1]} {w[2]} B chain {w[3]} "
          f"signal {w[4]} (goal {'>=' if better_high else '<='} {goal}) "
          f"{'met' if ok else 'MISSED'}")
    target("ibpost-chain/raw msgs/s, SEND and WRITE rows", worst["msgs"], 0.97)
    target("ibpost-chain/raw MiB/s, 64 KiB rows", worst["mib64k"], 0.97)
    target("ibpost-seed/raw post-call ns, one-WR posts", worst["post"], 1.10,
           better_high=False)
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
