#!/usr/bin/env bash
# Runs the spin models of hotlock's protocols and their seeded-bug variants.
#
# Each row: MODEL|DEFINES|EXPECT[|CFLAGS].  EXPECT is "ok" (spin must search
# the whole state space and find no error) or the error a seeded bug must
# produce ("deadlock": an invalid end state, i.e. a thread left blocked for
# good; "assert": an assertion violated).  A bug variant that spin does not
# reject fails this test: a check that cannot fail is a defect.  CFLAGS
# overrides the optimization of pan (below).
#
# Usage: run.sh SPIN_BIN CC MODELS_DIR
set -uo pipefail
spin_bin=$1
cc=$2
dir=$(cd "$3" && pwd) || { echo "run.sh: no models directory $3"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

rows=(
	"wait.pml||ok"
	"wait.pml|-DTIMED|ok"
	"wait.pml|-DCLAIM|ok"
	"wait.pml|-DCLAIM -DTIMED|ok"
	"wait.pml|-DBUG_PARK_NO_RECHECK|deadlock"
	"wait.pml|-DBUG_SIGNAL_NO_WAKE|deadlock"
	"wait.pml|-DBUG_SIGNAL_BLIND -DTIMED|assert"
	"wait.pml|-DCLAIM -DBUG_POST_NO_WAKE|deadlock"
	"mutex.pml||ok"
	"mutex.pml|-DTIMED|ok"
	"mutex.pml|-DNTHREADS=3 -DITER=1|ok"
	"mutex.pml|-DNTHREADS=3 -DITER=1 -DTIMED|ok"
	"mutex.pml|-DBUG_DEFER_NO_WAKE|deadlock"
	"mutex.pml|-DBUG_FAST_UNLOCK|deadlock"
	"mutex.pml|-DTIMED -DBUG_HANDOFF_NO_CLAIM|assert"
	"mutex.pml|-DBUG_HANDOFF_RELEASES|assert"
	"cna.pml||ok"
	"cna.pml|-DNTHREADS=4 -DITER=1 -DTIMED -DPRIO|ok"
	"cna.pml|-DNTHREADS=4 -DITER=1 -DTIMED|ok"
	"cna.pml|-DBUG_MOVE_TAIL|deadlock"
	"cna.pml|-DBUG_EMPTY_DROPS_SECONDARY|deadlock"
	"cna.pml|-DBUG_SPLICE_NO_CLEAR|assert"
	"cna.pml|-DPRIO -DBUG_MOVE_PRIORITIZED|assert"
	"cna.pml|-DBUG_DEFER_NO_SECONDARY|deadlock"
	# rwlock.pml's pan takes 5 s to compile with -O2 and searches its
	# rows about as fast without: -O0 throughout.
	"rwlock.pml||ok|-O0"
	"rwlock.pml|-DTIMED -DDOWNGRADE|ok|-O0"
	"rwlock.pml|-DREADERS=1 -DWRITERS=2 -DTIMED -DDOWNGRADE|ok|-O0"
	"rwlock.pml|-DREADERS=1 -DITER=2 -DTIMED -DDOWNGRADE|ok|-O0"
	"rwlock.pml|-DREADERS=3|ok|-O0"
	"rwlock.pml|-DBUG_STEAL_FROM_RELEASE|assert"
	"rwlock.pml|-DBUG_READER_IGNORES_HANDOFF|assert"
	"rwlock.pml|-DBUG_LAST_READER_NO_WAKE|deadlock"
	"rwlock.pml|-DBUG_LAST_READER_NO_RETRY|deadlock"
	"rwlock.pml|-DBUG_GROUP_COUNT_AFTER_SIGNAL|assert"
	"rwlock.pml|-DBUG_NO_MARK_DUE|assert"
	"rwlock.pml|-DBUG_RECORD_PLAIN_STORE|deadlock"
	"rwlock.pml|-DBUG_GROUP_TAKES_LAST|assert"
	"rwlock.pml|-DTIMED -DBUG_GROUP_REFUSED_KEEPS_COUNT|assert"
	"rwlock.pml|-DREADERS=1 -DWRITERS=2 -DDOWNGRADE -DBUG_DOWNGRADE_DROPS_FLAGS|assert"
	"rwlock.pml|-DREADERS=1 -DWRITERS=2 -DTIMED -DBUG_WITHDRAW_FLAGS|assert"
)

# Seconds since start, to one decimal (each row reports what it took:
# spin, the C compiler and the search).
now_ds() { local t; t=$(date +%s%N); echo $((t / 100000000)); }
secs() { local d=$(($(now_ds) - $1)); echo "$((d / 10)).$((d % 10)) s"; }

passed=0
failed=0
start_all=$(now_ds)
for row in "${rows[@]}"; do
	IFS='|' read -r model defs expect cflags <<<"$row"
	name="$model${defs:+ $defs}"
	start=$(now_ds)
	run="$work/run"
	rm -rf "$run" && mkdir -p "$run"
	# A seeded bug is found within a few hundred thousand states: its
	# row's time is the compiler's, so it does without optimization.
	opt=-O2
	[ "$expect" = ok ] || opt=-O0
	[ -z "$cflags" ] || opt=$cflags
	# shellcheck disable=SC2086
	if ! (cd "$run" && "$spin_bin" $defs -a "$dir/$model" >spin.log 2>&1 &&
	      "$cc" $opt -DSAFETY -DCOLLAPSE -o pan pan.c >cc.log 2>&1); then
		echo "FAIL $name: spin or the C compiler failed:"
		cat "$run/spin.log" "$run/cc.log" 2>/dev/null | tail -5
		failed=$((failed + 1))
		continue
	fi
	(cd "$run" && ./pan -m1000000 >pan.log 2>&1)
	errors=$(grep -o 'errors: [0-9]*' "$run/pan.log" | awk '{print $2}')
	states=$(grep -o '[0-9.e+]* states, stored' "$run/pan.log" | awk '{print $1}')
	depth_cut=$(grep -c 'max search depth too small' "$run/pan.log")
	case "$expect" in
	ok)
		if [ "$errors" = 0 ] && [ "$depth_cut" = 0 ]; then
			echo "ok   $name: no error, $states states (exhaustive), $(secs "$start")"
			passed=$((passed + 1))
		else
			echo "FAIL $name: expected no error, spin says:"
			grep -E '^pan:|errors:|depth too small' "$run/pan.log" | head -5
			failed=$((failed + 1))
		fi
		;;
	deadlock|assert)
		pattern='invalid end state'
		[ "$expect" = assert ] && pattern='assertion violated'
		if [ "${errors:-0}" != 0 ] && grep -q "$pattern" "$run/pan.log"; then
			echo "ok   $name: seeded bug caught ($(grep -m1 '^pan:1' "$run/pan.log")), $(secs "$start")"
			passed=$((passed + 1))
		else
			echo "FAIL $name: the seeded bug was not caught as '$pattern'; spin says:"
			grep -E '^pan:|errors:' "$run/pan.log" | head -5
			failed=$((failed + 1))
		fi
		;;
	esac
done
echo "models: $passed passed, $failed failed, $(secs "$start_all")"
[ "$failed" = 0 ]
