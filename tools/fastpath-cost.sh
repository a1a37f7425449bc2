#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Instructions per uncontended lock + unlock, counted by valgrind's
# callgrind: the same number on every run, whatever else the machine does,
# where a wall-clock time of a few nanoseconds moves by 50% between runs on
# a shared VM (docs/benchmarks.md, "Noise on this VM").
#
#   tools/fastpath-cost.sh HOTLOCK_BENCH [LOCK ...]
#
# For each lock (default: hotlock and its mutex peers, hotlock-rw and its
# rwlock peers) one thread runs hotlock-bench's own loop under callgrind
# (mutex --cs 1 --ncs 0; rwlock --readers-pct 100 and 0 with --load 0
# --ncs 0), and the instructions of every call from the loop into the
# adapter's lock and unlock functions are divided by the calls.  The counts
# include the adapter's own few instructions (an indirect call and a
# return), the same for every lock.  Instructions are not time: an atomic
# read-modify-write costs tens of cycles on its own, and every lock here
# makes one per lock and one per unlock; the count shows the work around it.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 HOTLOCK_BENCH [LOCK ...]  (needs valgrind)" >&2
	exit 2
fi
bench=$1
shift
command -v valgrind >/dev/null || { echo "fastpath-cost: valgrind not found" >&2; exit 1; }
locks=("$@")
[ ${#locks[@]} -gt 0 ] || locks=(hotlock parking_lot rust-std absl glibc-adaptive
				  hotlock-rw parking_lot-rw rust-std-rw absl-rw glibc-rw)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Prints "LOCK_INSTRUCTIONS UNLOCK_INSTRUCTIONS" per call for one run.
count() {
	# --fair-sched: without it valgrind may leave the main thread, which
	# stops the run, unscheduled behind a worker that makes no syscall
	# (a read-locked rwlock loop ran 40-100 s instead of 0.2).
	valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file="$tmp/cg" "$bench" "$@" \
		--threads 1 --duration 0.2 >/dev/null 2>"$tmp/err" ||
		{ echo "fastpath-cost: hotlock-bench $* failed:" >&2; cat "$tmp/err" >&2; exit 1; }
	# The loop's calls into the adapter: "> file:function (Nx)" lines under
	# the loop function, inclusive instructions first.
	callgrind_annotate --inclusive=yes --tree=calling "$tmp/cg" 2>/dev/null |
		awk '/^ *[0-9,]+ .*\* .*:(mutex|rw)_body /{body=1; next}
		     body && /^$/ {body=0}
		     body && />/ {
			n=$1; gsub(",", "", n)
			call=$0; sub(/.*> +/, "", call); sub(/ \[.*/, "", call)
			calls=call; sub(/.* \(/, "", calls); sub(/x\)$/, "", calls); gsub(",", "", calls)
			fn=call; sub(/ \([0-9,]+x\)$/, "", fn); sub(/.*:/, "", fn)
			if (fn ~ /unlock/) un=n/calls; else lk=n/calls
		     }
		     END { printf "%.0f %.0f\n", lk, un }'
}

printf "| lock | operation | lock | unlock | pair |\n|---|---|---|---|---|\n"
for l in "${locks[@]}"; do
	if "$bench" mutex --locks "$l" --threads 1 --duration 0.01 >/dev/null 2>&1; then
		read -r a b < <(count mutex --cs 1 --ncs 0 --locks "$l")
		printf "| %s | mutex | %s | %s | %s |\n" "$l" "$a" "$b" $((a + b))
	elif "$bench" rwlock --locks "$l" --threads 1 --duration 0.01 >/dev/null 2>&1; then
		for side in read write; do
			pct=100; [ $side = write ] && pct=0
			read -r a b < <(count rwlock --readers-pct $pct --load 0 --ncs 0 --no-futex-by-op --locks "$l")
			printf "| %s | %s | %s | %s | %s |\n" "$l" "$side" "$a" "$b" $((a + b))
		done
	else
		echo "fastpath-cost: '$l' is not a lock of this hotlock-bench (hotlock-bench --list)" >&2
		exit 2
	fi
done
