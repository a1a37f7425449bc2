#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Conformance runner: glibc's own pthread rwlock/mutex/condvar tests and LTP's
# open_posix_testsuite pthread_rwlock*/pthread_mutex*/pthread_cond* tests, each
# built standalone against the installed glibc, then run twice, plainly (on
# glibc's locks) and under hotlock-run (on hotlock's), and the two exit
# statuses compared.  The test sources are not part of this repository
# (glibc is LGPL, LTP GPL): the caller supplies both trees.
#
# usage: tools/conformance.sh GLIBC_SRC LTP_SRC [OUTDIR]
#
#   GLIBC_SRC  a glibc source tree, ideally the version installed (Debian 12:
#              glibc-2.36); its nptl/ and sysdeps/pthread/ tst-rwlock*,
#              tst-mutex*, tst-cond* tests and the part of support/ they need
#   LTP_SRC    an LTP tree (or its testcases/open_posix_testsuite directory)
#   OUTDIR     binaries, logs and results.txt (default: ./conformance-out)
#
# Output on stdout, one line per test:
#   NAME glibc=STATUS hotlock=STATUS SAME|DIFF
# plus "NAME SKIPPED: reason" and "NAME BUILDFAIL: first error" lines, then a
# summary; the same goes to OUTDIR/results.txt.  A progress line per test goes
# to stderr.  Exit status 1 if any test's statuses differ, else 0.
# STATUS: PASS FAIL UNSUPPORTED (glibc 77 / LTP 4), UNRESOLVED (LTP 2),
# UNTESTED (LTP 5), TIMEOUT, SIG<NAME>, EXIT<n>.  Logs:
# OUTDIR/logs/NAME.{build,glibc,hotlock}.log.
#
# Environment:
#   HOTLOCK_RUN          the launcher (default: build/bin/hotlock-run of this
#                        repository)
#   HOTLOCK_*            every other HOTLOCK_ variable reaches the programs
#                        run under hotlock-run (and is removed from the plain
#                        glibc runs)
#   CONFORMANCE_SUITES   "glibc ltp" (default) or one of them
#   CONFORMANCE_FAMILIES "rwlock mutex cond" (default) or a subset
#   CONFORMANCE_FILTER   an extended regex: only tests whose NAME matches
#   CONFORMANCE_GLIBC_TIMEOUT  outer limit for a glibc test, s (default 120;
#                        glibc's test driver has its own TIMEOUT, at most 60 s
#                        here, scaled by TIMEOUTFACTOR, and fires first)
#   CONFORMANCE_LTP_TIMEOUT    limit for an LTP test, s (default 30)
#   CC, CFLAGS           compiler (default cc) and extra flags
#   JOBS                 parallel compiles (default: number of CPUs)
#
# Example:
#   tools/conformance.sh /tmp/conformance/src/glibc /tmp/conformance/src/ltp \
#       /tmp/conformance/out
#   HOTLOCK_RWLOCK_DEFAULT=writer-yields tools/conformance.sh ... OUTDIR2

set -u

usage() {
	sed -n '10,17p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

[ $# -ge 2 ] && [ $# -le 3 ] || usage

die() { echo "conformance.sh: $*" >&2; exit 2; }

GLIBC_SRC=$(cd "$1" 2>/dev/null && pwd) || die "no directory $1"
LTP_SRC=$(cd "$2" 2>/dev/null && pwd) || die "no directory $2"
OUTDIR=${3:-./conformance-out}
mkdir -p "$OUTDIR" || die "cannot create $OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)

REPO_ROOT=$(cd "$(dirname "$0")/.." && pwd)
HOTLOCK_RUN=${HOTLOCK_RUN:-$REPO_ROOT/build/bin/hotlock-run}
[ -x "$HOTLOCK_RUN" ] || die "no hotlock-run at $HOTLOCK_RUN (build it, or set HOTLOCK_RUN)"
HOTLOCK_RUN=$(cd "$(dirname "$HOTLOCK_RUN")" && pwd)/$(basename "$HOTLOCK_RUN")

if [ -d "$LTP_SRC/testcases/open_posix_testsuite" ]; then
	OPTS=$LTP_SRC/testcases/open_posix_testsuite
elif [ -f "$LTP_SRC/include/posixtest.h" ]; then
	OPTS=$LTP_SRC
else
	die "$LTP_SRC has no testcases/open_posix_testsuite"
fi
[ -d "$GLIBC_SRC/support" ] && [ -f "$GLIBC_SRC/test-skeleton.c" ] ||
	die "$GLIBC_SRC does not look like a glibc source tree"

SUITES=${CONFORMANCE_SUITES:-glibc ltp}
FAMILIES=${CONFORMANCE_FAMILIES:-rwlock mutex cond}
FILTER=${CONFORMANCE_FILTER:-}
GLIBC_TIMEOUT=${CONFORMANCE_GLIBC_TIMEOUT:-120}
LTP_TIMEOUT=${CONFORMANCE_LTP_TIMEOUT:-30}
CC=${CC:-cc}
EXTRA_CFLAGS=${CFLAGS:-}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

BIN=$OUTDIR/bin
LOGS=$OUTDIR/logs
STAGE=$OUTDIR/glibc-stage	# the few headers and the support library
RUNDIR=$OUTDIR/run		# cwd and TMPDIR of the tests
rm -rf "$BIN" "$LOGS" "$RUNDIR"
mkdir -p "$BIN" "$LOGS" "$STAGE" "$RUNDIR" || die "cannot write in $OUTDIR"
RESULTS=$OUTDIR/results.txt
: >"$RESULTS"

# The plain run must be glibc's even if this script itself runs under the
# shim, and must not see the caller's HOTLOCK_ settings.
PLAIN_UNSET=(-u LD_PRELOAD)
for v in $(env | sed -n 's/^\(HOTLOCK_[A-Za-z0-9_]*\)=.*/\1/p'); do
	PLAIN_UNSET+=(-u "$v")
done

family_wanted() {	# NAME: is its family (rwlock, mutex, cond) selected?
	local f
	for f in $FAMILIES; do
		case $1 in
		*"$f"*) return 0 ;;
		esac
	done
	return 1
}

name_wanted() {
	[ -z "$FILTER" ] || printf '%s\n' "$1" | grep -Eq -- "$FILTER"
}

pool() {		# wait for a free slot among JOBS background jobs
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
}

emit() {		# a result line: stdout and results.txt
	printf '%s\n' "$*" | tee -a "$RESULTS"
}

# Job list: one line per test, "suite|name|source|extra env", filled below.
JOBLIST=$OUTDIR/jobs.txt
: >"$JOBLIST"
declare -A SKIP_REASON=()

# ---------------------------------------------------------------- glibc ---

setup_glibc() {
	local s=$GLIBC_SRC/support f b inc=$STAGE/include obj=$STAGE/obj
	rm -rf "$STAGE" && mkdir -p "$inc/elf" "$obj"
	ln -s "$s" "$inc/support"
	# Self-contained headers from glibc's include/ (the rest of include/
	# wraps the installed headers with glibc-internal declarations, so the
	# directory itself is never on the include path).
	for f in libc-diag.h array_length.h intprops.h; do
		[ -f "$GLIBC_SRC/include/$f" ] && ln -s "$GLIBC_SRC/include/$f" "$inc/$f"
	done
	# Stub config.h: what support/ and the tests read from glibc's.
	cat >"$inc/config.h" <<-'EOF'
	/* conformance.sh stub for glibc's generated config.h */
	#define TIMEOUTFACTOR 1
	#include <limits.h>
	EOF
	# tst-rwlock20 needs only atomic_{load,store}_relaxed from <atomic.h>.
	cat >"$inc/atomic.h" <<-'EOF'
	/* conformance.sh stub for glibc's internal <atomic.h> */
	#define atomic_load_relaxed(p) __atomic_load_n ((p), __ATOMIC_RELAXED)
	#define atomic_store_relaxed(p, v) __atomic_store_n ((p), (v), __ATOMIC_RELAXED)
	#define atomic_load_acquire(p) __atomic_load_n ((p), __ATOMIC_ACQUIRE)
	#define atomic_store_release(p, v) __atomic_store_n ((p), (v), __ATOMIC_RELEASE)
	EOF
	# tst-mutex8 reads the elision tunable only #if HAVE_TUNABLES, which
	# the stub config.h leaves 0: elision is off by default (Debian too).
	echo '/* conformance.sh stub: HAVE_TUNABLES is 0 */' >"$inc/elf/dl-tunables.h"

	GLIBC_CFLAGS=(-std=gnu11 -O1 -g -D_GNU_SOURCE -include "$inc/config.h" -I "$inc")
	# support/: every file that compiles standalone goes into the archive;
	# the linker takes what a test needs.
	local paths=(-DSRCDIR_PATH="\"$GLIBC_SRC\"" -DOBJDIR_PATH="\"$STAGE\""
		-DOBJDIR_ELF_LDSO_PATH='"/lib64/ld-linux-x86-64.so.2"'
		-DINSTDIR_PATH='"/usr"' -DLIBDIR_PATH='"/usr/lib"'
		-DBINDIR_PATH='"/usr/bin"' -DSBINDIR_PATH='"/usr/sbin"'
		-DSLIBDIR_PATH='"/lib"' -DROOTSBINDIR_PATH='"/sbin"'
		-DCOMPLOCALEDIR_PATH='"/usr/lib/locale"')
	for f in "$s"/*.c; do
		b=$(basename "$f" .c)
		case $b in
		test-* | tst-* | *_main_* | support_quote_blob_main | \
			support_test_compare_string_main) continue ;;
		esac
		pool
		{ "$CC" "${GLIBC_CFLAGS[@]}" -I "$s" "${paths[@]}" $EXTRA_CFLAGS \
			-c "$f" -o "$obj/$b.o" >"$obj/$b.log" 2>&1 || rm -f "$obj/$b.o"; } &
	done
	wait
	[ -f "$obj/support_test_main.o" ] || {
		echo "conformance.sh: glibc support/support_test_main.c does not build:" >&2
		sed -n 1,5p "$obj/support_test_main.log" >&2
		return 1
	}
	rm -f "$STAGE/libsupport.a"
	ar rcs "$STAGE/libsupport.a" "$obj"/*.o
}

# tests glibc's Makefiles name, in nptl/ and sysdeps/pthread/ (2.34+) or
# nptl/ alone (older)
collect_glibc() {
	local d f name env mk
	for d in nptl sysdeps/pthread; do
		mk=$GLIBC_SRC/$d/Makefile
		[ -f "$mk" ] || continue
		for f in "$GLIBC_SRC/$d"/tst-rwlock*.c "$GLIBC_SRC/$d"/tst-mutex*.c \
			"$GLIBC_SRC/$d"/tst-cond*.c; do
			[ -f "$f" ] || continue
			name=glibc/$(basename "$f" .c)
			family_wanted "$name" && name_wanted "$name" || continue
			# only what the Makefile lists as a test
			grep -Eq "(^|[[:space:]=])$(basename "$f" .c)([[:space:]\\]|$)" "$mk" || continue
			case $name in
			*-static)
				SKIP_REASON[$name]="statically linked in glibc's build: LD_PRELOAD (hotlock-run) cannot apply; same source as ${name%-static}"
				;;
			glibc/tst-rwlock19)
				SKIP_REASON[$name]="needs <pthreadP.h>: it writes glibc's internal rwlock word (__data.__readers) to provoke reader-count overflow"
				;;
			esac
			# NAME-ENV = ... from the Makefile (tst-mutex10: elision on)
			env=$(sed -n "s/^$(basename "$f" .c)-ENV[[:space:]]*=[[:space:]]*//p" \
				"$GLIBC_SRC"/nptl/Makefile "$GLIBC_SRC"/sysdeps/pthread/Makefile 2>/dev/null |
				grep -v '\$' | head -1)
			echo "glibc|$name|$f|$env" >>"$JOBLIST"
		done
	done
}

build_glibc_one() {	# NAME SOURCE
	local b=${1#glibc/}
	"$CC" "${GLIBC_CFLAGS[@]}" -iquote "$GLIBC_SRC/nptl" \
		-iquote "$GLIBC_SRC/sysdeps/pthread" $EXTRA_CFLAGS \
		-o "$BIN/glibc/$b" "$2" "$STAGE/libsupport.a" -lpthread -lrt
}

# ------------------------------------------------------------------ LTP ---

setup_ltp() {
	LTP_CFLAGS=(-std=c99 -D_POSIX_C_SOURCE=200809L -D_XOPEN_SOURCE=700 -O1 -g
		-I "$OPTS/include")
	LTP_LIBS=()
	# newer LTP: tests define test_main(), lib/common.c has main()
	if [ -f "$OPTS/lib/common.c" ]; then
		"$CC" -O1 -c -o "$STAGE/ltp-common.o" "$OPTS/lib/common.c" &&
			rm -f "$STAGE/libltpcommon.a" &&
			ar rcs "$STAGE/libltpcommon.a" "$STAGE/ltp-common.o" ||
			return 1
		LTP_LIBS=(-L "$STAGE" -lltpcommon)
	fi
}

collect_ltp() {
	local d f fam name rel
	for fam in $FAMILIES; do
		for d in "$OPTS"/conformance/interfaces/pthread_"$fam"_* \
			"$OPTS"/conformance/interfaces/pthread_"$fam"attr_*; do
			[ -d "$d" ] || continue
			for f in "$d"/[0-9]*-[0-9]*.c "$d"/speculative/[0-9]*-[0-9]*.c; do
				[ -f "$f" ] || continue
				rel=${f#"$OPTS"/conformance/interfaces/}
				name=ltp/${rel%.c}
				name_wanted "$name" || continue
				echo "ltp|$name|$f|" >>"$JOBLIST"
			done
		done
	done
}

build_ltp_one() {	# NAME SOURCE
	local d out
	d=$(dirname "$2")
	out=$BIN/$1
	mkdir -p "$(dirname "$out")"
	# shellcheck disable=SC2046
	"$CC" "${LTP_CFLAGS[@]}" -I "$d" $EXTRA_CFLAGS -o "$out" "$2" \
		"${LTP_LIBS[@]}" $(cat "$d/LDLIBS" 2>/dev/null) -lpthread -lrt
}

# ------------------------------------------------------------- running ---

status_of() {		# SUITE RC LOG
	local rc=$2
	case $rc in
	0) echo PASS; return ;;
	124 | 137) echo TIMEOUT; return ;;
	esac
	if [ "$rc" -gt 128 ]; then
		echo "SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))"
		return
	fi
	if [ "$1" = glibc ]; then
		case $rc in
		77) echo UNSUPPORTED ;;
		1)
			# the test driver's own timeout, or a child killed by a signal
			if grep -q '^Timed out: ' "$3"; then
				echo TIMEOUT
			elif s=$(sed -n 's/^Didn.t expect signal from child: got .\(.*\).$/\1/p' "$3" | head -1) &&
				[ -n "$s" ]; then
				echo "FAIL(signal: $s)"
			else
				echo FAIL
			fi
			;;
		*) echo "EXIT$rc" ;;
		esac
	else
		case $rc in
		1) echo FAIL ;;
		2) echo UNRESOLVED ;;
		4) echo UNSUPPORTED ;;
		5) echo UNTESTED ;;
		*) echo "EXIT$rc" ;;
		esac
	fi
}

run_one() {		# SUITE NAME EXTRA-ENV MODE -> rc
	local suite=$1 name=$2 xenv=$3 mode=$4 lim log dir
	local -a envargs=()
	[ "$suite" = glibc ] && lim=$GLIBC_TIMEOUT || lim=$LTP_TIMEOUT
	log=$LOGS/${name//\//_}.$mode.log
	dir=$RUNDIR/${name//\//_}.$mode
	mkdir -p "$dir"
	# shellcheck disable=SC2206
	[ -n "$xenv" ] && envargs=($xenv)
	if [ "$mode" = glibc ]; then
		(cd "$dir" && env "${PLAIN_UNSET[@]}" TMPDIR="$dir" "${envargs[@]}" \
			timeout -k 10 "$lim" "$BIN/$name") >"$log" 2>&1 </dev/null
	else
		(cd "$dir" && env TMPDIR="$dir" "${envargs[@]}" \
			timeout -k 10 "$lim" "$HOTLOCK_RUN" -- "$BIN/$name") >"$log" 2>&1 </dev/null
	fi
}

# ---------------------------------------------------------------- main ---

T0=$(date +%s)
echo "conformance: glibc $GLIBC_SRC, LTP $OPTS, hotlock-run $HOTLOCK_RUN, out $OUTDIR" >&2
hl_env=$(env | grep '^HOTLOCK_' | sort | tr '\n' ' ')
hl_env=${hl_env% }
# which shim library the hotlock runs load (hotlock-run's own default)
PRELOAD_LIB=${HOTLOCK_PRELOAD_LIB:-$(dirname "$HOTLOCK_RUN")/../lib/libhotlock-preload.so}
lib_id() {
	if [ -f "$PRELOAD_LIB" ]; then
		echo "$(sha256sum "$PRELOAD_LIB" | cut -c1-16) $(date -r "$PRELOAD_LIB" '+%F %T')"
	else
		echo "missing"
	fi
}
LIB_ID0=$(lib_id)
emit "conformance: shim $PRELOAD_LIB: $LIB_ID0"
[ -n "$hl_env" ] && echo "conformance: under hotlock-run with $hl_env" >&2

GLIBC_OK=0
LTP_OK=0
for s in $SUITES; do
	case $s in
	glibc)
		echo "conformance: building glibc's support/ library" >&2
		if setup_glibc; then GLIBC_OK=1; collect_glibc; fi
		;;
	ltp)
		if setup_ltp; then LTP_OK=1; collect_ltp; fi
		;;
	*) die "unknown suite $s (glibc, ltp)" ;;
	esac
done
[ "$GLIBC_OK" = 0 ] && [[ " $SUITES " == *" glibc "* ]] &&
	emit "glibc BUILDFAIL: glibc's support library did not build (see $STAGE/obj/*.log)"
[ "$LTP_OK" = 0 ] && [[ " $SUITES " == *" ltp "* ]] &&
	emit "ltp BUILDFAIL: LTP's lib/common.c did not build"
mkdir -p "$BIN/glibc" "$BIN/ltp"

# Build every test, JOBS at a time.
ntests=$(wc -l <"$JOBLIST")
echo "conformance: building $ntests tests" >&2
while IFS='|' read -r suite name src _; do
	[ -n "${SKIP_REASON[$name]:-}" ] && continue
	pool
	if [ "$suite" = glibc ]; then
		build_glibc_one "$name" "$src"
	else
		build_ltp_one "$name" "$src"
	fi >"$LOGS/${name//\//_}.build.log" 2>&1 &
done <"$JOBLIST"
wait

# Run them, one at a time (the tests time themselves).
ndiff=0 nsame=0 nskip=0 nbuild=0 i=0
declare -A HCOUNT=() GCOUNT=()
while IFS='|' read -r suite name src xenv; do
	i=$((i + 1))
	if [ -n "${SKIP_REASON[$name]:-}" ]; then
		emit "$name SKIPPED: ${SKIP_REASON[$name]}"
		nskip=$((nskip + 1))
		continue
	fi
	blog=$LOGS/${name//\//_}.build.log
	if [ ! -x "$BIN/$name" ]; then
		hdr=$(sed -n "s/.*fatal error: \([^:]*\): No such file or directory.*/\1/p" "$blog" | head -1)
		if [ -n "$hdr" ]; then
			emit "$name SKIPPED: needs $hdr (glibc-internal header; cannot build standalone)"
			nskip=$((nskip + 1))
		else
			err=$(grep -m1 -E 'error|undefined reference' "$blog")
			emit "$name BUILDFAIL: ${err:-see $blog}"
			nbuild=$((nbuild + 1))
		fi
		continue
	fi
	printf '[%d/%d] %s: glibc ...' "$i" "$ntests" "$name" >&2
	t1=$(date +%s)
	run_one "$suite" "$name" "$xenv" glibc
	grc=$?
	g=$(status_of "$suite" "$grc" "$LOGS/${name//\//_}.glibc.log")
	t2=$(date +%s)
	printf ' %s (%ds), hotlock ...' "$g" $((t2 - t1)) >&2
	run_one "$suite" "$name" "$xenv" hotlock
	hrc=$?
	h=$(status_of "$suite" "$hrc" "$LOGS/${name//\//_}.hotlock.log")
	t3=$(date +%s)
	printf ' %s (%ds)\n' "$h" $((t3 - t2)) >&2
	if [ "$g" = "$h" ]; then
		verdict=SAME
		nsame=$((nsame + 1))
	else
		verdict=DIFF
		ndiff=$((ndiff + 1))
	fi
	GCOUNT[$g]=$((${GCOUNT[$g]:-0} + 1))
	HCOUNT[$h]=$((${HCOUNT[$h]:-0} + 1))
	emit "$name glibc=$g hotlock=$h $verdict"
done <"$JOBLIST"

T1=$(date +%s)
LIB_ID1=$(lib_id)
[ "$LIB_ID1" = "$LIB_ID0" ] ||
	emit "conformance: warning: the shim library changed during the run (now $LIB_ID1)"
counts() {
	local -n a=$1
	local k out=
	for k in $(printf '%s\n' "${!a[@]}" | sort); do
		out="$out $k=${a[$k]}"
	done
	echo "${out# }"
}
emit "summary: $((nsame + ndiff)) run, $nsame SAME, $ndiff DIFF, $nskip SKIPPED, $nbuild BUILDFAIL; wall $((T1 - T0)) s"
emit "summary: glibc: $(counts GCOUNT)"
emit "summary: hotlock: $(counts HCOUNT)${hl_env:+ (with $hl_env)}"
[ "$ndiff" -eq 0 ]
