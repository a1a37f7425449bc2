#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Under hotlock-run, threads pinned to one CPU after they started leave the
# waiting policy no spinner slot (src/preload/shim_thread.c): the report of
# affinity_prog, whose workers contend only once every thread of the
# process shares one CPU, counts no spin phase.  Before the shim followed
# pthread_setaffinity_np and sched_setaffinity, the slots kept the CPUs the
# threads started with, and the waiters spun on the CPU their holder needed.
# Usage: shim_affinity.sh HOTLOCK_RUN AFFINITY_PROG
set -euo pipefail
run=$1 prog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
rc=0
"$run" --stats-json "$dir/s.json" -- "$prog" || rc=$?
if [ $rc = 77 ]; then
	echo "skipped: fewer than 2 usable CPUs"
	exit 0
fi
[ $rc = 0 ] || { echo "FAIL: affinity_prog exited $rc"; exit 1; }
python3 - "$dir/s.json" <<'PY'
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
locks = [l for d in docs for l in d["locks"]]
waits = sum(l.get("futex_waits", 0) for l in locks)
spins = sum(l.get("spins", 0) for l in locks)
print(f"shim_affinity: {len(locks)} contended lock(s), {waits} futex waits, {spins} spin phases")
if not locks or waits == 0:
    sys.exit("FAIL: the workers never contended (nothing was checked)")
if spins:
    sys.exit(f"FAIL: {spins} spin phases with every thread on one CPU")
print("ok: no spinner on one CPU")
PY
