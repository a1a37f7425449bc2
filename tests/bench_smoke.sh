#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hotlock-bench's adapters and command line, briefly: every registered lock,
# the peers included, runs each scenario's workload, whose checks (exclusion
# in every critical section, lost updates after the run) exit 1 on a broken
# lock; the groups "all" and "peers" expand to the registered locks; bad
# --locks lists exit 2 with a message; the JSON names each lock's role.
#   tests/bench_smoke.sh HOTLOCK_BENCH
set -euo pipefail
bench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "bench_smoke: FAIL: $*" >&2; exit 1; }
py=$(command -v /usr/bin/python3 || command -v python3)
# A bad command line: exit 2, with the reason.
expect_usage() {
	local want=$1 rc=0
	shift
	"$bench" "$@" >/dev/null 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] || fail "'$*' exited $rc, not 2"
	grep -q -- "$want" "$tmp/err" || fail "'$*' did not say '$want': $(cat "$tmp/err")"
}

"$bench" --list >"$tmp/list"
# The peers of each kind that this build has (marked [peer]) and lacks.
peers=$(awk '/\[peer\]$/ { print $1 }' "$tmp/list" | tr '\n' ' ')
missing=$(awk '$2 == "not" && $3 == "built:" { print $1 }' "$tmp/list" | tr '\n' ' ')
echo "bench_smoke: peers built: ${peers:-none}; not built: ${missing:-none}"
[ -n "$peers" ] || fail "no lock is marked [peer] in --list"

short=(--duration 0.05)
"$bench" mutex --locks all --threads 1,3 "${short[@]}" --json "$tmp/m.json" >/dev/null 2>"$tmp/err" ||
	fail "mutex --locks all: $(cat "$tmp/err")"
# The sampled wait per acquisition (every 4th on average, so that a short
# run has samples): the keys in every run and result, the percentiles in
# order, and none of them under --no-wait-times; and in every lock's runs
# of --locks all above.
"$bench" mutex --locks hotlock,glibc --threads 2 --duration 0.1 --repeat 2 --wait-sample 4 \
	--json "$tmp/w.json" >"$tmp/out" 2>"$tmp/err" || fail "mutex wait times: $(cat "$tmp/err")"
grep -q 'p99.9-us' "$tmp/out" || fail "mutex: no wait columns in the table: $(cat "$tmp/out")"
"$bench" mutex --locks hotlock --threads 2 "${short[@]}" --no-wait-times \
	--json "$tmp/w0.json" >"$tmp/out" 2>"$tmp/err" || fail "mutex --no-wait-times: $(cat "$tmp/err")"
! grep -q 'p99.9-us' "$tmp/out" || fail "mutex --no-wait-times: wait columns in the table"
"$py" - "$tmp/w.json" "$tmp/w0.json" "$tmp/m.json" <<'PY' || fail "mutex: the JSON's wait times"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["config"]
assert c["wait_times"] is True and c["wait_sample"] == 4, c
assert 0 <= c["wait_clock_floor_ns"] < 100000, c["wait_clock_floor_ns"]
keys = ("wait_us_p50", "wait_us_p99", "wait_us_p999", "wait_us_max")
for r in d["results"]:
    for run in [r] + r["runs"]:
        assert run["wait_samples"] > 0, (r["lock"], run["wait_samples"])
        v = [run[k] for k in keys]
        assert 0 <= v[0] <= v[1] <= v[2] <= v[3], (r["lock"], v)
    assert r["wait_us_max_all_runs"] == max(run["wait_us_max"] for run in r["runs"]), r["lock"]
d0 = json.load(open(sys.argv[2]))
assert d0["config"]["wait_times"] is False, d0["config"]
for r in d0["results"]:
    assert r["wait_us_max_all_runs"] is None
    for run in [r] + r["runs"]:
        assert all(run[k] is None for k in keys + ("wait_samples",)), run
# --locks all, at the default one in 16: every adapter, the peers' too.
for r in json.load(open(sys.argv[3]))["results"]:
    for run in [r] + r["runs"]:
        assert run["wait_samples"] > 0, (r["lock"], r["threads"])
        v = [run[k] for k in keys]
        assert 0 <= v[0] <= v[1] <= v[2] <= v[3], (r["lock"], r["threads"], v)
PY
"$bench" mutex --torture --locks hotlock,peers --threads 3 "${short[@]}" >/dev/null 2>"$tmp/err" ||
	fail "mutex --torture: $(cat "$tmp/err")"
"$bench" rwlock --locks all --threads 3 "${short[@]}" --json "$tmp/r.json" >/dev/null 2>"$tmp/err" ||
	fail "rwlock --locks all: $(cat "$tmp/err")"
"$bench" rwlock --locks all --split 2,1 "${short[@]}" >/dev/null 2>"$tmp/err" ||
	fail "rwlock --split: $(cat "$tmp/err")"
"$bench" rwsem --locks peers --threads 2 "${short[@]}" >/dev/null 2>"$tmp/err" ||
	fail "rwsem --locks peers: $(cat "$tmp/err")"
# Every condvar in each workload; the scenario checks its own counts (items
# lost or doubled, broadcasts missed) and exits 1 on a fault.
"$bench" cond --threads 1,1:2,3 --waiters 2,5 "${short[@]}" >/dev/null 2>"$tmp/err" ||
	fail "cond: $(cat "$tmp/err")"

# The futex hash (seed 002): a global, a default and a private table, each
# in its own child; then the parked scenario.  Skipped where the kernel has
# no PR_FUTEX_HASH (the scenario says so and drops those sizes).
"$bench" futex-hash --threads 2 --futexes 64 --hash global,default,8 --duration 0.1 --repeat 1 \
	--json "$tmp/fh.json" >/dev/null 2>"$tmp/err" || fail "futex-hash: $(cat "$tmp/err")"
"$bench" futex-hash --scenario parked --parked 16 --hash default,64 --duration 0.1 --repeat 1 \
	>/dev/null 2>"$tmp/err" || fail "futex-hash parked: $(cat "$tmp/err")"

# "all" is every registered lock of the kind, "peers" the [peer] ones, and
# the JSON gives each its role.
# hl_swap's ping-pong (every mode, placement and a load) and schbench.
"$bench" swap --repeat 1 --duration 0.05 --load 0,1 --json "$tmp/s.json" >/dev/null 2>"$tmp/err" ||
	fail "swap: $(cat "$tmp/err")"
"$bench" schbench -m 2 -t 2 -r 0.5 -c 100 -s 100 --repeat 1 --json "$tmp/sb.json" >/dev/null 2>"$tmp/err" ||
	fail "schbench: $(cat "$tmp/err")"
"$py" - "$tmp/list" "$tmp/m.json" "$tmp/r.json" <<'PY' || fail "the JSON's locks and roles"
import json, sys
kinds = {"locks:": [], "rwlocks:": []}
kind = None
for line in open(sys.argv[1]):
    if line.strip() in kinds:
        kind = kinds[line.strip()]
    elif line.startswith("  ") and kind is not None and "not built:" not in line:
        kind.append((line.split()[0], line.rstrip().endswith("[peer]")))
for path, registered in ((sys.argv[2], kinds["locks:"]), (sys.argv[3], kinds["rwlocks:"])):
    config = json.load(open(path))["config"]
    names = [n for n, _ in registered]
    assert config["locks"] == names, (path, config["locks"], names)
    for name, peer in registered:
        want = "hotlock" if name.startswith("hotlock") else "peer" if peer else "reference"
        assert config["lock_roles"][name] == want, (path, name, config["lock_roles"][name])
    assert config["command"].startswith("hotlock-bench "), config["command"]
    assert config["machine"]["cpus_online"] >= 1 and config["date"].endswith("Z")
PY

# apps --stats-cost (about 2 s): the shim without and with its contention
# report, the pair and sysbench-threads at T=2 (skipped with a line where
# sysbench is missing); every shim+stats run checked its report, and the
# directory the reports went to is gone afterwards.  A hotlock-run that
# drops --stats-json makes it exit 1, naming the missing report.
# Into a file first: grep -q quits at its match, and under pipefail the
# help's writer, cut off by SIGPIPE, would fail the pipeline.
"$bench" apps --help >"$tmp/help"
grep -q -- '--stats-cost' "$tmp/help" || fail "apps --help does not name --stats-cost"
mkdir "$tmp/st"
TMPDIR=$tmp/st "$bench" apps --stats-cost --quick --repeat 1 --threads 2 --pairs 100000 \
	--workloads pair,sysbench-threads --json "$tmp/sc.json" >"$tmp/out" 2>"$tmp/err" ||
	fail "apps --stats-cost: $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/st")" ] || fail "apps --stats-cost left $(ls -A "$tmp/st") behind"
grep -q 'shim+stats ns/pair' "$tmp/out" || fail "apps --stats-cost: no shim+stats column: $(cat "$tmp/out")"
"$py" - "$tmp/sc.json" <<'PY' || fail "apps --stats-cost: the JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["stats_cost"] is True and d["config"]["sides"] == ["shim", "shim+stats"]
sides = set()
for r in d["results"]:
    sides.add(r["side"])
    assert "ratio_stats_over_shim" in r, r["lock"]
    lo, hi = r["ratio_ci95"]    # one run a side: the interval is the ratio
    assert lo == hi == r["ratio_stats_over_shim"], (r["lock"], lo, hi)
    for run in r["runs"]:
        assert run["futex_wait"] is not None, r["lock"]   # both sides on the shim
        if r["side"] == "shim+stats":
            rep = run["stats_report"]
            # The pair never contends: a process that never waited writes
            # no report.
            if r["workload"].startswith("mutex-pair"):
                assert rep["reports"] == 0, (r["lock"], rep)
            else:
                assert rep["reports"] >= 1 and rep["bytes"] > 0, (r["lock"], rep)
            if r["workload"] == "sysbench-threads":
                assert rep["locks_tracked"] >= 1, (r["lock"], rep)
        else:
            assert "stats_report" not in run, r["lock"]
assert sides == {"shim", "shim+stats"}, sides
assert any(r["workload"].startswith("mutex-pair") for r in d["results"])
PY
printf '#!/bin/sh\n[ "$1" = --stats-json ] && shift 2\nexec "%s" "$@"\n' \
	"$(dirname "$bench")/../bin/hotlock-run" >"$tmp/no-report"
chmod +x "$tmp/no-report"
rc=0
TMPDIR=$tmp/st "$bench" apps --stats-cost --quick --repeat 1 --threads 2 --workloads sysbench-threads \
	--hotlock-run "$tmp/no-report" >/dev/null 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] || fail "apps --stats-cost without reports exited $rc, not 1: $(cat "$tmp/err")"
grep -q 'shim+stats.*: the program wrote no contention report' "$tmp/err" ||
	fail "apps --stats-cost without reports did not say so: $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/st")" ] || fail "apps --stats-cost (failed) left $(ls -A "$tmp/st") behind"

# --cost=stats is --stats-cost, and two different --cost are refused.
"$bench" apps --cost=stats --quick --repeat 1 --pairs 100000 --workloads pair >"$tmp/out" \
	2>"$tmp/err" || fail "apps --cost=stats: $(cat "$tmp/err")"
grep -q 'shim+stats ns/pair' "$tmp/out" || fail "apps --cost=stats: no shim+stats column: $(cat "$tmp/out")"
grep -q -- '--cost OPTION' "$tmp/help" || fail "apps --help does not name --cost"
expect_usage "one option a run" apps --stats-cost --cost deadlocks
expect_usage "'nosuch' is not stats, deadlocks or lock-order" apps --cost nosuch

# apps --cost=deadlocks and --cost=lock-order (about 6 s), through a
# hotlock-run that logs and drops the options of issue 40 (this one may not
# have them yet), then runs the real one: the report side gets each option
# and a --deadlocks-file=DIR/NAME-%p.txt of its own, an empty file there
# passes, one with a report is a warning (stderr, under the row, the JSON),
# and the directory is gone afterwards.  REPORT=1 writes a report.
cat >"$tmp/detect" <<STUB
#!/bin/sh
file=
while :; do
	case \$1 in
	--deadlocks | --lock-order) echo "\$1" >>"$tmp/detect.log"; shift ;;
	--deadlocks-file=*) file=\${1#--deadlocks-file=}; echo "\$1" >>"$tmp/detect.log"; shift ;;
	*) break ;;
	esac
done
if [ -n "\$file" ]; then
	file=\$(printf '%s' "\$file" | sed "s/%p/\$\$/")
	: >"\$file"
	[ -z "\${REPORT:-}" ] || printf '%s\n%s\n' \\
		"== hotlock: lock-order inversion in pid \$\$ (x): 2 locks taken in a cycle of orders" \\
		"   mutex 0x1 then mutex 0x2: thread 7 took the first at f (a.c:1), then the second at g (a.c:2)" \\
		>"\$file"
fi
exec "$(dirname "$bench")/../bin/hotlock-run" "\$@"
STUB
chmod +x "$tmp/detect"
TMPDIR=$tmp/st "$bench" apps --cost=deadlocks --quick --repeat 1 --threads 2 --pairs 100000 \
	--workloads pair,sysbench-threads --hotlock-run "$tmp/detect" --json "$tmp/dl.json" \
	>"$tmp/out" 2>"$tmp/err" || fail "apps --cost=deadlocks: $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/st")" ] || fail "apps --cost=deadlocks left $(ls -A "$tmp/st") behind"
! grep -q 'warning' "$tmp/out" "$tmp/err" || fail "apps --cost=deadlocks warned of empty files"
grep -q 'shim+deadlocks ns/pair' "$tmp/out" || fail "apps --cost=deadlocks: no column: $(cat "$tmp/out")"
mv "$tmp/detect.log" "$tmp/dl.log"
REPORT=1 TMPDIR=$tmp/st "$bench" apps --cost=lock-order --quick --repeat 1 --threads 2 \
	--workloads sysbench-threads --hotlock-run "$tmp/detect" --json "$tmp/lo.json" \
	>"$tmp/out" 2>"$tmp/err" || fail "apps --cost=lock-order: $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/st")" ] || fail "apps --cost=lock-order left $(ls -A "$tmp/st") behind"
grep -q 'warning: apps sysbench-threads T=2 shim+lock-order: hotlock-run --lock-order reported: 1 report,' \
	"$tmp/err" || fail "apps --cost=lock-order: no warning on stderr: $(cat "$tmp/err")"
grep -q 'warning: hotlock-run --lock-order reported in 1 of 1 runs' "$tmp/out" &&
	grep -q '^    == hotlock: lock-order inversion in pid' "$tmp/out" ||
	fail "apps --cost=lock-order: no warning under the row: $(cat "$tmp/out")"
"$py" - "$tmp/dl.json" "$tmp/dl.log" "$tmp/lo.json" "$tmp/detect.log" <<'PY' || fail "apps --cost: the JSON"
import json, re, sys
for path, log, cost, reported in ((sys.argv[1], sys.argv[2], "deadlocks", False),
                                  (sys.argv[3], sys.argv[4], "lock-order", True)):
    d = json.load(open(path))
    c = d["config"]
    assert c["cost"] == cost and c["stats_cost"] is False, c
    assert c["sides"] == ["shim", "shim+" + cost], c["sides"]
    opt, arg = c["cost_options"]
    assert opt == "--" + cost, c["cost_options"]
    assert re.fullmatch(r"--deadlocks-file=.*/hotlock-bench-%s\.\w+/%s-%%p\.txt" % (cost, cost),
                        arg), arg
    trials = 0
    for r in d["results"]:
        assert "ratio_%s_over_shim" % cost.replace("-", "_") in r, r["lock"]
        for run in r["runs"]:
            assert "stats_report" not in run, r["lock"]
            if r["side"] == "shim":
                assert "deadlocks_report" not in run, r["lock"]
                continue
            trials += 1
            rep = run["deadlocks_report"]
            if reported:
                assert rep["reports"] == 1 and rep["files"] == 1, rep
                assert rep["first_lines"].startswith("== hotlock: lock-order inversion"), rep
            else:
                assert rep == {"reports": 0, "bytes": 0, "files": 0, "first_lines": None}, rep
    # hotlock-run got the option and the file on each report run, only.
    assert open(log).read().split() == [opt, arg] * trials, (open(log).read(), trials)
PY

# With a hotlock-run that has the options of issue 40, the real thing:
# the pair and sysbench-threads make no report there.
"$(dirname "$bench")/../bin/hotlock-run" --help >"$tmp/run-help"
if grep -q -- '--lock-order' "$tmp/run-help"; then
	for cost in deadlocks lock-order; do
		TMPDIR=$tmp/st "$bench" apps --cost=$cost --quick --repeat 1 --threads 2 \
			--pairs 100000 --workloads pair,sysbench-threads >"$tmp/out" 2>"$tmp/err" ||
			fail "apps --cost=$cost: $(cat "$tmp/err")"
		! grep -q 'warning' "$tmp/out" "$tmp/err" ||
			fail "apps --cost=$cost: hotlock-run reported: $(cat "$tmp/out")"
		[ -z "$(ls -A "$tmp/st")" ] || fail "apps --cost=$cost left $(ls -A "$tmp/st") behind"
	done
else
	echo "bench_smoke: hotlock-run has no --lock-order yet: apps --cost=deadlocks and" \
		"--cost=lock-order checked through a stub only"
fi

# Bad lists: exit 2, with the reason.
expect_usage "unknown lock 'nosuch'" mutex --locks hotlock,nosuch "${short[@]}"
expect_usage "listed twice" mutex --locks hotlock,hotlock "${short[@]}"
expect_usage "does not go with --no-wait-times" mutex --no-wait-times --wait-sample 4 "${short[@]}"
expect_usage "out of range" mutex --wait-sample 0 "${short[@]}"
expect_usage "unknown lock 'hotlock'" rwlock --locks hotlock "${short[@]}"
expect_usage "scenario" cond --scenario nosuch "${short[@]}"
expect_usage "unknown mode 'nosuch'" swap --modes nosuch --duration 0.05
expect_usage "nosuch" schbench --modes nosuch -r 0.1
expect_usage "hash" futex-hash --hash 3 --duration 0.1
for m in $missing; do
	case $m in
	*-rw) expect_usage "not built into this hotlock-bench" rwlock --locks "$m" "${short[@]}" ;;
	*) expect_usage "not built into this hotlock-bench" mutex --locks "$m" "${short[@]}" ;;
	esac
done
echo "bench_smoke: ok"
