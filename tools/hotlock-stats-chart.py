#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Draws one process's lock contention report as a PNG bar chart.

    hotlock-stats-chart.py [--pid PID] [--top N] [--out FILE.png] STATS.json

STATS.json is what `hotlock-run --stats-json FILE -- prog` writes: JSON
Lines, one report per process (docs/stats.schema.json).  The chart is of one
process: --pid's, or else the one that waited longest for locks
(lock_wait_s).  Its top N locks (mutexes and rwlocks, default 10) by total
wait get two bars each: the time threads waited for the lock (wait_s) and
the time it was held (hold_mean_us x exclusive acquisitions), so that one
sees at a glance whether a lock is waited for because it is held long or
because it is taken often.  Each wait bar says how many acquisitions had to
wait and the mean wait; the title gives the program, its pid and the share
of its threads' time spent waiting for locks.  Condition variables, if any,
get a panel below, by wait, with the threads woken per broadcast and the
share of wake-ups followed by a wait again with the mutex held (re-waits).

Both totals count from each lock's first contention (the report's counters
start there).  For an rwlock hold_mean_us is the mean write hold, so its
hold total uses the write acquisitions ("write" in the report), not reads
and writes together; without "write" it falls back to all of them (an upper
bound) and the bar's note says so.

A line that is not such a report (a line cut short by a full disk, a line
of another tool) is left out, with a warning naming the file and line; the
other reports are charted.

The PNG goes to --out, by default STATS.json with its extension replaced by
.png; its path is printed.  Exit status 0 when it was written, 1 for a file
that cannot be read or holds no report (one line naming the file, and the
first bad line), an unknown --pid, or an --out that cannot be written; 2 for
bad options.  Needs matplotlib (Debian's python3-matplotlib; no display).
"""

import argparse
import io
import json
import os
import sys
import textwrap
import warnings

PROG = "hotlock-stats-chart"
LABEL_WIDTH = 60  # characters per line of a bar's label
TITLE_PROGRAM = 90


class BadReport(Exception):
    """A line that is not a usable report; the message names the field."""


def fail(msg):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(1)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def need(obj, key, kind, where):
    """obj[key], checked to be of `kind` ('num', 'int', 'str', 'list')."""
    if not isinstance(obj, dict) or key not in obj:
        raise BadReport(f"{where}{key} is missing")
    v = obj[key]
    ok = {"num": is_num(v),
          "int": isinstance(v, int) and not isinstance(v, bool),
          "str": isinstance(v, str),
          "list": isinstance(v, list)}[kind]
    if not ok:
        raise BadReport(f"{where}{key} is not a {'number' if kind == 'num' else kind}")
    return v


def check_report(doc):
    """Checks the fields the chart uses (not the whole schema)."""
    for key, kind in (("pid", "int"), ("program", "str"), ("lock_wait_s", "num"),
                      ("lock_wait_share", "num"), ("locks", "list"), ("conds", "list")):
        need(doc, key, kind, "")
    for i, lock in enumerate(doc["locks"]):
        where = f"locks[{i}]."
        for key, kind in (("address", "str"), ("kind", "str"), ("wait_s", "num"),
                          ("contended_share", "num"), ("wait_mean_us", "num"),
                          ("hold_mean_us", "num"), ("acquisitions", "int"), ("stack", "list")):
            need(lock, key, kind, where)
    for i, cond in enumerate(doc["conds"]):
        where = f"conds[{i}]."
        for key, kind in (("address", "str"), ("wait_s", "num"), ("broadcasts", "int"),
                          ("woken_per_broadcast", "num"), ("rewait_share", "num"),
                          ("stack", "list")):
            need(cond, key, kind, where)


def read_reports(path):
    """[(line number, report)] of a JSON Lines file; a bad line is left out
    with a warning; exits 1 where no report is left."""
    try:
        with open(path, "rb") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror or e}")
    reports = []
    bad = []
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            doc = json.loads(raw.decode("utf-8"))
            if not isinstance(doc, dict) or type(doc.get("hotlock_stats")) is not int \
                    or doc["hotlock_stats"] != 1:
                raise BadReport('not a hotlock-run --stats-json report '
                                '(a JSON object with "hotlock_stats": 1)')
            check_report(doc)
        except (ValueError, BadReport) as e:
            why = f"not JSON ({e})" if not isinstance(e, BadReport) else str(e)
            bad.append(f"{path}:{n}: {why}")
            continue
        reports.append((n, doc))
    if not reports:
        fail(bad[0] if bad else f"{path}: no report in it (empty)")
    for b in bad:
        print(f"{PROG}: warning: {b}; line left out", file=sys.stderr)
    return reports


def pick(reports, pid, path):
    """The report to chart: --pid's, or the one with the most lock wait."""
    if pid is not None:
        mine = [r for _, r in reports if r["pid"] == pid]
        if not mine:
            pids = ", ".join(str(r["pid"]) for _, r in reports)
            fail(f"no process with pid {pid} in {path} (pids there: {pids})")
        reports = [(0, r) for r in mine]
    # max() keeps the first of equals: the file's order breaks ties.
    return max((r for _, r in reports), key=lambda r: r["lock_wait_s"])


def plain(s):
    """Text that matplotlib draws as is ('$' would start mathtext)."""
    return s.replace("$", r"\$")


def cut(s, width):
    return s if len(s) <= width else s[:width - 1] + "\u2026"


def where_from(stack, site=0):
    """(function, 'file:line') of the frame at site (the report's first frame
    of the program's own code, past lock wrappers; 0 where the report gives
    none): the function's name or else its module+offset or address, and ''
    where the frame has no file."""
    if not isinstance(site, int) or not 0 <= site < len(stack or []):
        site = 0
    if not stack or not isinstance(stack[site], dict):
        return "(no stack)", ""
    f = stack[site]
    if not f.get("function") and f.get("module") and f.get("module_offset"):
        return f"{os.path.basename(str(f['module']))}+{f['module_offset']}", ""
    name = str(f.get("function") or f.get("address") or "?")
    loc = ""
    if f.get("file"):
        loc = os.path.basename(str(f["file"]))
        if f.get("line"):
            loc += f":{f['line']}"
    return name, loc


def label(entry, kind):
    """'function (file:line)  kind name': the function wrapped into at most
    two lines of LABEL_WIDTH (the second cut short), the rest never cut; the
    object's name is its variable where the report has one, else its
    address."""
    name, loc = where_from(entry["stack"], entry.get("site", 0))
    lines = textwrap.wrap(name, LABEL_WIDTH, break_long_words=True,
                          break_on_hyphens=False) or ["?"]
    if len(lines) > 2:
        lines = [lines[0], cut(" ".join(lines[1:]), LABEL_WIDTH)]
    tail = f"{kind} {entry.get('name') or entry['address']}"
    objects = entry.get("objects")
    if is_num(objects) and objects > 1:
        tail += f" ({objects} objects)"
    for part, sep in (((f"({loc})", " ") if loc else ("", "")), (tail, "  ")):
        if not part:
            continue
        if len(lines[-1]) + len(sep) + len(part) <= LABEL_WIDTH:
            lines[-1] += sep + part
        else:
            lines.append(part)
    return plain("\n".join(lines))


def fmt_us(us):
    if us == 0:
        return "0 s"
    if us >= 1e6:
        return f"{us / 1e6:.3g} s"
    if us >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} us"


def fmt_s(s):
    return fmt_us(s * 1e6)


def hold_total(lock):
    """(seconds held exclusively, whether that is only an upper bound)."""
    acq, upper = lock["acquisitions"], False
    if lock["kind"] == "rwlock":
        w = lock.get("write")
        if isinstance(w, dict) and isinstance(w.get("acquisitions"), int):
            acq = w["acquisitions"]
        else:
            upper = True
    return lock["hold_mean_us"] * acq / 1e6, upper


def draw_locks(ax, locks, shown_of):
    n = len(locks)
    if n == 0:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no contended lock", ha="center", va="center",
                fontsize=14, transform=ax.transAxes)
        return
    waits = [l["wait_s"] for l in locks]
    holds = [hold_total(l) for l in locks]
    h = 0.38
    ys = range(n)
    ax.barh([y - h / 2 for y in ys], waits, h, color="tab:red", label="waited for (total)")
    ax.barh([y + h / 2 for y in ys], [t for t, _ in holds], h, color="tab:blue",
            label="held (total, exclusive)")
    for y, l, (t, upper) in zip(ys, locks, holds):
        ax.annotate(f"{l['contended_share'] * 100:.0f}% contended, mean {fmt_us(l['wait_mean_us'])}",
                    (l["wait_s"], y - h / 2), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=8)
        note = f"mean hold {fmt_us(l['hold_mean_us'])}"
        if upper:
            note += " (total at most: no write count, so x all acquisitions)"
        ax.annotate(note, (t, y + h / 2), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=7, color="dimgray")
    ax.set_yticks(list(ys), [label(l, l["kind"]) for l in locks], fontsize=8)
    ax.invert_yaxis()
    top = max(waits + [t for t, _ in holds]) or 1.0
    ax.set_xlim(0, top * 1.6)  # room for the notes right of the bars
    ax.set_xlabel("seconds, from each lock's first contention")
    ax.set_title(f"locks, most waited for first ({shown_of})", fontsize=10, loc="left")
    ax.legend(loc="lower right", bbox_to_anchor=(1, 1), ncol=2, fontsize=8, frameon=False,
              borderaxespad=0.2)
    ax.grid(axis="x", alpha=0.3)


def draw_conds(ax, conds, shown_of):
    n = len(conds)
    ys = range(n)
    ax.barh(list(ys), [c["wait_s"] for c in conds], 0.6, color="tab:purple")
    for y, c in zip(ys, conds):
        if c["broadcasts"]:
            note = f"{c['woken_per_broadcast']:.3g} woken per broadcast"
        else:
            note = "no broadcast"
        note += f", {c['rewait_share'] * 100:.0f}% re-waited with the mutex held"
        ax.annotate(note, (c["wait_s"], y), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=8)
    ax.set_yticks(list(ys), [label(c, "cond") for c in conds], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, (max(c["wait_s"] for c in conds) or 1.0) * 1.6)
    ax.set_xlabel("seconds waited")
    ax.set_title(f"condition variables, most waited on first ({shown_of})", fontsize=10,
                 loc="left")
    ax.grid(axis="x", alpha=0.3)


def render(report, top):
    """The chart as PNG bytes."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        fail(f"needs matplotlib, which {sys.executable} lacks ({e}): "
             f"apt-get install python3-matplotlib (tools/ensure-deps.sh)")
    # A function name with characters the font lacks draws boxes, not warnings.
    warnings.filterwarnings("ignore", message="Glyph .* missing")

    locks = sorted(report["locks"], key=lambda l: -l["wait_s"])[:top]
    conds = sorted(report["conds"], key=lambda c: -c["wait_s"])[:top]
    lock_rows = max(len(locks), 1) * 0.62      # inches: two bars, up to three label lines
    cond_rows = len(conds) * 0.42
    heights = [lock_rows + 1.1] + ([cond_rows + 1.0] if conds else [])
    fig, axes = plt.subplots(len(heights), 1, squeeze=False, layout="constrained",
                             figsize=(13, 1.0 + sum(heights)),
                             gridspec_kw={"height_ratios": heights})
    draw_locks(axes[0][0], locks, f"{len(locks)} of {len(report['locks'])}")
    if conds:
        draw_conds(axes[1][0], conds, f"{len(conds)} of {len(report['conds'])}")

    program = cut(report["program"], TITLE_PROGRAM)
    share = report["lock_wait_share"] * 100
    detail = f"{fmt_s(report['lock_wait_s'])} waited"
    if is_num(report.get("thread_time_s")):
        detail += f" in {fmt_s(report['thread_time_s'])} of thread time"
    fig.suptitle(plain(f"{program}  (pid {report['pid']})\n"
                       f"lock wait: {share:.1f}% of thread time ({detail})"),
                 fontsize=11)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100,
                metadata={"Title": f"hotlock lock contention, pid {report['pid']}",
                          "Description": report["program"]})
    plt.close(fig)
    return buf.getvalue()


def positive(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more: {text!r}")
    return v


def main():
    ap = argparse.ArgumentParser(
        prog=PROG, description="Chart one process of a hotlock-run --stats-json "
        "file: its most waited-for locks, their wait and hold times, and its condvars.")
    ap.add_argument("--pid", type=positive, help="the process to chart (default: the one "
                    "with the most lock wait)")
    ap.add_argument("--top", type=positive, default=10, metavar="N",
                    help="locks (and condvars) to show, most wait first (default 10)")
    ap.add_argument("--out", metavar="FILE.png",
                    help="the PNG to write (default: STATS with the extension .png)")
    ap.add_argument("stats", metavar="STATS.json")
    args = ap.parse_args()

    out = args.out or os.path.splitext(args.stats)[0] + ".png"
    if os.path.abspath(out) == os.path.abspath(args.stats):
        fail(f"{out} is the input: name another file with --out")
    report = pick(read_reports(args.stats), args.pid, args.stats)
    png = render(report, args.top)
    try:
        with open(out, "wb") as f:
            f.write(png)
    except OSError as e:
        fail(f"cannot write {out}: {e.strerror or e}")
    print(out)


if __name__ == "__main__":
    main()
