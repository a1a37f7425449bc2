#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hotlock-bench --busy N: bad values exit 2 with one error line; a short run
# states the load (the "load:" line, config "busy", each run's "busy_cpus"),
# which compare reads (a file without it as 0, a different one warned of);
# and no busy process outlives the bench, whether it ends by itself, on
# SIGTERM, on SIGINT or on SIGKILL.  About 2 s.
#   tests/bench_busy.sh HOTLOCK_BENCH
set -uo pipefail
bench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "bench_busy: FAIL: $*" >&2; exit 1; }

# 1. Bad values: exit 2 and one "error:" line naming --busy.
for v in -1 x 1025 1.5; do
	for scenario in mutex apps; do
		rc=0
		"$bench" "$scenario" --busy "$v" >/dev/null 2>"$tmp/err" || rc=$?
		[ $rc -eq 2 ] || fail "$scenario --busy $v exited $rc, not 2"
		[ "$(grep -c 'error:' "$tmp/err")" -eq 1 ] && grep -q -- '--busy' "$tmp/err" ||
			fail "$scenario --busy $v: not one error line about --busy: $(cat "$tmp/err")"
	done
done

# The busy processes of bench pid $1 (named hotlock-busy), waiting for all
# $2 of them to appear (the bench forks them one after the other), for as
# long as the bench runs, up to 60 s: a loaded machine can start it late
# (a fixed 3 s failed once beside make test's other work).  They live for
# the whole run (at least --duration), far longer than one poll.
busy_of() {
	local pid=$1 n=$2 kids="" i
	for i in $(seq 3000); do
		kids=$(pgrep -P "$pid" -x hotlock-busy | tr '\n' ' ')
		[ "$(echo $kids | wc -w)" -ge "$n" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	echo "$kids"
}

# Fails if any of the pids is still running (a zombie, dead and waiting for
# its new parent to reap it, is not).
none_left() {
	local what=$1 k state
	shift
	for k in "$@"; do
		state=$(awk '{ print $3 }' "/proc/$k/stat" 2>/dev/null) || continue
		[ "$state" = Z ] || [ "$state" = X ] ||
			fail "$what: busy process $k is still there (state $state)"
	done
}

# 2. A short run: the load stated, its processes gone at the end.
"$bench" mutex --locks glibc --threads 2 --duration 0.4 --repeat 1 --busy 2 \
	--json "$tmp/m.json" >"$tmp/out" 2>"$tmp/err" &
pid=$!
kids=$(busy_of $pid 2)
wait $pid || fail "mutex --busy 2 exited $?: $(cat "$tmp/err")"
[ "$(echo $kids | wc -w)" -eq 2 ] || fail "mutex --busy 2: busy processes seen: '$kids'"
none_left "after a run" $kids
grep -q '^load: 2 CPU-bound processes beside the runs (--busy 2)$' "$tmp/out" ||
	fail "no load line: $(cat "$tmp/out")"
py=$(command -v /usr/bin/python3 || command -v python3 || true)
if [ -n "$py" ]; then
	"$py" - "$tmp/m.json" <<'PY' || fail "the JSON does not state the load"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["busy"] == 2, d["config"].get("busy")
assert d["config"]["busy_nice"] == 0, d["config"].get("busy_nice")
for r in d["results"]:
    for run in r["runs"]:
        assert run["busy_cpus"] is None or run["busy_cpus"] >= 0, run
PY
else
	grep -q '"busy": 2,' "$tmp/m.json" || fail "no \"busy\": 2 in the JSON"
fi
# Without --busy: "busy": 0, no load line, no busy_cpus.
"$bench" mutex --locks glibc --threads 1 --duration 0.05 --repeat 1 \
	--json "$tmp/m0.json" >"$tmp/out" 2>"$tmp/err" || fail "mutex without --busy: $(cat "$tmp/err")"
grep -q '"busy": 0,' "$tmp/m0.json" || fail "no \"busy\": 0 in the JSON without --busy"
! grep -q 'busy_cpus' "$tmp/m0.json" || fail "busy_cpus in the JSON without --busy"
! grep -q '^load:' "$tmp/out" || fail "a load line without --busy"

# compare: a file without "busy" (from before --busy) is one with 0; runs
# beside different loads get a warning.
grep -v '"busy": 0,' "$tmp/m0.json" >"$tmp/old.json"
! grep -q '"busy"' "$tmp/old.json" || fail "could not make a file without \"busy\""
"$bench" compare "$tmp/old.json" "$tmp/m0.json" >"$tmp/cmp" 2>&1 || fail "compare without busy: $(cat "$tmp/cmp")"
! grep -q 'busy' "$tmp/cmp" || fail "compare warned of busy between none and 0: $(cat "$tmp/cmp")"
"$bench" compare "$tmp/m0.json" "$tmp/m.json" >"$tmp/cmp" 2>&1 || true
grep -q '^warning: OLD ran beside 0 and NEW beside 2 CPU-bound processes of --busy' "$tmp/cmp" ||
	fail "compare did not warn of different --busy loads: $(cat "$tmp/cmp")"

# 3. Killed mid-run: no busy process left, and the bench dies of the signal.
# (env --default-signal: a background job of a script starts with SIGINT
# ignored, which the bench keeps.)
sigs="TERM INT KILL" run=(env --default-signal=INT)
env --default-signal=INT true 2>/dev/null || { sigs="TERM KILL"; run=(); }  # coreutils < 8.31
for sig in $sigs; do
	"${run[@]}" "$bench" mutex --locks glibc --threads 2 --duration 5 \
		--repeat 1 --busy 2 >/dev/null 2>&1 &
	pid=$!
	kids=$(busy_of $pid 2)
	[ "$(echo $kids | wc -w)" -eq 2 ] || { kill -KILL $pid; fail "SIG$sig: busy processes seen: '$kids'"; }
	kill -$sig $pid
	rc=0
	{ wait $pid; } 2>/dev/null || rc=$?
	case $sig in
	TERM) want=143 ;; INT) want=130 ;; KILL) want=137 ;;
	esac
	[ $rc -eq $want ] || fail "SIG$sig: the bench exited $rc, not $want"
	# SIGKILL: the kernel kills them (PR_SET_PDEATHSIG), a moment later.
	[ $sig = KILL ] && sleep 0.2
	none_left "after SIG$sig" $kids
done
echo "bench_busy: ok"
