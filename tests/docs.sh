#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The documentation says what the tree is:
#  1. README.md's C example compiles against the public headers, links with
#     `-lhotlock -lpthread` as its comment says, and does what it claims
#     (four threads add through it; the total is exact);
#  2. every relative link in README.md and docs/*.md names a file that
#     exists (an anchor after '#' is not checked);
#  3. no tracked file cites a document outside the repository (the shared
#     DESIGN.md, the seeds' folder): docs/design.md and docs/seeds.md are
#     the ones to cite.
#   tests/docs.sh SOURCE_DIR LIBDIR CC
set -uo pipefail
src=${1:?usage: docs.sh SOURCE_DIR LIBDIR CC}
libdir=${2:?usage: docs.sh SOURCE_DIR LIBDIR CC}
cc=${3:?usage: docs.sh SOURCE_DIR LIBDIR CC}
cd "$src" || exit 1
fail=0
failed() { echo "docs: FAIL: $*" >&2; fail=1; }

# 1. The README's first C block, with a main that uses it.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
awk '/^```c$/ { on = 1; next } /^```$/ { if (on) exit } on' README.md > "$tmp/example.c"
[ -s "$tmp/example.c" ] || failed "README.md has no \`\`\`c block"
cat "$tmp/example.c" - > "$tmp/prog.c" <<'EOF'

#include <pthread.h>
#include <stdio.h>

static void *adder(void *arg)
{
	for (int i = 0; i < 100000; i++)
		add();
	return arg;
}

int main(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, adder, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", counter);
	return counter == 400000 ? 0 : 1;
}
EOF
if "$cc" -std=c11 -Wall -Wextra -Werror -I include "$tmp/prog.c" -o "$tmp/prog" \
	-L "$libdir" -Wl,-rpath,"$libdir" -lhotlock -lpthread 2> "$tmp/cc.err"; then
	out=$("$tmp/prog") || failed "README.md's example counted $out of 400000"
else
	failed "README.md's example does not build:"; cat "$tmp/cc.err" >&2
fi

# 2. Relative links.
links=0
for md in README.md docs/*.md; do
	dir=$(dirname "$md")
	while IFS= read -r target; do
		target=${target%%#*}
		[ -n "$target" ] || continue
		links=$((links + 1))
		[ -e "$dir/$target" ] || failed "$md links to $target, which does not exist"
	done < <(grep -o '\](\([^)]*\))' "$md" | sed 's/^](\(.*\))$/\1/' | grep -v '^[a-z]*:' | grep -v '^#')
done
[ "$links" -gt 10 ] || failed "only $links relative links found: the test no longer reads them"

# 3. Citations of files outside the tree.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	outside=$(git ls-files --cached --others --exclude-standard -z |
		xargs -0 grep -lE 'DESIGN\.md|\.\./shared|shared/seeds' -- 2>/dev/null |
		grep -v '^tests/docs\.sh$' | tr '\n' ' ')
	[ -z "$outside" ] || failed "these files cite a document outside the repository: $outside"
fi

[ "$fail" = 0 ] || exit 1
echo "docs: the README's example counts exactly; $links relative links resolve; nothing cites outside the tree"
