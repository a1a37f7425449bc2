#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The seeds' published benchmark tables beside ours from this machine.

Three of the seed postings (docs/seeds.md lists all five) publish
tables that `hotlock-bench` regenerates.  The seeds' numbers are data, one
JSON file per seed table in tools/seed-tables/ (transcribed from the
postings; its README.md gives the schema).  This module reads them and
renders, for each seed table whose scenario has a JSON file in a results
directory (`make bench` writes RESULTS_DIR/<stem>.json), a markdown table
with the seed's numbers and ours side by side, in the seed's shape and
units, then ratios that can be compared across machines, one sentence on
how the machines differ, and the command that made ours.

How each seed table (named as its file) maps onto our scenarios (our lock
names in brackets; _MAP below says it in code):

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
docs/rwlock.md for 000 and 004, docs/cna.md for 001), `load_table(name)`
one seed table.  A seed table file that is missing or unreadable gives
its section as "not rendered" with the error; the others still render.
Stdlib only.
"""

import json
import math
import os
import sys
from fractions import Fraction

# ---------------------------------------------------------------------------
# The seeds' numbers: one JSON file per seed table in tools/seed-tables/
# (its README.md gives the schema and where each number comes from).
# ---------------------------------------------------------------------------

TABLES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "seed-tables")


def load_table(name):
    """The seed table tools/seed-tables/NAME.json, with "source" (its
    posting and the part of it) and "by" (its rows indexed by the field
    that row_key names) added."""
    with open(os.path.join(TABLES_DIR, name + ".json"), encoding="utf-8") as f:
        t = json.load(f)
    t["source"] = f"{t['posting']}, {t['part']}"
    t["by"] = {r[t["row_key"]]: r for r in t["rows"]}
    return t


def _heading(seed):
    n = f" table {seed['table']}" if seed["table"] is not None else ""
    return f"Seed {seed['seed']}{n} vs ours: {seed['title']}"


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


def _s000_mixed50(results, seed):
    found = _find(results, ["rwlock-50", "rwlock"], _pct_pred(50))
    if not found:
        return None
    stem, data = found
    ts = _threads(data)
    if not ts:
        return None
    t = ts[-1]
    cpus = _cpus(data)
    dur = _duration(data)
    s = {k: r["values"] for k, r in seed["by"].items()}
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
        f"Seed {seed['seed']}: {seed['source']}; {seed['machine']}; one "
        f"worker thread per core, {seed['run_s']} s runs. "
        f"Ours: {t} threads (the largest count in {stem}.json) on "
        f"{cpus or '?'} CPUs, {_per_cpu(t, cpus)} per CPU; the seed ran "
        f"{seed['threads']} on {seed['cpus']}, 1 per CPU. TP = hotlock-rw, "
        "WW = ww-rw, glibc = glibc-rw. Rates in ops/s; futex calls are "
        "the count in one run with, in (), calls per 1000 ops (the seed's: "
        "its count ÷ its total ops).\n\n"
        f"{main}\n\n{ratios}\n\n"
        f"{_others([data], _RW)}"
        f"Machines: {seed['machine_clause']}; ours are userspace locks on "
        f"{_machine_words(data)}, {_per_cpu(t, cpus)} threads per CPU, "
        "so a waiting thread competes with the holder for a CPU.\n"
        f"{_command(stem, data)}\n")
    return (_heading(seed), md)


def _s000_scaling(results, seed):
    found = _find(results, ["rwlock-50", "rwlock"], _pct_pred(50))
    if not found:
        return None
    stem, data = found
    cpus = _cpus(data)
    ts = _threads(data)
    if not ts:
        return None
    scpus = seed["cpus"]
    rows_by = {}
    for r in seed["rows"]:
        rows_by.setdefault(Fraction(r["threads"], scpus), {})["seed"] = (
            r["threads"], r["sockets"], r["values"])
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
        f"÷ CPUs: the seed's {scpus}, our {cpus or '?'}); a row one side did "
        "not run is blank on that side.\n\n"
        f"{_table(header, rows)}\n\n"
        f"Machines: {seed['machine_clause']}; ours are userspace locks on "
        f"{_machine_words(data)}, where {ts[-1]} threads are "
        f"{_per_cpu(ts[-1], cpus)} per CPU and 1 thread is uncontended.\n"
        f"{_command(stem, data)}\n")
    return (_heading(seed), md)


def _readers_files(results):
    """{pct: (stem, data)} for 90, 95 and 100% readers."""
    out = {}
    for pct in (90, 95, 100):
        prefer = [f"rwlock-{pct}", f"seed000-readers-{pct}"]
        f = _find(results, prefer, _pct_pred(pct))
        if f:
            out[pct] = f
    return out


def _s000_readers(results, seed, locks, needs=()):
    files = _readers_files(results)
    if not files:
        return None
    datas = [d for _, d in files.values()]
    if needs and not _has_any(datas, needs):
        return None
    # One thread count for every row where the files share one (the
    # largest they share), else each file's largest.
    common = None
    for _, d in files.values():
        ts = set(_threads(d))
        common = ts if common is None else common & ts
    rows = []
    for r in seed["rows"]:
        pct, vals = r["readers_pct"], r["values"]
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
        f"Machines: {seed['machine_clause']}; ours are userspace locks on "
        f"{_machine_words(first[1])}, oversubscribed when threads exceed "
        "CPUs, where a preempted holder can keep the lock for a time slice.\n"
        f"{cmds}\n")
    return (_heading(seed), md)


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


def _s000_split(results, seed, locks, needs=()):
    groups = _split_files(results)
    out = []
    seed_by_load = {L: (r["readers"], r["writers"])
                    for L, r in seed["by"].items()}
    for (nr, nw), by_load in sorted(groups.items()):
        datas = [d for _, d in by_load.values()]
        if needs and not _has_any(datas, needs):
            continue
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
        sr, sw = seed["split"]["readers"], seed["split"]["writers"]
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
            f"Machines: {seed['machine_clause']}; ours ({nr + nw} threads) "
            f"are userspace locks on {_machine_words(first)}, so a reader or "
            "writer that is not running cannot take its turn and the rates "
            "follow the scheduler as much as the lock.\n"
            f"{cmds}\n")
        out.append((f"{_heading(seed)} ({nr} + {nw} threads here)", md))
    return out


# ---------------------------------------------------------------------------
# Seed 004
# ---------------------------------------------------------------------------


def _s004(results, seed, rt):
    prefer = ["seed004-rwsem-rt"] if rt else ["seed004-rwsem"]
    found = _find(results, prefer,
                  lambda d: d.get("bench") == "rwsem"
                  and bool(_cfg(d).get("rt")) == rt)
    if not found:
        return None
    stem, data = found
    cpus = _cpus(data)
    ts = _threads(data)
    seed_by = {t: r["values"] for t, r in seed["by"].items()}
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
        f"Machines: {seed['machine_clause']}; ours are userspace "
        f"locks on {_machine_words(data)}, so above {cpus or '?'} threads "
        "they are oversubscribed and a preempted holder or waiter shapes "
        "the rates.\n"
        f"{_command(stem, data)}\n")
    return (_heading(seed), md)


# ---------------------------------------------------------------------------
# Seed 001
# ---------------------------------------------------------------------------


def _is_torture(d):
    c = _cfg(d)
    return d.get("bench") == "mutex" and (c.get("table") == "locktorture"
                                          or c.get("torture") is True)


def _s001(results, seed):
    found = _find(results, ["seed001-torture"], _is_torture)
    if not found:
        return None
    stem, data = found
    cpus = _cpus(data)
    dur = _duration(data)
    ts = _threads(data)
    stock, cna = seed["columns"].index("stock"), seed["columns"].index("CNA")
    seed_by = {t: (r["values"][stock], r["values"][cna])
               for t, r in seed["by"].items()}

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
            st, cn = seed_by[t]
            sc = [cell(st["mean"], st["sd"]),
                  cell(cn["mean"], cn["sd"], cn["speedup"])]
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
        f"Machines: {seed['machine_clause']}; ours are userspace locks "
        f"on {_machine_words(data)}, "
        f"{nodes_words}, and above {cpus or '?'} threads the never-parking "
        "mcs lock spins against preempted holders.\n"
        f"{_command(stem, data)}\n")
    return (_heading(seed), md)


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


# How each seed table maps onto our results, in report order: the table's
# file in tools/seed-tables/ (named SEED-NAME.json), the function that finds
# our JSON and sets it beside the seed's, and what that function takes
# besides: our locks for the seed's columns, and "needs", locks one of which
# our runs must have for the table to be rendered at all.
_MAP = (
    ("000-mixed50", _s000_mixed50, {}),
    ("000-scaling", _s000_scaling, {}),
    ("000-readers", _s000_readers, {"locks": _RW}),
    ("000-readers-wp", _s000_readers,
     {"locks": _RW_WP, "needs": ("ww-rw-writer", "glibc-rw-writer")}),
    ("000-split", _s000_split, {"locks": _RW}),
    ("000-split-wp", _s000_split,
     {"locks": _RW_WP, "needs": ("ww-rw-writer", "glibc-rw-writer")}),
    ("004-normal", _s004, {"rt": False}),
    ("004-rt", _s004, {"rt": True}),
    ("001-locktorture", _s001, {}),
)


def _sections_for(results, seeds):
    out = []
    for name, fn, kw in _MAP:
        if name.split("-")[0] not in seeds:
            continue
        try:
            r = fn(results, load_table(name), **kw)
        except Exception as exc:  # never raise on odd result or table files
            out.append((f"Seed table {name}: not rendered",
                        f"(error while rendering: {type(exc).__name__}: "
                        f"{exc})\n"))
            continue
        if isinstance(r, list):
            out.extend(r)
        elif r:
            out.append(r)
    return out


def sections(results: dict) -> list[tuple[str, str]]:
    """(heading, markdown) for each seed table whose JSON is in results
    (a file stem -> parsed JSON map of a results directory)."""
    return _sections_for(results, ("000", "004", "001"))


def doc_sections(results, seed: str) -> str:
    """The markdown of one seed's tables ("000", "001" or "004"), for its
    algorithm page: docs/rwlock.md for 000 and 004, docs/cna.md for 001."""
    seed = str(seed).zfill(3)
    parts = [f"### {h}\n\n{md}" for h, md in _sections_for(results, (seed,))]
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
