#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""hotlock-run --stats on programs that end, or run, the ways a debugging
tool is kept for (ends.c, objects.cpp): the program must behave exactly as
without --stats, and the report must be there and right.

  stats_faults.py HOTLOCK_RUN ENDS OBJECTS SCHEMA

Each case, with what it checks:
- heap-corrupt, double-free: a crash inside malloc dies of SIGABRT at
  once (no hang, no SIGALRM), and its report says so;
- segv: dies of SIGSEGV, its report says so, and its core (where gdb is
  there and the kernel writes a core here) holds the fault (si_code
  SEGV_MAPERR, the address), not a raise;
- malloc-loop + SIGTERM, exit-handler + SIGTERM: the signal's own end (or
  the handler's _exit 7) within a second, while threads sit in malloc;
- fork-walk: 30 forks that _exit while a thread walks the modules all end;
- daemons (the main process ends, a background child contends later), two
  at once: hotlock-run ends at once, and a child of it reports on the
  background process when it ends (neither run's collector takes the
  other's area for a stale one);
- fd2: a daemon whose fd 2 is its data file keeps its data as it wrote it;
- generation | head -1: the program is not killed by SIGPIPE;
- chdir: a relative --stats=FILE is hotlock-run's directory's, not the
  program's new one;
- a shell loop of 200 /bin/true: no report and no per-process cost of the
  report's (no calibration sleep: the loop takes well under 200 x 10 ms),
  one closing line that counts the processes;
- hold: a mutex held 1 ms at a time reads, within 5%, the mean hold the
  program itself saw (the release's wake-up is not in it);
- generation: a generation broadcast, every woken worker with work: no
  advice against it;
- objects: 100 heap objects with a std::mutex each, never destroyed as the
  shim sees it, each contended: one entry, of all 100 objects;
- many-statics: more classes than the records: the table-full count counts
  objects (tracked and untracked add up to the objects), not contentions;
- a full disk (/dev/full): one line and exit status 2, the program's
  output unchanged; a JSON line that does not fit leaves no part behind;
- name + a command line that are not UTF-8: the JSON is valid, with both;
  and the names threads gave themselves (pthread_setname_np, prctl) just
  before they ended are there, kept with no system call at their end;
- vfork: a vfork child's _exit(3), in its parent's memory, neither
  gives back its parent's slot nor ends it: the parent's report is there,
  with its contention and its exit 0;
- pshared: a process-shared mutex's waits are counted and shown as kept
  by glibc, not "no contention".
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import jsonschema

run, ends, objects, schema_path = [os.path.abspath(a) for a in sys.argv[1:5]]
schema = json.load(open(schema_path))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def env_clean():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("HOTLOCK_") or k == "LD_PRELOAD":
            del env[k]
    return env


def hl(args, timeout=30, cwd=None, **kw):
    t0 = time.monotonic()
    try:
        p = subprocess.run([run] + args, env=env_clean(), capture_output=True, timeout=timeout,
                           cwd=cwd, **kw)
    except subprocess.TimeoutExpired:
        check(False, f"hotlock-run {' '.join(args)}: still running after {timeout} s (a hang)")
        return None, timeout
    return p, time.monotonic() - t0


def reports(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                doc = json.loads(raw.decode("utf-8"))
                jsonschema.validate(doc, schema)
            except (ValueError, jsonschema.ValidationError) as e:
                check(False, f"{path}:{n}: not a valid report: {str(e)[:200]}")
                continue
            out.append(doc)
    return out


def site(entry):
    return entry["stack"][entry["site"]].get("function", "") if entry["stack"] else ""


with tempfile.TemporaryDirectory() as tmp:
    js = os.path.join(tmp, "r.json")

    def fresh():
        if os.path.exists(js):
            os.unlink(js)
        return js

    # Crashes inside malloc: SIGABRT at once, and the report.
    for mode in ("heap-corrupt", "double-free"):
        p, took = hl(["--stats", "--stats-json", fresh(), "--", ends, mode], timeout=20)
        if p:
            print(f"{mode}: exit {p.returncode} in {took:.2f} s")
            check(p.returncode == -6, f"{mode}: exit {p.returncode}, not SIGABRT (-6)")
            check(took < 5, f"{mode}: took {took:.1f} s")
            d = reports(js)
            check(len(d) == 1 and d[0]["end"].startswith("signal SIGABRT"),
                  f"{mode}: reports {[x['end'] for x in d]}")

    # SIGSEGV, and its core.
    cores = os.path.join(tmp, "cores")
    os.mkdir(cores)
    pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    shell = f"ulimit -c unlimited; exec {run} --stats-json {fresh()} -- {ends} segv"
    t0 = time.monotonic()
    p = subprocess.run(["sh", "-c", shell], env=env_clean(), capture_output=True, timeout=30, cwd=cores)
    print(f"segv: exit {p.returncode} in {time.monotonic() - t0:.2f} s")
    check(p.returncode in (139, -11), f"segv: exit {p.returncode}, not SIGSEGV")
    d = reports(js)
    check(len(d) == 1 and d[0]["end"].startswith("signal SIGSEGV"), f"segv: reports {[x['end'] for x in d]}")
    core = [f for f in os.listdir(cores) if f.startswith("core")]
    if not shutil.which("gdb") or pattern.startswith("|") or not core:
        print(f"segv: the core not read (gdb {'there' if shutil.which('gdb') else 'missing'}, "
              f"core_pattern {pattern!r}, {len(core)} core files)")
    else:
        g = subprocess.run(["gdb", "-batch", "-ex", "print $_siginfo.si_code", "-ex",
                            "print $_siginfo._sifields._sigfault.si_addr", ends, os.path.join(cores, core[0])],
                           capture_output=True, text=True, timeout=60)
        vals = re.findall(r"^\$\d+ = (.*)$", g.stdout, re.M)
        print("segv: the core's si_code, si_addr:", vals)
        check(len(vals) == 2 and vals[0] == "1" and vals[1].endswith("0x10"),
              f"segv: the core's signal is not the fault (SEGV_MAPERR at 0x10): {vals}")

    # SIGTERM while threads sit in malloc; and a handler's _exit.
    for mode, want in (("malloc-loop", -15), ("exit-handler", 7)):
        proc = subprocess.Popen([run, "--stats", "--", ends, mode], env=env_clean(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.readline()
        time.sleep(0.2)
        t0 = time.monotonic()
        proc.send_signal(15)
        try:
            rc = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = None
        took = time.monotonic() - t0
        err = proc.stderr.read().decode(errors="replace")
        print(f"{mode}: exit {rc} {took:.2f} s after SIGTERM")
        check(rc == want and took < 2, f"{mode}: exit {rc} {took:.1f} s after SIGTERM, not {want} at once")
        check("== hotlock lock report" in err, f"{mode}: no report: {err[-300:]!r}")

    # 30 forks that _exit while a thread walks the modules.
    p, took = hl(["--stats-json", fresh(), "--", ends, "fork-walk"], timeout=30)
    if p:
        print(f"fork-walk: {p.stdout.decode().strip()} in {took:.2f} s")
        check(p.returncode == 0 and b"forks 30 ok" in p.stdout, f"fork-walk: exit {p.returncode}, {p.stdout!r}")

    # Daemons: the main process ends at once, its background child execs
    # and contends later; two such runs at once (one's collector must not
    # take the other's area for a stale one).
    outs = [os.path.join(tmp, f"daemon{k}.json") for k in range(2)]
    t0 = time.monotonic()
    rcs = [subprocess.run([run, "--stats-json", o, "--", "sh", "-c",
                           f"( sleep 0.3; exec {ends} hold ) >/dev/null 2>&1 &"],
                          env=env_clean(), capture_output=True, timeout=30).returncode for o in outs]
    took = time.monotonic() - t0
    check(rcs == [0, 0] and took < 2, f"daemon: hotlock-run exits {rcs} after {took:.2f} s, not at once")
    for _ in range(100):
        if all(reports(o) for o in outs):
            break
        time.sleep(0.1)
    got = [[x["end"] for x in reports(o) if "hold" in x["program"]] for o in outs]
    print(f"daemon: main processes ended in {took:.2f} s; the background ones' reports: {got}")
    check(got == [["exit 0"], ["exit 0"]], f"daemon: reports {got}")

    # A daemon's fd 2 is its data file.
    data = os.path.join(tmp, "data")
    p, took = hl(["--stats", "--", ends, "fd2", data])
    if p:
        content = open(data, "rb").read()
        check(p.returncode == 0 and content == b"daemon's own data\n",
              f"fd2: exit {p.returncode}, the data file holds {len(content)} bytes: {content[:60]!r}")

    # prog 2>&1 | head -1 (the program prints one line; the report follows
    # into a pipe whose reader is gone: hotlock-run's to fail, not the
    # program's).
    sh = f"{run} --stats -- {ends} generation 2>&1 | head -1; echo \"status ${{PIPESTATUS[0]}}\""
    p = subprocess.run(["bash", "-c", sh], env=env_clean(), capture_output=True, text=True, timeout=30)
    st = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    print(f"lines | head -1: {st}")
    check(st in ("status 0", "status 2"), f"lines | head -1: {st} (141: killed by SIGPIPE)")

    # A relative --stats=FILE and a program that changes directory.
    sub = os.path.join(tmp, "sub")
    os.mkdir(sub)
    p, took = hl(["--stats=rel.txt", "--", ends, "chdir", sub], cwd=tmp)
    check(p and p.returncode == 0 and os.path.exists(os.path.join(tmp, "rel.txt")) and
          not os.path.exists(os.path.join(sub, "rel.txt")),
          f"chdir: rel.txt in {os.listdir(tmp)} / sub: {os.listdir(sub)}")

    # 200 processes that never contend.
    loop = "for i in $(seq 200); do /bin/true; done"
    p, took = hl(["--stats", "--", "sh", "-c", loop], timeout=60)
    if p:
        err = p.stderr.decode(errors="replace")
        print(f"200 x /bin/true: {took:.2f} s; stderr: {err.strip()[:200]!r}")
        check(p.returncode == 0 and "== hotlock lock report" not in err,
              f"200 x /bin/true: exit {p.returncode}, reports on stderr")
        m = re.search(r"== hotlock: (\d+) processes of the program ran, 0 with a lock report.*"
                      r" (\d+) never waited", err)
        check(m and int(m.group(1)) >= 201 and m.group(1) == m.group(2),
              f"200 x /bin/true: the closing line: {err[:300]!r}")
        check(took < 1.5, f"200 x /bin/true took {took:.2f} s (a 10 ms sleep each would be 2 s)")

    # A hold of 1 ms.
    p, took = hl(["--stats-json", fresh(), "--", ends, "hold"])
    d = reports(js)
    e = [x for x in d[0]["locks"] if x.get("name") == "held"] if d else []
    if e:
        m = re.search(rb"hold mean (\d+) us", p.stdout)
        seen = int(m.group(1)) if m else 0
        print(f"hold: mean {e[0]['hold_mean_us']:.0f} us, max {e[0]['hold_max_us']:.0f} us;"
              f" the program saw {seen} us")
        # A hold of the program's, preempted or not, is one of the report's;
        # the release's wake-up (11-44% more) is not part of it.
        check(m and abs(e[0]["hold_mean_us"] - seen) <= 0.05 * seen,
              f"hold: mean {e[0]['hold_mean_us']} us, the program held it {seen} us")
    else:
        check(False, f"hold: no entry for the mutex: {[x.get('name') for x in d[0]['locks']] if d else d}")

    # A generation broadcast.
    p, took = hl(["--stats-json", fresh(), "--", ends, "generation"])
    d = reports(js)
    c = d[0]["conds"] if d else []
    check(len(c) == 1 and [a["code"] for a in c[0]["advice"]] == ["no-action"] and
          "futile" not in json.dumps(c[0]),
          f"generation: conds {[(x['waits'], [a['code'] for a in x['advice']]) for x in c]}")

    # Per-object std::mutex.
    p, took = hl(["--stats-json", fresh(), "--", objects, "100"], timeout=60)
    d = reports(js)
    e = [x for x in d[0]["locks"] if "serve" in json.dumps(x["stack"])] if d else []
    print(f"objects: {[(x['objects'], x['contended']) for x in e]} in {took:.2f} s")
    check(len(e) == 1 and e[0]["objects"] == 100, f"objects: entries {[(x['objects']) for x in e]}")

    # More classes than records.
    p, took = hl(["--stats-json", fresh(), "--", ends, "many-statics"], timeout=120)
    d = reports(js)
    if d:
        u = d[0].get("locks_untracked")
        print(f"many-statics: {d[0]['locks_tracked']} tracked, {u} untracked, in {took:.1f} s")
        # 20000 statics and the mutex every mode contends: each object
        # counted once, tracked or not.
        check(u is not None and u > 0 and d[0]["locks_tracked"] + u == 20001,
              f"many-statics: {d[0]['locks_tracked']} tracked + {u} untracked, not 20001 objects")
    else:
        check(False, f"many-statics: no report (exit {p.returncode if p else None})")

    # A full disk.
    p, took = hl(["--stats=/dev/full", "--", ends, "lines"])
    if p:
        err = p.stderr.decode(errors="replace").strip().splitlines()
        out_lines = p.stdout.count(b"\n")
        check(p.returncode == 2 and len(err) == 1 and "/dev/full" in err[0] and out_lines == 1000,
              f"/dev/full: exit {p.returncode}, stderr {err}, {out_lines} lines out")
    small = os.path.join(tmp, "small")
    os.mkdir(small)
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", small], capture_output=True).returncode == 0
    if mounted:
        try:
            # One page, taken by another file: the report's line has no
            # room, and none of it may stay behind.
            with open(os.path.join(small, "filler"), "w") as f:
                f.write("x")
            full = os.path.join(small, "r.json")
            p, took = hl(["--stats-json", full, "--", ends, "hold"])
            size = os.path.getsize(full) if os.path.exists(full) else -1
            check(p and p.returncode == 2 and size == 0 and len(p.stderr.splitlines()) == 1,
                  f"a full tmpfs: exit {p.returncode if p else None}, {size} bytes left, "
                  f"stderr {p.stderr if p else None!r}")
        finally:
            subprocess.run(["umount", small])
    else:
        print("a full tmpfs: not mounted here (not root, or no mount): /dev/full only")

    # Text that is not UTF-8.
    p, took = hl([b"--stats-json", fresh().encode(), b"--", ends.encode(), b"name", b"\xff\xfe-arg"])
    d = reports(js)
    check(len(d) == 1 and "\ufffd" in d[0]["program"] and
          any("caf" in t["name"] for t in d[0]["threads"]) and
          any(t["name"] == "by-prctl" for t in d[0]["threads"]),
          f"thread names: {[(x['program'], [t['name'] for t in x['threads']]) for x in d]}")

    # A vfork child's _exit is not its parent's end.
    p, took = hl(["--stats-json", fresh(), "--", ends, "vfork"])
    d = reports(js)
    e = [x for x in d[0]["locks"] if x["contended"] > 0] if len(d) == 1 else []
    check(p is not None and p.returncode == 0 and len(d) == 1 and d[0]["end"] == "exit 0" and e,
          f"vfork: exit {p.returncode if p else None}, reports {[(x['end'], len(x['locks'])) for x in d]}")

    # A process-shared mutex.
    p, took = hl(["--stats-json", fresh(), "--", ends, "pshared"])
    d = reports(js)
    e = [x for x in d[0]["locks"] if x["type"] == "kept-by-glibc"] if d else []
    check(len(e) == 1 and e[0]["contended"] > 0 and e[0]["wait_s"] > 0 and
          [a["code"] for a in e[0]["advice"]] == ["not-analysed"],
          f"pshared: {[(x['type'], x['contended']) for x in d[0]['locks']] if d else d}")

if failures:
    print(f"stats_faults: {len(failures)} failures")
    sys.exit(1)
print("stats_faults: all passed")
