#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh Debian machine (as
# root), or says in one line what to install: cmake, ninja, gcc, g++, clang
# (for ThreadSanitizer), python3, spin (the model checker), and libabsl-dev
# (abseil, a peer that hotlock-bench compares against).
#   tools/ensure-deps.sh bench   also what `make bench` needs: matplotlib
#                                for Debian's python3 (the report's plots).
# cargo (the Rust peers of hotlock-bench) comes from rustup, not apt: where
# it is missing, the build leaves those peers out and says so.
set -eu
need=()
command -v cmake   >/dev/null 2>&1 || need+=(cmake)
command -v ninja   >/dev/null 2>&1 || need+=(ninja-build)
command -v gcc     >/dev/null 2>&1 || need+=(gcc)
command -v g++     >/dev/null 2>&1 || need+=(g++)
command -v clang   >/dev/null 2>&1 || need+=(clang)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v spin    >/dev/null 2>&1 || need+=(spin)
[ -e /usr/include/absl/synchronization/mutex.h ] || need+=(libabsl-dev)
if [ "${1:-}" = bench ]; then
	/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1 || need+=(python3-matplotlib)
fi
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "ensure-deps: installing ${need[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	exit 0
fi
echo "hotlock: missing build tools; install them first: apt-get install ${need[*]}" >&2
exit 1
