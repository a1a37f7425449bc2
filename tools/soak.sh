#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make soak: many controlled schedules of every lock (tests/sched.c),
# from a seed that differs at each run unless HOTLOCK_SEED is set, then the
# stress tests for longer than `make test` runs them.
#
# Usage: soak.sh BUILD_DIR SCHEDULES STRESS_MS
set -euo pipefail
build=$1
schedules=$2
stress_ms=$3
seed=${HOTLOCK_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}
echo "soak: seed $seed (HOTLOCK_SEED=$seed make soak repeats this run)"
start=$(date +%s)
for lock in mutex mutex-cna rwlock cond; do
	"$build/tests/test_sched" --lock "$lock" --schedules "$schedules" --seed "$seed"
done
echo "soak: stress tests, ${stress_ms} ms per run"
(cd "$build" && HOTLOCK_SEED=$seed HOTLOCK_STRESS_MS=$stress_ms \
	ctest --output-on-failure --timeout 1800 -L stress)
echo "soak: passed in $(($(date +%s) - start)) s"
