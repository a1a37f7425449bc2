#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hotlock-run --deadlocks and --lock-order (docs/deadlocks.md) on the
# programs of tests/deadlocks/, each of known behaviour (its opening
# comment says what must be reported):
#  - deadlocks (abba, cycle3, rwlock_writer, heap_pair deadlock, a nested
#    read of a process-shared nonrecursive rwlock, which glibc keeps): one
#    report each, while the program runs, in the text form of the docs:
#    the header with the process's pid and the number of threads, and for
#    each thread (its TID and name as the program says them) the lock it
#    waits for and its site, and each lock it holds with the site that
#    took it, each site checked by its function's name; not repeated while
#    the deadlock stands; the JSON line parses, is valid against
#    docs/deadlocks.schema.json, and names the same functions;
#    --deadlocks=abort ends abba with SIGABRT (status 134), its report on
#    stderr;
#  - a hang (io_hang): a thread waits for a mutex held by one asleep in
#    read(), or in a condvar wait; one hang report naming both sites, no
#    deadlock, and the program ends with status 0; or held by a thread that
#    ended holding it: the hang says so;
#  - inversions that did not deadlock (inversion, heap_pair sequential):
#    --lock-order reports both orders with their sites, --deadlocks
#    nothing; with std::mutex at -O0 (cxx_inversion), each pair's second
#    site past libstdc++'s __gthread_mutex_lock;
#  - no report at all, and status 0: a nested read with a writer waiting
#    (nested_read, both kinds), trylocks that back off (trylock_backoff),
#    a recursive mutex relocked under another lock (recursive), a condvar
#    wait beside the same locks taken in one order (condvar);
#  - bad values of the options: exit status 2 and one line.
# The checks themselves must fail where they should: the checker on a
# report written by hand in the docs' form, altered; abba and nested_read
# (nonrecursive) on glibc, which deadlock and make no report; the real
# abba report against wrong sites.  About 20 s.
#   tests/deadlocks.sh HOTLOCK_RUN PROGRAM_DIR SCHEMA
set -uo pipefail
run=${1:?usage: deadlocks.sh HOTLOCK_RUN PROGRAM_DIR SCHEMA}
dir=${2:?usage: deadlocks.sh HOTLOCK_RUN PROGRAM_DIR SCHEMA}
schema=${3:?usage: deadlocks.sh HOTLOCK_RUN PROGRAM_DIR SCHEMA}
py=/usr/bin/python3     # Debian's, with jsonschema (tests/CMakeLists.txt)
export LC_ALL=C         # one order for sort, bytes for the patterns
ulimit -c 0             # --deadlocks=abort: no core files
tmp=$(mktemp -d) || exit 1
sessions=()
cleanup() {
	local s
	for s in "${sessions[@]}"; do
		kill -KILL -- "-$s" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
unset LD_PRELOAD ${!HOTLOCK_*}
fails=0

# check DESCRIPTION COMMAND...: one line, ok or FAIL (with what COMMAND said).
check() {
	local what=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "ok   $what"
	else
		echo "FAIL $what"
		[ -z "$out" ] || sed 's/^/     /' <<<"$out"
		fails=$((fails + 1))
	fi
}
# seeded DESCRIPTION COMMAND...: COMMAND is a check that must fail here.
seeded() {
	local what=$1
	shift
	if "$@" >/dev/null 2>&1; then
		echo "FAIL seeded fault not caught: $what"
		fails=$((fails + 1))
	else
		echo "ok   seeded fault caught: $what"
	fi
}

alive() {      # PID: running (not a zombie)
	local st
	st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) && [ "$st" != Z ]
}

# run_deadlocked NAME EXTRA_S HOTLOCK_RUN_OPTIONS... -- PROGRAM ARGS:
# starts hotlock-run in a session of its own, with its report's files
# $tmp/NAME.txt and NAME.json, the program's stdout in $tmp/NAME.out and
# hotlock-run's stderr in NAME.err; waits until NAME.txt holds a report,
# 15 s at most, then EXTRA_S more; then sends hotlock-run SIGTERM, which
# it passes on to the program (the session is killed if it is still there
# 10 s later).  Sets status: 143 where the program was still running.
run_deadlocked() {
	local name=$1 extra=$2 i
	shift 2
	setsid "$run" --deadlocks-file="$tmp/$name.txt" --deadlocks-json="$tmp/$name.json" "$@" \
		</dev/null >"$tmp/$name.out" 2>"$tmp/$name.err" &
	local pid=$!
	sessions+=("$pid")
	for ((i = 0; i < 150; i++)); do
		grep -q '^== hotlock: ' "$tmp/$name.txt" 2>/dev/null && break
		alive "$pid" || break
		sleep 0.1
	done
	sleep "$extra"
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		alive "$pid" || break
		sleep 0.1
	done
	alive "$pid" && kill -KILL -- "-$pid"
	wait "$pid"
	status=$?
	sessions=()
}
# run_to_end NAME COMMAND...: a program that ends by itself (20 s at most;
# timeout signals its whole process group), its stdout in $tmp/NAME.out and
# stderr in NAME.err; sets status.  (The shell's own line about a command
# killed by a signal goes nowhere.)
run_to_end() {
	local name=$1
	shift
	{ timeout -k 5 20 "$@" </dev/null >"$tmp/$name.out" 2>"$tmp/$name.err"; } 2>/dev/null
	status=$?
}
# run_case NAME [hotlock-run options...] -- PROGRAM ARGS: run_to_end with
# the report's files $tmp/NAME.txt and NAME.json.
run_case() {
	local name=$1
	shift
	run_to_end "$name" "$run" --deadlocks-file="$tmp/$name.txt" \
		--deadlocks-json="$tmp/$name.json" "$@"
}

status_is() {  # NAME WANT: the status of NAME's run
	[ "$status" = "$2" ] && return 0
	echo "status $status, expected $2; stderr:"
	sed 's/^/  /' "$tmp/$1.err"
	return 1
}
quiet() {      # NAME: hotlock-run said nothing on stderr (its reports went to files)
	[ ! -s "$tmp/$1.err" ] && return 0
	echo "stderr:"
	sed 's/^/  /' "$tmp/$1.err"
	return 1
}

# ---- reading a text report ----
# The forms of docs/deadlocks.md: KIND LOCK is "mutex a (0x...)" for a
# lock with a name, "mutex 0x..." for one without; a SITE is "function
# (file:line)" (also "an unknown site", or "module+0x..." without
# symbols).  canon REPORT PROGRAM_OUT [MIN_TENTHS] prints each report of
# REPORT in a form without the numbers that change from run to run, its
# entries sorted (the order of the threads and of the pairs is the
# detector's):
#   deadlock of N threads
#     NAME waits for KIND LOCK at FUNCTION; holds KIND LOCK at FUNCTION...
#   hang: NAME waits for KIND LOCK at FUNCTION
#     held by NAME at FUNCTION, which waits for KIND LOCK at FUNCTION
#     held by NAME at FUNCTION, which waits for no lock
#   lock-order inversion of N locks
#     KIND LOCK then KIND LOCK: NAME took them at FUNCTION, then FUNCTION
#     (every lock taken for reading)
# where LOCK is the lock's name, or its address where it has none.  The
# numbers are checked against the program's own lines (PROGRAM_OUT, dl.h):
# the pid, each thread's TID and name; and each wait is at least
# MIN_TENTHS tenths of a second (the threshold).  A line of no form, or a
# number that does not match, is a line "BAD: ...".
KIND='(mutex|rwlock \((read|write)\)|glibc mutex|glibc rwlock \((read|write)\))'  # 3 groups
LOCK='([^ ]+ \(0x[0-9a-f]+\)|0x[0-9a-f]+)'                                      # 1 group
re_out_pid='^([a-z0-9_]+): pid ([0-9]+)$'
re_out_thread='^[a-z0-9_]+: thread ([^ ]+) tid ([0-9]+)$'
re_named='^([^ ]+) \(0x'
re_site='^([^ ]+) \([^()]*:[0-9]+\)$'
in_pid='in pid ([0-9]+) \((.*)\): '                                     # 2 groups
waited="has waited ([0-9]+\.[0-9]) s for $KIND $LOCK at (.+)$"              # 6 groups
thread='thread ([0-9]+) \((.*)\)'                                          # 2 groups
held="^   held by $thread, taken at (.+), which "                          # 3 groups
re_dl="^== hotlock: deadlock ${in_pid}([0-9]+) threads wait for each other$"
re_dl_thread="^   $thread $waited"
re_dl_hold="^      it holds $KIND $LOCK, taken at (.+)$"
re_hang="^== hotlock: hang $in_pid$thread $waited"
re_hang_end="${held}is not waiting for a lock \((.*)\)$"
re_hang_link="${held}waits for $KIND $LOCK at (.+)$"
re_order="^== hotlock: lock-order inversion ${in_pid}([0-9]+) locks taken in a cycle of orders$"
re_order_pair="^   $KIND $LOCK then $KIND $LOCK: thread ([0-9]+) took the first at (.+), "
re_order_pair+="then the second at (.+)$"
order_reads='   (every lock of it is taken for reading: it deadlocks only while writers wait)'
kl() {         # KIND LOCK: the lock by its name, or its address
	local l=$2
	[[ $l =~ $re_named ]] && l=${BASH_REMATCH[1]}
	echo "$1 $l"
}
fn() {         # SITE: its function, without (file:line)
	local s=$1
	[[ $s =~ $re_site ]] && s=${BASH_REMATCH[1]}
	echo "$s"
}
emit() {       # the report in head and entries (the caller's), its entries sorted
	[ -n "$head" ] || return 0
	echo "$head"
	((${#entries[@]} == 0)) || printf '  %s\n' "${entries[@]}" | sort
	head= entries=()
}
canon() {
	local file=$1 out=$2 min=${3:-0} line pid= prog= name r e
	local -A names=()
	while IFS= read -r line; do
		if [[ $line =~ $re_out_pid ]]; then
			prog=${BASH_REMATCH[1]} pid=${BASH_REMATCH[2]}
		elif [[ $line =~ $re_out_thread ]]; then
			names[${BASH_REMATCH[2]}]=${BASH_REMATCH[1]}
		fi
	done <"$out"
	local head= entries=() bad=()
	who() {        # TID [NAME]: name= the thread's name, checked against the program's
		name=${names[$1]-}
		if [ -z "$name" ]; then
			bad+=("thread $1 is none of the program's threads")
			name="tid$1"
		elif [ -n "${2-}" ] && [ "$2" != "$name" ]; then
			bad+=("thread $1 is named $2, but the program named it $name")
		fi
	}
	header() {     # PID PROGRAM
		[ "$1" = "$pid" ] || bad+=("pid $1 in a header, the program's is ${pid:-unknown}")
		[[ $2 == *"$prog"* ]] || bad+=("program '$2' in a header does not name $prog")
	}
	waited() {     # S.S
		local t=${1/./}
		((10#$t >= min)) || bad+=("a wait of $1 s, under the threshold")
	}
	[ -f "$file" ] || return 0
	while IFS= read -r line; do
		if [[ $line =~ $re_dl ]]; then
			emit
			header "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
			head="deadlock of ${BASH_REMATCH[3]} threads"
		elif [[ $head == deadlock* && $line =~ $re_dl_thread ]]; then
			r=("${BASH_REMATCH[@]}")
			waited "${r[3]}"
			who "${r[1]}" "${r[2]}"
			entries+=("$name waits for $(kl "${r[4]}" "${r[7]}") at $(fn "${r[8]}")")
		elif [[ $head == deadlock* && ${#entries[@]} -gt 0 && $line =~ $re_dl_hold ]]; then
			r=("${BASH_REMATCH[@]}")
			entries[-1]+="; holds $(kl "${r[1]}" "${r[4]}") at $(fn "${r[5]}")"
		elif [[ $line =~ $re_hang ]]; then
			r=("${BASH_REMATCH[@]}")
			emit
			header "${r[1]}" "${r[2]}"
			waited "${r[5]}"
			who "${r[3]}" "${r[4]}"
			head="hang: $name waits for $(kl "${r[6]}" "${r[9]}") at $(fn "${r[10]}")"
		elif [[ $head == hang* && $line =~ $re_hang_end ]]; then
			r=("${BASH_REMATCH[@]}")
			who "${r[1]}" "${r[2]}"
			entries+=("held by $name at $(fn "${r[3]}"), which waits for no lock")
		elif [[ $head == hang* && $line =~ $re_hang_link ]]; then
			r=("${BASH_REMATCH[@]}")
			who "${r[1]}" "${r[2]}"
			e="held by $name at $(fn "${r[3]}"), which waits for "
			entries+=("$e$(kl "${r[4]}" "${r[7]}") at $(fn "${r[8]}")")
		elif [[ $line =~ $re_order ]]; then
			emit
			header "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
			head="lock-order inversion of ${BASH_REMATCH[3]} locks"
		elif [[ $head == lock-order* && $line =~ $re_order_pair ]]; then
			r=("${BASH_REMATCH[@]}")
			who "${r[9]}"
			e="$(kl "${r[1]}" "${r[4]}") then $(kl "${r[5]}" "${r[8]}"): "
			entries+=("${e}$name took them at $(fn "${r[10]}"), then $(fn "${r[11]}")")
		elif [[ $head == lock-order* && $line == "$order_reads" ]]; then
			entries+=("(every lock taken for reading)")
		else
			bad+=("a line of no form: '$line'")
		fi
	done <"$file"
	emit
	((${#bad[@]} == 0)) || printf 'BAD: %s\n' "${bad[@]}"
}
sorted() {     # canon's form on stdin, each report's entries sorted
	local line head= entries=()
	while IFS= read -r line; do
		if [[ $line == "  "* ]]; then
			entries+=("${line#  }")
		else
			emit
			head=$line
		fi
	done
	emit
}
# report_is NAME MIN_TENTHS EXPECTED [FILE]: $tmp/NAME.txt (or FILE) in
# canon's form is EXPECTED ("" for no report).
report_is() {
	local got want
	got=$(canon "${4:-$tmp/$1.txt}" "$tmp/$1.out" "$2")
	want=$(sorted <<<"$3")
	[ "$got" = "$want" ] && return 0
	echo "expected:"
	sed 's/^/  /' <<<"${want:-(no report)}"
	echo "got:"
	sed 's/^/  /' <<<"${got:-(no report)}"
	return 1
}
# no_report NAME: nothing in $tmp/NAME.txt or NAME.json.
no_report() {
	local f ok=0
	for f in "$tmp/$1.txt" "$tmp/$1.json"; do
		if [ -s "$f" ]; then
			echo "$(basename "$f"):"
			sed 's/^/  /' "$f"
			ok=1
		fi
	done
	return $ok
}

# json_has NAME EVENT COUNT [FUNCTION...]: each line of $tmp/NAME.json is
# a JSON object valid against the schema, with the program's pid and its
# name; COUNT of them are of EVENT and none of another event; each names
# every FUNCTION (anywhere in it).
json_has() {
	"$py" - "$schema" "$tmp/$1.json" "$tmp/$1.out" "${@:2}" <<'EOF'
import json, os, re, sys

schema_path, path, out, event, count, *functions = sys.argv[1:]
bad = []
pid = prog = None
for line in open(out):
    m = re.match(r"^([a-z0-9_]+): pid ([0-9]+)$", line)
    if m:
        prog, pid = m.group(1), int(m.group(2))
if pid is None:
    bad.append(f"{out} says no pid")
    prog = "?"
validate = None
if not os.path.exists(schema_path):
    bad.append(f"no schema at {schema_path}")
else:
    import jsonschema
    schema = json.load(open(schema_path))
    validate = lambda doc: jsonschema.validate(doc, schema)
docs = []
lines = open(path).read().splitlines() if os.path.exists(path) else []
for n, line in enumerate(lines, 1):
    try:
        doc = json.loads(line)
    except ValueError as e:
        bad.append(f"line {n} is not JSON ({e}): {line[:200]}")
        continue
    if not isinstance(doc, dict):
        bad.append(f"line {n} is not an object")
        continue
    if validate:
        try:
            validate(doc)
        except jsonschema.ValidationError as e:
            bad.append(f"line {n} is not valid against the schema: {e.message}")
    if doc.get("pid") != pid:
        bad.append(f"line {n}: pid {doc.get('pid')}, the program's is {pid}")
    if prog not in str(doc.get("program", "")):
        bad.append(f"line {n}: program {doc.get('program')!r} does not name {prog}")
    if doc.get("event") != event:
        bad.append(f"line {n}: event {doc.get('event')!r}, expected {event!r}")
    text = json.dumps(doc)
    for f in functions:
        if f not in text:
            bad.append(f"line {n} does not name {f}")
    docs.append(doc)
if len(docs) != int(count):
    bad.append(f"{len(docs)} JSON lines, expected {count}")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
}

tail_of() {    # NAME PREFIX: the rest of the program's stdout line "PREFIX..."
	sed -n "s/^$2//p" "$tmp/$1.out"
}

# ---- the checker itself ----
# A report written by hand in the docs' forms, for a program that said
# its pid and threads: read as it should be, and each alteration caught.
cat >"$tmp/hand.out" <<'EOF'
abba: pid 100
abba: thread abba-ab tid 101
abba: thread abba-ba tid 102
EOF
cat >"$tmp/hand.txt" <<'EOF'
== hotlock: deadlock in pid 100 (/build/tests/deadlocks/abba): 2 threads wait for each other
   thread 101 (abba-ab) has waited 1.2 s for mutex b (0x55d1c0a04060) at ab_then_b (abba.c:30)
      it holds mutex a (0x55d1c0a04020), taken at ab_takes_a (abba.c:25)
   thread 102 (abba-ba) has waited 1.2 s for mutex a (0x55d1c0a04020) at ba_then_a (abba.c:40)
      it holds mutex b (0x55d1c0a04060), taken at ba_takes_b (abba.c:35)
== hotlock: hang in pid 100 (abba): thread 101 (abba-ab) has waited 0.6 s for rwlock (write) 0x7f00aa000010 at an unknown site
   held by thread 102 (abba-ba), taken at ba_takes_b (abba.c:35), which waits for glibc mutex m (0x4000) at x
   held by thread 101 (abba-ab), taken at ab_takes_a (abba.c:25), which is not waiting for a lock (sleeping in pipe_read)
== hotlock: lock-order inversion in pid 100 (abba): 2 locks taken in a cycle of orders
   rwlock (read) a (0x10) then rwlock (read) b (0x20): thread 101 took the first at ab_takes_a (abba.c:25), then the second at ab_then_b (abba.c:30)
   rwlock (read) b (0x20) then rwlock (read) a (0x10): thread 102 took the first at ba_takes_b (abba.c:35), then the second at ba_then_a (abba.c:40)
   (every lock of it is taken for reading: it deadlocks only while writers wait)
EOF
hand_abba='deadlock of 2 threads
  abba-ab waits for mutex b at ab_then_b; holds mutex a at ab_takes_a
  abba-ba waits for mutex a at ba_then_a; holds mutex b at ba_takes_b'
hand="$hand_abba
hang: abba-ab waits for rwlock (write) 0x7f00aa000010 at an unknown site
  held by abba-ab at ab_takes_a, which waits for no lock
  held by abba-ba at ba_takes_b, which waits for glibc mutex m at x
lock-order inversion of 2 locks
  (every lock taken for reading)
  rwlock (read) a then rwlock (read) b: abba-ab took them at ab_takes_a, then ab_then_b
  rwlock (read) b then rwlock (read) a: abba-ba took them at ba_takes_b, then ba_then_a"
check "checker: a report in the docs' forms is read as written" report_is hand 5 "$hand"
alter() {      # SED_EXPR: the hand-written report altered, read against the original
	sed "$1" "$tmp/hand.txt" >"$tmp/altered.txt"
	report_is hand 5 "$hand" "$tmp/altered.txt"
}
seeded "checker: a hold site changed" alter '3s/ab_takes_a/ab_then_b/'
seeded "checker: a thread left out" alter '4,5d'
seeded "checker: a wrong pid" alter '1s/pid 100/pid 101/'
seeded "checker: a thread's name that is not the program's" alter '2s/(abba-ab)/(abba-ba)/'
seeded "checker: a wait under the threshold" alter '2s/1\.2 s/0.4 s/'
seeded "checker: a line of no form" alter '2s/has waited/waited/'
seeded "checker: a report repeated" alter '5r '"$tmp/hand.txt"

# ---- on glibc: the programs do what they say, and the checks see no report ----
run_to_end glibc_abba timeout 1 "$dir/abba"
check "abba on glibc deadlocks (still running after 1 s)" status_is glibc_abba 124
seeded "abba on glibc, no hotlock-run: no deadlock report" report_is glibc_abba 5 "$hand_abba"
seeded "abba on glibc, no hotlock-run: no JSON line" json_has glibc_abba deadlock 1
run_to_end glibc_nr timeout 1 "$dir/nested_read" prefer-writer-nonrecursive
check "nested_read (nonrecursive kind) on glibc deadlocks: the writer waited at the nested read" \
	status_is glibc_nr 124

# ---- the options ----
for good in "--deadlocks --deadlocks-after=0.1 --lock-order" \
	"--deadlocks=abort --deadlocks-after=3600" "--deadlocks --deadlocks-after=2.5" \
	--lock-order; do
	run_to_end options "$run" $good -- /bin/true
	check "$good accepted" eval 'status_is options 0 && quiet options'
done
for bad in --deadlocks=maybe "--deadlocks --deadlocks-after=0.05" \
	"--deadlocks --deadlocks-after=3601" "--deadlocks --deadlocks-after=1s" \
	"--deadlocks --deadlocks-after="; do
	run_to_end options "$run" $bad -- /bin/true
	check "$bad refused: status 2, one line" test "$status:$(wc -l <"$tmp/options.err")" = "2:1"
done

# ---- deadlocks ----
run_deadlocked abba 1.5 --deadlocks --deadlocks-after=0.5 -- "$dir/abba"
check "abba: deadlock of 2 threads, each one's wait and hold sites (and not repeated 1.5 s on)" \
	report_is abba 5 "$hand_abba"
check "abba: one JSON line, event deadlock, naming the 4 sites" \
	json_has abba deadlock 1 ab_takes_a ab_then_b ba_takes_b ba_then_a
check "abba: still deadlocked when ended (SIGTERM through hotlock-run: status 143)" \
	status_is abba 143
check "abba: nothing on stderr" quiet abba
seeded "abba's report, against a hold site changed" report_is abba 5 \
	"${hand_abba//ab_takes_a/ab_then_b}"
seeded "abba's report, expected to be none" no_report abba
seeded "abba's JSON, expected to be a hang" json_has abba hang 1

run_to_end abba_abort "$run" --deadlocks=abort -- "$dir/abba"
check "abba --deadlocks=abort: killed by SIGABRT (status 134)" status_is abba_abort 134
check "abba --deadlocks=abort: the report on stderr, after the 1 s default threshold" \
	report_is abba_abort 10 "$hand_abba" "$tmp/abba_abort.err"

run_deadlocked cycle3 0 --deadlocks --deadlocks-after=0.5 -- "$dir/cycle3"
check "cycle3: deadlock of 3 threads, each one's wait and hold sites" report_is cycle3 5 \
	'deadlock of 3 threads
  cyc-xy waits for mutex y at xy_then_y; holds mutex x at xy_takes_x
  cyc-yz waits for mutex z at yz_then_z; holds mutex y at yz_takes_y
  cyc-zx waits for mutex x at zx_then_x; holds mutex z at zx_takes_z'
check "cycle3: one JSON line, event deadlock, naming the 6 sites" json_has cycle3 deadlock 1 \
	xy_takes_x xy_then_y yz_takes_y yz_then_z zx_takes_z zx_then_x
check "cycle3: still deadlocked when ended" status_is cycle3 143

run_deadlocked rwlock_writer 0 --deadlocks --deadlocks-after=0.5 -- "$dir/rwlock_writer"
check "rwlock_writer: deadlock of a reader (its read hold) and a writer" report_is rwlock_writer 5 \
	'deadlock of 2 threads
  rw-reader waits for mutex m at reader_then_m; holds rwlock (read) l at reader_reads_l
  rw-writer waits for rwlock (write) l at writer_then_l; holds mutex m at writer_takes_m'
check "rwlock_writer: one JSON line, event deadlock, naming the 4 sites" json_has rwlock_writer \
	deadlock 1 reader_reads_l reader_then_m writer_takes_m writer_then_l
check "rwlock_writer: still deadlocked when ended" status_is rwlock_writer 143

run_deadlocked heap_pair 0 --deadlocks --deadlocks-after=0.5 -- "$dir/heap_pair" deadlock
x=$(tail_of heap_pair 'heap_pair: account x at ') y=$(tail_of heap_pair 'heap_pair: account y at ')
check "heap_pair: deadlock of one function called with its arguments swapped (locks on the heap)" \
	report_is heap_pair 5 "deadlock of 2 threads
  hp-xy waits for mutex $y at transfer_takes_to; holds mutex $x at transfer_takes_from
  hp-yx waits for mutex $x at transfer_takes_to; holds mutex $y at transfer_takes_from"
check "heap_pair: one JSON line, event deadlock" json_has heap_pair deadlock 1 transfer_takes_from \
	transfer_takes_to
check "heap_pair: still deadlocked when ended" status_is heap_pair 143

# A process-shared rwlock is glibc's under the shim, and glibc's
# nonrecursive kind keeps a nested read out behind a waiting writer.
run_deadlocked nested_shared 0 --deadlocks --deadlocks-after=0.5 -- "$dir/nested_read" \
	shared-nonrecursive
check "nested_read shared-nonrecursive: deadlock of a nested read and the writer it waits for" \
	report_is nested_shared 5 'deadlock of 2 threads
  nr-reader waits for glibc rwlock (read) l at nr_reader_again; holds glibc rwlock (read) l at nr_reader_first
  nr-writer waits for glibc rwlock (write) l at nr_writer_takes'
check "nested_read shared-nonrecursive: one JSON line, event deadlock, naming the 3 sites" \
	json_has nested_shared deadlock 1 nr_reader_first nr_reader_again nr_writer_takes
check "nested_read shared-nonrecursive: still deadlocked when ended" status_is nested_shared 143

# ---- hangs ----
run_case io_hang --deadlocks --deadlocks-after=0.5 -- "$dir/io_hang" io 3
hang='hang: hang-waiter waits for mutex m at hang_waiter_wants_m
  held by hang-holder at hang_holder_takes_m, which waits for no lock'
check "io_hang: one hang (the holder in read()), both sites, no deadlock" \
	report_is io_hang 5 "$hang"
check "io_hang: one JSON line, event hang" json_has io_hang hang 1 hang_waiter_wants_m \
	hang_holder_takes_m
check "io_hang: ends by itself (status 0)" status_is io_hang 0
check "io_hang: nothing on stderr" quiet io_hang
run_case io_hang_cv --deadlocks --deadlocks-after=0.5 -- "$dir/io_hang" condvar 2
check "io_hang condvar: one hang (the holder in a condvar wait), both sites" \
	report_is io_hang_cv 5 "$hang"
check "io_hang condvar: the holder's state names its condvar wait and its site" \
	grep -q 'which is not waiting for a lock (waiting on a condvar .* at hang_holder_sleeps' \
	"$tmp/io_hang_cv.txt"
check "io_hang condvar: one JSON line, event hang" json_has io_hang_cv hang 1
check "io_hang condvar: ends by itself (status 0)" status_is io_hang_cv 0
run_deadlocked io_hang_ended 0 --deadlocks --deadlocks-after=0.5 -- "$dir/io_hang" ended
check "io_hang ended: one hang (its holder ended holding m), both sites" report_is io_hang_ended 5 \
	'hang: hang-waiter waits for mutex m at hang_waiter_wants_m
  held by hang-holder at hang_holder_takes_m, which waits for no lock'
check "io_hang ended: the holder's state says it has ended" \
	grep -q 'which is not waiting for a lock (it has ended, holding the lock)' "$tmp/io_hang_ended.txt"
check "io_hang ended: still waiting when ended" status_is io_hang_ended 143

# ---- inversions that did not deadlock ----
run_case inversion --lock-order -- "$dir/inversion"
check "inversion --lock-order: both orders of a and b, with their sites" report_is inversion 0 \
	'lock-order inversion of 2 locks
  mutex a then mutex b: inv-ab took them at inv_ab_takes_a, then inv_ab_then_b
  mutex b then mutex a: inv-ba took them at inv_ba_takes_b, then inv_ba_then_a'
check "inversion --lock-order: one JSON line, event lock-order, naming the 4 sites" \
	json_has inversion lock-order 1 inv_ab_takes_a inv_ab_then_b inv_ba_takes_b inv_ba_then_a
check "inversion --lock-order: status 0" status_is inversion 0
run_case inversion_dl --deadlocks -- "$dir/inversion"
check "inversion --deadlocks: no report" no_report inversion_dl
check "inversion --deadlocks: status 0" status_is inversion_dl 0

# C++'s std::mutex at -O0: each edge's second lock at the function that
# took it, from the call stack kept with the edge, past __gthread_mutex_lock.
run_case cxx_inversion --lock-order -- "$dir/cxx_inversion"
check "cxx_inversion --lock-order: an inversion of 2 locks" \
	grep -q '^== hotlock: lock-order inversion in pid .*: 2 locks taken in a cycle of orders$' \
	"$tmp/cxx_inversion.txt"
check "cxx_inversion --lock-order: the second lock of each edge at its caller, past std::mutex::lock" \
	eval "grep -q 'mutex a (0x[0-9a-f]*) then mutex b .*, then the second at cxx_ab_then_b() (cxx_inversion.cpp:[0-9]*)\$' '$tmp/cxx_inversion.txt' &&
	      grep -q 'mutex b (0x[0-9a-f]*) then mutex a .*, then the second at cxx_ba_then_a() (cxx_inversion.cpp:[0-9]*)\$' '$tmp/cxx_inversion.txt'"
check "cxx_inversion --lock-order: one JSON line, event lock-order, the stacks in it" \
	json_has cxx_inversion lock-order 1 cxx_ab_then_b cxx_ba_then_a
check "cxx_inversion --lock-order: status 0" status_is cxx_inversion 0

run_case heap_seq --lock-order -- "$dir/heap_pair" sequential
x=$(tail_of heap_seq 'heap_pair: account x at ') y=$(tail_of heap_seq 'heap_pair: account y at ')
check "heap_pair sequential --lock-order: both orders of the heap pair, one site each" \
	report_is heap_seq 0 "lock-order inversion of 2 locks
  mutex $x then mutex $y: hp-xy took them at transfer_takes_from, then transfer_takes_to
  mutex $y then mutex $x: hp-yx took them at transfer_takes_from, then transfer_takes_to"
check "heap_pair sequential --lock-order: one JSON line, event lock-order" \
	json_has heap_seq lock-order 1 transfer_takes_from transfer_takes_to
check "heap_pair sequential --lock-order: status 0" status_is heap_seq 0
run_case heap_seq_dl --deadlocks -- "$dir/heap_pair" sequential
check "heap_pair sequential --deadlocks: no report, status 0" eval \
	'no_report heap_seq_dl && status_is heap_seq_dl 0'

# ---- no false positive under churn ----
# ordered: six threads take ascending subsets of five locks and hold them
# up to 400 ms, for 4 s; the wait-for graph changes all the time, and
# never has a cycle.  Hangs are true (a holder sleeps); a deadlock or an
# inversion would be false.
run_case ordered --deadlocks --deadlocks-after=0.1 --lock-order -- "$dir/ordered" 4
check "ordered (one order, long holds), --deadlocks-after=0.1 --lock-order: status 0" \
	status_is ordered 0
check "ordered: hangs found (waits of over 0.1 s for sleeping holders), the detector looked" \
	grep -q '^== hotlock: hang in pid ' "$tmp/ordered.txt"
check "ordered: no deadlock and no inversion reported" \
	eval "! grep -Eq '^== hotlock: (deadlock|lock-order)' '$tmp/ordered.txt'"
run_case ordered_rev --deadlocks --deadlocks-after=0.1 --lock-order -- "$dir/ordered" 1 reversed
seeded "ordered with one inversion made first, against no inversion reported" \
	eval "! grep -Eq '^== hotlock: (deadlock|lock-order)' '$tmp/ordered_rev.txt'"

# ---- no report at all ----
# clean_case NAME WHAT OPTIONS... -- PROGRAM ARGS: status 0, no report,
# nothing on stderr.
clean_case() {
	local name=$1 what=$2
	shift 2
	run_case "$name" "$@"
	check "$what: status 0, no report" \
		eval "status_is $name 0 && no_report $name && quiet $name"
}
clean_case nested_default "nested_read (default kind), --deadlocks --lock-order" \
	--deadlocks --deadlocks-after=0.5 --lock-order -- "$dir/nested_read" default
clean_case nested_nonrec "nested_read (prefer-writer-nonrecursive), --deadlocks --lock-order" \
	--deadlocks --deadlocks-after=0.5 --lock-order \
	-- "$dir/nested_read" prefer-writer-nonrecursive
clean_case trylock_dl "trylock_backoff --deadlocks" --deadlocks --deadlocks-after=0.5 \
	-- "$dir/trylock_backoff"
clean_case trylock_lo "trylock_backoff --lock-order" --lock-order -- "$dir/trylock_backoff"
check "trylock_backoff: all its rounds done (it fails unless each one backed off)" \
	grep -Eq '^trylock_backoff: 200 rounds, [0-9]+ back-offs$' "$tmp/trylock_lo.out"
clean_case recursive "recursive (relocked under another mutex), --deadlocks --lock-order" \
	--deadlocks --deadlocks-after=0.5 --lock-order -- "$dir/recursive"
clean_case condvar "condvar (a wait of 0.7 s beside a then b, c then a), --deadlocks --lock-order" \
	--deadlocks --deadlocks-after=0.5 --lock-order -- "$dir/condvar"

[ "$fails" = 0 ] && echo "all passed" || {
	echo "$fails failed"
	exit 1
}
