#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The contention report (hotlock-run --stats, docs/stats.md) on a program
whose hot and cold locks are known (hotspots.c):

  stats_report.py HOTLOCK_RUN HOTSPOTS SCHEMA PRELOAD_LIB

- the report ranks the hot mutex first and the starved rwlock second, names
  the functions where each was first contended (past a lock wrapper), gives the condvar its
  broadcast storm, each its advice, and leaves the cold mutex out;
- the JSON is valid against docs/stats.schema.json, one line per process: a
  fork child that ends with _exit has its own, with its own lock only, and
  its status;
- a fatal signal at its default action still gets the report, written by
  hotlock-run after the process died of the signal (and hotlock-run dies
  of it too);
- the old report variables under plain LD_PRELOAD (the report is
  hotlock-run's now): one line on stderr, no report, the program's output
  and exit status unchanged; a bad HOTLOCK_STATS_CLOCK: one line;
- hotlock-run refuses bad options and unwritable files in one line with
  exit status 2, and runs nothing;
- on two (virtual) NUMA nodes the hot mutex is advised CNA, unless the
  program already runs on it;
- 8 threads' 1,600,000 acquisitions of a mutex, nearly all without a wait
  and so sampled, are counted within 2.5% (the sampling's spread is 0.6%;
  threads that drew the same samples were 3.6% over);
- threads that counted waits for two mutexes and stay alive, idle, to the
  end: the mutex destroyed meanwhile, and the one kept, both show those
  waits (the destruction and the report take what the threads summed);
- the hot mutex's 8 threads are, by the report, between 1 and 8 waiting
  for it on average over its phase, timed with the TSC (where the kernel
  keeps time by it) and with clock_gettime (HOTLOCK_STATS_CLOCK=monotonic):
  the ticks are converted, and the fallback works (a bad value: one line);
- the hot mutex, the rwlock, the condvar and its mutex are named by their
  variables (hot, config, ticket_cond, ticket_lock); the stripped
  library's static lock has no name;
- a frame's module offset is the module's own address (addr2line names the
  same function), and the C library's frames are named from its symbols
  but not read for lines (its DWARF cost 95 ms at each process's end);
- a lock taken in a stripped library through a static helper (no name):
  the site is the library's named function that called the helper;
- the hot mutex is held while others wait in hot_counter_update (its
  sampled holder site);
- hotlock-top on the running program puts the hot mutex on top, named, and
  --report prints the report as it stands; a pid with no area: exit 2;
- without the settings, the shim says nothing.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import jsonschema

run, hotspots, schema_path, preload = sys.argv[1:5]
schema = json.load(open(schema_path))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def run_it(args, env_extra=None, timeout=60):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("HOTLOCK_") or k == "LD_PRELOAD":
            del env[k]
    env.update(env_extra or {})
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)


def reports(path):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            doc = json.loads(line)
            try:
                jsonschema.validate(doc, schema)
            except jsonschema.ValidationError as e:
                check(False, f"{path}:{n} not valid against the schema: {e.message}")
            out.append(doc)
    return out


def first_function(entry):
    """The function at the report's site: the first frame past lock wrappers."""
    return entry["stack"][entry["site"]].get("function", "") if entry["stack"] else ""


def check_waiting(hot, seconds, clock):
    """The hot mutex's phase is a third of the run: its 8 threads queue for
    it, so its total wait (exact, not sampled) over the phase is between 1
    and 8 threads waiting on average (8.5: the threads start a little
    apart).  Ticks left unconverted would read 2 to 4 times the
    nanoseconds."""
    waiting = hot["wait_s"] / (seconds / 3)
    print(f"hot mutex ({clock}): {waiting:.1f} threads waiting on average, mean hold {hot['hold_mean_us']:.1f} us")
    check(1 < waiting < 8.5, f"hot mutex ({clock}): {waiting:.1f} threads waiting on average, not 1 to 8")


def codes(entry):
    return [a["code"] for a in entry["advice"]]


with tempfile.TemporaryDirectory() as tmp:
    text = os.path.join(tmp, "report.txt")
    js = os.path.join(tmp, "report.json")

    # A: the known program, forking a child that ends with _exit.
    p = run_it([run, f"--stats={text}", "--stats-json", js, "--stats-top", "5", "--",
                hotspots, "--seconds", "1.5", "--fork"])
    check(p.returncode == 0, f"hotspots under --stats exited {p.returncode}: {p.stderr}")
    check(p.stdout == "hotspots: done\n", f"the program's output changed: {p.stdout!r}")
    docs = reports(js)
    check(len(docs) == 2, f"{len(docs)} JSON reports, not 2 (parent and fork child)")
    parent = [d for d in docs if d["end"] == "exit 0"]
    child = [d for d in docs if d["end"] == "_exit 0"]
    check(len(parent) == 1 and len(child) == 1,
          f"ends {[d['end'] for d in docs]}: want one exit and one _exit")
    if parent and child:
        parent, child = parent[0], child[0]
        check(parent["pid"] != child["pid"], "parent and child share a pid")
        locks = parent["locks"]
        names = [first_function(e) for e in locks]
        print("parent's locks:", [(n, codes(e), round(e["wait_s"], 3)) for n, e in zip(names, locks)])
        check(len(locks) >= 2 and names[0] == "hot_counter_update",
              f"the hot mutex is not ranked first: {names}")
        check(len(locks) >= 2 and names[1] in ("config_write", "config_read"),
              f"the starved rwlock is not ranked second: {names}")
        check(all(locks[i]["wait_s"] >= locks[i + 1]["wait_s"] for i in range(len(locks) - 1)),
              "locks not in order of total wait")
        check(not any("cold_path" in json.dumps(e["stack"]) for e in locks),
              "the never-contended mutex is in the report")
        check("child_counter_update" not in names, "the child's lock is in the parent's report")
        by_name = dict(zip(names, locks))
        hot = by_name.get("hot_counter_update")
        if hot:
            check(hot["kind"] == "mutex" and hot["type"] == "normal", f"hot: {hot['kind']} {hot['type']}")
            check(hot.get("name") == "hot", f"hot mutex: named {hot.get('name')!r}, not hot")
            check("split-or-shorten" in codes(hot), f"hot mutex advice: {codes(hot)}")
            site = hot["site"]
            check(site == 1 and hot["stack"][0].get("function") == "app_mutex_lock",
                  f"hot mutex: the site is not past the wrapper app_mutex_lock: site {site}, "
                  f"{[f.get('function') for f in hot['stack'][:3]]}")
            check(hot["stack"][site].get("file", "").endswith("hotspots.c") and hot["stack"][site].get("line"),
                  f"hot mutex: no file:line: {hot['stack'][site]}")
            check(len(hot["stack"]) > site + 1 and hot["stack"][site + 1].get("function") == "hot_worker",
                  f"hot mutex: its caller is not hot_worker: {hot['stack'][:site + 2]}")
            sf = hot["stack"][site]
            a2l = subprocess.run(["addr2line", "-f", "-e", sf.get("module", ""),
                                  "%x" % (int(sf.get("module_offset", "0"), 16) - 1)],
                                 capture_output=True, text=True)
            check(a2l.stdout.split("\n")[0] == sf.get("function"),
                  f"hot mutex: {sf.get('module')}+{sf.get('module_offset')} is "
                  f"{a2l.stdout.split()[:1]} to addr2line, not {sf.get('function')}")
            libc = [f for f in hot["stack"] if os.path.basename(f.get("module", "")).startswith("libc.so")]
            check(libc and all("file" not in f for f in libc),
                  f"hot mutex: the C library's frames missing, or read for their lines: {libc}")
            check(hot["hold_mean_us"] >= 15, f"hot mutex: mean hold {hot['hold_mean_us']} us, held ~20 us")
            holders = hot.get("holders", [])
            hsite = holders[0]["stack"][holders[0]["site"]].get("function") if holders else None
            check(hot.get("holder_samples", 0) >= 1 and hsite == "hot_counter_update",
                  f"hot mutex: held while others waited in {hsite!r} "
                  f"({hot.get('holder_samples')} samples), not hot_counter_update")
            check(hot["acquisitions"] > hot["contended"] > 0, "hot mutex: acquisitions/contended")
            check_waiting(hot, 1.5, "TSC where used")
        rw = by_name.get("config_write") or by_name.get("config_read")
        if rw:
            check(rw["kind"] == "rwlock" and rw["type"] == "prefer-reader", f"rwlock: {rw['kind']} {rw['type']}")
            check(rw.get("name") == "config", f"rwlock: named {rw.get('name')!r}, not config")
            check("writers-wait" in codes(rw), f"rwlock advice: {codes(rw)}")
            top = rw["stack"][0]
            check(rw["site"] == 1 and top.get("inlined") is True and
                  top.get("function") in ("config_lock_shared", "config_lock_exclusive"),
                  f"rwlock: the inlined wrapper is not named, or not looked past: site {rw['site']}, "
                  f"{[(f.get('function'), f.get('inlined')) for f in rw['stack'][:3]]}")
            check(rw["read"]["acquisitions"] > 4 * rw["write"]["acquisitions"] > 0,
                  f"rwlock reads {rw['read']['acquisitions']} writes {rw['write']['acquisitions']}")
        conds = parent["conds"]
        check(len(conds) == 1 and first_function(conds[0]) == "ticket_wait",
              f"condvars: {[first_function(c) for c in conds]}")
        if conds:
            c = conds[0]
            print("condvar:", codes(c), c["woken_per_broadcast"], c["rewait_share"])
            check(c["rewaits"] > 0 and codes(c) == ["no-action"],
                  f"condvar: re-waits {c['rewaits']}, advice {codes(c)} (re-waits draw none)")
            check(c.get("name") == "ticket_cond" and c.get("mutex_name") == "ticket_lock",
                  f"condvar: named {c.get('name')!r} with mutex {c.get('mutex_name')!r}, "
                  f"not ticket_cond with ticket_lock")
            check(c["mutex"] in [e["address"] for e in locks] or c["mutex"].startswith("0x"),
                  "condvar: its mutex")
        threads = parent["threads"]
        check(len(threads) >= 10 and 0 < parent["lock_wait_share"] < 1,
              f"{len(threads)} threads, lock_wait_share {parent['lock_wait_share']}")
        cnames = [first_function(e) for e in child["locks"]]
        check(cnames == ["child_counter_update"], f"the child's locks: {cnames}")
    t = open(text).read()
    for want in ("first contended in hot_counter_update (hotspots.c:", ", through app_mutex_lock (hotspots.c:",
                 "=> split-or-shorten", "=> writers-wait",
                 "re-waits", "ended by _exit 0", "ended by exit 0"):
        check(want in t, f"the text report lacks {want!r}")
    check("cold_path" not in t, "the text report names cold_path")

    # B: a fatal signal at its default action.
    p = run_it([run, "--stats", "--", hotspots, "--seconds", "0.3", "--end", "sigterm"])
    check(p.returncode == -15, f"SIGTERM: exit {p.returncode}, not killed by the signal")
    check("ended by signal SIGTERM" in p.stderr and "hot_counter_update" in p.stderr,
          f"SIGTERM: no report on stderr: {p.stderr[:300]!r}")

    # C: plain LD_PRELOAD with the old variables: the report is
    # hotlock-run's, so one line says so and the program is unchanged; a
    # bad HOTLOCK_STATS_CLOCK beside an area is one line too.
    p = run_it([hotspots, "--seconds", "0.3"],
               {"LD_PRELOAD": preload, "HOTLOCK_STATS_JSON": os.path.join(tmp, "r.json"),
                "HOTLOCK_STATS_TOP": "abc"})
    check(p.returncode == 0 and p.stdout == "hotspots: done\n",
          f"old variables: exit {p.returncode}, output {p.stdout!r}")
    lines = p.stderr.splitlines()
    check(len(lines) == 1 and "hotlock-run" in lines[0], f"old variables: {lines[:3]}")
    check(not os.path.exists(os.path.join(tmp, "r.json")), "old variables: a report was written")
    jb = os.path.join(tmp, "clock.json")
    p = run_it([run, "--stats-json", jb, "--", hotspots, "--seconds", "0.3"],
               {"HOTLOCK_STATS_CLOCK": "sundial"})
    lines = p.stderr.splitlines()
    check(p.returncode == 0 and sum("HOTLOCK_STATS_CLOCK" in l for l in lines) == 1,
          f"bad clock: exit {p.returncode}, {lines[:3]}")
    check(len(reports(jb)) == 1, "bad clock: no report")

    # D: hotlock-run's refusals.
    bad = [["--stats-top", "0"], ["--stats-top", "x"], ["--stats-json"], ["--stats-json", "--"],
           ["--stats-json", os.path.join(tmp, "no/such/dir/r.json")],
           [f"--stats={os.path.join(tmp, 'no/such/dir/r.txt')}"], ["--stats="]]
    for opts in bad:
        args = [run] + opts + (["--", hotspots] if opts[-1] != "--" else [hotspots])
        p = run_it(args)
        check(p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1,
              f"hotlock-run {' '.join(opts)}: exit {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr!r}")

    # F: two (virtual) NUMA nodes: the hot mutex moves between them, and
    # the report suggests CNA, unless the program already runs on it.
    # The hot workers are pinned, two to a CPU, so that the nodes (CPU mod
    # 2) are theirs whatever the scheduler does; one CPU: nothing to move.
    cases = (("fifo", True), ("cna", False)) if len(os.sched_getaffinity(0)) >= 2 else ()
    for queue, want in cases:
        jf = os.path.join(tmp, f"numa-{queue}.json")
        p = run_it([run, "--topology", "virtual:2", "--queue", queue, "--stats-json", jf, "--",
                    hotspots, "--seconds", "1.5", "--pin"])
        d = reports(jf)[0] if p.returncode == 0 else None
        hot = [e for e in d["locks"] if first_function(e) == "hot_counter_update"] if d else []
        check(d and d["nodes"] == 2 and hot, f"virtual:2 --queue {queue}: exit {p.returncode}, no hot mutex")
        if hot:
            check(("use-cna" in codes(hot[0])) == want,
                  f"virtual:2 --queue {queue}: advice {codes(hot[0])}, cross-node {hot[0]['cross_node_share']}")

    # G: clock_gettime instead of the TSC (where the TSC is used at all:
    # the same clock twice otherwise).
    jm = os.path.join(tmp, "monotonic.json")
    p = run_it([run, "--stats-json", jm, "--", hotspots, "--seconds", "1"], {"HOTLOCK_STATS_CLOCK": "monotonic"})
    d = reports(jm)[0] if p.returncode == 0 else None
    hot = [e for e in d["locks"] if first_function(e) == "hot_counter_update"] if d else []
    check(hot and 0 < d["lock_wait_share"] < 1, f"monotonic clock: exit {p.returncode}, no hot mutex")
    if hot:
        check_waiting(hot[0], 1, "clock_gettime")

    # H: threads alive and idle at the end, with what they counted for two
    # mutexes still in their own sums: the destruction of the first and
    # the report at exit must take it.
    jl = os.path.join(tmp, "live.json")
    p = run_it([run, "--stats-json", jl, "--", hotspots, "--seconds", "0.6", "--live"])
    d = reports(jl)[0] if p.returncode == 0 and os.path.exists(jl) else None
    check(d is not None, f"--live: exit {p.returncode}, {p.stderr[-300:]!r}")
    for name in ("destroyed_counter_update", "kept_counter_update") if d else ():
        e = [x for x in d["locks"] if first_function(x) == name]
        print(f"--live {name}:", [(x["objects"], x["contended"], x["acquisitions"], round(x["wait_s"], 4))
                                  for x in e])
        check(len(e) == 1 and e[0]["contended"] >= 20 and e[0]["wait_s"] > 0 and
              e[0]["acquisitions"] >= e[0]["contended"],
              f"--live {name}: its waits are not in the report: {[(x['contended'], x['wait_s']) for x in e]}")

    # I: the sampled count of many acquisitions without a wait.
    jc = os.path.join(tmp, "count.json")
    p = run_it([run, "--stats-json", jc, "--", hotspots, "--seconds", "0.3", "--count"])
    n = [int(l.split()[-1]) for l in p.stdout.splitlines() if l.startswith("hotspots: counted ")]
    d = reports(jc)[0] if p.returncode == 0 and os.path.exists(jc) else None
    e = [x for x in d["locks"] if first_function(x) == "counted_update"] if d else []
    check(n and len(e) == 1, f"--count: exit {p.returncode}, counted {n}, entries {len(e)}")
    if n and len(e) == 1:
        print(f"--count: {n[0]} acquisitions, the report counted {e[0]['acquisitions']}")
        check(abs(e[0]["acquisitions"] / n[0] - 1) < 0.025,
              f"--count: {n[0]} acquisitions, the report counted {e[0]['acquisitions']}")

    # J: a lock taken in a stripped library through a static helper: the
    # helper is an address, and the site is the exported function that
    # called it, with the helper shown as the way through.
    js = os.path.join(tmp, "stripped.json")
    p = run_it([run, "--stats-json", js, "--", hotspots, "--seconds", "0.3", "--stripped"])
    d = reports(js)[0] if p.returncode == 0 and os.path.exists(js) else None
    e = [x for x in d["locks"]
         if any(f.get("module", "").endswith("libhotspots-stripped.so") for f in x["stack"])] if d else []
    check(len(e) == 1, f"--stripped: exit {p.returncode}, {len(e)} entries in the stripped library")
    if len(e) == 1:
        st, site = e[0]["stack"], e[0]["site"]
        print("--stripped:", site, [(f.get("function"), os.path.basename(f.get("module", ""))) for f in st[:3]])
        check(first_function(e[0]) == "stripped_update" and site >= 1 and "function" not in st[site - 1],
              f"--stripped: the site is {site}, {st[site] if st else None}, not stripped_update "
              f"past its unnamed helper")
        check("name" not in e[0], f"--stripped: the stripped library's static lock is named {e[0].get('name')}")

    # K: hotlock-top, while the program runs: the hot mutex on top, its
    # holder's TID or "free", the full report on demand.
    top = os.path.join(os.path.dirname(run), "hotlock-top")
    prog = subprocess.Popen([run, "--stats-json", os.path.join(tmp, "top.json"), "--", hotspots,
                             "--seconds", "3"], env={k: v for k, v in os.environ.items()
                                                     if not k.startswith("HOTLOCK_")},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    t = subprocess.run([top, "-d", "0.3", "-n", "1", str(prog.pid)], capture_output=True, text=True, timeout=30)
    lines = t.stdout.splitlines()
    print("hotlock-top:", lines[:4])
    check(t.returncode == 0 and len(lines) >= 3 and "hot_counter_update" in lines[2] and " hot, " in lines[2],
          f"hotlock-top: exit {t.returncode}, {t.stdout[:400]!r} {t.stderr[:200]!r}")
    r = subprocess.run([top, "--report", str(prog.pid)], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and "== hotlock lock report: pid" in r.stdout and "running for" in r.stdout,
          f"hotlock-top --report: exit {r.returncode}, {r.stdout[:300]!r} {r.stderr[:200]!r}")
    prog.wait(timeout=60)
    bad = subprocess.run([top, "999999"], capture_output=True, text=True)
    check(bad.returncode == 2 and len(bad.stderr.splitlines()) == 1, f"hotlock-top 999999: {bad.stderr!r}")

    # E: no settings, no words.
    p = run_it([run, "--", hotspots, "--seconds", "0.3"])
    check(p.returncode == 0 and p.stderr == "", f"no settings: exit {p.returncode}, stderr {p.stderr!r}")

if failures:
    print(f"stats_report: {len(failures)} failures")
    sys.exit(1)
print("stats_report: all passed")
