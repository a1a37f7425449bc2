#!/usr/bin/env bash
# The quick benchmark suite behind `make bench`: the mutex scenario with a
# heavy critical section (cs=100, ncs=10: the lock is almost always held),
# a moderate one (cs=40, ncs=80) and a short one (cs=10, ncs=1: about 0.3 us
# on a CPU whose pause costs 27 ns, where the handover decides the rate), at
# 1, 2, 4 and 8 threads, one second per run; the cost of a handover to a
# sleeping or spinning thread (wake); then the reader-writer locks at 50%
# readers (1, 2, 4, 8 threads) and with 4 reader and 4 writer threads.
# Tables on stdout, progress on stderr, JSON into RESULTS_DIR.  About a
# minute and a half on a 2-core machine.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 HOTLOCK_BENCH_BINARY RESULTS_DIR" >&2
	exit 2
fi
bench=$1
dir=$2

if [ ! -x "$bench" ]; then
	echo "quick-bench: $bench is not an executable (run 'make build' first)" >&2
	exit 1
fi
mkdir -p "$dir"

"$bench" mutex --cs 100 --ncs 10 --threads 1,2,4,8 --duration 1 --json "$dir/mutex-heavy.json"
echo
"$bench" mutex --cs 40 --ncs 80 --threads 1,2,4,8 --duration 1 --json "$dir/mutex-moderate.json"
echo
"$bench" mutex --cs 10 --ncs 1 --threads 1,2,4,8 --duration 1 --json "$dir/mutex-short.json"
echo
"$bench" wake --json "$dir/wake.json"
echo
"$bench" rwlock --threads 1,2,4,8 --duration 1 --json "$dir/rwlock.json"
echo
"$bench" rwlock --split 4,4 --load 1 --duration 1 --json "$dir/rwlock-split.json"
echo
echo "quick-bench: JSON in $dir/ (mutex-heavy, mutex-moderate, mutex-short, wake, rwlock, rwlock-split)"
