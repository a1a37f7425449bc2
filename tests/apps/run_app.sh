#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a real program twice, on plain glibc (the control) and under
# hotlock-run, each bounded in time, and requires the same result: both exit
# 0, and the line of their output that matches PATTERN is the same in both.
# The shim run must leave the shim's report at exit (HOTLOCK_SHIM_STATS,
# into a file: test suites check their subprocesses' stderr), so that it
# cannot pass on glibc by accident.
# Usage: run_app.sh HOTLOCK_RUN TIMEOUT_S PATTERN [--together] -- command args...
# --together: the two runs at the same time, for a program that mostly
# waits (CPython's thread tests: 10 s of CPU in 150 s), instead of one
# after the other.
set -uo pipefail
run=$1 limit=$2 pattern=$3
shift 3
together=0
if [ "$1" = --together ]; then
	together=1
	shift
fi
[ "$1" = -- ] && shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
result() {      # mode
	local mode=$1 start end rc
	shift
	start=$(date +%s%N)
	if [ "$mode" = glibc ]; then
		timeout -k 10 "$limit" "$@" >"$tmp/$mode.out" 2>"$tmp/$mode.err"
	else
		HOTLOCK_SHIM_STATS=$tmp/shim.stats timeout -k 10 "$limit" "$run" -- "$@" \
			>"$tmp/$mode.out" 2>"$tmp/$mode.err"
	fi
	rc=$?
	end=$(date +%s%N)
	printf '%s: exit %d after %d ms\n' "$mode" "$rc" $(((end - start) / 1000000)) \
		>"$tmp/$mode.time"
	echo "$rc" >"$tmp/$mode.rc"
}
if [ $together = 1 ]; then
	result glibc "$@" &
	result shim "$@" &
	wait
else
	result glibc "$@"
	result shim "$@"
fi
fails=0
for mode in glibc shim; do
	cat "$tmp/$mode.time"
	if [ "$(cat "$tmp/$mode.rc")" != 0 ]; then
		echo "FAIL: the $mode run failed (124: timed out); its output ends:"
		tail -n 20 "$tmp/$mode.out" "$tmp/$mode.err"
		fails=1
		continue
	fi
	line=$(grep -E -m1 -- "$pattern" "$tmp/$mode.out" "$tmp/$mode.err" | sed 's/^[^:]*://')
	echo "$mode: $line"
	echo "$line" >"$tmp/$mode.result"
	if [ -z "$line" ]; then
		echo "FAIL: no line matching '$pattern' in the $mode run; its output ends:"
		tail -n 20 "$tmp/$mode.out" "$tmp/$mode.err"
		fails=1
	fi
done
if [ $fails = 0 ]; then
	if ! grep -q "^hotlock-preload: pid [0-9]* futex calls" "$tmp/shim.stats" 2>/dev/null; then
		echo "FAIL: the shim run left no report from the shim: it did not run on hotlock"
		fails=1
	else
		echo "shim reports: $(wc -l <"$tmp/shim.stats") processes; the busiest:"
		sort -t' ' -k7,7n "$tmp/shim.stats" | tail -1
	fi
	if ! cmp -s "$tmp/glibc.result" "$tmp/shim.result"; then
		echo "FAIL: the results differ"
		fails=1
	fi
fi
[ $fails = 0 ] && echo "ok: the same result on glibc and on hotlock"
exit $fails
