#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# src/'s bottom layers call in one direction (docs/design.md, "Architecture";
# thread.h, "Layering"): internal.c -> thread records (thread.c) -> futex
# layer (futex.c, futex_hash.c) -> waiting core (wait.c), with the tunables
# (config.c, which calls nothing of the library) at the bottom beside
# internal.c.  Each object's
# undefined hl_ symbols must be defined by its own layer or one below it;
# thread.c may also name the hook table that layers.c defines (that is how
# the layers above act at registration and fork).  Checked on the objects
# the library is built from, with nm, so a call up is caught whether it
# came through a header or a hand-written declaration.
#   tests/layers.sh OBJECT...   (the hotlock_obj objects; one argument
#   may join several with ':', as ctest passes them)
set -uo pipefail
fail() { echo "layers: FAIL: $*" >&2; exit 1; }
declare -A obj
IFS=: read -r -a objs <<<"$(IFS=:; echo "$*")"
for o in "${objs[@]}"; do
	b=$(basename "$o"); b=${b%.o}; b=${b%.c}
	obj[$b]=$o
done
order=(internal config thread futex futex_hash wait)
for b in "${order[@]}" layers; do
	[ -n "${obj[$b]:-}" ] || fail "no object for src/$b.c among the arguments"
done
defined() { nm --defined-only "$1" | awk '$2 ~ /[TDRBV]/ {print $3}'; }
undefined_hl() { nm -u "$1" | awk '{print $2}' | grep '^hl' || true; }
level() {
	case $1 in internal|config) echo 0 ;; thread) echo 1 ;; futex|futex_hash) echo 2 ;; wait) echo 3 ;; esac
}
bad=0
for b in "${order[@]}"; do
	lb=$(level "$b")
	allowed=$(for c in "${order[@]}"; do [ "$(level "$c")" -le "$lb" ] && defined "${obj[$c]}"; done)
	[ "$b" = thread ] && allowed+=$'\n'"hl__thread_hooks"$'\n'"hl__thread_hooks_count"
	for s in $(undefined_hl "${obj[$b]}"); do
		if ! grep -qx "$s" <<<"$allowed"; then
			owner=$(for c in "${!obj[@]}"; do defined "${obj[$c]}" | grep -qx "$s" && echo "$c.c"; done)
			echo "layers: src/$b.c uses $s, defined above it in ${owner:-another layer}" >&2
			bad=1
		fi
	done
done
[ $bad -eq 0 ] || fail "a bottom layer calls up (see above)"
# The hooks are the one way up: thread.c must use them.
nm -u "${obj[thread]}" | grep -q 'hl__thread_hooks$' || fail "thread.c no longer runs the hook table"
echo "layers: ok (${order[*]})"
