#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what the build and the tests need on a fresh Debian machine (as
# root), or says in one line what to install: cmake, ninja, gcc, g++, clang
# with its sanitizer runtimes (ThreadSanitizer, ASan), python3, spin (the
# model checker), libabsl-dev (abseil, a peer that hotlock-bench compares
# against), libjansson-dev (jansson: the JSON of `hotlock-bench compare` and
# of the shim's contention report), libdw-dev (elfutils: the report's call
# stacks), pkg-config (which finds them; the install test), matplotlib and
# jsonschema for Debian's python3 (tools/hotlock-stats-chart.py and its test,
# which checks its inputs against docs/stats.schema.json; `make bench`'s
# plots), and the real programs that the shim's tests run: CPython's test
# suite for Debian's python3, sysbench, memcached with libmemcached-tools,
# and libsqlite3-dev.
#   tools/ensure-deps.sh bench   the same: `make bench` still says "bench",
#                                but matplotlib, which it added, is now in
#                                the default set.
# cargo (the Rust peers of hotlock-bench) comes from rustup, not apt: where
# it is missing, the build leaves those peers out and says so.
set -eu
missing() {
	local need=()
	command -v cmake   >/dev/null 2>&1 || need+=(cmake)
	command -v ninja   >/dev/null 2>&1 || need+=(ninja-build)
	command -v gcc     >/dev/null 2>&1 || need+=(gcc)
	command -v g++     >/dev/null 2>&1 || need+=(g++)
	if ! command -v clang >/dev/null 2>&1; then
		need+=(clang)
	else
		# The sanitizer runtimes are only a recommendation of Debian's
		# clang package: without them -fsanitize=thread cannot link.
		local rt ver
		rt=$(clang -print-file-name=libclang_rt.tsan-x86_64.a 2>/dev/null || true)
		if [ ! -e "$rt" ]; then
			ver=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
			need+=("libclang-rt-${ver}-dev")
		fi
	fi
	[ -x /usr/bin/python3 ] || need+=(python3) # Debian's, not one earlier in PATH
	/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1 || need+=(python3-matplotlib)
	/usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1 || need+=(python3-jsonschema)
	command -v spin    >/dev/null 2>&1 || need+=(spin)
	command -v pkg-config >/dev/null 2>&1 || need+=(pkgconf)
	[ -e /usr/include/absl/synchronization/mutex.h ] || need+=(libabsl-dev)
	[ -e /usr/include/jansson.h ] || need+=(libjansson-dev)
	[ -e /usr/include/elfutils/libdwfl.h ] || need+=(libdw-dev)
	[ -e /usr/include/sqlite3.h ] || need+=(libsqlite3-dev)
	[ -e /usr/lib/python3.11/test/test_threading.py ] || need+=(libpython3.11-testsuite)
	command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
	[ -x /usr/bin/memcached ] || need+=(memcached)
	# Debian 12 names its tools memc*: memcaslap is memaslap.
	command -v memcaslap >/dev/null 2>&1 || command -v memaslap >/dev/null 2>&1 ||
		need+=(libmemcached-tools)
	echo "${need[*]}"
}
need=$(missing)
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "ensure-deps: installing $need" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	# Debian's memcached starts its service on install; nothing here should
	# start daemons (policy-rc.d, removed after, only if we made it).
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $need >/dev/null
	# A clang installed just now may still lack its sanitizer runtimes.
	need=$(missing)
	if [ -n "$need" ]; then
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $need >/dev/null
	fi
	exit 0
fi
echo "hotlock: missing build and test tools; install them first: apt-get install $need" >&2
exit 1
