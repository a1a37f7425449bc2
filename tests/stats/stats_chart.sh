#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/hotlock-stats-chart.py on hand-written hotlock-run --stats-json files
# (checked against docs/stats.schema.json first): a two-process file charts
# the process with the most lock wait, or --pid's; the PNG is a PNG of a
# plausible size that names the charted pid (its tEXt "Title"); a process
# with no lock still gives a chart; a line cut short (a full disk) among
# good ones is left out with a warning and the rest charted; an unknown
# --pid, a file whose only line is not JSON or not a report, and an
# unwritable --out each exit 1 with one line on stderr; bad options exit 2
# with argparse's usage.  About 6 s
# here (four charts, each starting matplotlib).
#   tests/stats/stats_chart.sh SOURCE_DIR [PYTHON]
# PYTHON defaults to /usr/bin/python3, Debian's, which has matplotlib and
# jsonschema (tools/ensure-deps.sh).
set -euo pipefail
src=$1
py=${2:-/usr/bin/python3}
tool=$src/tools/hotlock-stats-chart.py
schema=$src/docs/stats.schema.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "stats_chart: FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

"$py" -c 'import matplotlib, jsonschema' 2>/dev/null ||
	fail "$py lacks matplotlib or jsonschema (tools/ensure-deps.sh installs python3-matplotlib and python3-jsonschema)"
[ -e "$schema" ] || fail "no $schema"

# Two processes: a forked child (pid 4243) that waited most, with a mutex
# (full first frame), an rwlock (a long C++ name, a path, read and write
# parts), a mutex known by its address only, and a condvar, the first mutex
# named by its variable; and its parent
# (pid 4242) with one lock, whose command line has '$1\n$2' in it: text
# between two '$' is TeX to matplotlib, where '\n' is an error.
cat >"$tmp/two.json" <<'JSON'
{"hotlock_stats": 1, "pid": 4242, "program": "./server --hook 'printf \"$1\\n$2\\n\"' --workers 4 --config /etc/server/a-rather-long-configuration-file-name.conf", "end": "exit", "elapsed_s": 2.5, "cpu": "Test CPU", "cpus": 2, "nodes": 1, "threads": [{"tid": 4242, "name": "server", "alive_s": 2.5, "lock_wait_s": 0.01, "cond_wait_s": 0, "lock_wait_share": 0.004, "cpu_s": 0.1, "exited": false}], "thread_time_s": 2.5, "lock_wait_s": 0.01, "cond_wait_s": 0, "lock_wait_share": 0.004, "locks_tracked": 1, "locks": [{"rank": 1, "address": "0x55d0c0de1000", "kind": "mutex", "type": "normal", "objects": 1, "stack": [{"address": "0x55d0c0a01234", "function": "parent_log", "file": "/src/server/log.c", "line": 17, "module": "/src/server/server"}], "site": 0, "acquisitions": 1000, "contended": 10, "contended_share": 0.01, "wait_s": 0.01, "wait_mean_us": 1000, "wait_max_us": 3000, "hold_mean_us": 2.5, "hold_max_us": 40, "futex_waits": 10, "futex_wakes": 10, "handoffs": 0, "spins": 10, "spins_won": 0, "cross_node": 0, "cross_node_share": 0, "trylock_busy": 0, "timeouts": 0, "advice": [{"code": "no-action", "text": "1% of acquisitions wait"}]}], "conds": []}
{"hotlock_stats": 1, "pid": 4243, "program": "./server --worker", "end": "signal TERM", "elapsed_s": 2.0, "cpu": "Test CPU", "cpus": 2, "nodes": 1, "threads": [{"tid": 4243, "name": "server", "alive_s": 2.0, "lock_wait_s": 0.2, "cond_wait_s": 0.5, "lock_wait_share": 0.1, "cpu_s": 0.1, "exited": false}, {"tid": 4250, "name": "worker", "alive_s": 1.9, "lock_wait_s": 1.0, "cond_wait_s": 0.1, "lock_wait_share": 0.53, "cpu_s": 0.1, "exited": true}], "thread_time_s": 3.9, "lock_wait_s": 1.2, "cond_wait_s": 0.6, "lock_wait_share": 0.3077, "threads_omitted": 0, "locks_tracked": 4, "locks": [{"rank": 1, "address": "0x5581a2b3c4d0", "name": "table_lock", "kind": "mutex", "type": "adaptive", "objects": 1, "stack": [{"address": "0x5581a0001111", "function": "hot_update", "file": "/src/server/hotspots.c", "line": 42}, {"address": "0x5581a0002222", "function": "worker_main"}], "site": 0, "acquisitions": 100000, "contended": 90000, "contended_share": 0.9, "wait_s": 0.8, "wait_mean_us": 8.9, "wait_max_us": 900, "hold_mean_us": 3.1, "hold_max_us": 250, "futex_waits": 5000, "futex_wakes": 5000, "handoffs": 100, "spins": 90000, "spins_won": 85000, "cross_node": 0, "cross_node_share": 0, "trylock_busy": 0, "timeouts": 0, "advice": [{"code": "split-or-shorten", "text": "90% of acquisitions wait, held 3.1 us on average"}]}, {"rank": 2, "address": "0x5581a2b3c600", "kind": "rwlock", "type": "prefer-writer", "objects": 3, "stack": [{"address": "0x5581a0003333", "function": "std::_Hashtable<std::__cxx11::basic_string<char>, std::pair<const std::__cxx11::basic_string<char>, Entry>>::find(const key_type&)", "file": "/usr/include/c++/12/bits/hashtable.h", "line": 1653}], "site": 0, "acquisitions": 50000, "contended": 2000, "contended_share": 0.04, "wait_s": 0.35, "wait_mean_us": 175, "wait_max_us": 20000, "hold_mean_us": 400, "hold_max_us": 9000, "futex_waits": 1800, "futex_wakes": 1700, "handoffs": 300, "spins": 2000, "spins_won": 200, "cross_node": 0, "cross_node_share": 0, "trylock_busy": 5, "timeouts": 0, "read": {"acquisitions": 49000, "contended": 1500, "contended_share": 0.0306, "wait_s": 0.3, "wait_mean_us": 200, "wait_max_us": 20000}, "write": {"acquisitions": 1000, "contended": 500, "contended_share": 0.5, "wait_s": 0.05, "wait_mean_us": 100, "wait_max_us": 3000}, "advice": [{"code": "writers-wait", "text": "writers hold it 400 us"}]}, {"rank": 3, "address": "0x7f00deadbe00", "kind": "mutex", "type": "normal", "objects": 1, "stack": [{"address": "0x7f00aa001234"}], "site": 0, "acquisitions": 300, "contended": 30, "contended_share": 0.1, "wait_s": 0.05, "wait_mean_us": 1666, "wait_max_us": 5000, "hold_mean_us": 1500, "hold_max_us": 6000, "futex_waits": 30, "futex_wakes": 30, "handoffs": 30, "spins": 0, "spins_won": 0, "cross_node": 0, "cross_node_share": 0, "trylock_busy": 0, "timeouts": 2, "advice": []}], "conds": [{"rank": 1, "address": "0x5581a2b3c700", "kind": "cond", "clock": "monotonic", "objects": 1, "stack": [{"address": "0x5581a0004444", "function": "queue_pop", "file": "queue.c", "line": 88}], "site": 0, "mutex": "0x5581a2b3c4d0", "waits": 4000, "wait_s": 0.6, "signals": 100, "broadcasts": 900, "woken": 3900, "woken_per_broadcast": 4.2, "rewaits": 2900, "rewait_share": 0.74, "timeouts": 0, "advice": [{"code": "no-action", "text": "4000 waits, 3900 woken: nothing to change"}]}]}
JSON
# One process that never waited for a lock.
cat >"$tmp/calm.json" <<'JSON'
{"hotlock_stats": 1, "pid": 77, "program": "/bin/true", "end": "_exit", "elapsed_s": 0.001, "cpu": "Test CPU", "cpus": 2, "nodes": 1, "threads": [{"tid": 77, "name": "true", "alive_s": 0.001, "lock_wait_s": 0, "cond_wait_s": 0, "lock_wait_share": 0, "cpu_s": 0.1, "exited": false}], "thread_time_s": 0.001, "lock_wait_s": 0, "cond_wait_s": 0, "lock_wait_share": 0, "locks_tracked": 0, "locks": [], "conds": []}
JSON

step "the inputs are valid against docs/stats.schema.json"
"$py" - "$schema" "$tmp/two.json" "$tmp/calm.json" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
v = jsonschema.Draft7Validator(schema)
for path in sys.argv[2:]:
    for n, line in enumerate(open(path), 1):
        errors = list(v.iter_errors(json.loads(line)))
        for e in errors:
            print(f"{path}:{n}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
        if errors:
            sys.exit(1)
PY

# png FILE: "WIDTH HEIGHT TITLE" from its IHDR and tEXt chunks; fails unless
# it starts with the PNG signature.
png() {
	"$py" - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(f"{sys.argv[1]}: no PNG signature")
pos, width, height, title = 8, None, None, ""
while pos + 8 <= len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height = struct.unpack(">II", body[:8])
    elif kind == b"tEXt" and body.startswith(b"Title\0"):
        title = body[6:].decode("latin-1")
    pos += 12 + length
if width is None:
    sys.exit(f"{sys.argv[1]}: no IHDR chunk")
print(width, height, title)
PY
}
# chart ARGS...: runs the tool, which must exit 0 and print one path.
chart() {
	local rc=0
	"$py" "$tool" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] || fail "hotlock-stats-chart $* exited $rc: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "hotlock-stats-chart $* printed: $(cat "$tmp/out")"
	[ ! -s "$tmp/err" ] || fail "hotlock-stats-chart $* wrote to stderr: $(cat "$tmp/err")"
}
# fails_with STATUS PATTERN ARGS...: the tool exits STATUS with one line on
# stderr that matches PATTERN (grep -E), and writes no PNG.
fails_with() {
	local want=$1 pattern=$2 rc=0
	shift 2
	rm -f "$tmp"/*.png
	"$py" "$tool" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc -eq "$want" ] || fail "hotlock-stats-chart $* exited $rc, not $want: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "hotlock-stats-chart $*: not one line on stderr: $(cat "$tmp/err")"
	grep -Eq -- "$pattern" "$tmp/err" || fail "hotlock-stats-chart $*: stderr lacks /$pattern/: $(cat "$tmp/err")"
	! compgen -G "$tmp/*.png" >/dev/null || fail "hotlock-stats-chart $* wrote a PNG"
	echo "  exit $rc: $(cat "$tmp/err")"
}

step "a bar's label: the lock's variable where the report names it, else its address"
"$py" - "$tool" "$tmp/two.json" <<'PY' || fail "labels"
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("chart", sys.argv[1])
chart = importlib.util.module_from_spec(spec)
spec.loader.exec_module(chart)
locks = [json.loads(l) for l in open(sys.argv[2])][1]["locks"]
named, unnamed = chart.label(locks[0], "mutex"), chart.label(locks[2], "mutex")
print("  " + named.replace("\n", " | ") + "\n  " + unnamed.replace("\n", " | "))
assert "mutex table_lock" in named and "0x5581a2b3c4d0" not in named, named
assert "mutex 0x7f00deadbe00" in unnamed, unnamed
PY

step "two processes: the one with the most lock wait, to the default path"
chart "$tmp/two.json"
[ "$(cat "$tmp/out")" = "$tmp/two.png" ] || fail "printed '$(cat "$tmp/out")', not $tmp/two.png"
read -r w h title < <(png "$tmp/two.png") || fail "two.png is not a PNG"
echo "  two.png: ${w}x$h, '$title'"
[ "$w" -ge 800 ] && [ "$w" -le 3000 ] && [ "$h" -ge 400 ] && [ "$h" -le 3000 ] ||
	fail "two.png is ${w}x$h"
[[ $title == *"pid 4243" ]] || fail "two.png charts '$title', not pid 4243"
h_child=$h

step "--pid picks the other process"
chart --pid 4242 --out "$tmp/parent.png" "$tmp/two.json"
read -r w h title < <(png "$tmp/parent.png") || fail "parent.png is not a PNG"
echo "  parent.png: ${w}x$h, '$title'"
[[ $title == *"pid 4242" ]] || fail "--pid 4242 charts '$title'"
# One lock and no condvar panel: a shorter figure than the child's.
[ "$h" -ge 200 ] && [ "$h" -lt "$h_child" ] || fail "parent.png is ${w}x$h, the child's $h_child high"

step "--top 1: one lock and one condvar, a shorter figure"
chart --top 1 --out "$tmp/top1.png" "$tmp/two.json"
read -r w h title < <(png "$tmp/top1.png") || fail "top1.png is not a PNG"
echo "  top1.png: ${w}x$h"
[ "$h" -lt "$h_child" ] || fail "--top 1 gives ${w}x$h, default $h_child high"

step "a process with no lock: still a chart"
chart "$tmp/calm.json"
read -r w h title < <(png "$tmp/calm.png") || fail "calm.png is not a PNG"
echo "  calm.png: ${w}x$h, '$title'"
[ "$w" -ge 800 ] && [ "$h" -ge 150 ] || fail "calm.png is ${w}x$h"
[[ $title == *"pid 77" ]] || fail "calm.png charts '$title'"

step "errors: exit 1, one line"
fails_with 1 "pid 99.*4242, 4243" --pid 99 "$tmp/two.json"
echo '{"hotlock_stats": 1, "pid": 5, "locks": [tr' >"$tmp/corrupt.json"
fails_with 1 "corrupt.json:1:" "$tmp/corrupt.json"

step "a line cut short among good ones: left out, with a warning"
{ head -1 "$tmp/two.json"; printf '{"hotlock_stats": 1, "pid": 5, "locks": [tr'; tail -1 "$tmp/two.json"; } \
	>"$tmp/cut.json"
rc=0
"$py" "$tool" --out "$tmp/cut.png" "$tmp/cut.json" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "a cut line: exit $rc: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "warning: .*cut.json:2: .*left out" "$tmp/err" ||
	fail "a cut line: stderr $(cat "$tmp/err")"
read -r w h title < <(png "$tmp/cut.png") || fail "cut.png is not a PNG"
[[ $title == *"pid 4242" ]] || fail "cut.png charts '$title' (the cut line glued the child's to it)"
rm -f "$tmp/cut.png"
{ echo; echo '{"hotlock_stats": 2}'; } >"$tmp/v2.json"
fails_with 1 "v2.json:2:.*hotlock_stats" "$tmp/v2.json"
echo '[1, 2]' >"$tmp/array.json"
fails_with 1 "array.json:1:" "$tmp/array.json"
fails_with 1 "cannot write $tmp/no/such/dir/x.png" --out "$tmp/no/such/dir/x.png" "$tmp/two.json"
fails_with 1 "cannot read" "$tmp/missing.json"

step "bad options: exit 2, argparse's usage"
for bad in "--top 0" "--top x" "--pid -3" "--bogus"; do
	rc=0
	# shellcheck disable=SC2086
	"$py" "$tool" $bad "$tmp/two.json" >/dev/null 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] && grep -q '^usage: hotlock-stats-chart' "$tmp/err" ||
		fail "$bad: exit $rc, stderr: $(cat "$tmp/err")"
done
rc=0
"$py" "$tool" >/dev/null 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "no STATS.json: exit $rc"
echo "PASS"
