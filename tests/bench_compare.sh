#!/bin/sh
# SPDX-License-Identifier: MIT
# hotlock-bench compare, end to end: two tiny mutex runs, then compare on
# real files, on files fabricated from them (where the right marks are known
# in advance), on directories, on a corrupt file, and on a file whose command
# line holds a byte that is not UTF-8.
#
# Usage: tests/bench_compare.sh PATH/TO/hotlock-bench
# Exit 0 pass, 1 fail, 77 skipped (no python3, which fabricates the files).
# About 3 s, most of it the two runs.
#
# The fabricated NEW files multiply every run's ops/s by 2 (or 0.5).  Whether
# a row is then marked '+' (or '-') depends on OLD's own runs: NEW's slowest
# (2 x OLD's slowest) beats OLD's fastest only if OLD's runs were within a
# factor of 2 of each other, which a loaded machine can break; so the
# expected mark of each row is worked out from the OLD file by the same rule
# ('+' if 2 x min > max, else '~'), and the test cannot fail by chance.  On
# a quiet machine every row is '+'.
set -u

bench=${1:?usage: $0 PATH/TO/hotlock-bench}
case $bench in /*) ;; *) bench=$(pwd)/$bench ;; esac
if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP: python3 not found"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
mkdir old new
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# compare's table rows as "lock threads mark", sorted: a row is a line whose
# second field is a thread count and that has the table's 9 columns.
rows() {
	awk 'NF == 9 && $2 ~ /^[0-9]+$/ { print $1, $2, $6 }' "$1" | sort
}

run() {
	"$bench" mutex --threads 1,2 --duration 0.05 --repeat 3 \
		--locks hotlock,glibc --json "$1" >/dev/null 2>"$1.log" ||
		{ echo "FAIL: hotlock-bench mutex exited $?:"; cat "$1.log"; exit 1; }
}
run old/m.json
run new/m.json

# 1. Two real runs: exit 0, a row for each (lock, threads).
"$bench" compare old/m.json new/m.json >out1 2>err1
rc=$?
[ $rc -eq 0 ] || fail "compare of two runs exited $rc: $(cat err1)"
rows out1 | awk '{ print $1, $2 }' >got1
printf '%s\n' "glibc 1" "glibc 2" "hotlock 1" "hotlock 2" >want1
cmp -s got1 want1 || fail "rows of two runs: got '$(tr '\n' ';' <got1)', want '$(tr '\n' ';' <want1)'"
grep -q '^summary: 4 rows in 1 file' out1 || fail "no summary line for 4 rows: $(tail -1 out1)"

# 2. A file against itself: every row within the spread.
"$bench" compare old/m.json old/m.json >out2 2>err2 || fail "self-compare exited $?"
[ "$(rows out2 | awk '{ print $3 }' | sort -u)" = "~" ] ||
	fail "self-compare: marks other than '~': $(rows out2 | tr '\n' ';')"

# 3. Fabricated NEW files: ops/s x2, x0.5, and only 2 runs a row; each
# writes the rows it expects, by the rule the test checks.
python3 - old/m.json <<'EOF' || fail "python3 could not fabricate the files"
import json, sys
old = json.load(open(sys.argv[1]))

def fabricate(name, factor, keep=None):
    d = json.load(open(sys.argv[1]))
    for r in d["results"]:
        if keep:
            r["runs"] = r["runs"][:keep]
        for run in r["runs"]:
            run["ops_per_sec"] *= factor
    json.dump(d, open(name, "w"), indent=1)

def expect(name, mark):
    with open(name, "w") as f:
        for r in old["results"]:
            ops = [x["ops_per_sec"] for x in r["runs"]]
            m = mark if 2 * min(ops) > max(ops) else "~"
            f.write("%s %d %s\n" % (r["lock"], r["threads"], m))

fabricate("x2.json", 2); expect("x2.want", "+")
fabricate("half.json", 0.5); expect("half.want", "-")
fabricate("two.json", 1, keep=2)
EOF
for t in x2:+ half:-; do
	f=${t%%:*}
	"$bench" compare old/m.json $f.json >out.$f 2>err.$f || fail "compare with $f.json exited $?"
	rows out.$f >got.$f
	sort $f.want | cmp -s - got.$f ||
		fail "$f.json: got '$(tr '\n' ';' <got.$f)', want '$(sort $f.want | tr '\n' ';')'"
done
awk 'NF == 9 && $2 ~ /^[0-9]+$/ && $5 != "2.000" { bad = 1 } END { exit bad }' out.x2 ||
	fail "x2.json: a NEW/OLD other than 2.000"
"$bench" compare --threshold 150 old/m.json x2.json >out.thr 2>&1 || fail "--threshold 150 exited $?"
[ "$(rows out.thr | awk '{ print $3 }' | sort -u)" = "~" ] ||
	fail "x2.json, --threshold 150: marks other than '~': $(rows out.thr | tr '\n' ';')"
"$bench" compare old/m.json two.json >out.two 2>&1 || fail "compare with two.json exited $?"
[ "$(rows out.two | awk '{ print $3 }' | sort -u)" = "?" ] ||
	fail "2 runs a side: marks other than '?': $(rows out.two | tr '\n' ';')"

# 4. Directories: matched by name, a non-suite file skipped, a file on one
# side listed, the JSON report readable.
cp x2.json new/x.json
cp old/m.json old/x.json
printf '{"bench": "wake", "results": [{"mode": "spin", "round_trip_us": 1}]}\n' >old/w.json
cp old/w.json new/w.json
cp old/m.json old/gone.json
"$bench" compare --json cmp.json old new >out4 2>err4 || fail "compare of directories exited $?"
grep -q '^skipped w.json' out4 || fail "directories: no 'skipped w.json' line"
grep -q '^only in OLD: old/gone.json' out4 || fail "directories: no 'only in OLD' line"
grep -q '^summary: 8 rows in 2 files' out4 || fail "directories: $(grep summary out4)"
python3 -c '
import json, sys
d = json.load(open("cmp.json"))
assert sum(len(f["rows"]) for f in d["files"]) == d["summary"]["rows"] == 8
assert [s["file"] for s in d["skipped"]] == ["w.json"] and d["only_in_old"] == ["gone.json"]
' || fail "cmp.json is not the comparison"

# 4b. A layout whose metric is better lower (a time): halved times are '+'
# with a gain of 2, doubled ones '-'; key members name the rows; a file
# whose layout differs from its pair's is skipped.
lay='"layout": {"key": ["mode", "cpus"], "metric": "us", "better": "lower"}'
timed() { # MODE CPUS T1 T2 T3
	printf '{"mode": "%s", "cpus": %s, "runs": [{"us": %s}, {"us": %s}, {"us": %s}]}' "$@"
}
printf '{"bench": "t", %s, "results": [%s, %s]}\n' "$lay" "$(timed a 2 10 11 12)" \
	"$(timed b 1 10 11 12)" >t.old
printf '{"bench": "t", %s, "results": [%s, %s]}\n' "$lay" "$(timed a 2 5 5.5 6)" \
	"$(timed b 1 20 22 24)" >t.new
"$bench" compare t.old t.new >out4b 2>&1 || fail "compare of times exited $?: $(cat out4b)"
[ "$(awk '$1 == "a" && $2 == "2" { print $5, $6 }' out4b)" = "0.500 +" ] ||
	fail "halved times: not 0.500 +: $(cat out4b)"
[ "$(awk '$1 == "b" && $2 == "1" { print $5, $6 }' out4b)" = "2.000 -" ] ||
	fail "doubled times: not 2.000 -: $(cat out4b)"
grep -q 'geometric mean gain 1.000' out4b || fail "times: gains 2 and 0.5: $(grep summary out4b)"
sed 's/"lower"/"higher"/' t.new >t.higher
"$bench" compare t.old t.higher >out4c 2>&1
[ $? -eq 1 ] && grep -q '^skipped t.old (t): .*layout' out4c ||
	fail "layouts that differ: not skipped: $(cat out4c)"

# 5. Bad input: exit 2 naming the file; nothing in common: exit 1.
head -c 500 old/m.json >trunc.json
"$bench" compare old/m.json trunc.json >/dev/null 2>err5
rc=$?
[ $rc -eq 2 ] || fail "truncated file: exit $rc, want 2"
grep -q 'trunc.json: invalid JSON at byte 500' err5 || fail "truncated file: message '$(cat err5)'"
"$bench" compare old/w.json new/w.json >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || fail "nothing to compare: exit $rc, want 1"
"$bench" compare old/m.json >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "one argument: exit $rc, want 2"

# 6. A command line that is not UTF-8 (a Latin-1 file name: r, 0xE9) and
# one that is (U+00E9): the JSON writer keeps the file valid UTF-8, with
# U+FFFD for the bad byte, so jansson (compare) and Python take it.
u8=$(printf 'r\351-\303\251.json')
"$bench" mutex --threads 1 --duration 0.02 --repeat 3 --locks hotlock \
	--json "$u8" >/dev/null 2>u8.log || fail "hotlock-bench mutex --json $u8 exited $?: $(cat u8.log)"
"$bench" compare "$u8" "$u8" >out6 2>err6 || fail "compare of a non-UTF-8 command line exited $?: $(cat err6)"
grep -q '^summary: 1 row in 1 file' out6 || fail "non-UTF-8 command line: $(tail -1 out6)"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
c = d["config"]["command"]
assert c.endswith(" --json r\ufffd-\u00e9.json"), c
' "$u8" || fail "$u8 is not valid UTF-8 JSON with the command line kept"

if [ $fails -ne 0 ]; then
	echo "bench_compare: $fails failure(s); the first compare printed:"
	cat out1
	exit 1
fi
echo "bench_compare: ok"
