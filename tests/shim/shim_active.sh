#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shim is really in use under hotlock-run: shim_active sees hotlock's
# bytes in its locked objects, and the shim's report at exit shows futex
# waits and wakes (so the contention went through hotlock's parking).
# Usage: shim_active.sh HOTLOCK_RUN SHIM_ACTIVE
set -euo pipefail
run=$1 prog=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
HOTLOCK_SHIM_STATS=1 "$run" -- "$prog" --expect hotlock 2>"$err"
cat "$err"
line=$(grep "^hotlock-preload: pid [0-9]* futex calls" "$err" | tail -1) ||
	{ echo "FAIL: no report from the shim at exit"; exit 1; }
waits=$(sed -E 's/.* wait ([0-9]+) .*/\1/' <<<"$line")
wakes=$(sed -E 's/.* wake ([0-9]+) .*/\1/' <<<"$line")
if [ "$waits" -eq 0 ] || [ "$wakes" -eq 0 ]; then
	echo "FAIL: the shim's futex counters did not move (wait $waits, wake $wakes)"
	exit 1
fi
echo "ok: shim in use, $waits futex waits and $wakes wakes"
