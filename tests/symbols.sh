#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Names say what is public (docs/design.md, Conventions): every global
# symbol the library's objects define is either the API's, named hl_ and
# declared in include/hotlock/, or internal, named hl__.  Checked with nm on
# the objects the library is built from, so a helper that lost its static
# or its prefix is caught.
#   tests/symbols.sh INCLUDE_DIR OBJECT...   (one argument may join several
#   objects with ':', as ctest passes them)
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 INCLUDE_DIR OBJECT..." >&2; exit 2; }
include=$1
shift
IFS=: read -r -a objs <<<"$(IFS=:; echo "$*")"
public=$(cat "$include"/hotlock/*.h)
bad=0
for s in $(nm --defined-only "${objs[@]}" | awk '$2 ~ /[TDRBVW]/ {print $3}' | sort -u); do
	case $s in
	hl__*) ;;
	hl_*)
		grep -qw -- "$s" <<<"$public" || {
			echo "symbols: $s is defined but not declared in include/hotlock/: internal names start with hl__" >&2
			bad=1
		} ;;
	*)
		echo "symbols: $s is defined by the library without the hl_ or hl__ prefix" >&2
		bad=1 ;;
	esac
done
[ $bad = 0 ] || exit 1
echo "symbols: every global symbol is public hl_ or internal hl__"
