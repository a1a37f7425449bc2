#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The benchmark suite behind `make bench`: every scenario hotlock is judged
# by, hotlock against its peers (parking_lot, Rust std, abseil, glibc) in the
# same process, then the seeds' tables; JSON into RESULTS_DIR, then
# tools/bench-report.py turns it into RESULTS_DIR/report.md and PNG plots.
#
#   tools/bench-suite.sh [--full] HOTLOCK_BENCH RESULTS_DIR
#
# The quick form (about 4 minutes on a 2-core VM): 1, 2, 4 and 8 threads,
# runs of 0.5 s, the median of 3 (the condvars: 81 runs of 0.3 s, about
# 25 s; then `hotlock-bench apps --quick`, real programs with and without
# the pthread shim, about a minute).  --full (`make bench FULL=1`, about 21
# minutes there, and the condvars' 180 runs of 0.5 s): 1-16 threads, runs of
# 1 s, the median of 5, every seed table (reader shares of 95 and 100%, the
# split table at loads 1, 5, 50), the condvars at every default queue pair
# and waiter count, apps in its full form (T = 2, 4, 8, runs of 2 s, about
# 2.5 minutes).
# Tables and per-run progress from hotlock-bench on stdout/stderr, and one
# line per scenario here with the time so far.
set -euo pipefail

full=0
if [ "${1:-}" = "--full" ]; then
	full=1
	shift
fi
if [ $# -ne 2 ]; then
	echo "usage: $0 [--full] HOTLOCK_BENCH_BINARY RESULTS_DIR" >&2
	exit 2
fi
bench=$1
dir=$2

if [ ! -x "$bench" ]; then
	echo "bench-suite: $bench is not an executable (run 'make build' first)" >&2
	exit 1
fi
mkdir -p "$dir"
# A previous run's files would be reported as this one's.
rm -f "$dir"/*.json "$dir"/*.png "$dir"/report.md

if [ $full = 1 ]; then
	common=(--duration 1 --repeat 5)
	sweep=(--threads 1,2,4,8,16)
	mutex_locks=hotlock,peers,glibc
	rwsem_repeat=
	uncontended_runs="--duration 0.3 --repeat 15"
	cond_runs="--duration 0.5"  # the default pairs and waiter counts
	apps_runs=""                # T = 2,4,8, runs of 2 s, median of 3
else
	common=(--duration 0.5 --repeat 3)
	sweep=(--threads 1,2,4,8)
	mutex_locks=hotlock,peers
	rwsem_repeat="--repeat 1"   # keeps the quick form under 5 minutes
	uncontended_runs="--duration 0.2 --repeat 9"
	cond_runs="--duration 0.3 --threads 1,1:2,2:4,4:1,7:7,1 --waiters 2,8,32"
	apps_runs="--quick"         # T = 2,4, runs of 1 s, median of 3
fi
# The 1-thread rows time a few ns per op, which on this shared VM jumps
# between two levels from run to run for every lock alike (85-90 or
# 110-140 Mops/s): with many short runs each lock's median comes from the
# level most of its runs saw, not from one or two unlucky runs.

# The rows that rank hotlock against the peers time the locks alone:
# --no-futex-by-op, since the futex count around each operation (only
# hotlock's own locks have one to show) is work in every lock's loop that
# dilutes their differences (5% of the CPU in --split 7,1, measured with
# perf).  The seed's rows keep the counts: their tables are about them.
# name|arguments (the JSON goes to RESULTS_DIR/name.json)
scenarios=(
	"mutex-heavy|mutex --cs 100 --ncs 10 ${sweep[*]} --locks $mutex_locks"
	"mutex-moderate|mutex --cs 40 --ncs 80 ${sweep[*]} --locks $mutex_locks"
	"mutex-short|mutex --cs 10 --ncs 1 ${sweep[*]} --locks $mutex_locks"
	"mutex-tiny|mutex --cs 2 --ncs 2 ${sweep[*]} --locks $mutex_locks"
	"wake|wake"
	"rwlock-50|rwlock ${sweep[*]} --no-futex-by-op --locks hotlock-rw,peers,ww-rw"
	"rwlock-90|rwlock --readers-pct 90 ${sweep[*]} --no-futex-by-op --locks hotlock-rw,peers,ww-rw"
	"rwlock-read-1t|rwlock --readers-pct 100 --threads 1 --load 0 --ncs 0 --no-futex-by-op --locks hotlock-rw,peers $uncontended_runs"
	"rwlock-write-1t|rwlock --readers-pct 0 --threads 1 --load 0 --ncs 0 --no-futex-by-op --locks hotlock-rw,peers $uncontended_runs"
	"rwlock-split-7-1|rwlock --split 7,1 --no-futex-by-op --locks hotlock-rw,peers"
	"seed000-split-4-4-load1|rwlock --split 4,4 --load 1 --locks hotlock-rw,ww-rw,glibc-rw"
	"seed004-rwsem|rwsem ${sweep[*]} --locks hotlock-rw,glibc-rw,ww-rw $rwsem_repeat"
	"seed001-torture|mutex --torture ${sweep[*]} --locks mcs,hotlock-cna"
	"cond|cond --locks glibc,hotlock,futex-cv $cond_runs"
	"apps|apps $apps_runs"
)
if [ $full = 1 ]; then
	scenarios+=(
		"seed000-readers-95|rwlock --readers-pct 95 --threads 8 --locks hotlock-rw,ww-rw,glibc-rw"
		"seed000-readers-100|rwlock --readers-pct 100 --threads 8 --locks hotlock-rw,ww-rw,glibc-rw"
		"seed000-split-4-4-load5|rwlock --split 4,4 --load 5 --locks hotlock-rw,ww-rw,glibc-rw"
		"seed000-split-4-4-load50|rwlock --split 4,4 --load 50 --locks hotlock-rw,ww-rw,glibc-rw"
	)
fi

start=$SECONDS
n=${#scenarios[@]}
k=0
for s in "${scenarios[@]}"; do
	k=$((k + 1))
	name=${s%%|*}
	# Word splitting of the arguments is wanted here: they are plain words.
	# shellcheck disable=SC2206
	args=(${s#*|})
	extra=()
	# wake and apps have their own lengths (apps: --quick, or its defaults).
	case $name in
	wake | apps) ;;
	*) extra=("${common[@]}") ;;
	esac
	echo "bench-suite: [$k/$n] $name ($((SECONDS - start)) s so far)" >&2
	# The scenario's own options last, so that they override the common ones.
	"$bench" "${args[0]}" "${extra[@]}" "${args[@]:1}" --json "$dir/$name.json"
	echo
done
echo "bench-suite: $n scenarios in $((SECONDS - start)) s; JSON in $dir/" >&2
