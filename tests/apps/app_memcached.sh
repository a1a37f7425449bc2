#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memcached, unmodified, on glibc and under hotlock-run: started with 4
# worker threads on a free port of 127.0.0.1, loaded by memaslap (Debian's
# memcaslap) with 8 connections for a few seconds, then 2000 keys written
# and every one read back (mc_check.py); the shim run must have the shim
# mapped in memcached's process.  Then memcached is stopped with SIGTERM and
# must exit by itself.  The same result both ways.
# memcached runs under timeout(1) with its output in a file: even if this
# script is killed (SIGKILL from ctest), no memcached outlives LIFETIME_S,
# and none holds ctest's output pipe.
# Usage: app_memcached.sh HOTLOCK_RUN
set -uo pipefail
run=$1
here=$(cd "$(dirname "$0")" && pwd)
python=/usr/bin/python3
memcached=/usr/bin/memcached
lifetime_s=120
slap=$(command -v memcaslap || command -v memaslap || true)
[ -x "$memcached" ] || { echo "FAIL: memcached is missing (tools/ensure-deps.sh installs it)"; exit 1; }
[ -n "$slap" ] || { echo "FAIL: memaslap is missing (libmemcached-tools)"; exit 1; }
[ -x "$python" ] || { echo "FAIL: $python is missing"; exit 1; }
user=()
[ "$(id -u)" = 0 ] && user=(-u root)
tmp=$(mktemp -d)
tpid= pid=
stop() {        # SIGTERM to memcached, through timeout(1); its status in $stopped
	stopped=
	[ -n "$tpid" ] || return 0
	kill -TERM "$tpid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$tpid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$tpid" 2>/dev/null; then
		echo "FAIL: memcached did not exit within 5 s of SIGTERM"
		[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
		kill -KILL "$tpid" 2>/dev/null
	fi
	wait "$tpid" 2>/dev/null
	stopped=$?
	tpid= pid=
}
trap 'stop >/dev/null; rm -rf "$tmp"' EXIT
free_port() {
	"$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
fails=0
declare -A result
for mode in glibc shim; do
	port=$(free_port)
	cmd=("$memcached" -l 127.0.0.1 -p "$port" -t 4 -U 0 "${user[@]}")
	[ $mode = shim ] && cmd=("$run" -- "${cmd[@]}")
	start=$(date +%s%N)
	HOTLOCK_SHIM_STATS=$tmp/shim.stats timeout -k 5 "$lifetime_s" "${cmd[@]}" \
		</dev/null >"$tmp/$mode.log" 2>&1 &
	tpid=$!
	up=
	for _ in $(seq 100); do
		if "$python" -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=1)" 2>/dev/null; then
			up=1
			break
		fi
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.1
	done
	# timeout's one child is memcached (hotlock-run execs it).
	pid=$(pgrep -P "$tpid" | head -1)
	if [ -z "$up" ] || [ -z "$pid" ]; then
		echo "FAIL: $mode: memcached did not accept connections on port $port; its output:"
		cat "$tmp/$mode.log"
		fails=1
		stop
		continue
	fi
	if [ "$(readlink "/proc/$pid/exe")" != "$memcached" ]; then
		echo "FAIL: $mode: pid $pid is not memcached but $(readlink "/proc/$pid/exe")"
		fails=1
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
	check=$(timeout -k 5 60 "$python" "$here/mc_check.py" "$port" 2000)
	rc=$?
	echo "$mode: $check"
	[ $rc = 0 ] || fails=1
	kill -0 "$pid" 2>/dev/null || { echo "FAIL: $mode: memcached died"; fails=1; }
	stop
	end=$(date +%s%N)
	echo "$mode: memcached exit $stopped after SIGTERM; $(((end - start) / 1000000)) ms in all"
	if [ "$stopped" != 0 ]; then
		echo "FAIL: $mode: memcached exited $stopped after SIGTERM (124: its $lifetime_s s ran out); its output:"
		cat "$tmp/$mode.log"
		fails=1
	fi
	result[$mode]="$check; exit $stopped"
done
if [ -s "$tmp/shim.stats" ]; then
	echo "shim report: $(cat "$tmp/shim.stats")"
else
	echo "FAIL: the shim run left no report from the shim: it did not run on hotlock"
	fails=1
fi
[ "${result[glibc]:-x}" = "${result[shim]:-y}" ] || { echo "FAIL: the results differ"; fails=1; }
[ $fails = 0 ] && echo "ok: the same result on glibc and on hotlock"
exit $fails
