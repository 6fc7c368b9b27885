#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The benchmark's instruction profile, from the pcprof plugin's windows.

Usage: report.py CONSOLE PREFIX SYSTEM_MAP MODULE=KO...

CONSOLE is the bench guest's console (its "ibpost-bench: pcprof section"
lines give each module's text addresses, its "mode=..." lines the rows),
PREFIX the plugin's out= prefix (one file PREFIX.<n> per measured phase,
in the order the rows ran), SYSTEM_MAP the kernel's System.map (the guest
boots with nokaslr), and each MODULE=KO the .ko file of a loaded module.

For every row it prints the kernel instructions per WR of its measured
phase (every instruction the vCPU ran at a kernel address: the post
calls, rxe's tasks, the completions, the bench's own loop), by module,
and ibpost's own by function; then, for each row of ibpost, what it adds
per WR to the raw verbs row of the same op, chain and signal interval;
then ibpost's own instructions by stage: per post call and per WR, per
receive reposted, per delivered completion, per unsignaled WR reclaimed
(the budget table).

A function's stage is read from its name (STAGES; what the compiler
inlined counts where it was inlined): the completion handlers and what
they call out of line, the reclaim of unsignaled slots, and the rest,
which runs in the post call.
"""
import bisect
import collections
import re
import subprocess
import sys

# ibpost's functions by stage, first match wins; anything else is post.
STAGES = (
    ('recv', re.compile(r'^(ibpost_post_recv|ibpost_post_srq_recv)')),
    ('reclaim', re.compile(r'^(ibpost_queue_advance|ibpost_queue_release|'
                           r'ibpost_send_reclaim_before|'
                           r'ibpost_send_done_before|__?ibpost_slot_release|'
                           r'ibpost_ring_reclaim)')),
    ('completion', re.compile(r'^(ibpost_(send|recv)_done|ibpost_slot_|'
                              r'ibpost_ring_deliver|ibpost_log_wc|'
                              r'ibpost_comp|ibpost_poll|ibpost_cq|'
                              r'ibpost_sq_reclaim_done)')),
)


def variant(kv):
    """A row's variant (scripts/bench-guest.sh's var rows), or "-"."""
    if kv.get('inline', '0') != '0':
        return 'inline'
    if kv.get('sges', '1') != '1':
        return f"{kv['sges']} SGEs"
    if kv.get('mrs', '1') != '1':
        return f"{kv['mrs']} MRs"
    return '-'


def stage(fn):
    """The stage a function of ibpost belongs to."""
    for name, pat in STAGES:
        if pat.match(fn):
            return name
    return 'post'


def module_symbols(ko, bases):
    """(address, size, name) of each function of a .ko whose section is
    known."""
    out = subprocess.run(['objdump', '-t', ko], capture_output=True,
                         text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 6 or ' F ' not in line or f[-3] not in bases:
            continue
        syms.append((bases[f[-3]] + int(f[0], 16), int(f[-2], 16), f[-1]))
    return syms


def main():
    console, prefix, sysmap = sys.argv[1:4]
    kos = dict(a.split('=', 1) for a in sys.argv[4:])
    bases = collections.defaultdict(dict)
    rows = []
    for line in open(console, errors='replace'):
        m = re.search(r'ibpost-bench: pcprof section (\S+) (\S+) (0x[0-9a-f]+)',
                      line)
        if m:
            bases[m.group(1)][m.group(2)] = int(m.group(3), 16)
            continue
        m = re.search(r'ibpost-bench: (mode=(raw|chain|seed) .*)', line)
        if m:
            rows.append(m.group(1))
    # Each symbol: (start, size, module, function); an address belongs to
    # the last symbol at or below it, within its size where the size is
    # known (the modules'; System.map gives none): past it, to "other"
    # (code of modules not listed, other sections).
    syms = []
    for line in open(sysmap):
        a, t, n = line.split()[:3]
        if t in 'tTwW':
            syms.append((int(a, 16), 0, 'kernel', n))
    for mod, ko in kos.items():
        if mod not in bases:
            sys.exit(f'no section addresses for {mod} in {console}')
        syms += [(a, z, mod, n) for a, z, n in module_symbols(ko, bases[mod])]
    syms.sort()
    starts = [s[0] for s in syms]
    # The windows follow the rows in order only if every row opened and
    # closed one: a row that failed before its measured phase has none.
    failed = [r for r in rows if 'post_ns=' not in r]
    if failed:
        print(f'{len(failed)} rows failed ({failed[0]}): the windows '
              'cannot be told apart, no profile')
        return

    results = {}
    stages = []
    for i, row in enumerate(rows, 1):
        kv = dict(f.split('=', 1) for f in row.split() if '=' in f)
        try:
            counts = open(f'{prefix}.{i}')
        except OSError:
            print(f'{row}: no profile window {i}: the table stops here')
            break
        wrs = int(kv.get('iters', '0')) or 1
        by_mod = collections.Counter()
        by_fn = collections.Counter()
        for line in counts:
            a, c = line.split()
            a, c = int(a, 16), int(c)
            j = bisect.bisect_right(starts, a) - 1
            if j < 0 or (syms[j][1] and a >= syms[j][0] + syms[j][1]):
                mod, fn = 'other', '?'
            else:
                mod, fn = syms[j][2], syms[j][3]
            by_mod[mod] += c
            if mod == 'ibpost':
                by_fn[fn] += c
        key = (kv['op'], kv['chain'], kv['signal'], variant(kv))
        results.setdefault(key, {})[kv['mode']] = sum(by_mod.values()) / wrs
        print(f"{kv['mode']:5} {kv['op']:5} size {kv['size']} chain "
              f"{kv['chain']:>2} signal {kv['signal']} {variant(kv)}: "
              f"{sum(by_mod.values()) / wrs:7.1f} instructions per WR "
              f"({wrs} WRs): " +
              ', '.join(f'{m} {c / wrs:.1f}'
                        for m, c in by_mod.most_common()))
        top = [(f, c / wrs) for f, c in by_fn.most_common() if c / wrs >= 0.5]
        if top:
            print('      ibpost by function: ' +
                  ', '.join(f'{f} {v:.1f}' for f, v in top))
        if kv['mode'] != 'raw':
            by_stage = collections.Counter()
            for f, c in by_fn.items():
                by_stage[stage(f)] += c
            stages.append((kv, wrs, by_stage))
    print()
    print('What ibpost adds per WR to raw verbs (same op, chain, signal):')
    for (op, chain, sig, var), r in sorted(results.items()):
        if 'raw' not in r:
            continue
        for mode in ('chain', 'seed'):
            if mode in r:
                print(f'  {mode:5} {op:5} chain {chain:>2} signal {sig} '
                      f'{var:8}: '
                      f'{r[mode] - r["raw"]:+7.1f} '
                      f'({r[mode]:.1f} against {r["raw"]:.1f})')
    budget(stages)


def budget(stages):
    """ibpost's own instructions per post call, per delivered completion
    and per unsignaled WR reclaimed, row by row."""
    if not stages:
        return
    print()
    print("ibpost's own instructions by stage (its module's code only: the")
    print('provider, ib_core and the bench are not in them): the send post,')
    print('per call and per WR; the receives reposted (SEND rows), per')
    print("receive; completions, the signaled sends' and, for SEND, the")
    print("receives'; reclaim, per WR retired unsignaled (targets:")
    print('completion <= 50, reclaim <= 2)')
    print('mode  op    chain sig variant  |  per call   per WR |  per recv |'
          ' per compl. (n) | reclaim per WR')
    for kv, wrs, by in stages:
        chain, sig = int(kv['chain']), int(kv['signal'])
        calls = -(-wrs // chain)
        signaled = -(-wrs // sig)
        compl = signaled + (wrs if kv['op'] == 'send' else 0)
        unsig = wrs - signaled
        recv = f"{by['recv'] / wrs:9.1f}" if kv['op'] == 'send' else \
            f"{'-':>9}"
        reclaim = f"{by['reclaim'] / unsig:8.2f}" if unsig else f"{'-':>8}"
        print(f"{kv['mode']:5} {kv['op']:5} {chain:5} {sig:3} "
              f"{variant(kv):8} | "
              f"{by['post'] / calls:9.1f} {by['post'] / wrs:8.1f} | {recv} | "
              f"{by['completion'] / compl:6.1f} ({compl:6}) | {reclaim}")


if __name__ == '__main__':
    main()
