#!/usr/bin/env bash
# memcached, unmodified, on glibc and under hotlock-run: started with 4
# worker threads on a free port of 127.0.0.1, loaded by memaslap (Debian's
# memcaslap) with 8 connections for a few seconds, then 2000 keys written
# and every one read back (mc_check.py); the shim run must have the shim
# mapped in memcached's process.  The same result both ways.
# Usage: app_memcached.sh HOTLOCK_RUN
set -uo pipefail
run=$1
here=$(cd "$(dirname "$0")" && pwd)
memcached=/usr/bin/memcached
slap=$(command -v memcaslap || command -v memaslap || true)
[ -x "$memcached" ] || { echo "FAIL: memcached is missing (tools/ensure-deps.sh installs it)"; exit 1; }
[ -n "$slap" ] || { echo "FAIL: memaslap is missing (libmemcached-tools)"; exit 1; }
user=()
[ "$(id -u)" = 0 ] && user=(-u root)
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	fi
	pid=
}
trap cleanup EXIT
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
fails=0
declare -A result
for mode in glibc shim; do
	port=$(free_port)
	if [ $mode = glibc ]; then
		"$memcached" -l 127.0.0.1 -p "$port" -t 4 -U 0 "${user[@]}" &
	else
		HOTLOCK_SHIM_STATS=1 "$run" -- "$memcached" -l 127.0.0.1 -p "$port" -t 4 -U 0 "${user[@]}" &
	fi
	pid=$!
	up=
	for _ in $(seq 100); do
		if python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=1)" 2>/dev/null; then
			up=1
			break
		fi
		sleep 0.1
	done
	if [ -z "$up" ]; then
		echo "FAIL: $mode: memcached did not accept connections on port $port"
		fails=1
		cleanup
		continue
	fi
	if [ $mode = shim ] && ! grep -q libhotlock-preload "/proc/$pid/maps"; then
		echo "FAIL: the shim is not mapped in memcached (pid $pid)"
		fails=1
	fi
	load=$(timeout -k 5 30 "$slap" -s "127.0.0.1:$port" -t 3s -c 8 -T 2 2>&1)
	echo "$mode: $(grep -E '^Run time|TPS' <<<"$load" | tail -1)"
	if ! grep -q "TPS" <<<"$load"; then
		echo "FAIL: $mode: memaslap did not report: $(tail -5 <<<"$load")"
		fails=1
	fi
	check=$(timeout -k 5 60 python3 "$here/mc_check.py" "$port" 2000)
	rc=$?
	echo "$mode: $check"
	[ $rc = 0 ] || fails=1
	result[$mode]=$check
	kill -0 "$pid" 2>/dev/null || { echo "FAIL: $mode: memcached died"; fails=1; }
	cleanup
done
[ "${result[glibc]:-x}" = "${result[shim]:-y}" ] || { echo "FAIL: the results differ"; fails=1; }
[ $fails = 0 ] && echo "ok: the same result on glibc and on hotlock"
exit $fails
