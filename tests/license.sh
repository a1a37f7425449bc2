#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every source and build file of the tree names its license (MIT, LICENSE)
# in an SPDX line within its first three lines: a file copied out of the
# repository keeps saying under what terms it may be used.
#   tests/license.sh SOURCE_DIR
set -uo pipefail
cd "${1:?usage: license.sh SOURCE_DIR}" || exit 1
[ -f LICENSE ] && grep -q '^MIT License' LICENSE || { echo "license: FAIL: no MIT LICENSE at the top of the tree" >&2; exit 1; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	list() { git ls-files --cached --others --exclude-standard; }
else
	list() { find . -path ./build\* -prune -o -path ./results -prune -o -type f -print | sed 's|^\./||'; }
fi
missing=0 checked=0
while IFS= read -r f; do
	case $f in
	*.c|*.h|*.cpp|*.cc|*.rs|*.pml|*.map|*.sh|*.py|*.toml|*.in|*CMakeLists.txt|Makefile|.ci/run|.gitignore) ;;
	*) continue ;;
	esac
	[ -f "$f" ] || continue
	checked=$((checked + 1))
	if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT'; then
		echo "license: FAIL: $f has no 'SPDX-License-Identifier: MIT' in its first three lines" >&2
		missing=$((missing + 1))
	fi
done < <(list)
[ "$checked" -gt 0 ] || { echo "license: FAIL: no source file found" >&2; exit 1; }
[ "$missing" = 0 ] || exit 1
echo "license: $checked files carry the SPDX line"
