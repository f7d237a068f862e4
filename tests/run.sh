#!/bin/sh
# run.sh [--quick] [--san] [PATTERN...]: kiln's test runner. Runs every unit-test binary in
# $KILN_TEST and every regress script (tests/regress/*.sh, tools/*/tests/*.sh) whose path
# contains one of the PATTERNs (all when none), in parallel, longest first, and ends with
# the 10 slowest files and "N passed, N failed, N skipped". --quick keeps the unit tests
# and the hostile- and bad-input files (ninja check-quick).
# Which tools a file runs: a tool's own tests (tools/*/tests, the unit binaries) run the
# sanitized build ($KILN_BIN, ASan + UBSan); the system tests (tests/regress: the stack
# graph, configure, the teams) run the tools users run, the release build in
# $KILN_REL_BIN, when it is given. LeakSanitizer checks the unit binaries, the fuzz
# targets (fuzz-smoke.sh) and, through valgrind.sh, one real path of each release tool.
# Measured on this project's 2-core machine: an ASan process costs 35 ms of CPU to start,
# LeakSanitizer's scan at its exit 85 ms more (ptrace stops the process to scan it), a
# release process 10 (50 runs of an empty ASan program: 2.6 CPU s, 5.1 with the leak
# scan); the system tests start tens of thousands of processes.
# --san (ninja check-san, run before a release) runs every file on the sanitized build with
# LeakSanitizer in every process.
# Each test prints "ok ...", "not ok ..." or "skip ..." lines; a file that exits non-zero
# without a "not ok" line counts as one failure. Only a skip that names an optional tier
# ("skip ...: optional tier NAME: reason", tests/lib.sh's optional) counts as skipped;
# any other skip line is a missing dependency and counts as a failure.
set -u
: "${KILN_SRC:?}" "${KILN_BIN:?}" "${KILN_TEST:=}" "${KILN_BUILD:=build}" "${KILN_REL_BIN:=}"
mkdir -p "$KILN_BIN"
KILN_SRC=$(cd "$KILN_SRC" && pwd)
KILN_BIN=$(cd "$KILN_BIN" && pwd)
[ -n "$KILN_TEST" ] && [ -d "$KILN_TEST" ] && KILN_TEST=$(cd "$KILN_TEST" && pwd)
[ -n "$KILN_REL_BIN" ] && [ -d "$KILN_REL_BIN" ] && KILN_REL_BIN=$(cd "$KILN_REL_BIN" && pwd)
KILN_BUILD=$(cd "$KILN_BUILD" && pwd)
export KILN_SRC KILN_BIN KILN_TEST KILN_BUILD KILN_REL_BIN
# detect_leaks is set per file below (one.sh), unless ASAN_OPTIONS is given
asan_given=${ASAN_OPTIONS+1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=99}
jobs=${KILN_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
# the hang guard (one.sh below): seconds of the CPU share a test file may take
limit=${KILN_TEST_TIMEOUT:-1800}

out=$(mktemp -d "${TMPDIR:-/tmp}/kiln-test.XXXXXX") || exit 2
trap 'rm -rf "$out"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# the venvs the tests make are copied from one made per run (tests/lib.sh venv_new)
KILN_VENV_CACHE=$out/venvs
export KILN_VENV_CACHE

list=$out/list
: >"$list"
if [ -n "$KILN_TEST" ]; then
	for f in "$KILN_TEST"/*; do [ -x "$f" ] && [ -f "$f" ] && echo "$f" >>"$list"; done
fi
for f in "$KILN_SRC"/tests/regress/*.sh "$KILN_SRC"/tools/*/tests/*.sh; do
	[ -f "$f" ] && echo "$f" >>"$list"
done
quick= leaks=0
while :; do
	case "${1:-}" in
	--quick) quick=1; shift ;;
	--san) KILN_REL_BIN= leaks=1; shift ;;
	*) break ;;
	esac
done
if [ -n "$quick" ]; then
	# the quick set, for use while working (ninja check-quick): every unit-test binary
	# and every tool's hostile- and bad-input file (not graph-hostile.sh, which builds
	# the toy stack in hostile folders: 100 CPU seconds, a third of the set), in about a
	# minute on an idle 2-core machine
	: >"$list.f"
	while IFS= read -r f; do
		case "$f" in
		"$KILN_TEST"/*) echo "$f" ;;
		*/hostile*.sh | */badinput*.sh) echo "$f" ;;
		esac
	done <"$list" >"$list.f"
	mv "$list.f" "$list"
fi
if [ $# -gt 0 ]; then
	# match the patterns against the short names (tools/x/tests/y.sh, x-unit), not the
	# folders the build happens to live in
	: >"$list.f"
	while IFS= read -r f; do
		n=${f#"$KILN_SRC"/}; [ -n "$KILN_TEST" ] && n=${n#"$KILN_TEST"/}
		for p; do case "$n" in *"$p"*) echo "$f" >>"$list.f"; break ;; esac; done
	done <"$list"
	mv "$list.f" "$list"
fi
total=$(wc -l <"$list")
[ "$total" -gt 0 ] || { echo "no tests match"; echo "0 passed, 0 failed"; exit 1; }
echo "running $total test files, $jobs at a time"

# run one file: its output in $out/N.out, its exit status in $out/N.rc. The hang guard
# counts seconds by the share of the CPUs the machine can give a process (1 when the load
# is under the CPU count, CPUs/load above it, from /proc/loadavg), not wall seconds: a
# loaded machine slows a test down without failing it, and a hung test is stopped after
# $limit such seconds (124 in N.rc; N.guard says how long it ran). timeout caps the wall
# time at 20 times the limit, for a machine that stays loaded for hours.
cat >"$out/one.sh" <<'ONE'
f=$1; o=$2; limit=$3 leaks=$4 given=$5
case "$f" in
*.sh) set -- sh "$f" ;;
*) set -- "$f"; leaks=1 ;;
esac
[ -n "$given" ] || ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=$leaks
# the system tests run the release tools when there are some (see the top of run.sh)
case "$f" in
"$KILN_SRC"/tests/regress/*) [ -n "$KILN_REL_BIN" ] && KILN_BIN=$KILN_REL_BIN ;;
esac
# wall, user and sys seconds of the file and all its children, for the slowest-files table
/usr/bin/time -f '%e %U %S' -o "$o.time" timeout -s TERM $((limit * 20)) "$@" >"$o.out" 2>&1 &
pid=$!
ncpu=$(nproc 2>/dev/null || echo 1)
(
	# used: hundredths of a second at the CPU share, counted with the shell's own
	# arithmetic (loadavg has two decimals): one sleep per tick and no other process (an
	# awk per tick was 3% of the suite's CPU)
	used=0 t0=$(date +%s) cap=$((ncpu * 100))
	while sleep 2; do
		read -r la _ <"${KILN_LOADAVG:-/proc/loadavg}" || la=0.00
		case "$la" in *.*) ;; *) la=$la.00 ;; esac
		lf=${la#*.}00
		l100=$((${la%%.*} * 100 + 1${lf%"${lf#??}"} - 100))
		if [ "$l100" -gt "$cap" ]; then used=$((used + 200 * cap / l100)); else used=$((used + 200)); fi
		if [ "$used" -gt $((limit * 100)) ]; then
			used=$((used / 100)).$((used % 100 / 10))
			echo "$used $(($(date +%s) - t0))" >"$o.guard"
			# TERM to timeout (the child of time), which passes it on to the test
			pkill -TERM -P "$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
			exit 0
		fi
	done
) &
guard=$!
wait "$pid"
rc=$?
kill "$guard" 2>/dev/null
[ -f "$o.guard" ] && rc=124
echo $rc >"$o.rc"
ONE
# longest first, by the times of the last run ($KILN_BUILD/test-times) or the committed
# hint (tests/times.txt), so that no long file starts last and runs alone; a file neither
# knows starts first. The report below keeps the list's order.
times=$KILN_BUILD/test-times
[ -s "$times" ] || times=$KILN_SRC/tests/times.txt
tab=$(printf '\t')
i=0
while IFS= read -r f; do
	i=$((i + 1))
	name=${f#"$KILN_SRC"/}; [ -n "$KILN_TEST" ] && name=${name#"$KILN_TEST"/}
	printf '%s\t%s\t%s\n' "$i" "$name" "$f"
done <"$list" | awk -F'\t' -v t="$times" '
	BEGIN { while ((getline l < t) > 0) { split(l, a, " "); w[a[4]] = a[1] } }
	{ print (($2 in w) ? w[$2] : 1e9) "\t" $1 "\t" $3 }
' | sort -t "$tab" -k1,1gr -k2,2n | cut -f2- >"$out/order"
while IFS="$tab" read -r i f; do printf '%s\0%s\0' "$f" "$out/$i"; done <"$out/order" |
	xargs -0 -n 2 -P "$jobs" sh -c 'sh "$0" "$1" "$2" '"$limit $leaks '${asan_given:-}'"'; printf "."' "$out/one.sh"
echo

pass=0 fail=0 skip=0 i=0
while IFS= read -r f; do
	i=$((i + 1))
	o=$out/$i
	rc=$(cat "$o.rc" 2>/dev/null || echo 1)
	p=$(grep -c '^ok' "$o.out")
	n=$(grep -c '^not ok' "$o.out")
	s=$(grep -c '^skip.*optional tier' "$o.out")
	# a skip that names no optional tier hides a missing dependency: a failure
	bad=$(grep '^skip' "$o.out" | grep -vc 'optional tier')
	if [ "$bad" -gt 0 ]; then
		grep '^skip' "$o.out" | grep -v 'optional tier' |
			sed 's/^skip /not ok skipped without naming an optional tier: /' >>"$o.out"
		n=$((n + bad))
	fi
	name=${f#"$KILN_SRC"/}; name=${name#"$KILN_TEST"/}
	if [ "$rc" != 0 ] && [ "$n" = 0 ]; then
		n=1
		why="exited $rc"
		[ "$rc" = 124 ] && why="hung: stopped after $limit s at the CPU share the machine gave it ($(cut -d' ' -f2 "$o.guard" 2>/dev/null || echo "?") s of wall time; KILN_TEST_TIMEOUT sets the limit)"
		echo "not ok $name: $why" >>"$o.out"
	fi
	pass=$((pass + p)) fail=$((fail + n)) skip=$((skip + s))
	if [ "$n" -gt 0 ]; then
		echo "FAIL $name ($p passed, $n failed)"
		grep -v '^ok' "$o.out" | tail -n 60 | sed 's/^/  /'
		# the failed checks by name, even where the file's later output pushed them
		# out of that tail
		echo "  failed checks ($(grep -c '^not ok' "$o.out")):"
		grep '^not ok' "$o.out" | head -n 40 | sed 's/^/    /'
	else
		echo "PASS $name ($p passed${s:+, $s skipped})" | sed 's/, 0 skipped//'
		grep '^skip' "$o.out" | sed 's/^/  /'
	fi
done <"$list"
# the slowest files, for whoever makes the suite faster (wall, user, sys seconds)
i=0
while IFS= read -r f; do
	i=$((i + 1))
	name=${f#"$KILN_SRC"/}; name=${name#"$KILN_TEST"/}
	[ -s "$out/$i.time" ] && printf '%s %s\n' "$(tail -n 1 "$out/$i.time")" "$name"
done <"$list" | sort -rn -k1,1 >"$out/times"
if [ -s "$out/times" ]; then
	echo "slowest files (wall s, user s, sys s):"
	head -n 10 "$out/times" | sed 's/^/  /'
	[ -n "${KILN_TEST_TIMES:-}" ] && cp "$out/times" "$KILN_TEST_TIMES"
	# this run's times replace those of the same files in the next run's order
	{ cat "$out/times"; [ -f "$KILN_BUILD/test-times" ] && cat "$KILN_BUILD/test-times"; } |
		awk '!seen[$4]++' >"$out/times.new" && mv "$out/times.new" "$KILN_BUILD/test-times"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
