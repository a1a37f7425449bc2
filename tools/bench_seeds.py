#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The seeds' published benchmark tables beside ours from this machine.

Three of the seed postings (docs/seeds.md lists all five) publish
tables that `hotlock-bench` regenerates.  This module holds the seeds'
numbers as data (SEED_TABLES, transcribed from the postings) and renders,
for each seed table whose scenario has a JSON file in a results directory
(`make bench` writes RESULTS_DIR/<stem>.json), a markdown table with the
seed's numbers and ours side by side, in the seed's shape and units, then
ratios that can be compared across machines, one sentence on how the
machines differ, and the command that made ours.

How each seed table maps onto our scenarios (our lock names in brackets):

  seed 000, TP futexes with reader grouping (TP = hotlock-rw, WW = ww-rw,
  glibc = glibc-rw; writer-preferring: ww-rw-writer, glibc-rw-writer):
    000-mixed50     50% readers, one thread per core: totals, per-thread
                    avg/min/max, futex calls by op
                    <- rwlock-50 (`rwlock --readers-pct 50`), its largest
                       thread count
    000-scaling     per-thread average by thread count
                    <- rwlock-50, every thread count
    000-readers     per-thread average at 90/95/100% readers
                    <- rwlock-90, seed000-readers-95, seed000-readers-100
    000-readers-wp  the same with the writer-preferring WW and glibc locks
                    <- the same files, if they ran the -writer locks
    000-split       separate reader and writer threads, load L = 1, 5, 50:
                    per-thread reader and writer rates
                    <- seed000-split-R-W-loadL (`rwlock --split R,W --load L`)
    000-split-wp    the same, writer-preferring locks, if they ran
  seed 004, rwsem with the owner merged into the count (its rwsem =
  hotlock-rw, with glibc-rw beside it as the stock lock):
    004-normal      total wlock and mixed kops/s by thread count, before and
                    after the patch  <- seed004-rwsem (`rwsem`)
    004-rt          the same with RT threads
                    <- seed004-rwsem-rt (`rwsem --rt`)
  seed 001, CNA (stock qspinlock = mcs, CNA = hotlock-cna):
    001-locktorture total ops with stdev, and CNA's speedup, by thread count
                    <- seed001-torture (`mutex --torture`)

A file is found by its stem first; failing that, by its contents (the
scenario and its config, e.g. a mixed rwlock run at 90% readers with more
than one thread; for 000-split any rwlock run with a split, but only when
no seed000-split-* file exists), so renamed or older result sets still
render.  A missing file skips its table; a lock missing from a run gives
'-' in its cell.  Rows are aligned by a rule each table states in a line:
by threads per CPU for 000-scaling (the seed's counts are fractions of its
36 cores), by thread count for 004 and 001 (the same 1, 2, 4, 8 on both
sides), by reader share or load L for the others.

What the numbers can say: the ratios within one machine (TP over WW, CNA's
speedup, writer over reader rate, the per-thread min over max) are the
comparable part; they say whether our lock keeps the ordering and the
shape the seed reported.  What they cannot say: the absolute rates are from
different hardware, different kernels, and different kinds of lock (the
seeds measured kernel code: TP futexes in the kernel, the kernel's rwsem,
the kernel's qspinlock under locktorture; ours are userspace locks that
park through futexes), over different run lengths, and our thread counts
(1 to 8, or 16 in full runs, on a 2-CPU VM: oversubscribed above 2) are
not the seeds' (000: 9 to 36 threads on 36 cores; 001: up to 142 on 144
hardware threads; 004: up to 128, CPU count not given).  A one-node machine
cannot show what CNA is for at all.  Ours are the run with the median
ops/s of config.repeat runs (seed 001's table: mean and stdev over them).

Use: `python3 tools/bench_seeds.py RESULTS_DIR` prints every table it can
render; `sections(results)` and `doc_sections(results, seed)` give the
markdown to other tools (the second for one seed's doc page:
docs/rwlock.md for 000 and 004, docs/cna.md for 001).  Stdlib only.
"""

import json
import math
import os
import sys
from fractions import Fraction

# ---------------------------------------------------------------------------
# The seeds' numbers.  Transcribed digit for digit; None where the seed
# prints "-".  Each table: seed id, title, source (which posting, which
# part), the seed's machine in words, its CPU count where the posting gives
# it, units, column names and rows.
# ---------------------------------------------------------------------------

_S000_SOURCE = ("Waiman Long, [PATCH v4 16/20] TP-futex: Group "
                "readers together in wait queue (lkml, 2016-12-29)")
_S000_MACHINE = ("2-socket, 36-core Xeon E5-2699 v3 (HT off), 4.10-based "
                 "kernel, TP futexes in the kernel")
_S004_SOURCE = ("Waiman Long, [PATCH v8 17/19] locking/rwsem: "
                "Merge owner into count on x86-64 (2019-05-20)")
_S004_MACHINE = ("8-socket IvyBridge-EX, 5.1-based kernel, a locking "
                 "microbenchmark on the kernel's rwsem")
_S001_SOURCE = "Alex Kogan, CNA qspinlock slow path v13, cover letter"
_S001_MACHINE = ("Oracle X5-4: 4 sockets of Xeon E7-8895 v3 @ 2.60GHz, 18 "
                 "hyperthreaded cores each (144 hardware threads); stock "
                 "kernel v5.10.0-rc7; locktorture, mean of 25 runs")

SEED_TABLES = {
    # 000, the first table: 1:1 readers/writers, 36 threads, 10 s.
    "000-mixed50": {
        "seed": "000",
        "title": "50% readers: totals, per-thread rates, futex calls",
        "source": _S000_SOURCE + ", first table",
        "machine": _S000_MACHINE,
        "cpus": 36,
        "threads": 36,
        "run_s": 10,
        "units": "total ops in one 10 s run; per-thread ops/s; futex "
                 "calls in the run",
        "columns": ("WW futex", "TP futex", "Glibc"),
        "rows": [
            ("total_ops", (35707234, 58645434, 10930422)),
            ("thread_avg", (99149, 162887, 30362)),
            ("thread_min", (93190, 38641, 29872)),
            ("thread_max", (104213, 225983, 30708)),
            ("fx_write_lock", (11161534, 14094, None)),
            ("fx_write_unlock", (8696121, 167, None)),
            ("fx_read_lock", (1717863, 6659, None)),
            ("fx_read_unlock", (4316418, 323, None)),
        ],
    },
    # 000, the second table: CPU cores scaling, average per-thread ops/s.
    "000-scaling": {
        "seed": "000",
        "title": "thread scaling, 50% readers: per-thread average",
        "source": _S000_SOURCE + ", second table (cores scaling)",
        "machine": _S000_MACHINE,
        "cpus": 36,
        "units": "average per-thread ops/s",
        "columns": ("WW futex", "TP futex", "Glibc"),
        # (threads, sockets used, values)
        "rows": [
            (9, 1, (422014, 647006, 190236)),
            (18, 2, (197145, 330353, 66934)),
            (27, 2, (127947, 213417, 43641)),
            (36, 2, (99149, 162887, 30362)),
        ],
    },
    # 000, the third table: reader percentages, 36 threads, the
    # reader-preferring WW and glibc locks.
    "000-readers": {
        "seed": "000",
        "title": "reader percentage 90/95/100%: per-thread average",
        "source": _S000_SOURCE + ", third table (reader percentages)",
        "machine": _S000_MACHINE,
        "cpus": 36,
        "threads": 36,
        "units": "average per-thread ops/s",
        "columns": ("WW futex", "TP futex", "Glibc"),
        "rows": [
            (90, (124426, 159657, 60208)),
            (95, (148905, 152315, 68666)),
            (100, (210029, 191759, 84316)),
        ],
    },
    # 000, the fourth table: the same with the writer-preferring WW and
    # glibc rwlocks (TP's column repeats the third table's).
    "000-readers-wp": {
        "seed": "000",
        "title": "reader percentage 90/95/100%, writer-preferring WW and "
                 "glibc: per-thread average",
        "source": _S000_SOURCE + ", fourth table (writer-preferring "
                                 "versions)",
        "machine": _S000_MACHINE,
        "cpus": 36,
        "threads": 36,
        "units": "average per-thread ops/s",
        "columns": ("WW futex (writer-pref.)", "TP futex",
                    "Glibc (writer-pref.)"),
        "rows": [
            (90, (87866, 159657, 26057)),
            (95, (93193, 152315, 32611)),
            (100, (193267, 191759, 88440)),
        ],
    },
    # 000, the fifth table: 18 reader and 18 writer threads, load latency
    # L, reader-preferring locks.
    "000-split": {
        "seed": "000",
        "title": "separate reader and writer threads, load L: per-thread "
                 "reader and writer rates",
        "source": _S000_SOURCE + ", fifth table (18 readers + 18 writers, "
                                 "reader-preferring)",
        "machine": _S000_MACHINE,
        "cpus": 36,
        "split": (18, 18),
        "units": "average per-thread ops/s, readers and writers apart",
        "columns": ("WW futex", "TP futex", "Glibc"),
        # (L, reader rates, writer rates)
        "rows": [
            (1, (381411, 74059, 164184), (0, 240841, 0)),
            (5, (330732, 57361, 150691), (0, 175400, 0)),
            (50, (304505, 17355, 97066), (0, 114504, 0)),
        ],
    },
    # 000, the sixth table: the same with writer-preferring rwlocks (TP is
    # a separate run: its L=50 numbers differ from the fifth table's).
    "000-split-wp": {
        "seed": "000",
        "title": "separate reader and writer threads, load L, "
                 "writer-preferring WW and glibc: per-thread rates",
        "source": _S000_SOURCE + ", sixth table (18 readers + 18 writers, "
                                 "writer-preferring)",
        "machine": _S000_MACHINE,
        "cpus": 36,
        "split": (18, 18),
        "units": "average per-thread ops/s, readers and writers apart",
        "columns": ("WW futex (writer-pref.)", "TP futex",
                    "Glibc (writer-pref.)"),
        "rows": [
            (1, (138805, 74059, 54), (31113, 240841, 56424)),
            (5, (114414, 57361, 24), (28062, 175400, 52039)),
            (50, (88619, 51483, 5), (21005, 98005, 49885)),
        ],
    },
    # 004, the first table: normal threads, total kops/s.
    "004-normal": {
        "seed": "004",
        "title": "rwsem wlock and mixed rates by thread count, normal "
                 "threads",
        "source": _S004_SOURCE + ", first table (normal threads)",
        "machine": _S004_MACHINE,
        "cpus": None,  # the posting does not give the CPU count
        "units": "total locking rate, kops/s",
        "columns": ("before: wlock", "before: mixed", "after: wlock",
                    "after: mixed"),
        "rows": [
            (1, (30422, 31034, 30323, 30379)),
            (2, (6427, 6684, 7804, 9436)),
            (4, (6742, 6738, 7568, 8268)),
            (8, (7092, 7222, 5679, 7041)),
            (16, (6882, 7163, 6848, 7652)),
            (32, (7458, 7316, 7975, 2189)),
            (64, (7906, 520, 8269, 534)),
            (128, (1680, 425, 8047, 448)),
        ],
    },
    # 004, the second table: RT threads (starts at 2 threads).
    "004-rt": {
        "seed": "004",
        "title": "rwsem wlock and mixed rates by thread count, RT threads",
        "source": _S004_SOURCE + ", second table (RT threads)",
        "machine": _S004_MACHINE,
        "cpus": None,
        "units": "total locking rate, kops/s",
        "columns": ("before: wlock", "before: mixed", "after: wlock",
                    "after: mixed"),
        "rows": [
            (2, (4065, 3642, 4756, 5062)),
            (4, (2254, 1907, 3460, 2496)),
            (8, (2386, 964, 3012, 1964)),
            (16, (2095, 1596, 3083, 1862)),
            (32, (2388, 530, 3717, 359)),
            (64, (1424, 322, 4060, 401)),
            (128, (1642, 510, 4488, 628)),
        ],
    },
    # 001, the cover letter's locktorture table (the seed file holds it on
    # one long line; docs/cna.md has the rows 1/4/16/72/142).  Each cell:
    # mean (stdev) of total ops x10^7 over 25 runs, and / speedup over
    # stock.  CNA-wo-SRO is kept as data but not rendered (we have no
    # variant without SRO).
    "001-locktorture": {
        "seed": "001",
        "title": "locktorture: total ops, stock qspinlock vs CNA",
        "source": _S001_SOURCE + ", locktorture table",
        "machine": _S001_MACHINE,
        "cpus": 144,
        "units": "total ops per locktorture run, x10^7 (run length not "
                 "given), mean (stdev) of 25 runs; speedup = over stock",
        "columns": ("stock", "CNA-wo-SRO", "CNA"),
        # (threads, (stock mean, sd), (wo-SRO mean, sd, speedup),
        #  (CNA mean, sd, speedup))
        "rows": [
            (1, (2.707, 0.127), (2.693, 0.100, 0.995), (2.718, 0.101, 1.004)),
            (2, (3.262, 0.075), (3.250, 0.132, 0.996), (3.246, 0.098, 0.995)),
            (4, (4.331, 0.125), (4.804, 0.184, 1.109), (4.733, 0.143, 1.093)),
            (8, (5.092, 0.148), (6.996, 0.206, 1.374), (7.000, 0.194, 1.375)),
            (16, (5.865, 0.119), (8.763, 0.161, 1.494), (8.778, 0.217, 1.497)),
            (32, (6.314, 0.098), (9.837, 0.256, 1.558), (9.720, 0.167, 1.539)),
            (36, (6.434, 0.101), (9.929, 0.259, 1.543), (9.988, 0.208, 1.552)),
            (72, (6.342, 0.080), (10.416, 0.244, 1.642),
             (10.224, 0.203, 1.612)),
            (108, (6.168, 0.080), (10.490, 0.199, 1.701),
             (10.334, 0.173, 1.675)),
            (142, (5.895, 0.119), (10.480, 0.171, 1.778),
             (10.424, 0.222, 1.768)),
        ],
    },
}

# Our locks for the seed's columns.
_RW = ("ww-rw", "hotlock-rw", "glibc-rw")
_RW_WP = ("ww-rw-writer", "hotlock-rw", "glibc-rw-writer")

# ---------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------


def _num(x):
    """A finite number or None."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _fi(x):
    """An integer with thousands separators, as the seeds print them."""
    x = _num(x)
    return "-" if x is None else f"{round(x):,}"


def _fk(x):
    """ops/s as kops/s."""
    x = _num(x)
    return "-" if x is None else f"{x / 1000:,.0f}"


def _fr(x):
    """A ratio or small rate: about three significant digits."""
    x = _num(x)
    if x is None:
        return "-"
    if x == math.inf:
        return "∞"
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 0.1:
        return f"{x:.2f}"
    if a >= 0.01:
        return f"{x:.3f}"
    return f"{x:.2g}"


def _div(a, b):
    a, b = _num(a), _num(b)
    if a is None or b is None:
        return None
    if b == 0:
        return math.inf if a > 0 else None
    return a / b


def _ratio(a, b):
    return _fr(_div(a, b))


def _pair(a, b):
    return f"{a} / {b}"


def _table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "---|" * len(header)]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def _per_cpu(threads, cpus):
    if not cpus:
        return "-"
    f = Fraction(threads, cpus)
    if f.denominator == 1:
        return str(f.numerator)
    return f"{float(f):.2g}"


# ---------------------------------------------------------------------------
# Reading our JSON
# ---------------------------------------------------------------------------


def _cfg(data):
    c = data.get("config") if isinstance(data, dict) else None
    return c if isinstance(c, dict) else {}


def _results_list(data):
    r = data.get("results") if isinstance(data, dict) else None
    return [e for e in r if isinstance(e, dict)] if isinstance(r, list) else []


def _find(results, prefer, pred):
    """(stem, data) of the first preferred stem whose JSON passes pred,
    else of any stem that does (sorted), else None."""
    if not isinstance(results, dict):
        return None
    for stem in prefer:
        d = results.get(stem)
        if isinstance(d, dict) and _results_list(d) and pred(d):
            return stem, d
    for stem in sorted(results):
        d = results[stem]
        if isinstance(d, dict) and _results_list(d) and pred(d):
            return stem, d
    return None


def _entry(data, lock, threads):
    for e in _results_list(data):
        if e.get("lock") == lock and e.get("threads") == threads:
            return e
    return None


def _val(entry, *keys):
    v = entry
    for k in keys:
        if not isinstance(v, dict):
            return None
        v = v.get(k)
    return _num(v)


def _threads(data):
    ts = {t for t in (e.get("threads") for e in _results_list(data))
          if isinstance(t, int) and not isinstance(t, bool) and t > 0}
    return sorted(ts)


def _cpus(data):
    c = _cfg(data)
    m = c.get("machine") if isinstance(c.get("machine"), dict) else {}
    for v in (m.get("cpus_online"), c.get("cores")):
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def _is_rwlock(d):
    return d.get("bench") == "rwlock"


def _pct(d):
    c = _cfg(d)
    if c.get("split"):
        return None
    p = c.get("readers_pct")
    return p if isinstance(p, (int, float)) else None


def _pct_pred(pct):
    """A mixed rwlock run at pct% readers with more than one thread (an
    uncontended 1-thread run is no match for the seed's tables)."""
    def pred(d):
        ts = _threads(d)
        return _is_rwlock(d) and _pct(d) == pct and bool(ts) and ts[-1] > 1
    return pred


def _machine_words(data):
    """Our machine, in words, from config.machine and config.cores."""
    c = _cfg(data)
    m = c.get("machine") if isinstance(c.get("machine"), dict) else {}
    cpus = _cpus(data)
    s = f"{cpus} CPUs" if cpus else "a machine whose CPU count is not recorded"
    if isinstance(m.get("cpu"), str) and m["cpu"].strip():
        s += " of " + m["cpu"].strip()
    if isinstance(m.get("kernel"), str) and m["kernel"].strip():
        s += " (Linux " + m["kernel"].strip() + ")"
    return s


def _command(stem, data):
    c = _cfg(data)
    cmd = c.get("command")
    if isinstance(cmd, str) and cmd.strip():
        return f"Ours: `{cmd.strip()}` ({stem}.json)."
    if isinstance(cmd, list) and cmd:
        return f"Ours: `{' '.join(str(a) for a in cmd)}` ({stem}.json)."
    bits = []
    ts = c.get("threads")
    if isinstance(ts, list) and ts:
        bits.append("threads " + ",".join(str(t) for t in ts))
    if _num(c.get("duration_s")) is not None:
        bits.append(f"duration {c['duration_s']:g} s")
    if _num(c.get("repeat")) is not None:
        bits.append(f"repeat {c['repeat']}")
    return (f"Ours: {stem}.json (its JSON does not record the command"
            + (": " + ", ".join(bits) if bits else "") + ").")


def _duration(data):
    d = _num(_cfg(data).get("duration_s"))
    return d if d and d > 0 else None


def _others(datas, shown):
    """Locks in our runs that the seed's table has no column for."""
    seen = []
    for d in datas:
        for e in _results_list(d):
            lk = e.get("lock")
            if isinstance(lk, str) and lk not in shown and lk not in seen:
                seen.append(lk)
    if not seen:
        return ""
    return ("Also run, no column in the seed's table: "
            + ", ".join(seen) + ".\n")


def _has_any(datas, locks):
    return any(_entry_any(d, lk) for d in datas for lk in locks)


def _entry_any(data, lock):
    return any(e.get("lock") == lock for e in _results_list(data))


# ---------------------------------------------------------------------------
# Seed 000
# ---------------------------------------------------------------------------


def _s000_mixed50(results):
    found = _find(results, ["rwlock-50", "rwlock"], _pct_pred(50))
    if not found:
        return None
    stem, data = found
    seed = SEED_TABLES["000-mixed50"]
    ts = _threads(data)
    if not ts:
        return None
    t = ts[-1]
    cpus = _cpus(data)
    dur = _duration(data)
    s = {k: v for k, v in seed["rows"]}
    ours = [_entry(data, lk, t) for lk in _RW]
    stot = s["total_ops"]

    def o(key, e):
        return _val(e, key) if e else None

    def fx(seed_calls, seed_total):
        if seed_calls is None:
            return "-"
        return f"{seed_calls:,} ({_fr(_div(seed_calls * 1000, seed_total))})"

    def ofx(e, op):
        if not e:
            return "-"
        n = _val(e, "futex_calls_by_op", op)
        k = _val(e, "futex_calls_per_kop_by_op", op)
        if n is None and k is None:
            return "-"
        return f"{_fi(n)} ({_fr(k)})"

    run = f"ours {dur:g} s" if dur else "ours: length not recorded"
    rows = [
        [f"Total locking ops in one run (seed 10 s; {run})",
         *[_fi(v) for v in stot],
         *[_fi(o("total_ops", e)) for e in ours]],
        ["Total ops/s (seed: its total ÷ 10 s)",
         *[_fi(v / seed["run_s"]) for v in stot],
         *[_fi(o("ops_per_sec", e)) for e in ours]],
        ["Per-thread avg/sec", *[_fi(v) for v in s["thread_avg"]],
         *[_fi(o("thread_ops_per_sec_avg", e)) for e in ours]],
        ["Per-thread min/sec", *[_fi(v) for v in s["thread_min"]],
         *[_fi(o("thread_ops_per_sec_min", e)) for e in ours]],
        ["Per-thread max/sec", *[_fi(v) for v in s["thread_max"]],
         *[_fi(o("thread_ops_per_sec_max", e)) for e in ours]],
    ]
    for op, label in (("write_lock", "Write lock"),
                      ("write_unlock", "Write unlock"),
                      ("read_lock", "Read lock"),
                      ("read_unlock", "Read unlock")):
        rows.append([f"{label} futex calls (per 1000 ops)",
                     *[fx(v, tot) for v, tot in zip(s["fx_" + op], stot)],
                     *[ofx(e, op) for e in ours]])
    header = ["", *[f"seed: {c}" for c in seed["columns"]],
              *[f"ours: {lk}" for lk in _RW]]
    main = _table(header, rows)

    def fx_total(vals_idx):
        calls = [s["fx_" + op][vals_idx] for op in
                 ("write_lock", "write_unlock", "read_lock", "read_unlock")]
        if any(c is None for c in calls):
            return None
        return sum(calls) * 1000 / stot[vals_idx]

    def ofx_total(e):
        return _val(e, "futex_calls_per_kop") if e else None

    ww, tp, gl = ours
    rrows = [
        ["TP ÷ WW, total ops/s", _ratio(stot[1], stot[0]),
         _ratio(o("ops_per_sec", tp), o("ops_per_sec", ww))],
        ["TP ÷ glibc, total ops/s", _ratio(stot[1], stot[2]),
         _ratio(o("ops_per_sec", tp), o("ops_per_sec", gl))],
        ["TP ÷ WW, futex calls per op", _ratio(fx_total(1), fx_total(0)),
         _ratio(ofx_total(tp), ofx_total(ww))],
    ]
    for i, (name, lk) in enumerate(zip(("WW", "TP", "glibc"), _RW)):
        e = ours[i]
        rrows.append([f"{name} per-thread min ÷ max (1 = fair)",
                      _ratio(s["thread_min"][i], s["thread_max"][i]),
                      _ratio(o("thread_ops_per_sec_min", e),
                             o("thread_ops_per_sec_max", e))])
    ratios = _table(["ratio", f"seed ({seed['threads']} threads)",
                     f"ours ({t} threads)"], rrows)

    md = (
        f"Seed 000: {seed['source']}; {seed['machine']}; one worker "
        f"thread per core, {seed['run_s']} s runs. "
        f"Ours: {t} threads (the largest count in {stem}.json) on "
        f"{cpus or '?'} CPUs, {_per_cpu(t, cpus)} per CPU; the seed ran "
        f"{seed['threads']} on {seed['cpus']}, 1 per CPU. TP = hotlock-rw, "
        "WW = ww-rw, glibc = glibc-rw. Rates in ops/s; futex calls are "
        "the count in one run with, in (), calls per 1000 ops (the seed's: "
        "its count ÷ its total ops).\n\n"
        f"{main}\n\n{ratios}\n\n"
        f"{_others([data], _RW)}"
        f"Machines: the seed's futexes and TP lock ran in a 4.10 kernel on "
        f"36 cores with a core per thread; ours are userspace locks on "
        f"{_machine_words(data)}, {_per_cpu(t, cpus)} threads per CPU, "
        "so a waiting thread competes with the holder for a CPU.\n"
        f"{_command(stem, data)}\n")
    return (f"Seed 000 table 1 vs ours: {seed['title']}", md)


def _s000_scaling(results):
    found = _find(results, ["rwlock-50", "rwlock"], _pct_pred(50))
    if not found:
        return None
    stem, data = found
    seed = SEED_TABLES["000-scaling"]
    cpus = _cpus(data)
    ts = _threads(data)
    if not ts:
        return None
    scpus = seed["cpus"]
    rows_by = {}
    for t, sock, vals in seed["rows"]:
        rows_by.setdefault(Fraction(t, scpus), {})["seed"] = (t, sock, vals)
    for t in ts:
        key = Fraction(t, cpus) if cpus else Fraction(10 ** 6 + t)
        rows_by.setdefault(key, {})["ours"] = t
    rows = []
    for key in sorted(rows_by):
        r = rows_by[key]
        per = f"{float(key):.2g}" if key < 10 ** 6 else "?"
        if "seed" in r:
            t, sock, v = r["seed"]
            sc = [f"{t} ({sock} socket{'s' if sock > 1 else ''})",
                  *[_fi(x) for x in v],
                  _pair(_ratio(v[1], v[0]), _ratio(v[1], v[2]))]
        else:
            sc = ["-", "", "", "", ""]
        if "ours" in r:
            t = r["ours"]
            es = [_entry(data, lk, t) for lk in _RW]
            vs = [_val(e, "thread_ops_per_sec_avg") if e else None
                  for e in es]
            oc = [str(t), *[_fi(x) for x in vs],
                  _pair(_ratio(vs[1], vs[0]), _ratio(vs[1], vs[2]))]
        else:
            oc = ["-", "", "", "", ""]
        rows.append([per, *sc, *oc])
    header = ["threads per CPU", "seed threads", "WW", "TP", "glibc",
              "TP÷WW / TP÷glibc", "our threads", "ww-rw", "hotlock-rw",
              "glibc-rw", "hotlock-rw÷ww-rw / ÷glibc-rw"]
    md = (
        f"Seed {seed['seed']}: {seed['source']}; "
        f"{seed['machine']}. Per-thread average "
        "ops/s, both sides. Rows are matched by threads per CPU (threads "
        f"÷ CPUs: the seed's 36, our {cpus or '?'}); a row one side did "
        "not run is blank on that side.\n\n"
        f"{_table(header, rows)}\n\n"
        f"Machines: the seed's 9-36 threads never outnumbered its 36 cores "
        f"(in-kernel TP futexes, 4.10); ours are userspace locks on "
        f"{_machine_words(data)}, where {ts[-1]} threads are "
        f"{_per_cpu(ts[-1], cpus)} per CPU and 1 thread is uncontended.\n"
        f"{_command(stem, data)}\n")
    return (f"Seed 000 table 2 vs ours: {seed['title']}", md)


def _readers_files(results):
    """{pct: (stem, data)} for 90, 95 and 100% readers."""
    out = {}
    for pct in (90, 95, 100):
        prefer = [f"rwlock-{pct}", f"seed000-readers-{pct}"]
        f = _find(results, prefer, _pct_pred(pct))
        if f:
            out[pct] = f
    return out


def _s000_readers(results, key, locks, heading_no):
    files = _readers_files(results)
    if not files:
        return None
    seed = SEED_TABLES[key]
    datas = [d for _, d in files.values()]
    if key.endswith("-wp") and not _has_any(datas, (locks[0], locks[2])):
        return None
    # One thread count for every row where the files share one (the
    # largest they share), else each file's largest.
    common = None
    for _, d in files.values():
        ts = set(_threads(d))
        common = ts if common is None else common & ts
    rows = []
    for pct, vals in seed["rows"]:
        sc = [*[_fi(x) for x in vals],
              _pair(_ratio(vals[1], vals[0]), _ratio(vals[1], vals[2]))]
        if pct in files:
            _, d = files[pct]
            ts = _threads(d)
            cpus = _cpus(d)
            t = max(common) if common else (ts[-1] if ts else None)
            es = [_entry(d, lk, t) if t else None for lk in locks]
            vs = [_val(e, "thread_ops_per_sec_avg") if e else None
                  for e in es]
            oc = [f"{t} ({_per_cpu(t, cpus)}/CPU)" if t else "-",
                  *[_fi(x) for x in vs],
                  _pair(_ratio(vs[1], vs[0]), _ratio(vs[1], vs[2]))]
        else:
            oc = ["not run", "", "", "", ""]
        rows.append([f"{pct}% readers", *sc, *oc])
    c0, c1, c2 = seed["columns"]
    header = ["", f"seed: {c0}", f"seed: {c1}", f"seed: {c2}",
              "seed TP÷WW / TP÷glibc", "our threads",
              *[f"ours: {lk}" for lk in locks],
              f"ours {locks[1]}÷{locks[0]} / ÷{locks[2]}"]
    first = next(iter(files.values()))
    cmds = "\n".join(_command(s, d) for _, (s, d) in sorted(files.items()))
    md = (
        f"Seed {seed['seed']}: {seed['source']}; "
        f"{seed['machine']}, {seed['threads']} "
        "threads. Per-thread average ops/s, both sides. Rows by reader "
        "percentage; ours at the largest thread count all our files have "
        "(else each file's largest).\n\n"
        f"{_table(header, rows)}\n\n"
        f"{_others(datas, set(locks) | set(_RW) | set(_RW_WP))}"
        "Machines: the seed ran 36 threads on 36 cores with TP futexes in "
        f"a 4.10 kernel; ours are userspace locks on "
        f"{_machine_words(first[1])}, oversubscribed when threads exceed "
        "CPUs, where a preempted holder can keep the lock for a time slice.\n"
        f"{cmds}\n")
    return (f"Seed 000 table {heading_no} vs ours: {seed['title']}", md)


def _split_files(results):
    """{(readers, writers): {load: (stem, data)}}."""
    groups = {}
    stems = sorted(results) if isinstance(results, dict) else []
    # The seed's own files when there are any (the suite's other split
    # runs, e.g. rwlock-split-7-1, have their own section in the report);
    # else any split run, so older result sets still render.
    own = [s for s in stems if s.startswith("seed000-split-")]
    for stem in own or stems:
        d = results[stem]
        if not (isinstance(d, dict) and _is_rwlock(d) and _results_list(d)):
            continue
        sp = _cfg(d).get("split")
        if not isinstance(sp, dict):
            continue
        r, w = sp.get("readers"), sp.get("writers")
        load = _cfg(d).get("load")
        if not all(isinstance(x, int) for x in (r, w, load)):
            continue
        groups.setdefault((r, w), {}).setdefault(load, (stem, d))
    return groups


def _s000_split(results, key, locks, heading_no):
    groups = _split_files(results)
    out = []
    seed = SEED_TABLES[key]
    for (nr, nw), by_load in sorted(groups.items()):
        datas = [d for _, d in by_load.values()]
        if key.endswith("-wp") and not _has_any(datas, (locks[0], locks[2])):
            continue
        seed_by_load = {L: (rd, wr) for L, rd, wr in seed["rows"]}
        loads = sorted(set(seed_by_load) | set(by_load))
        rows = []
        for L in loads:
            srd, swr = seed_by_load.get(L, ((None,) * 3, (None,) * 3))
            if L in by_load:
                _, d = by_load[L]
                es = [_entry(d, lk, nr + nw) for lk in locks]
                ord_ = [_val(e, "reader_thread_ops_per_sec_avg") if e
                        else None for e in es]
                owr = [_val(e, "writer_thread_ops_per_sec_avg") if e
                       else None for e in es]
            else:
                ord_ = owr = [None] * 3
            seed_has = L in seed_by_load
            ours_has = L in by_load
            rows.append([f"Reader rate, L={L}",
                         *[_fi(x) if seed_has else "" for x in srd],
                         *[_fi(x) if ours_has else "not run" for x in ord_]])
            rows.append([f"Writer rate, L={L}",
                         *[_fi(x) if seed_has else "" for x in swr],
                         *[_fi(x) if ours_has else "" for x in owr]])
            rows.append([f"*writer ÷ reader, L={L}*",
                         *[_ratio(w, r) if seed_has else ""
                           for w, r in zip(swr, srd)],
                         *[_ratio(w, r) if ours_has else ""
                           for w, r in zip(owr, ord_)]])
        header = ["", *[f"seed: {c}" for c in seed["columns"]],
                  *[f"ours: {lk}" for lk in locks]]
        first = next(iter(by_load.values()))[1]
        cpus = _cpus(first)
        sr, sw = seed["split"]
        cmds = "\n".join(_command(s, d) for _, (s, d) in
                         sorted(by_load.items()))
        md = (
            f"Seed {seed['seed']}: {seed['source']}; "
            f"{seed['machine']}. Per-thread "
            f"average ops/s of the reader threads and of the writer "
            f"threads, both sides; writer ÷ reader is 0 where writers "
            f"starve. Rows by load L; seed {sr} readers + {sw} writers on "
            f"{seed['cpus']} CPUs, ours {nr} + {nw} on {cpus or '?'} "
            f"({_per_cpu(nr + nw, cpus)} per CPU).\n\n"
            f"{_table(header, rows)}\n\n"
            f"{_others(datas, set(locks) | set(_RW) | set(_RW_WP))}"
            f"Machines: the seed's {sr + sw} threads had a core each and "
            f"TP futexes in a 4.10 kernel; ours ({nr + nw} threads) are "
            f"userspace locks on {_machine_words(first)}, so a reader or "
            "writer that is not running cannot take its turn and the rates "
            "follow the scheduler as much as the lock.\n"
            f"{cmds}\n")
        out.append((f"Seed 000 table {heading_no} vs ours: {seed['title']}"
                    f" ({nr} + {nw} threads here)", md))
    return out


# ---------------------------------------------------------------------------
# Seed 004
# ---------------------------------------------------------------------------


def _s004(results, key, rt):
    prefer = ["seed004-rwsem-rt"] if rt else ["seed004-rwsem"]
    found = _find(results, prefer,
                  lambda d: d.get("bench") == "rwsem"
                  and bool(_cfg(d).get("rt")) == rt)
    if not found:
        return None
    stem, data = found
    seed = SEED_TABLES[key]
    cpus = _cpus(data)
    ts = _threads(data)
    seed_by = {t: v for t, v in seed["rows"]}
    rows = []
    for t in sorted(set(seed_by) | set(ts)):
        if t in seed_by:
            bw, bm, aw, am = seed_by[t]
            sc = [_pair(_fi(bw), _fi(bm)), _pair(_fi(aw), _fi(am)),
                  _pair(_ratio(aw, bw), _ratio(am, bm))]
        else:
            sc = ["-", "", ""]
        if t in ts:
            v = {}
            for lk in ("hotlock-rw", "glibc-rw"):
                for mode in ("wlock", "mixed"):
                    e = _entry(data, f"{lk}/{mode}", t)
                    v[lk, mode] = _val(e, "ops_per_sec") if e else None
            oc = [_per_cpu(t, cpus),
                  _pair(_fk(v["hotlock-rw", "wlock"]),
                        _fk(v["hotlock-rw", "mixed"])),
                  _pair(_fk(v["glibc-rw", "wlock"]),
                        _fk(v["glibc-rw", "mixed"])),
                  _pair(_ratio(v["hotlock-rw", "wlock"],
                               v["glibc-rw", "wlock"]),
                        _ratio(v["hotlock-rw", "mixed"],
                               v["glibc-rw", "mixed"]))]
        else:
            oc = ["-", "", "", ""]
        rows.append([str(t), *sc, *oc])
    header = ["threads", "seed before: wlock / mixed",
              "seed after: wlock / mixed", "seed after÷before",
              "ours: threads per CPU", "ours hotlock-rw: wlock / mixed",
              "ours glibc-rw: wlock / mixed", "hotlock-rw÷glibc-rw"]
    kind = "RT (SCHED_FIFO)" if rt else "normal"
    shown = {f"{lk}/{m}" for lk in ("hotlock-rw", "glibc-rw")
             for m in ("wlock", "mixed")}
    md = (
        f"Seed {seed['seed']}: {seed['source']}; "
        f"{seed['machine']}. Total kops/s, both "
        f"sides, {kind} threads; wlock = writers only, mixed = half "
        "readers, half writers. Rows by thread count (the same counts "
        "both sides; the seed's CPU count is not in the posting). The "
        "ratio columns are not the same comparison: the seed's is its "
        "kernel after the patch over before it, ours is hotlock-rw (the "
        "rwsem design, owner in the count word) over glibc's rwlock.\n\n"
        f"{_table(header, rows)}\n\n"
        f"{_others([data], shown)}"
        "Machines: the seed measured the kernel's rwsem on an 8-socket "
        "IvyBridge-EX (the posting gives no CPU count); ours are userspace "
        f"locks on {_machine_words(data)}, so above {cpus or '?'} threads "
        "they are oversubscribed and a preempted holder or waiter shapes "
        "the rates.\n"
        f"{_command(stem, data)}\n")
    n = 2 if rt else 1
    return (f"Seed 004 table {n} vs ours: {seed['title']}", md)


# ---------------------------------------------------------------------------
# Seed 001
# ---------------------------------------------------------------------------


def _is_torture(d):
    c = _cfg(d)
    return d.get("bench") == "mutex" and (c.get("table") == "locktorture"
                                          or c.get("torture") is True)


def _s001(results):
    found = _find(results, ["seed001-torture"], _is_torture)
    if not found:
        return None
    stem, data = found
    seed = SEED_TABLES["001-locktorture"]
    cpus = _cpus(data)
    dur = _duration(data)
    ts = _threads(data)
    seed_by = {t: (st, cna) for t, st, _wo, cna in seed["rows"]}

    def ours(lock, t):
        e = _entry(data, lock, t)
        if not e:
            return None, None, None
        m = _val(e, "total_mops_mean")
        sd = _val(e, "total_mops_sd")
        if m is None:  # an older JSON: fall back on the median run
            m = _val(e, "total_ops")
            m = m / 1e6 if m is not None else None
        if dur:
            m = m / dur if m is not None else None
            sd = sd / dur if sd is not None else None
        else:
            m = sd = None
        return m, sd, _val(e, "speedup")

    def cell(m, sd, sp=None, digits=3):
        if m is None:
            return "-"
        s = f"{m:.{digits}f}"
        if sd is not None:
            s += f" ({sd:.{digits}f})"
        if sp is not None:
            s += f" / {sp:.3f}"
        return s

    rows = []
    for t in sorted(set(seed_by) | set(ts)):
        if t in seed_by:
            (sm, ssd), (cm, csd, csp) = seed_by[t]
            sc = [cell(sm, ssd), cell(cm, csd, csp)]
        else:
            sc = ["-", ""]
        if t in ts:
            mm, msd, _ = ours("mcs", t)
            cm2, csd2, csp2 = ours("hotlock-cna", t)
            if csp2 is None:
                csp2 = _div(cm2, mm)
                if csp2 == math.inf:
                    csp2 = None
            oc = [_per_cpu(t, cpus), cell(mm, msd), cell(cm2, csd2, csp2)]
        else:
            oc = ["-", "", ""]
        rows.append([str(t), *sc, *oc])
    header = ["#thr", "seed: stock, x10^7 ops/run", "seed: CNA / speedup",
              "ours: threads per CPU", "ours: mcs, Mops/s",
              "ours: hotlock-cna / speedup"]
    c = _cfg(data)
    nodes = c.get("topology_nodes")
    topo = c.get("topology")
    if nodes == 1:
        nodes_words = "one node, so CNA has no remote node to avoid"
    elif isinstance(nodes, int) and str(topo).startswith("virtual"):
        nodes_words = (f"{nodes} virtual nodes (labels for the queue "
                       "policy, with no memory distance behind them)")
    elif isinstance(nodes, int):
        nodes_words = f"{nodes} nodes in topology {topo}"
    else:
        nodes_words = "node count not recorded"
    run = f"{dur:g} s" if dur else "length (not recorded)"
    md = (
        f"Seed {seed['seed']}: {seed['source']}; "
        f"{seed['machine']}. The seed's cells: "
        "total ops per locktorture run, x10^7, mean (stdev) of 25 runs "
        "(run length not given). Ours: Mops/s, the mean (stdev) over the "
        f"{c.get('repeat', '?')} runs of total ops ÷ the run's {run}"
        ". Only the speedup (CNA over stock; ours hotlock-cna over mcs, "
        "the spinning MCS queue lock like the kernel's) compares across "
        "the machines. Rows by thread count (the same counts both sides); "
        "the seed's CNA-wo-SRO column is left out (no such variant "
        "here).\n\n"
        f"{_table(header, rows)}\n\n"
        f"{_others([data], {'mcs', 'hotlock-cna'})}"
        "Machines: the seed measured the kernel's qspinlock on 4 sockets "
        "(144 hardware threads), where CNA gains by keeping handovers on "
        f"one socket; ours are userspace locks on {_machine_words(data)}, "
        f"{nodes_words}, and above {cpus or '?'} threads the never-parking "
        "mcs lock spins against preempted holders.\n"
        f"{_command(stem, data)}\n")
    return (f"Seed 001 vs ours: {seed['title']}", md)


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


def _sections_for(results, seed):
    out = []

    def add(fn, *a):
        try:
            r = fn(results, *a)
        except Exception as exc:  # never raise on odd result files
            out.append((f"{fn.__name__}: not rendered",
                        f"(error while rendering: {exc!r})\n"))
            return
        if isinstance(r, list):
            out.extend(r)
        elif r:
            out.append(r)

    if seed == "000":
        add(_s000_mixed50)
        add(_s000_scaling)
        add(_s000_readers, "000-readers", _RW, 3)
        add(_s000_readers, "000-readers-wp", _RW_WP, 4)
        add(_s000_split, "000-split", _RW, 5)
        add(_s000_split, "000-split-wp", _RW_WP, 6)
    elif seed == "004":
        add(_s004, "004-normal", False)
        add(_s004, "004-rt", True)
    elif seed == "001":
        add(_s001)
    return out


def sections(results: dict) -> list[tuple[str, str]]:
    """(heading, markdown) for each seed table whose JSON is in results
    (a file stem -> parsed JSON map of a results directory)."""
    out = []
    for seed in ("000", "004", "001"):
        out.extend(_sections_for(results, seed))
    return out


def doc_sections(results, seed: str) -> str:
    """The markdown of one seed's tables ("000", "001" or "004"), for its
    algorithm page: docs/rwlock.md for 000 and 004, docs/cna.md for 001."""
    seed = str(seed).zfill(3)
    parts = [f"### {h}\n\n{md}" for h, md in _sections_for(results, seed)]
    return "\n".join(parts)


def load_dir(path):
    """stem -> parsed JSON for every readable *.json in path."""
    out = {}
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return out
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(path, name), encoding="utf-8") as f:
                out[name[:-5]] = json.load(f)
        except (OSError, ValueError):
            continue
    return out


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} RESULTS_DIR", file=sys.stderr)
        return 2
    results = load_dir(argv[1])
    secs = sections(results)
    if not secs:
        print(f"no seed table has its JSON in {argv[1]}")
        return 0
    for h, md in secs:
        print(f"## {h}\n\n{md}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
