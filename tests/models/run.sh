#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the spin models of hotlock's protocols and their seeded-bug variants.
#
# Each row: MODEL|DEFINES|EXPECT[|CFLAGS[|PANFLAGS]].  EXPECT is one of
#   ok        safety: spin must search the whole state space (exhaustive,
#             -DCOLLAPSE) and find no error;
#   deadlock  a seeded bug that must produce an invalid end state (a thread
#             left blocked for good);
#   assert    a seeded bug that must violate an assertion;
#   live      liveness: the model's ltl formula (a never claim, built by
#             spin) is checked for acceptance cycles under weak fairness
#             (pan -a -f), exhaustively, and none may be found; the row
#             fails if pan did not check a never claim with fairness;
#   cycle     a seeded bug that must produce an acceptance cycle under weak
#             fairness (a thread starved for ever while the others run);
#   livebit   live by bitstate search (-DBITSTATE, pan -a -f -k3
#             PANFLAGS) for a liveness configuration beyond an exhaustive
#             search here: a sample, not a proof (hash factor as below);
#   bitstate  safety by bitstate search (-DBITSTATE, pan -k3 PANFLAGS, e.g.
#             -w24: a 2^24-bit array) for configurations beyond an
#             exhaustive search here: no error may be found; not a proof,
#             and the row prints the states stored and the hash factor
#             (array bits per state stored; coverage is near complete
#             above 100 and partial below 10).
# A bug variant that spin does not reject fails this test: a check that
# cannot fail is a defect.  CFLAGS overrides the optimization of pan
# (below); PANFLAGS are added to pan's options.
#
# Usage: run.sh SPIN_BIN CC MODELS_DIR [MODELS | -MODELS]
# With MODELS (rwlock.pml, or a comma-separated list: rwlock.pml,cna.pml)
# only those models' rows run; with -MODELS every row but theirs (make test
# runs the rows as two tests of about the same length, side by side, each
# well within its timeout).
set -uo pipefail
spin_bin=$1
cc=$2
dir=$(cd "$3" && pwd) || { echo "run.sh: no models directory $3"; exit 1; }
only=${4:-}
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
	"wait.pml|-DINTR -DNO_WAKER|ok"
	"wait.pml|-DINTR|ok"
	"wait.pml|-DINTR -DCLAIM -DTIMED|ok"
	"wait.pml|-DINTR -DNO_WAKER -DBUG_INTR_NO_RECHECK|deadlock"
	"wait.pml|-DINTR -DNO_WAKER -DBUG_INTR_NO_CAS|deadlock"
	"mutex.pml||ok"
	"mutex.pml|-DTIMED|ok"
	"mutex.pml|-DNTHREADS=3 -DITER=1|ok"
	"mutex.pml|-DNTHREADS=3 -DITER=1 -DTIMED|ok"
	"mutex.pml|-DBUG_DEFER_NO_WAKE|deadlock"
	"mutex.pml|-DBUG_FAST_UNLOCK|deadlock"
	"mutex.pml|-DBUG_PASSIVE_NEVER_REJOINS|deadlock"
	"mutex.pml|-DTIMED -DBUG_HANDOFF_NO_CLAIM|assert"
	"mutex.pml|-DBUG_HANDOFF_RELEASES|assert"
	# docs/design.md invariant 7 (M6): the release order before cd7e9af,
	# and a pass that keeps the gone head's flags.
	"mutex.pml|-DTIMED -DBUG_RELEASE_BEFORE_PASS|assert"
	"mutex.pml|-DTIMED -DBUG_PASS_KEEPS_FLAGS|assert"
	"cna.pml||ok"
	"cna.pml|-DNTHREADS=4 -DITER=1 -DTIMED -DPRIO|ok"
	"cna.pml|-DNTHREADS=4 -DITER=1 -DTIMED|ok"
	"cna.pml|-DBUG_MOVE_TAIL|deadlock"
	"cna.pml|-DBUG_EMPTY_DROPS_SECONDARY|deadlock"
	"cna.pml|-DBUG_SPLICE_NO_CLEAR|assert"
	"cna.pml|-DPRIO -DBUG_MOVE_PRIORITIZED|assert"
	"cna.pml|-DBUG_DEFER_NO_SECONDARY|deadlock"
	# hl_rwlock (rwlock.pml, src/rwlock.c as of 535f186), 2 readers + 1
	# writer unless named, the fair kind unless named: each kind, with
	# timeouts and downgrades; prefer-reader's promise to a reader that
	# waits for another (R8); nested reads; 1 reader + 2 writers and
	# 1 + 1 x 2 with timeouts and downgrades.  rwlock.pml's pan takes 7 s
	# to compile with -O2 and searches these rows about as fast without
	# (prefer-reader with timeouts and downgrades: 24 s with -O0, 32 s
	# with -O2): -O0.  Left out for time, each passing by hand: 3 readers
	# + 1 writer (22.3 million states, 65 s), R8 with reader 1 making 2
	# lock calls (7.5 million, 21-27 s), R8 with 3 readers + 1 writer
	# (102 million, 297 s, 5.5 GB), nested reads with timeouts (4.6
	# million, 12-16 s).  BUG_PASS_KEEPS_FLAGS and
	# BUG_LAST_READER_SERVES_GONE_HEAD went with the code paths they
	# changed (docs/verification.md).
	"rwlock.pml||ok|-O0"
	"rwlock.pml|-DTIMED -DDOWNGRADE|ok|-O0"
	"rwlock.pml|-DKIND=K_PREFER_WRITER|ok|-O0"
	"rwlock.pml|-DKIND=K_PREFER_WRITER -DTIMED -DDOWNGRADE|ok|-O0"
	"rwlock.pml|-DKIND=K_PREFER_READER|ok|-O0"
	"rwlock.pml|-DKIND=K_PREFER_READER -DTIMED -DDOWNGRADE|ok|-O0"
	"rwlock.pml|-DKIND=K_PREFER_READER -DREADER_DEPENDS|ok|-O0"
	# writer-yields: a writer head's yield (step 4c) at any moment its
	# flags stand in a held word; R8 with the yield, and without it
	# (BUG_NO_YIELD: prefer-writer's deadlock of a read holder that waits
	# for another reader).
	"rwlock.pml|-DKIND=K_WRITER_YIELDS|ok|-O0"
	"rwlock.pml|-DKIND=K_WRITER_YIELDS -DTIMED -DDOWNGRADE|ok"
	"rwlock.pml|-DKIND=K_WRITER_YIELDS -DREADERS=1 -DWRITERS=2 -DTIMED -DDOWNGRADE|ok"
	"rwlock.pml|-DKIND=K_WRITER_YIELDS -DREADER_DEPENDS|ok|-O0"
	"rwlock.pml|-DKIND=K_WRITER_YIELDS -DREADER_DEPENDS -DBUG_NO_YIELD|deadlock"
	"rwlock.pml|-DNESTED|ok|-O0"
	"rwlock.pml|-DREADERS=1 -DWRITERS=2 -DTIMED -DDOWNGRADE|ok|-O0"
	"rwlock.pml|-DREADERS=1 -DITER=2 -DTIMED -DDOWNGRADE|ok|-O0"
	"rwlock.pml|-DBUG_STEAL_FROM_RELEASE|assert"
	"rwlock.pml|-DBUG_READER_IGNORES_HANDOFF|assert"
	"rwlock.pml|-DBUG_LAST_READER_NO_WAKE|deadlock"
	"rwlock.pml|-DBUG_LAST_READER_IGNORES_HANDOFF|deadlock"
	"rwlock.pml|-DBUG_CLAIMED_BLIND_STORE|assert"
	"rwlock.pml|-DBUG_HANDOFF_OTHER_HEAD|assert"
	"rwlock.pml|-DBUG_GROUP_COUNT_AFTER_SIGNAL|assert"
	"rwlock.pml|-DBUG_NO_MARK_DUE|assert"
	"rwlock.pml|-DBUG_RECORD_PLAIN_STORE|deadlock"
	"rwlock.pml|-DBUG_GROUP_TAKES_LAST|assert"
	"rwlock.pml|-DTIMED -DBUG_GROUP_REFUSED_KEEPS_COUNT|assert"
	"rwlock.pml|-DREADERS=1 -DWRITERS=2 -DDOWNGRADE -DBUG_DOWNGRADE_DROPS_FLAGS|assert"
	# src/rwlock.c's downgrade at b4c5acc (fixed by 1590b83), which
	# rwlock.pml found; a writer's release without its commit (82caaed)
	# beside b4c5acc's withdrawal; giving up's withdrawal without the
	# pass, and from a committed release.
	"rwlock.pml|-DREADERS=1 -DWRITERS=2 -DTIMED -DDOWNGRADE -DBUG_DOWNGRADE_NO_COMMIT|assert"
	"rwlock.pml|-DREADERS=1 -DWRITERS=2 -DTIMED -DBUG_WITHDRAW_FLAGS|assert"
	"rwlock.pml|-DTIMED -DBUG_WITHDRAW_NO_PASS|assert"
	"rwlock.pml|-DTIMED -DBUG_WITHDRAW_COMMITTED|assert"
	# docs/design.md invariant 7 (R7): the release order before cd7e9af.
	"rwlock.pml|-DTIMED -DBUG_RELEASE_BEFORE_PASS|assert"
	# R9, no dead head (fault 4 of issue 37): the recorder's look at a
	# head it records, in leave_queue and in a downgrade that keeps a
	# writer head's flags.
	"rwlock.pml|-DTIMED -DBUG_LEAVE_NO_DEAD_CHECK|assert"
	"rwlock.pml|-DREADERS=1 -DWRITERS=2 -DTIMED -DDOWNGRADE -DBUG_DOWNGRADE_NO_DEAD_CHECK|assert"
	# Nested reads, prefer-reader's steps 2b and 4b (R8), and 535f186's
	# step 2b with a group's second share kept.
	"rwlock.pml|-DNESTED -DBUG_NO_NESTED|deadlock"
	"rwlock.pml|-DKIND=K_PREFER_READER -DREADER_DEPENDS -DBUG_NO_ADMIT|deadlock"
	"rwlock.pml|-DKIND=K_PREFER_READER -DREADER_DEPENDS -DITER1=2 -DBUG_NO_GRANT_BEHIND|deadlock"
	"rwlock.pml|-DKIND=K_PREFER_READER -DBUG_ADMIT_KEEPS_GROUP_SHARE|deadlock"
	# hl_cond (cond.pml): 2 waiters (one timed) and a signaller that
	# takes the mutex and destroys the condvar at the end; signals (each
	# wakes its waiter: RETRY), a broadcast (moves its waiters onto the
	# mutex queue), both, and signals that move (the first design).
	"cond.pml||ok|-O1"
	"cond.pml|-DBCAST|ok|-O1"
	"cond.pml|-DMIXED|ok|-O1"
	"cond.pml|-DSIGNAL_MOVES|ok|-O1"
	"cond.pml|-DBUG_UNLOCK_BEFORE_LIST|assert"
	"cond.pml|-DBUG_NO_KEEP|assert"
	"cond.pml|-DBCAST -DBUG_NO_KEEP|assert"
	"cond.pml|-DBUG_LIFO|assert"
	"cond.pml|-DBCAST -DBUG_RECORD_NOT_OWNER|deadlock"
	"cond.pml|-DBUG_TIMEOUT_NO_UNLINK|assert"
	"cond.pml|-DBCAST -DBUG_KEPT_NOT_PARKED|deadlock"
	"cond.pml|-DBCAST -DBUG_UNCOUNT_ABANDONED|assert"
	"cond.pml|-DBCAST -DBUG_CHAIN_NO_CLEAR|assert"
	# A nudge (mutex.c step 5b) after an unlock, on any PARKED_KEPT
	# node (-DMIXED -DNUDGE: 96 million states, 154 s: not here).
	"cond.pml|-DBCAST -DNUDGE|ok|-O1"
	"cond.pml|-DBCAST -DNUDGE -DBUG_NUDGE_NO_WAKE|deadlock"
	"cond.pml|-DBCAST -DNUDGE -DBUG_NUDGED_AS_SIGNAL|assert"
	# hl_channel on hl_swap's wait points (channel.pml): 2 clients (one
	# timed, or both), the server's receive / reply_receive loop (timed
	# receives with -DRECV_TIMED), a shutdown after the calls or at any
	# moment (-DSHUTDOWN), 1 or 2 calls per client (a reused record and
	# late futex_wakes).  All exhaustive; the largest, 21 million states,
	# about 15 s and 1 GB on a quiet machine (2 calls each with both timed
	# and a shutdown at any moment, 37 million states, took 37 s: left out).
	"channel.pml||ok"
	"channel.pml|-DSHUTDOWN|ok"
	"channel.pml|-DRECV_TIMED|ok"
	"channel.pml|-DSHUTDOWN -DRECV_TIMED|ok"
	"channel.pml|-DBOTH_TIMED -DSHUTDOWN -DRECV_TIMED|ok"
	"channel.pml|-DCALLS=2|ok"
	"channel.pml|-DCALLS=2 -DBOTH_TIMED -DRECV_TIMED|ok"
	"channel.pml|-DCALLS=2 -DSHUTDOWN -DRECV_TIMED|ok"
	"channel.pml|-DBUG_TIMEOUT_NO_GONE|assert"
	"channel.pml|-DBUG_NO_WAKE_SERVER|deadlock"
	"channel.pml|-DBUG_REQ_AFTER_UNLOCK|assert"
	"channel.pml|-DBUG_PARK_STORE|deadlock"
	"channel.pml|-DBUG_WAKE_NO_FUTEX|deadlock"
	"channel.pml|-DSHUTDOWN -DBUG_SHUTDOWN_NO_WAKE|deadlock"
	"channel.pml|-DBUG_REPLY_WAKE_FIRST|assert"
	# Liveness (starvation freedom under weak fairness, with the
	# passage of time modelled by timer processes): -DLIVE.
	"mutex.pml|-DLIVE|live"
	"mutex.pml|-DLIVE -DBUG_IGNORE_DUE|cycle"
	"mutex.pml|-DLIVE -DBUG_HEAD_MIN_RESTARTS|cycle"
	"mutex.pml|-DLIVE -DBUG_UNLOCK_IGNORES_HANDOFF|cycle"
	"mutex.pml|-DLIVE -DBUG_PASSIVE_NEVER_REJOINS|cycle"
	"cna.pml|-DLIVE|live"
	"cna.pml|-DLIVE -DBUG_NO_FLUSH|cycle"
	# rwlock.pml's liveness searches (2 readers + 1 writer): fair and
	# prefer-writer exhaustive (-O2); prefer-reader, for its readers, by
	# bitstate (a sample: exhaustive, 24.8 million states and 2.2 GB, it
	# takes 290 s here, docs/verification.md); prefer-reader's writer may
	# starve (LIVE_WRITER: the cycle is that kind's promise, kept as a
	# check that the formula can fail).
	"rwlock.pml|-DLIVE|live|-O2"
	"rwlock.pml|-DKIND=K_PREFER_WRITER -DLIVE|live|-O2"
	"rwlock.pml|-DKIND=K_PREFER_READER -DLIVE|livebit|-O2|-w24"
	"rwlock.pml|-DLIVE -DBUG_NO_MARK_DUE|cycle"
	"rwlock.pml|-DKIND=K_PREFER_READER -DLIVE -DLIVE_WRITER|cycle"
	# Bitstate searches beyond exhaustive reach: samples, not proofs
	# (docs/verification.md gives each one's coverage).
	"mutex.pml|-DNTHREADS=4 -DITER=1|bitstate||-w24"
	"mutex.pml|-DNTHREADS=4 -DITER=1 -DTIMED|bitstate||-w24"
	"mutex.pml|-DNTHREADS=3 -DTIMED|bitstate||-w24"
	"rwlock.pml|-DREADERS=2 -DWRITERS=2|bitstate|-O0|-w24"
	"rwlock.pml|-DREADERS=2 -DITER=2|bitstate|-O0|-w24"
	"rwlock.pml|-DREADERS=2 -DWRITERS=2 -DTIMED -DDOWNGRADE|bitstate|-O0|-w24"
	"rwlock.pml|-DKIND=K_WRITER_YIELDS -DREADERS=2 -DWRITERS=2|bitstate|-O0|-w24"
)

# Seconds since start, to one decimal (each row reports what it took:
# spin, the C compiler and the search).
now_ds() { local t; t=$(date +%s%N); echo $((t / 100000000)); }
secs() { local d=$(($(now_ds) - $1)); echo "$((d / 10)).$((d % 10)) s"; }

passed=0
failed=0
start_all=$(now_ds)
# A row's verdict: pass MESSAGE, or fail MESSAGE PATTERN (the lines of
# pan's output that explain it).
pass() {
	echo "ok   $name: $1, $(secs "$start")"
	passed=$((passed + 1))
}
fail() {
	echo "FAIL $name: $1; spin says:"
	grep -E "$2" "$run/pan.log" | head -5
	failed=$((failed + 1))
}
for row in "${rows[@]}"; do
	IFS='|' read -r model defs expect cflags panflags <<<"$row"
	case "$only" in
	"") ;;
	-*) [[ ",${only#-}," == *",$model,"* ]] && continue ;;
	*) [[ ",$only," == *",$model,"* ]] || continue ;;
	esac
	name="$model${defs:+ $defs}"
	start=$(now_ds)
	run="$work/run"
	rm -rf "$run" && mkdir -p "$run"
	# A seeded bug is found within a few hundred thousand states: its
	# row's time is the compiler's, so it does without optimization.
	opt=-O2
	case "$expect" in ok|live|livebit|bitstate) ;; *) opt=-O0 ;; esac
	[ -z "$cflags" ] || opt=$cflags
	# What pan is compiled for, and run with.  Liveness: acceptance
	# cycles (-a) under weak fairness (-f); NFAIR=3 makes room in the
	# fairness counter for up to 10 processes (the default, 2, for 6).
	case "$expect" in
	live|cycle) pan_defs="-DCOLLAPSE -DNFAIR=3"; pan_opts="-a -f" ;;
	livebit) pan_defs="-DBITSTATE -DNFAIR=3"; pan_opts="-a -f -k3" ;;
	bitstate) pan_defs="-DSAFETY -DBITSTATE"; pan_opts="-k3" ;;
	*) pan_defs="-DSAFETY -DCOLLAPSE"; pan_opts="" ;;
	esac
	# shellcheck disable=SC2086
	if ! (cd "$run" && "$spin_bin" $defs -a "$dir/$model" >spin.log 2>&1 &&
	      "$cc" $opt $pan_defs -o pan pan.c >cc.log 2>&1); then
		echo "FAIL $name: spin or the C compiler failed:"
		cat "$run/spin.log" "$run/cc.log" 2>/dev/null | tail -5
		failed=$((failed + 1))
		continue
	fi
	# shellcheck disable=SC2086
	(cd "$run" && ./pan -m1000000 $pan_opts $panflags >pan.log 2>&1)
	errors=$(grep -o 'errors: [0-9]*' "$run/pan.log" | awk '{print $2}')
	states=$(grep -o '[0-9.e+]* states, stored' "$run/pan.log" | awk '{print $1}')
	depth_cut=$(grep -c 'max search depth too small' "$run/pan.log")
	# A liveness row must have checked a never claim with fairness.
	claimed=1
	if [ "$expect" = live ] || [ "$expect" = livebit ] || [ "$expect" = cycle ]; then
		grep -q 'never claim[[:space:]]*+' "$run/pan.log" &&
			grep -q 'acceptance[[:space:]]*cycles[[:space:]]*+ (fairness enabled)' "$run/pan.log" || claimed=0
	fi
	case "$expect" in
	live)
		visited=$(sed -n 's/.*states, stored (\([0-9.e+]*\) visited).*/\1/p' "$run/pan.log")
		if [ "$errors" = 0 ] && [ "$depth_cut" = 0 ] && [ "$claimed" = 1 ]; then
			pass "no acceptance cycle under weak fairness, $states states (${visited:-$states} visited, exhaustive)"
		else
			fail "expected no acceptance cycle (with a never claim and fairness)" \
				'^pan:|errors:|depth too small|never claim|acceptance'
		fi
		;;
	livebit)
		if [ "$errors" = 0 ] && [ "$depth_cut" = 0 ] && [ "$claimed" = 1 ] && [ -n "$states" ]; then
			pass "no acceptance cycle under weak fairness, $states states (bitstate $panflags -k3, hash factor $(grep -o 'hash factor: [0-9.e+]*' "$run/pan.log" | awk '{print $3}'))"
		else
			fail "expected no acceptance cycle (with a never claim and fairness)" \
				'^pan:|errors:|depth too small|never claim|acceptance'
		fi
		;;
	cycle)
		if [ "${errors:-0}" != 0 ] && [ "$claimed" = 1 ] && grep -q '^pan:1: acceptance cycle' "$run/pan.log"; then
			pass "seeded bug caught ($(grep -m1 '^pan:1' "$run/pan.log") under weak fairness)"
		else
			fail "the seeded bug was not caught as an acceptance cycle under weak fairness" \
				'^pan:|errors:|never claim|acceptance'
		fi
		;;
	bitstate|ok)
		how="exhaustive"
		[ "$expect" = ok ] || how="bitstate $panflags -k3, hash factor $(grep -o 'hash factor: [0-9.e+]*' "$run/pan.log" | awk '{print $3}')"
		if [ "$errors" = 0 ] && [ "$depth_cut" = 0 ] && [ -n "$states" ]; then
			pass "no error, $states states ($how)"
		else
			fail "expected no error" '^pan:|errors:|depth too small'
		fi
		;;
	deadlock|assert)
		pattern='invalid end state'
		[ "$expect" = assert ] && pattern='assertion violated'
		if [ "${errors:-0}" != 0 ] && grep -q "$pattern" "$run/pan.log"; then
			pass "seeded bug caught ($(grep -m1 '^pan:1' "$run/pan.log"))"
		else
			fail "the seeded bug was not caught as '$pattern'" '^pan:|errors:'
		fi
		;;
	esac
done
echo "models: $passed passed, $failed failed, $(secs "$start_all")"
if [ $((passed + failed)) = 0 ]; then
	echo "run.sh: no row of model(s) '$only'"
	exit 1
fi
[ "$failed" = 0 ]
