#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hotlock installs like a library: `cmake --install` puts the libraries
# (libhotlock.so with its soname), the headers, the shim, hotlock-run,
# hotlock-stats-chart and hotlock-bench, a pkg-config file and a CMake
# package under a prefix; a program builds against the installed tree with
# pkg-config (shared and static) and with find_package, and runs; the
# installed hotlock-run finds the installed shim.
# Usage: install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
step() { echo "== $*"; }
fail() { echo "FAIL: $*"; exit 1; }

command -v pkg-config >/dev/null || fail "pkg-config is missing (tools/ensure-deps.sh installs pkgconf)"
step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(cd "$prefix" && ls -d lib*/libhotlock.so | head -1 | xargs dirname)
[ -n "$libdir" ] || fail "no libhotlock.so under $prefix"
for f in "$libdir/libhotlock.so" "$libdir/libhotlock.so.0" "$libdir/libhotlock.so.0.1" \
	"$libdir/libhotlock.a" "$libdir/libhotlock-preload.so" \
	"$libdir/pkgconfig/hotlock.pc" \
	"$libdir/cmake/hotlock/hotlockConfig.cmake" "$libdir/cmake/hotlock/hotlockConfigVersion.cmake" \
	"$libdir/cmake/hotlock/hotlockTargets.cmake" bin/hotlock-run bin/hotlock-top bin/hotlock-stats-chart \
	include/hotlock/hotlock.h include/hotlock/mutex.h include/hotlock/rwlock.h include/hotlock/cond.h; do
	[ -e "$prefix/$f" ] || fail "$f is not installed"
done
[ -L "$prefix/$libdir/libhotlock.so" ] || fail "libhotlock.so is not a link to the versioned file"
soname=$(readelf -d "$prefix/$libdir/libhotlock.so.0.1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libhotlock.so.0 ] || fail "soname is '$soname', expected libhotlock.so.0"
"$prefix/bin/hotlock-stats-chart" --help >/dev/null || fail "the installed hotlock-stats-chart does not run"
if [ -e "$build/bench/hotlock-bench" ]; then
	[ -x "$prefix/bin/hotlock-bench" ] || fail "hotlock-bench is not installed"
	# hotlock-bench NAME runs the program hotlock-bench-NAME beside it.
	for p in apps schbench futex-hash; do
		[ -x "$prefix/bin/hotlock-bench-$p" ] || fail "hotlock-bench-$p is not installed"
		"$prefix/bin/hotlock-bench" "$p" --help >/dev/null ||
			fail "the installed 'hotlock-bench $p --help' does not run"
	done
fi
echo "installed: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
step "pkg-config, shared: $(pkg-config --cflags --libs hotlock)"
# shellcheck disable=SC2046
cc -o "$tmp/c_shared" "$src/tests/install/consumer/consumer.c" $(pkg-config --cflags --libs hotlock) -pthread
readelf -d "$tmp/c_shared" | grep -q 'NEEDED.*libhotlock.so.0' || fail "the shared build does not need libhotlock.so.0"
[ "$(LD_LIBRARY_PATH=$prefix/$libdir "$tmp/c_shared")" = ok ] || fail "the shared build did not run"

step "pkg-config, static: $(pkg-config --static --cflags --libs hotlock)"
# shellcheck disable=SC2046
cc -o "$tmp/c_static" "$src/tests/install/consumer/consumer.c" $(pkg-config --cflags hotlock) \
	"$prefix/$libdir/libhotlock.a" $(pkg-config --static --libs-only-other hotlock)
if readelf -d "$tmp/c_static" | grep -q 'NEEDED.*libhotlock'; then
	fail "the static build needs libhotlock.so"
fi
[ "$("$tmp/c_static")" = ok ] || fail "the static build did not run"

step "find_package(hotlock)"
cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
[ "$(LD_LIBRARY_PATH=$prefix/$libdir "$tmp/consumer/consumer_shared")" = ok ] || fail "hotlock::hotlock did not run"
readelf -d "$tmp/consumer/consumer_static" | grep -q 'NEEDED.*libhotlock' && fail "hotlock::hotlock_static needs libhotlock.so"
[ "$("$tmp/consumer/consumer_static")" = ok ] || fail "hotlock::hotlock_static did not run"

step "the installed hotlock-run finds the installed shim"
out=$("$prefix/bin/hotlock-run" -- sh -c 'grep -c libhotlock-preload /proc/$$/maps') ||
	fail "hotlock-run failed: $out"
[ "$out" -ge 1 ] || fail "the shim is not loaded"
grep -q "$prefix" <<<"$("$prefix/bin/hotlock-run" -- sh -c 'echo $LD_PRELOAD')" ||
	fail "hotlock-run preloads a shim outside the prefix"

step "the installed hotlock-run collects the contention report of a program that waited"
out=$("$prefix/bin/hotlock-run" --stats -- python3 -c '
import threading
l = threading.Lock()
def w():
    for _ in range(20000):
        with l: pass
ts = [threading.Thread(target=w) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]' 2>&1) || fail "hotlock-run --stats failed: $out"
grep -q "^== hotlock lock report: pid" <<<"$out" || fail "no lock report from the installed tree: $out"
echo "ok: installed tree complete, consumers built three ways"
