#!/usr/bin/env bash
# hotlock-run's contract: the program's exit status and signals are its
# own; LD_PRELOAD is appended to; options are checked, with exit status 2
# and one clear line for a bad one; programs the shim cannot be loaded into
# (static, setuid) are refused with exit status 2, not run on glibc.
# Usage: hotlock_run.sh HOTLOCK_RUN STATIC_PROG
set -uo pipefail
run=$1 static_prog=$2
fails=0
check() {       # name expected-status command...
	local name=$1 want=$2
	shift 2
	local out
	out=$("$@" 2>&1)
	local got=$?
	if [ "$got" = "$want" ]; then
		echo "ok   $name (status $got)"
	else
		echo "FAIL $name: status $got, expected $want; output: $out"
		fails=$((fails + 1))
	fi
}
check_out() {   # name pattern command...
	local name=$1 pat=$2
	shift 2
	local out
	out=$("$@" 2>&1)
	if grep -Eq -- "$pat" <<<"$out"; then
		echo "ok   $name"
	else
		echo "FAIL $name: output does not match '$pat': $out"
		fails=$((fails + 1))
	fi
}

check "true" 0 "$run" -- /bin/true
check "exit status passes through" 7 "$run" -- sh -c 'exit 7'
check "a signal passes through" 143 sh -c "\"$run\" -- sh -c 'kill -TERM \$\$'"
check "program without --" 0 "$run" /bin/true
check "options" 0 "$run" --queue cna --spin-ns 0 --handoff-ns=1000000 --topology virtual:2 -- /bin/true
check "--help" 0 "$run" --help
check "no program" 2 "$run"
check "unknown option" 2 "$run" --frobnicate -- /bin/true
check "bad --queue" 2 "$run" --queue lifo -- /bin/true
check "bad --spin-ns" 2 "$run" --spin-ns 20000000 -- /bin/true
check "bad --spin-ns (not a number)" 2 "$run" --spin-ns 5us -- /bin/true
check "bad --handoff-ns" 2 "$run" --handoff-ns -1 -- /bin/true
check "bad --topology" 2 "$run" --topology virtual:0 -- /bin/true
check "missing value" 2 "$run" --queue
check "program not found" 127 "$run" -- /nonexistent/program
check "static program refused" 2 "$run" -- "$static_prog"
check_out "static program: one clear line" "statically linked" "$run" -- "$static_prog"
check_out "settings reach the program" "^cna 0 1000000 virtual:2$" \
	"$run" --queue cna --spin-ns 0 --handoff-ns 1000000 --topology virtual:2 -- \
	sh -c 'echo "$HOTLOCK_QUEUE $HOTLOCK_SPIN_NS $HOTLOCK_HANDOFF_NS $HOTLOCK_TOPOLOGY"'
check_out "the shim is loaded" "^[1-9]" "$run" -- sh -c 'grep -c libhotlock-preload /proc/$$/maps'
check_out "LD_PRELOAD appended to" "^/nonexistent-first.so:.*libhotlock-preload.so$" \
	env LD_PRELOAD=/nonexistent-first.so "$run" -- sh -c 'echo "$LD_PRELOAD"'
check_out "a script's interpreter is checked" "^ok$" "$run" -- sh -c 'echo ok'
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	tmp=$(mktemp -d)
	cp /bin/true "$tmp/suid-true"
	chown nobody "$tmp/suid-true"
	chmod 4755 "$tmp/suid-true"
	check "setuid program refused" 2 "$run" -- "$tmp/suid-true"
	rm -rf "$tmp"
else
	echo "skip setuid program refused (needs root to make one)"
fi
[ "$fails" = 0 ] && echo "all passed" || { echo "$fails failed"; exit 1; }
