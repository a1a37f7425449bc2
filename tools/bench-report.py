#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns the JSON files of `make bench` into a Markdown report with plots.

    bench-report.py RESULTS_DIR [--out FILE] [--plots-dir DIR]

RESULTS_DIR holds one JSON file per hotlock-bench scenario.  Only the files
named in SCENARIOS (and the seeds' files, SEED_PATTERNS) are read, in that
order; a named file that is absent is skipped (quick and full runs write
different sets) and any other file is ignored.

A suite file (mutex, rwlock) looks like

    {"bench": "mutex", "config": {"threads": [1, 2], "locks": [...],
     "repeat": 3, "cores": 2, "duration_s": 1, "command": "...",
     "lock_roles": {"hotlock": "hotlock", ...}, "machine": {...}, "date": ...},
     "limit_ops_per_sec": 123.4 or null,
     "results": [{"lock": "hotlock", "threads": 2, "ops_per_sec": ...,
                  "thread_ops_per_sec_min": ..., "cpu_s_per_mop": ...,
                  "runs": [{"ops_per_sec": ..., ...}, ...]}, ...]}

where each result holds the fields of its median run and "runs" every
repeat's; rwlock results add reader_/writer_ rates; mutex results (since
the wait columns) add the sampled wait per acquisition, wait_us_p50 ..
wait_us_max and wait_samples, and wait_us_max_all_runs over the repeats.  "command", "lock_roles",
"machine" and "date" are recent: without them the report says the command
was not recorded, derives the roles from the lock names, and describes this
machine at the time of the report.  wake.json has its own shape: a list of
handover modes with round-trip times.  cond.json (condition variables) is a
list of results whose "lock" is CONDVAR/WORKLOAD-CONFIG, with "cond",
"scenario" (queue, broadcast, pingpong) and the workload's own figures.

The report (RESULTS_DIR/report.md by default) opens with a summary of
hotlock against the best peer (the fastest of the locks people would pick
instead) at each thread count, then one section per scenario, the handover
costs, and the seeds' tables as rendered by tools/bench_seeds.py.  The PNG
plots go beside the report (or into --plots-dir); without matplotlib the
report is written without them.

Exit status: 0 when the report was written, 2 when RESULTS_DIR is missing,
holds none of the files, or one of them cannot be read.
"""

import argparse
import datetime
import fnmatch
import importlib.util
import itertools
import json
import math
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PROG = "bench-report"

# (file stem, what it measures, how to render it), in report order.
# kind: "sweep" = one lock per column over a thread sweep; "uncontended" =
# one thread, reported in ns per op; "split" = reader and writer threads
# apart; "wake" = the handover benchmark's own shape; "cond" = the condition
# variables' (render_cond_section).
SCENARIOS = [
    ("mutex-heavy", "mutex, long critical section (cs 100, ncs 10)", "sweep"),
    ("mutex-moderate", "mutex, moderate critical section (cs 40, ncs 80)", "sweep"),
    ("mutex-short", "mutex, short critical section (cs 10, ncs 1)", "sweep"),
    ("mutex-tiny", "mutex, tiny critical section (cs 2, ncs 2)", "sweep"),
    ("rwlock-50", "rwlock, 50% readers", "sweep"),
    ("rwlock-90", "rwlock, 90% readers", "sweep"),
    ("rwlock-read-1t", "rwlock, uncontended read lock + unlock", "uncontended"),
    ("rwlock-write-1t", "rwlock, uncontended write lock + unlock", "uncontended"),
    ("rwlock-split-7-1", "rwlock, 7 reader threads + 1 writer thread", "split"),
    ("wake", "handover cost", "wake"),
    ("cond", "condition variables", "cond"),
]

# The seeds' files: read and handed to tools/bench_seeds.py, never rendered here.
SEED_PATTERNS = ["seed000-*.json", "seed004-rwsem.json", "seed001-torture.json"]

# The locks people would pick instead of hotlock; used when a file does not
# record config.lock_roles.  Names starting with "hotlock" are hotlock's,
# the rest are references.
PEER_LOCKS = {
    "parking_lot", "rust-std", "absl", "glibc-adaptive",
    "parking_lot-rw", "rust-std-rw", "absl-rw", "glibc-rw",
}

WAKE_MODES = {
    "futex-cross": "sleeps in futex_wait, woken by futex_wake from another CPU",
    "futex-same": "sleeps in futex_wait, woken by futex_wake, both threads on one CPU",
    "spin-cross": "spins on the word (no futex), woken from another CPU",
}

# One colour per lock in every plot; locks not named here take the next of
# SPARE_COLOURS in the order they are first seen.
LOCK_COLOURS = {
    "hotlock": "#d62728", "hotlock-rw": "#d62728",
    "hotlock-fifo": "#ff7f0e", "hotlock-cna": "#e377c2",
    "parking_lot": "#1f77b4", "parking_lot-rw": "#1f77b4",
    "rust-std": "#2ca02c", "rust-std-rw": "#2ca02c",
    "absl": "#9467bd", "absl-rw": "#9467bd",
    "glibc-adaptive": "#8c564b", "glibc-rw": "#8c564b",
    "glibc": "#7f7f7f", "futex3": "#404040", "mcs": "#b0b0b0",
    "ww-rw": "#8c8c8c", "ww-rw-writer": "#404040", "glibc-rw-writer": "#c49c94",
}
# References are dashed; their markers tell them apart where greys are close.
REFERENCE_MARKERS = ["^", "v", "D", "x", "P", "*"]
SPARE_COLOURS = ["#17becf", "#bcbd22", "#aec7e8", "#98df8a", "#ff9896",
                 "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5"]
SCENARIO_COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e",
                    "#8c564b", "#17becf", "#bcbd22"]
SCENARIO_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]

FIGSIZE = (6.4, 4.0)
DPI = 100


def fail(message):
    """Prints message on stderr and exits with status 2."""
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- the data

@dataclass
class Suite:
    """One mutex or rwlock scenario file, indexed by (lock, threads)."""
    stem: str
    title: str
    kind: str
    data: dict
    locks: list      # config.locks order, then any other lock in the results
    roles: dict      # lock -> "hotlock" | "peer" | "reference"
    threads: list    # the thread counts with results, ascending
    rows: dict       # (lock, threads) -> result of the median run

    @property
    def config(self):
        return self.data.get("config") or {}

    @property
    def hotlock(self):
        """The first lock with the role hotlock, or None."""
        return next((l for l in self.locks if self.roles[l] == "hotlock"), None)

    @property
    def peers(self):
        return [l for l in self.locks if self.roles[l] == "peer"]

    def row(self, lock, threads):
        return self.rows.get((lock, threads))

    def best_peer(self, threads, key="ops_per_sec"):
        """The peer with the highest median key (an ops/s field; the split
        scenario's writer rate is judged against the best writer) at threads,
        or None."""
        rated = [(r[key], l) for l in self.peers
                 if (r := self.row(l, threads)) and r.get(key) is not None]
        return max(rated)[1] if rated else None

    def compares(self):
        """Whether the file has hotlock and at least one peer to beat."""
        return self.hotlock is not None and bool(self.peers)

    def versus_best_peer(self, threads, key="ops_per_sec"):
        """(best peer, hotlock's key ÷ the best peer's) at threads; the ratio is
        None where either lock or value is missing."""
        peer = self.best_peer(threads, key) if self.compares() else None
        h, p = self.row(self.hotlock, threads), self.row(peer, threads)
        if not h or not p:
            return peer, None
        return peer, divide(h.get(key), p.get(key))


def lock_role(name, recorded):
    """The role of a lock: from config.lock_roles, else from its name.
    rwsem's "LOCK/wlock" and "LOCK/mixed" take LOCK's role."""
    base = name.split("/")[0]
    for key in (name, base):
        if key in recorded:
            return recorded[key]
    if base.startswith("hotlock"):
        return "hotlock"
    return "peer" if base in PEER_LOCKS else "reference"


def build_suite(stem, title, kind, data):
    config = data.get("config") or {}
    rows = {(r["lock"], r["threads"]): r for r in data["results"]
            if "lock" in r and "threads" in r}
    locks = list(config.get("locks") or [])
    for lock, _ in rows:
        if lock not in locks:
            locks.append(lock)
    locks = [l for l in locks if any(k[0] == l for k in rows)]
    recorded = config.get("lock_roles") or {}
    roles = {l: lock_role(l, recorded) for l in locks}
    threads = sorted({t for _, t in rows})
    return Suite(stem, title, kind, data, locks, roles, threads, rows)


def read_json(path):
    """The parsed file; exits 2 naming it if it cannot be read or lacks results."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        fail(f"cannot read {path}: {e}")
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        fail(f"cannot read {path}: not a hotlock-bench result (no \"results\" list)")
    return data


def read_results(results_dir):
    """{stem: parsed JSON} of the scenario and seed files present, in report order."""
    if not results_dir.is_dir():
        fail(f"{results_dir} is not a directory (run `make bench` first)")
    names = [f"{stem}.json" for stem, _, _ in SCENARIOS]
    for pattern in SEED_PATTERNS:
        names += sorted(p.name for p in results_dir.glob(pattern))
    found = {}
    for name in names:
        path = results_dir / name
        if path.is_file() and path.stem not in found:
            found[path.stem] = read_json(path)
    # Any other file that is a result and says how to read it (its "layout")
    # gets the table every result has (render_layout_section), after the
    # rest; other JSON there (a comparison, say) is not the report's.
    for path in sorted(results_dir.glob("*.json")):
        if path.name in names:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if (isinstance(data, dict) and isinstance(data.get("results"), list)
                and isinstance(data.get("layout"), dict)):
            found[path.stem] = data
    if not found:
        fail(f"{results_dir} holds none of the benchmark's JSON files "
             f"({', '.join(names[:3])}, ...): run `make bench` first")
    return found


# ---------------------------------------------------------------- the run's context

# What the measured binaries are built from: a change elsewhere (the docs, a
# report being written) does not make the commit "-dirty".
CODE_PATHS = ["src", "include", "bench", "CMakeLists.txt", "Makefile", "tools/bench-suite.sh"]


def git_commit(repo):
    """Short HEAD commit, "-dirty" if tracked files of CODE_PATHS changed,
    "unknown" outside git."""
    def git(*args):
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                              text=True, check=True, timeout=30).stdout.strip()
    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", *CODE_PATHS)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return commit + ("-dirty" if dirty else "")


def first_config_value(files, key):
    """config[key] of the first file that records it, or None."""
    for data in files.values():
        value = (data.get("config") or {}).get(key)
        if value:
            return value
    return None


def local_cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def describe_machine(files):
    """One line: CPU model, CPUs online, kernel."""
    machine = first_config_value(files, "machine")
    if machine:
        source = ""
    else:
        machine = {"cpu": local_cpu_model(), "kernel": platform.release(),
                   "cpus_online": os.sysconf("SC_NPROCESSORS_ONLN")}
        source = " (this machine when the report was written: the results do not record theirs)"
    cores = machine.get("cpus_online", "?")
    return (f"{machine.get('cpu', 'unknown CPU')}, {cores} CPUs online, "
            f"kernel {machine.get('kernel', 'unknown')}{source}")


def describe_date(files):
    date = first_config_value(files, "date")
    if date:
        return date
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{now} (when the report was written: the results do not record theirs)"


# ---------------------------------------------------------------- Markdown helpers

def sig3(x):
    """x with 3 significant digits and no exponent; "–" for None."""
    if x is None:
        return "–"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.0f}"
    decimals = min(8, 2 - math.floor(math.log10(abs(x))))
    return f"{x:.{decimals}f}"


def mops(ops_per_sec):
    return None if ops_per_sec is None else ops_per_sec / 1e6


def ns_per_op(ops_per_sec):
    return None if not ops_per_sec else 1e9 / ops_per_sec


def ratio_text(r):
    """A ratio: 2 decimals below 10, 3 significant digits above."""
    return f"{r:.2f}" if r < 10 else sig3(r)


def ratio_cell(r):
    """ratio_text, bold when hotlock loses (< 1.00); "–" for None."""
    if r is None:
        return "–"
    text = ratio_text(r)
    return f"**{text}**" if round(r, 2) < 1.0 else text


def divide(a, b):
    return None if a is None or not b else a / b


def md_table(headers, rows, align):
    """A Markdown table; align holds one letter per column, l(eft) or r(ight)."""
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def run_values(result, key):
    """key of every repeat (falls back to the median run's)."""
    values = [r.get(key) for r in result.get("runs") or [] if r.get(key) is not None]
    return values or ([result[key]] if result.get(key) is not None else [])


def range_cell(values, fmt=ratio_text):
    """min–max of values, "–" if there are none."""
    if not values:
        return "–"
    return f"{fmt(min(values))}–{fmt(max(values))}"


def command_block(config):
    command = config.get("command") or "command not recorded"
    return f"```\n{command}\n```"


def run_length(config):
    parts = []
    if config.get("duration_s") is not None:
        parts.append(f"{config['duration_s']:g} s per run")
    if config.get("repeat"):
        parts.append(f"median of {config['repeat']} runs")
    if config.get("cores"):
        parts.append(f"{config['cores']} cores")
    return ", ".join(parts)


def describe_parameters(suite):
    """One sentence on what the scenario's threads do."""
    c = suite.config
    threads = ", ".join(str(t) for t in suite.threads)
    if suite.data.get("bench") == "mutex":
        work = (f"Each thread loops: lock, {c.get('cs', '?')} × (pause + write two shared "
                f"cache lines), unlock, {c.get('ncs', '?')} × (pause + private write)")
    else:
        split = c.get("split")
        who = (f"{split['readers']} threads only read and {split['writers']} only write"
               if split else f"each op reads with chance {c.get('readers_pct', '?')}%")
        work = (f"Reader-writer lock: {who}; inside, {c.get('load', '?')} × (pause + read or "
                f"write shared lines), outside, {c.get('ncs', '?')} × (pause + private write)")
    return f"{work}; threads: {threads}; {run_length(c)}."


def roles_line(suite):
    def named(role):
        return ", ".join(l for l in suite.locks if suite.roles[l] == role) or "none"
    return (f"hotlock: {named('hotlock')}; peers: {named('peer')}; "
            f"references: {named('reference')}.")


def image_link(plots, name, alt):
    """A Markdown image line for a plot that was drawn, else ""."""
    return f"![{alt}]({plots[name]})" if name in plots else ""


# ---------------------------------------------------------------- report sections

def render_header(files, repo, plot_note):
    """The title and the run's date, commit, machine and how to regenerate it."""
    lines = [
        "# hotlock benchmark report",
        "",
        f"- Date: {describe_date(files)}",
        f"- Commit: {git_commit(repo)}",
        f"- Machine: {describe_machine(files)}",
    ]
    settings = first_config_value(files, "hotlock_config")
    if settings:
        lines.append("- hotlock settings: " +
                     ", ".join(f"{k} {v}" for k, v in settings.items()))
    lines += [
        "- Regenerate: `make bench` (quick set) or `make bench FULL=1` (every scenario); "
        "this report: `tools/bench-report.py RESULTS_DIR`.",
    ]
    if plot_note:
        lines.append(f"- Plots: {plot_note}")
    return "\n".join(lines)


def summary_rate(suite, result, key="ops_per_sec"):
    """A summary cell: Mops/s, with ns/op for the uncontended scenarios."""
    value = result.get(key)
    cell = sig3(mops(value))
    if suite.kind == "uncontended" and value:
        cell += f" ({sig3(ns_per_op(value))} ns/op)"
    return cell


def summary_row(suite, label, t, key):
    """[scenario, threads, hotlock, rate, best peer, rate, ratio, ratio over repeats]
    comparing key (an ops/s field) at t threads, or None without both locks."""
    peer = suite.best_peer(t, key)
    h, p = suite.row(suite.hotlock, t), suite.row(peer, t)
    if not h or not p:
        return None
    best = p.get(key)
    over_repeats = [v / best for v in run_values(h, key)] if best else []
    return [label, t, suite.hotlock, summary_rate(suite, h, key), peer,
            summary_rate(suite, p, key), ratio_cell(divide(h.get(key), best)),
            range_cell(over_repeats)]


def summary_rows_for(suite):
    """The summary's rows of one scenario; the split one adds its writer thread's."""
    rows = []
    for t in suite.threads:
        if suite.kind == "split":
            rows.append(summary_row(suite, f"{suite.stem} (all ops)", t, "ops_per_sec"))
            rows.append(summary_row(suite, f"{suite.stem} (writer thread)", t,
                                    "writer_thread_ops_per_sec_avg"))
        else:
            rows.append(summary_row(suite, suite.stem, t, "ops_per_sec"))
    return [row for row in rows if row]


def render_summary(suites, plots):
    rows = [row for s in suites if s.compares() for row in summary_rows_for(s)]
    parts = ["## Summary: hotlock against the best peer", ""]
    if not rows:
        parts.append("No scenario here has both hotlock and a peer to compare with.")
        return "\n".join(parts)
    parts += [
        "Best peer: the fastest (median ops/s) at that thread count of the locks people "
        "would pick instead of hotlock. Throughput in Mops/s (median of the repeats); "
        "a ratio below 1.00 (bold) means hotlock is slower. "
        "*Over repeats*: the lowest and highest of hotlock's single runs divided by the "
        "best peer's median, how far the ratio moves with run-to-run noise.",
        "",
        md_table(["Scenario", "Threads", "hotlock", "Mops/s", "Best peer", "Mops/s",
                  "hotlock ÷ best peer", "Over repeats"], rows, "lrlrlrrr"),
    ]
    link = image_link(plots, "ratio.png", "hotlock ÷ best peer by thread count")
    if link:
        parts += ["", link]
    return "\n".join(parts)


def has_waits(suite):
    """Whether the mutex file has the sampled wait per acquisition."""
    return any(r.get("wait_us_p999") is not None for r in suite.rows.values())


def wait_cell(result):
    """A result's sampled wait, microseconds: the (lower) median of its runs'
    p99.9, which swings by orders of magnitude from run to run, so the
    median run's alone says little / the longest over its runs (the median
    run's where not recorded)."""
    p999 = sorted(run_values(result, "wait_us_p999"))
    longest = result.get("wait_us_max_all_runs", result.get("wait_us_max"))
    if not p999 or longest is None:
        return "–"
    return f"{sig3(p999[(len(p999) - 1) // 2])} / {sig3(longest)}"


def render_sweep_section(suite):
    """A thread-sweep table: one column per lock, then hotlock against the best peer."""
    hot, limit = suite.hotlock, suite.data.get("limit_ops_per_sec")
    waits = has_waits(suite)
    headers = ["Threads"] + [f"{l} Mops/s" for l in suite.locks]
    align = "r" * len(headers)
    if suite.compares():
        headers += ["hotlock ÷ best", "Best peer"]
        align += "rl"
    if hot:
        headers += [f"{hot} per-thread min / max Mops/s", f"{hot} CPU s/Mop"]
        align += "rr"
    if suite.compares():
        headers.append("Best peer CPU s/Mop")
        align += "r"
    if hot and limit:
        headers.append(f"{hot} ÷ limit")
        align += "r"
    if hot and waits:
        headers.append(f"{hot} wait µs p99.9 / max")
        align += "r"
    if suite.compares() and waits:
        headers.append("Best peer wait µs p99.9 / max")
        align += "r"
    rows = []
    for t in suite.threads:
        row = [t] + [sig3(mops((suite.row(l, t) or {}).get("ops_per_sec"))) for l in suite.locks]
        h = (suite.row(hot, t) if hot else None) or {}
        peer = suite.best_peer(t) if suite.compares() else None
        p = (suite.row(peer, t) if peer else None) or {}
        if suite.compares():
            row += [ratio_cell(divide(h.get("ops_per_sec"), p.get("ops_per_sec"))), peer or "–"]
        if hot:
            row += [f"{sig3(mops(h.get('thread_ops_per_sec_min')))} / "
                    f"{sig3(mops(h.get('thread_ops_per_sec_max')))}",
                    sig3(h.get("cpu_s_per_mop"))]
        if suite.compares():
            row.append(sig3(p.get("cpu_s_per_mop")))
        if hot and limit:
            row.append(f"{h['limit_share']:.2f}" if h.get("limit_share") is not None else "–")
        if hot and waits:
            row.append(wait_cell(h))
        if suite.compares() and waits:
            row.append(wait_cell(p))
        rows.append(row)
    parts = [md_table(headers, rows, align), "", roles_line(suite)]
    if waits:
        sample = suite.config.get("wait_sample")
        parts.append(f"Wait per acquisition: from just before lock to just after it returns, "
                     f"timed for about one acquisition in {sample or '?'} per thread; "
                     f"the median over the runs of each run's p99.9 / the longest sampled wait "
                     f"of all the runs.")
    if limit:
        parts.append(f"Limit (a perfect lock, one thread per core): {sig3(mops(limit))} Mops/s.")
    return "\n".join(parts)


def render_uncontended_section(suite):
    """One row per lock with ns per op, then hotlock against the best peer."""
    rows = []
    for t in suite.threads:
        for lock in suite.locks:
            r = suite.row(lock, t)
            if r:
                rows.append([lock, suite.roles[lock], t, sig3(mops(r["ops_per_sec"])),
                             sig3(ns_per_op(r["ops_per_sec"])),
                             range_cell([ns_per_op(v) for v in run_values(r, "ops_per_sec")],
                                        fmt=sig3)])
    parts = [md_table(["Lock", "Role", "Threads", "Mops/s", "ns/op", "ns/op over repeats"],
                      rows, "llrrrr")]
    for t in suite.threads:
        peer, ratio = suite.versus_best_peer(t)
        if ratio is not None:
            parts += ["", f"{suite.hotlock} ÷ best peer ({peer}) at {t} "
                          f"thread{'s' if t != 1 else ''}: {ratio_cell(ratio)} (throughput)."]
    return "\n".join(parts)


def render_split_section(suite):
    """One row per lock with its reader and writer threads' rates apart."""
    rows = []
    for t in suite.threads:
        for lock in suite.locks:
            r = suite.row(lock, t)
            if not r:
                continue
            reader = r.get("reader_thread_ops_per_sec_avg")
            writer = r.get("writer_thread_ops_per_sec_avg")
            rows.append([
                lock, suite.roles[lock], sig3(mops(r["ops_per_sec"])),
                sig3(mops(r.get("reader_ops_per_sec"))),
                f"{sig3(mops(reader))} ({sig3(mops(r.get('reader_thread_ops_per_sec_min')))}"
                f"–{sig3(mops(r.get('reader_thread_ops_per_sec_max')))})",
                sig3(mops(writer)), sig3(divide(writer, reader)),
                sig3(r.get("cpu_s_per_mop"))])
    parts = [md_table(["Lock", "Role", "Total Mops/s", "All readers Mops/s",
                       "Per reader thread Mops/s: avg (min–max)", "Per writer thread Mops/s",
                       "Writer ÷ reader (per thread)", "CPU s/Mop"], rows, "llrrrrrr")]
    for t in suite.threads:
        peer, total = suite.versus_best_peer(t)
        writer_peer, writer = suite.versus_best_peer(t, "writer_thread_ops_per_sec_avg")
        if total is not None:
            parts += ["", f"{suite.hotlock} ÷ best peer at {t} threads: "
                          f"{ratio_cell(total)} in total (against {peer}), "
                          f"{ratio_cell(writer)} for the writer thread (against "
                          f"{writer_peer}, the peer whose writer runs fastest)."]
    return "\n".join(parts)


def render_wake_section(data):
    """The handover benchmark: one row per way of waiting."""
    config = data.get("config") or {}
    rows = []
    for r in data["results"]:
        runs = [x.get("round_trip_us") for x in r.get("runs") or []]
        runs = runs or r.get("runs_round_trip_us") or []  # files before "runs"
        rows.append([r.get("mode", "?"), WAKE_MODES.get(r.get("mode"), ""),
                     ", ".join(str(c) for c in r.get("cpus", [])),
                     sig3(r.get("round_trip_us")), sig3(r.get("handover_us")),
                     sig3(r.get("futex_calls_per_round_trip")), range_cell(runs, fmt=sig3)])
    rounds = config.get("rounds")
    words = (f"Two threads pass a token back and forth: {rounds or '?'} round trips per run, "
             f"median of {config.get('repeat', '?')} runs; a handover is half a round trip.")
    return "\n".join([
        command_block(config), "", words, "",
        md_table(["Mode", "How the waiter waits", "CPUs", "Round trip µs", "Handover µs",
                  "Futex calls / round trip", "Round trip over repeats µs"], rows,
                 "lllrrrr")])


def per_op(result, key):
    """A per-1000-ops JSON figure of the cond scenario, per op; None if unknown."""
    value = result.get(key)
    return None if value is None else value / 1e3


def render_cond_section(data):
    """The condition variables: a table per workload, a row per configuration
    and condvar, the ratio against the baseline (glibc) of the same run."""
    config = data.get("config") or {}
    base = config.get("ratio_baseline", "glibc")
    by_kind = {}
    for r in data["results"]:
        by_kind.setdefault(r.get("scenario"), []).append(r)
    ratio = lambda r: ratio_text(r["ratio"]) if r.get("ratio") is not None else "–"
    tables = {
        "queue": (f"Queue: producers and consumers through a ring of {config.get('capacity', '?')} "
                  "items; per-thread fairness = slowest thread ÷ fastest of each side.",
                  ["Producers, consumers", "Condvar", "Items/s (M)", f"÷ {base}",
                   "Producer fairness", "Consumer fairness", "Futex calls / item",
                   "Context switches / item", "CPU s / M items"],
                  lambda r: [f"{r.get('producers')}, {r.get('consumers')}", r["cond"],
                             sig3(mops(r.get("ops_per_sec"))), ratio(r),
                             sig3(r.get("producer_min_over_max")),
                             sig3(r.get("consumer_min_over_max")),
                             sig3(per_op(r, "futex_calls_per_kop")),
                             sig3(per_op(r, "csw_per_kop")), sig3(r.get("cpu_s_per_mop"))]),
        "broadcast": (f"Broadcast to N waiters, each then runs {config.get('cs', '?')} pauses under "
                      "the mutex; latency from the broadcast to the end of the last waiter's "
                      f"critical section; ÷ {base}: its latency over this one's.",
                      ["Waiters", "Condvar", "Median µs", "p90 µs", f"÷ {base}",
                       "Futex calls in the broadcast", "Futex calls / round",
                       "Context switches / round", "CPU µs / round"],
                      lambda r: [r.get("waiters"), r["cond"], sig3(r.get("latency_us_median")),
                                 sig3(r.get("latency_us_p90")), ratio(r),
                                 sig3(r.get("broadcast_call_futex_calls_per_round")),
                                 sig3(per_op(r, "futex_calls_per_kop")),
                                 sig3(per_op(r, "csw_per_kop")), sig3(r.get("cpu_s_per_mop"))]),
        "pingpong": ("Ping-pong: two threads pass a turn through one mutex and two condvars.",
                     ["Condvar", "Round trips/s (k)", "ns / signal", f"÷ {base}",
                      "Futex calls / round trip", "Context switches / round trip",
                      "CPU µs / round trip"],
                     lambda r: [r["cond"], sig3((r.get("ops_per_sec") or 0) / 1e3),
                                sig3(r.get("ns_per_signal")), ratio(r),
                                sig3(per_op(r, "futex_calls_per_kop")),
                                sig3(per_op(r, "csw_per_kop")), sig3(r.get("cpu_s_per_mop"))]),
    }
    parts = [command_block(config), "",
             f"{run_length(config)}; futex calls of glibc cannot be counted (–)."]
    for kind, (words, headers, row) in tables.items():
        if by_kind.get(kind):
            left = headers.index("Condvar") + 1  # the columns that name the row
            parts += ["", words, "", md_table(headers, [row(r) for r in by_kind[kind]],
                                              "l" * left + "r" * (len(headers) - left))]
    return "\n".join(parts)


def render_cross_scenario_plots(plots):
    links = [image_link(plots, "fairness.png", "fairness at the most threads"),
             image_link(plots, "cpu.png", "CPU seconds per million ops")]
    links = [l for l in links if l]
    if not links:
        return None
    return "\n\n".join(["## Fairness and CPU cost at the most threads"] + links)


def load_seed_module(tools_dir):
    """tools/bench_seeds.py as a module; raises if it is missing or broken."""
    path = tools_dir / "bench_seeds.py"
    if not path.is_file():
        raise FileNotFoundError(f"{path.name} is missing")
    sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
    if str(tools_dir) not in sys.path:
        sys.path.insert(0, str(tools_dir))
    spec = importlib.util.spec_from_file_location("bench_seeds", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render_seed_sections(files, tools_dir):
    """tools/bench_seeds.py's sections under one heading; None if it has none."""
    parts = ["## The seeds' tables beside ours", ""]
    try:
        sections = load_seed_module(tools_dir).sections(files)
        if not all(isinstance(s, (tuple, list)) and len(s) == 2 for s in sections):
            raise TypeError("sections() did not return (heading, body) pairs")
    except Exception as e:  # a broken helper must not cost the rest of the report
        parts.append(f"Not rendered: tools/bench_seeds.py could not provide them "
                     f"({type(e).__name__}: {e}).")
        return "\n".join(parts)
    if not sections:
        return None
    for heading, body in sections:
        parts += [f"### {heading}", "", body.strip(), ""]
    return "\n".join(parts).rstrip()


def render_report(files, suites, plots, plot_note, repo, tools_dir):
    out = [render_header(files, repo, plot_note), render_summary(suites, plots)]
    renderers = {"sweep": render_sweep_section, "uncontended": render_uncontended_section,
                 "split": render_split_section}
    for suite in suites:
        section = [f"## {suite.stem}: {suite.title}", command_block(suite.config),
                   describe_parameters(suite), renderers[suite.kind](suite),
                   image_link(plots, f"throughput-{suite.stem}.png", f"{suite.stem} throughput")]
        out.append("\n\n".join(part for part in section if part))
    cross = render_cross_scenario_plots(plots)
    if cross:
        out.append(cross)
    if "wake" in files:
        out.append("## wake: handover cost\n\n" + render_wake_section(files["wake"]))
    if "cond" in files:
        out.append("## cond: condition variables\n\n" + render_cond_section(files["cond"]))
    # The rest: files with a layout and no section of their own (the seeds'
    # files have theirs, below).
    known = {stem for stem, _, _ in SCENARIOS}
    for stem, data in files.items():
        seed = any(fnmatch.fnmatch(f"{stem}.json", p) for p in SEED_PATTERNS)
        if stem not in known and not seed and isinstance(data.get("layout"), dict):
            out.append(render_layout_section(stem, data))
    seeds = render_seed_sections(files, tools_dir)
    if seeds:
        out.append(seeds)
    return "\n\n".join(out) + "\n"


def render_layout_section(stem, data):
    """A result file with no section of its own, read through its layout:
    a row per result, its key's members, the metric's median over the runs
    and their range."""
    layout = data["layout"]
    key, metric = layout.get("key") or [], layout.get("metric")
    better = "lower is better" if layout.get("better") == "lower" else "higher is better"
    rows = []
    for r in data["results"]:
        values = sorted(run_values(r, metric))
        median = values[(len(values) - 1) // 2] if values else None
        rows.append([str(r.get(k, "?")) for k in key] +
                    [sig3(median), range_cell(values, fmt=sig3), str(len(values))])
    words = (f"Each row: the median of `{metric}` over the runs ({better}) and "
             f"the range of the runs.")
    return "\n".join([
        f"## {stem}: {data.get('bench', '?')}", "", command_block(data.get("config") or {}),
        "", words, "",
        md_table(key + [metric, "range", "runs"], rows, "l" * len(key) + "rrr")])


# ---------------------------------------------------------------- plots

def import_pyplot():
    """(pyplot, None) with the Agg backend, or (None, why not)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return None, str(e)
    return plt, None


def assign_colours(suites):
    """{lock: colour}: LOCK_COLOURS, then SPARE_COLOURS in order of appearance."""
    colours = {}
    spare = itertools.cycle(SPARE_COLOURS)
    for suite in suites:
        for lock in suite.locks:
            if lock not in colours:
                colours[lock] = LOCK_COLOURS.get(lock) or next(spare)
    return colours


def line_style(lock, suite, colours):
    """hotlock thick in its colour, peers solid, references dashed."""
    role = suite.roles[lock]
    if lock == suite.hotlock:
        return dict(color=colours[lock], lw=2.8, ls="-", marker="o", ms=6, zorder=5)
    if role == "hotlock":
        return dict(color=colours[lock], lw=1.8, ls="-", marker="o", ms=4, zorder=4)
    if role == "peer":
        return dict(color=colours[lock], lw=1.5, ls="-", marker="s", ms=4, zorder=3)
    references = [l for l in suite.locks if suite.roles[l] == "reference"]
    marker = REFERENCE_MARKERS[references.index(lock) % len(REFERENCE_MARKERS)]
    return dict(color=colours[lock], lw=1.2, ls="--", marker=marker, ms=5, zorder=2)


def thread_axis(ax, threads):
    """x axis: threads on a log2 scale, ticks at the measured counts."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(threads)
    ax.set_xticklabels([str(t) for t in threads])
    ax.minorticks_off()
    ax.set_xlabel("threads")
    if len(threads) > 1:
        ax.set_xlim(threads[0] / 1.25, threads[-1] * 1.25)


def outside_legend(ax, handles=None, labels=None):
    """The legend to the right of the axes, where it hides no data."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0),
              fontsize="small", frameon=False, borderaxespad=0)


def save(fig, plt, plots_dir, name, plots):
    """Writes the figure as plots_dir/name and notes name in plots."""
    fig.savefig(plots_dir / name, dpi=DPI)
    plt.close(fig)
    plots.append(name)


def headline(suite, t):
    """The plot's message: where hotlock stands against the best peer at t threads."""
    peer, ratio = suite.versus_best_peer(t)
    if ratio is None:
        return suite.title
    return (f"{suite.title}\nat {t} threads {suite.hotlock} runs at {ratio:.2f}× "
            f"the best peer ({peer})")


def plot_throughput(plt, suite, colours, plots_dir, plots):
    fig, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    for lock in suite.locks:
        points = [(t, r) for t in suite.threads
                  if (r := suite.row(lock, t)) and r.get("ops_per_sec") is not None]
        xs = [t for t, _ in points]
        ys = [mops(r["ops_per_sec"]) for _, r in points]
        lows = [y - mops(min(run_values(r, "ops_per_sec"))) for y, (_, r) in zip(ys, points)]
        highs = [mops(max(run_values(r, "ops_per_sec"))) - y for y, (_, r) in zip(ys, points)]
        ax.errorbar(xs, ys, yerr=[lows, highs], capsize=3, label=lock,
                    **line_style(lock, suite, colours))
    limit = suite.data.get("limit_ops_per_sec")
    if limit:
        ax.axhline(mops(limit), color="black", ls="--", lw=1, label="limit (perfect lock)")
    cores = suite.config.get("cores")
    if cores and suite.threads[0] <= cores <= suite.threads[-1]:
        ax.axvline(cores, color="grey", ls=":", lw=1.2, label=f"cores ({cores})")
    thread_axis(ax, suite.threads)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("throughput (Mops/s, median; bars: min–max of runs)", fontsize="small")
    ax.set_title(headline(suite, suite.threads[-1]), fontsize="medium")
    ax.grid(alpha=0.3)
    # The locks first, in the file's order, then the limit and cores lines.
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: labels[i] not in suite.locks)
    outside_legend(ax, [handles[i] for i in order], [labels[i] for i in order])
    save(fig, plt, plots_dir, f"throughput-{suite.stem}.png", plots)


def grouped_bars(ax, groups, colours, value, label_below=None):
    """Bars per (group label, suite, threads), one per lock with a value(result)
    that is not None; a legend entry per lock.  Bars lower than label_below
    carry their value, so that a bar too low to see still reads."""
    drawn = {}
    width = 0.8
    for g, (label, suite, t) in enumerate(groups):
        locks = [l for l in suite.locks if (r := suite.row(l, t)) and value(r) is not None]
        for i, lock in enumerate(locks):
            x = g - width / 2 + width * (i + 0.5) / len(locks)
            height = value(suite.row(lock, t))
            reference = suite.roles[lock] == "reference"
            bar = ax.bar(x, height, width / len(locks), color=colours[lock],
                         edgecolor="black" if lock == suite.hotlock else "white",
                         linewidth=1.2 if lock == suite.hotlock else 0.5,
                         hatch="//" if reference else None)
            if label_below is not None and height < label_below:
                ax.text(x, height + label_below / 3, sig3(height), ha="center", va="bottom",
                        rotation=90, fontsize="x-small")
            drawn.setdefault(lock, bar)
    ax.set_xticks(range(len(groups)))
    # "mutex-heavy" over two lines: five groups' labels fit side by side.
    ax.set_xticklabels([label.replace("-", "\n", 1) + f"\n{t} threads"
                        for label, _, t in groups], fontsize="small")
    outside_legend(ax, list(drawn.values()), list(drawn.keys()))


def fairness(result):
    """The slowest thread's ops/s ÷ the fastest's (1 = fair), or None."""
    low, high = result.get("thread_ops_per_sec_min"), result.get("thread_ops_per_sec_max")
    return divide(low, high)


def plot_fairness(plt, suites, colours, plots_dir, plots):
    groups = [(s.stem, s, s.threads[-1]) for s in suites
              if s.stem.startswith("mutex-") or s.stem == "rwlock-50"]
    if not groups:
        return
    fig, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    grouped_bars(ax, groups, colours, fairness, label_below=0.05)
    ax.axhline(1.0, color="black", lw=0.8, ls=":")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("slowest thread ÷ fastest thread\n(ops/s per thread; 1 = fair)",
                  fontsize="small")
    ax.set_title("Fairness at the most threads: how far the slowest thread\n"
                 "falls behind the fastest (hatched: references)", fontsize="medium")
    save(fig, plt, plots_dir, "fairness.png", plots)


def cpu_cost(result):
    """CPU s per Mop, None where unknown or 0 (no bar on a log scale)."""
    return result.get("cpu_s_per_mop") or None


def plot_cpu(plt, suites, colours, plots_dir, plots):
    groups = [(s.stem, s, s.threads[-1]) for s in suites if s.stem.startswith("mutex-")]
    if not groups:
        return
    fig, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    grouped_bars(ax, groups, colours, cpu_cost)
    values = [c for _, s, t in groups for l in s.locks
              if (r := s.row(l, t)) and (c := cpu_cost(r))]
    if values and max(values) / min(values) > 20:
        ax.set_yscale("log")
        ax.set_ylim(bottom=min(values) / 2)  # the cheapest bar still shows
        ax.yaxis.set_major_locator(plt.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_ylabel("CPU seconds per million lock ops (s/Mop)", fontsize="small")
    ax.set_title("What a million lock operations cost in CPU time\n"
                 "(all threads' CPU, at the most threads; lower is better)", fontsize="medium")
    save(fig, plt, plots_dir, "cpu.png", plots)


def plot_ratio(plt, suites, plots_dir, plots):
    sweeps = [s for s in suites if s.kind == "sweep" and s.compares()]
    lines = []
    for suite in sweeps:
        points = [(t, ratio) for t in suite.threads
                  if (ratio := suite.versus_best_peer(t)[1]) is not None]
        if points:
            lines.append((suite.stem, points))
    if not lines:
        return
    fig, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    for i, (stem, points) in enumerate(lines):
        ax.plot([t for t, _ in points], [r for _, r in points], lw=1.8,
                ls="-" if stem.startswith("mutex") else "--",
                marker=SCENARIO_MARKERS[i % len(SCENARIO_MARKERS)],
                color=SCENARIO_COLOURS[i % len(SCENARIO_COLOURS)], label=stem)
    ax.axhline(1.0, color="black", ls=":", lw=1.2, label="best peer")
    threads = sorted({t for _, points in lines for t, _ in points})
    thread_axis(ax, threads)
    top = max(r for _, points in lines for _, r in points)
    ax.set_ylim(0, max(1.2, top * 1.1))
    ax.set_ylabel("hotlock ÷ best peer (throughput)")
    ax.set_title("hotlock against the fastest peer at each thread count\n"
                 "(above the dotted line: hotlock is faster)", fontsize="medium")
    ax.grid(alpha=0.3)
    outside_legend(ax)
    save(fig, plt, plots_dir, "ratio.png", plots)


def draw_plots(plt, suites, plots_dir):
    """Draws every plot the data allows into plots_dir; returns their file names."""
    plots_dir.mkdir(parents=True, exist_ok=True)
    colours = assign_colours(suites)
    plots = []
    for suite in suites:
        if suite.kind == "sweep":
            plot_throughput(plt, suite, colours, plots_dir, plots)
    plot_fairness(plt, suites, colours, plots_dir, plots)
    plot_cpu(plt, suites, colours, plots_dir, plots)
    plot_ratio(plt, suites, plots_dir, plots)
    return plots


# ---------------------------------------------------------------- main

def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="bench-report.py",
        description="Write a Markdown report (hotlock against the best peer, one section "
                    "per scenario, the handover cost, the seeds' tables) and PNG plots from "
                    "the JSON files hotlock-bench wrote into RESULTS_DIR (`make bench`). "
                    "Needs matplotlib for the plots; without it the report has none.",
        epilog="Exit status: 0 report written; 2 RESULTS_DIR missing, without results, "
               "or holding a file that cannot be read.")
    parser.add_argument("results_dir", metavar="RESULTS_DIR", type=Path,
                        help="the directory of the benchmark's JSON files")
    parser.add_argument("--out", type=Path, metavar="FILE",
                        help="the report to write (default: RESULTS_DIR/report.md)")
    parser.add_argument("--plots-dir", type=Path, metavar="DIR",
                        help="where the PNG plots go (default: beside the report)")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    files = read_results(args.results_dir)
    out = args.out or args.results_dir / "report.md"
    plots_dir = args.plots_dir or out.parent
    suites = [build_suite(stem, title, kind, files[stem])
              for stem, title, kind in SCENARIOS if kind not in ("wake", "cond") and stem in files]
    suites = [s for s in suites if s.threads]  # a file without results has nothing to show

    plt, why = import_pyplot()
    if plt:
        plots = draw_plots(plt, suites, plots_dir)
        plot_note = None
    else:
        plots = []
        plot_note = f"none: matplotlib cannot be imported by {sys.executable} ({why})."
        print(f"{PROG}: no plots, matplotlib cannot be imported ({why})", file=sys.stderr)
    # Links relative to the report, wherever the plots went.
    links = {name: os.path.relpath(plots_dir / name, out.parent) for name in plots}

    tools_dir = Path(__file__).resolve().parent
    report = render_report(files, suites, links, plot_note, tools_dir.parent, tools_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report, encoding="utf-8")
    print(f"{PROG}: wrote {out} and {len(plots)} plots")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
