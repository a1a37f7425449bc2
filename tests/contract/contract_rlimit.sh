#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lock's contract, address space (docs/core.md): under RLIMIT_AS
# 512 MiB a program starts as many threads under hotlock-run as on glibc,
# less 2, and nothing is printed on stderr (it failed when the first slow
# path reserved 112 MiB, malloc arenas came with the policy's stdio, and
# near the limit the library said "cannot reserve the waiter arena" and
# polled).  contract_rlimit (not linked with hotlock)
# starts threads that each take contended locks and stay alive, until
# pthread_create fails or the maximum; its count is compared between the
# two runs, never with a fixed number.
#   4096 KiB stacks, up to 400 threads: the limit binds on glibc (about 126
#     here), so the comparison sees the library's own address space; "less
#     2" is 8 MiB of it;
#   256 KiB stacks, up to 200 threads (the maximum binds on both): the
#     library must not need more than about 460 MiB to run 200 threads.
# Usage: contract_rlimit.sh HOTLOCK_RUN CONTRACT_RLIMIT
set -uo pipefail
run=${1:?usage: contract_rlimit.sh HOTLOCK_RUN CONTRACT_RLIMIT} prog=${2:?}
err=$(mktemp)
trap 'rm -f "$err"' EXIT
fail=0

# count LABEL CMD...: the program's thread count; its stderr must be empty.
count() {
	local label=$1 out n
	shift
	out=$("$@" 2>"$err")
	local rc=$?
	n=$(sed -n 's/^threads: \([0-9]*\).*/\1/p' <<<"$out")
	if [ "$rc" != 0 ] || [ -z "$n" ]; then
		echo "contract_rlimit: FAIL: $label: exit status $rc, output: $out $(head -c 300 "$err")" >&2
		echo 0
		return 1
	fi
	if [ -s "$err" ]; then
		echo "contract_rlimit: FAIL: $label printed on stderr: $(head -c 300 "$err" | tr '\n' ' ')" >&2
		echo "$n"
		return 1
	fi
	echo "$n"
}

for cfg in "4096 400" "256 200"; do
	set -- $cfg
	stack=$1 max=$2
	g=$(count "glibc, $stack KiB stacks" "$prog" --expect glibc --stack "$stack" --max "$max") || fail=1
	h=$(count "hotlock-run, $stack KiB stacks" "$run" -- "$prog" --expect hotlock --stack "$stack" --max "$max") || fail=1
	if [ "$h" -lt $((g - 2)) ]; then
		echo "contract_rlimit: FAIL: $stack KiB stacks under RLIMIT_AS 512 MiB: $h threads under hotlock-run, $g on glibc (at least $((g - 2)) expected: the library took $(( (g - h) * (stack + 4) / 1024 )) MiB more address space)" >&2
		fail=1
	else
		echo "contract_rlimit: $stack KiB stacks under RLIMIT_AS 512 MiB: $h threads under hotlock-run, $g on glibc: ok"
	fi
done
[ "$fail" = 0 ] || { echo "contract_rlimit: FAILED" >&2; exit 1; }
echo "contract_rlimit: OK"
