#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hotlock-run's contract: the program's exit status and signals are its
# own; LD_PRELOAD is appended to; options are checked, with exit status 2
# and one clear line for a bad one; programs the shim cannot be loaded into
# (static or static-PIE, also when the dynamic loader is asked to run one,
# or a #! script's interpreter is one; setuid; another machine's) are refused
# with exit status 2 and one line, not run on glibc.
# Usage: hotlock_run.sh HOTLOCK_RUN STATIC_PROG [STATIC_PIE_PROG]
# (STATIC_PIE_PROG "" or left out: the toolchain cannot link one; skipped)
set -uo pipefail
run=$1 static_prog=$2 static_pie_prog=${3-}
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
check_refused() {       # name pattern command...: status 2, one line matching pattern
	local name=$1 pat=$2
	shift 2
	local out
	out=$("$@" 2>&1)
	local got=$?
	if [ "$got" = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -Eq -- "$pat" <<<"$out"; then
		echo "ok   $name (refused)"
	else
		echo "FAIL $name: status $got, expected 2 and one line matching '$pat'; output: $out"
		fails=$((fails + 1))
	fi
}
interp_of() {   # the PT_INTERP a program names (empty: none, or no readelf)
	command -v readelf >/dev/null 2>&1 || return 0
	readelf -l "$1" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p'
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
check "bad --rwlock-default" 2 "$run" --rwlock-default prefer-writer -- /bin/true
check "--rwlock-yield-ns under its least" 2 "$run" --rwlock-yield-ns 99999 -- /bin/true
check "program not found" 127 "$run" -- /nonexistent/program
check "static program refused" 2 "$run" -- "$static_prog"
check_out "static program: one clear line" "statically linked" "$run" -- "$static_prog"
check_refused "static program: one line naming it" "^hotlock-run: $static_prog is statically linked" \
	"$run" -- "$static_prog"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$static_pie_prog" ]; then
	check_refused "static-PIE program refused" \
		"^hotlock-run: $static_pie_prog is statically linked \(static-PIE" "$run" -- "$static_pie_prog"
	printf '#!%s\n' "$static_pie_prog" >"$tmp/script"
	chmod +x "$tmp/script"
	check_refused "a script whose interpreter is static-PIE refused" \
		"^hotlock-run: $static_pie_prog is statically linked" "$run" -- "$tmp/script"
else
	echo "skip static-PIE program refused (the toolchain cannot link one)"
fi
# Debian's ldconfig is static-PIE; elsewhere it may be dynamic, or a script.
if [ -x /sbin/ldconfig ] && command -v readelf >/dev/null 2>&1 &&
	readelf -h /sbin/ldconfig 2>/dev/null | grep -q 'Type: *DYN' && [ -z "$(interp_of /sbin/ldconfig)" ]; then
	check_refused "/sbin/ldconfig (static-PIE) refused" "^hotlock-run: /sbin/ldconfig is statically linked" \
		"$run" -- /sbin/ldconfig --version
else
	echo "skip /sbin/ldconfig refused (not a static-PIE binary here)"
fi
# The dynamic loader run directly loads the program itself, and the shim
# with it; a static program it is asked to run is refused all the same.
ldso=$(interp_of "$run")
if [ -n "$ldso" ] && [ -x "$ldso" ]; then
	check_out "the loader run directly: the shim is loaded" "^[1-9]" \
		"$run" -- "$ldso" /bin/sh -c 'grep -c libhotlock-preload /proc/$$/maps'
	check "the loader run directly: exit status passes through" 7 "$run" -- "$ldso" /bin/sh -c 'exit 7'
	check "the loader run directly, with its options" 0 \
		"$run" -- "$ldso" --inhibit-cache --argv0 x /bin/true
	check "the loader's --version" 0 "$run" -- "$ldso" --version
	check_refused "the loader asked to run a static program refused" \
		"^hotlock-run: $static_prog is statically linked" "$run" -- "$ldso" "$static_prog"
	check_refused "the loader asked, with options, to run a static program refused" \
		"^hotlock-run: $static_prog is statically linked" \
		"$run" -- "$ldso" --library-path /nonexistent --argv0 x "$static_prog"
	if [ -n "$static_pie_prog" ]; then
		check_refused "the loader asked to run a static-PIE program refused" \
			"^hotlock-run: $static_pie_prog is statically linked" "$run" -- "$ldso" "$static_pie_prog"
	fi
else
	echo "skip the loader run directly (no readelf, or hotlock-run names no loader)"
fi
# An executable shared library with a PT_INTERP (libc.so.6 prints its
# version) runs as any dynamic program.
libc=$(ldd /bin/sh 2>/dev/null | sed -n 's/^[[:space:]]*libc\.so\.6 => \([^ ]*\) .*/\1/p')
if [ -n "$libc" ] && [ -n "$(interp_of "$libc")" ]; then
	check_out "libc.so.6 run directly" "^GNU C Library" "$run" -- "$libc"
else
	echo "skip libc.so.6 run directly (not found, or has no PT_INTERP)"
fi
# Another class or machine: the shim cannot be loaded into it.
cp "$static_prog" "$tmp/elf32"
printf '\001' | dd of="$tmp/elf32" bs=1 seek=4 conv=notrunc 2>/dev/null      # EI_CLASS
check_refused "a 32-bit ELF refused" "^hotlock-run: $tmp/elf32 is not a 64-bit program" "$run" -- "$tmp/elf32"
cp /bin/true "$tmp/other-machine"
printf '\377\377' | dd of="$tmp/other-machine" bs=1 seek=18 conv=notrunc 2>/dev/null  # e_machine
check_refused "another machine's ELF refused" "^hotlock-run: $tmp/other-machine is built for another machine" \
	"$run" -- "$tmp/other-machine"
check_out "settings reach the program" "^cna 0 1000000 virtual:2$" \
	"$run" --queue cna --spin-ns 0 --handoff-ns 1000000 --topology virtual:2 -- \
	sh -c 'echo "$HOTLOCK_QUEUE $HOTLOCK_SPIN_NS $HOTLOCK_HANDOFF_NS $HOTLOCK_TOPOLOGY"'
check_out "rwlock settings reach the program" "^writer-yields 100000$" \
	"$run" --rwlock-default writer-yields --rwlock-yield-ns=100000 -- \
	sh -c 'echo "$HOTLOCK_RWLOCK_DEFAULT $HOTLOCK_RWLOCK_YIELD_NS"'
check_out "the shim is loaded" "^[1-9]" "$run" -- sh -c 'grep -c libhotlock-preload /proc/$$/maps'
check_out "LD_PRELOAD appended to" "^/nonexistent-first.so:.*libhotlock-preload.so$" \
	env LD_PRELOAD=/nonexistent-first.so "$run" -- sh -c 'echo "$LD_PRELOAD"'
check_out "a script's interpreter is checked" "^ok$" "$run" -- sh -c 'echo ok'
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	cp /bin/true "$tmp/suid-true"
	chown nobody "$tmp/suid-true"
	chmod 4755 "$tmp/suid-true"
	check "setuid program refused" 2 "$run" -- "$tmp/suid-true"
else
	echo "skip setuid program refused (needs root to make one)"
fi
[ "$fails" = 0 ] && echo "all passed" || { echo "$fails failed"; exit 1; }
