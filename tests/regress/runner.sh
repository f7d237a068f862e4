# the test runner's counting: only skips that name an optional tier are skips; any other
# skip line (a missing dependency) and a missing `need` command are failures, so a green
# `ninja check` on a fresh machine means every required test ran
. "$KILN_SRC/tests/lib.sh"

# mk NAME BODY: a fake source tree holding one regress script
mk () {
	rm -rf "$T/src"; mkdir -p "$T/src/tests/regress"
	cp "$KILN_SRC/tests/lib.sh" "$KILN_SRC/tests/run.sh" "$KILN_SRC/tests/venv.inc" "$T/src/tests/"
	printf '. "$KILN_SRC/tests/lib.sh"\n%s\n' "$2" >"$T/src/tests/regress/$1.sh"
}
runit () { run env KILN_SRC="$T/src" KILN_BIN="$T/bin" KILN_TEST= KILN_BUILD="$T" sh "$T/src/tests/run.sh"; }

mk plain 'ok one; ok two'
runit
same "two ok lines pass" 0 "$rc"
has "and are counted" "$T/.out" "2 passed, 0 failed, 0 skipped"

mk oldskip 'ok one; echo "skip some case: needs frobnicate"'
runit
same "a skip naming no optional tier fails the run" 1 "$rc"
has "counted as a failure" "$T/.out" "1 passed, 1 failed, 0 skipped"
has "with its reason" "$T/.out" "not ok skipped without naming an optional tier: some case: needs frobnicate"

mk need 'need kiln-no-such-command-here; ok never'
runit
same "a missing test dependency fails the run" 1 "$rc"
has "naming the command and the install step" "$T/.out" "missing test dependency: needs kiln-no-such-command-here (./configure --install-deps installs it)"
lacks "and the rest of the file does not run" "$T/.out" "ok never"

mk opt 'ok one; optional_case slow "a case over 4 GiB"; optional gpu "no GPU here"; ok never'
runit
same "optional tiers skip without failing" 0 "$rc"
has "and are counted as skipped" "$T/.out" "1 passed, 0 failed, 2 skipped"
has "each naming its tier" "$T/.out" "skip opt.sh: optional tier gpu: no GPU here"

mk exit3 'ok one; exit 3'
runit
same "a file that exits non-zero without a not-ok line fails" 1 "$rc"
has "saying how it exited" "$T/.out" "not ok tests/regress/exit3.sh: exited 3"

# the hang guard counts seconds at the CPU share the machine gives (KILN_LOADAVG stands in
# for /proc/loadavg): a file that never ends is stopped and named; under a load many times
# the CPU count the same limit lets a slow file finish
# (the hung file waits on its sleep with wait, which a trapped signal ends, so its EXIT
# trap runs; `exec sleep` left its folder in /tmp on every run)
mk hang 'ok started; echo "# T=$T"; sleep 100000 & at_exit "kill $!"; wait $!'
run env KILN_SRC="$T/src" KILN_BIN="$T/bin" KILN_TEST= KILN_BUILD="$T" KILN_TEST_TIMEOUT=3 \
	sh "$T/src/tests/run.sh"
same "a hung file fails the run" 1 "$rc"
has "named as hung by the guard" "$T/.out" "not ok tests/regress/hang.sh: hung: stopped after 3 s at the CPU share"
has "what ran before counts" "$T/.out" "1 passed, 1 failed, 0 skipped"
ht=$(sed -n 's/^ *# T=//p' "$T/.out")
check "the hung file named its folder" test -n "$ht"
check "the stopped file's folder is removed" test ! -e "$ht"

# the fault that made that check red on a loaded machine, injected where it lands: a second
# TERM while the file's cleanup runs (timeout signals the file, then its process group)
mk twice 'ok started; echo "$T" >"$TWICE"; at_exit "kill -TERM \$\$; echo went-on >\"\$TWICE.after\""'
run env TWICE="$T/twice" KILN_SRC="$T/src" KILN_BIN="$T/bin" KILN_TEST= KILN_BUILD="$T" \
	sh "$T/src/tests/run.sh"
same "a file signalled again in its cleanup passes" 0 "$rc"
check "it named its folder" test -s "$T/twice"
check "its folder is still removed" test ! -e "$(cat "$T/twice")"
check "and the rest of its cleanup ran" test -s "$T/twice.after"

echo "1000.00 1000.00 1000.00 2/300 1" >"$T/loadavg"
mk slow 'ok started; sleep 5; ok finished'
run env KILN_SRC="$T/src" KILN_BIN="$T/bin" KILN_TEST= KILN_BUILD="$T" KILN_TEST_TIMEOUT=3 \
	KILN_LOADAVG="$T/loadavg" sh "$T/src/tests/run.sh"
same "under a load of 1000 a 5 s file is within a 3 s limit" 0 "$rc"
has "and both its lines count" "$T/.out" "2 passed, 0 failed, 0 skipped"
# idle, a file that outlasts the limit is stopped (one that waits on a sleep it would never
# see end: a 5 s file raced the guard's second tick at 4 s on a loaded machine)
echo "0.00 0.00 0.00 1/300 1" >"$T/loadavg"
mk slow 'ok started; sleep 100000 & at_exit "kill $!"; wait $!'
run env KILN_SRC="$T/src" KILN_BIN="$T/bin" KILN_TEST= KILN_BUILD="$T" KILN_TEST_TIMEOUT=3 \
	KILN_LOADAVG="$T/loadavg" sh "$T/src/tests/run.sh"
same "idle, a longer file is stopped at 3 s" 1 "$rc"
has "as hung" "$T/.out" "hung: stopped after 3 s"

# the order: longest first by the last run's times (KILN_BUILD/test-times), a file no run
# has timed before them all; the report keeps the list's order; this run's times are kept
mk aa 'echo aa >>"$ORDER"; ok aa'
for f in bb cc dd; do printf '. "$KILN_SRC/tests/lib.sh"\necho %s >>"$ORDER"; ok %s\n' $f $f >"$T/src/tests/regress/$f.sh"; done
mkdir -p "$T/ob" && printf '%s\n' "1.00 0.50 0.10 tests/regress/aa.sh" "300.00 9 9 tests/regress/cc.sh" \
	"20.00 9 9 tests/regress/bb.sh" >"$T/ob/test-times"
rm -f "$T/order"
run env ORDER="$T/order" KILN_SRC="$T/src" KILN_BIN="$T/bin" KILN_TEST= KILN_BUILD="$T/ob" \
	KILN_TEST_JOBS=1 sh "$T/src/tests/run.sh"
same "four files pass" 0 "$rc"
same "run longest first, the untimed one before them" "dd cc bb aa" "$(tr '\n' ' ' <"$T/order" | sed 's/ $//')"
same "the report keeps the list's order" "aa bb cc dd" \
	"$(sed -n 's|^PASS tests/regress/\(..\)\.sh.*|\1|p' "$T/.out" | tr '\n' ' ' | sed 's/ $//')"
has "the slowest files are listed" "$T/.out" "slowest files (wall s, user s, sys s):"
same "and this run's times replace the last" "4 aa bb cc dd" \
	"$(lines "$T/ob/test-times") $(sed 's|.* tests/regress/||; s|\.sh$||' "$T/ob/test-times" | sort | tr '\n' ' ' | sed 's/ $//')"
lacks "the old 300 s of cc is gone" "$T/ob/test-times" "300.00"

# --quick: the unit-test binaries and the hostile- and bad-input files, nothing else
for f in hostile-x badinput other; do printf '. "$KILN_SRC/tests/lib.sh"\nok %s\n' $f >"$T/src/tests/regress/$f.sh"; done
mkdir -p "$T/ut" && printf '#!/bin/sh\necho "ok unit"\n' >"$T/ut/x-unit" && chmod +x "$T/ut/x-unit"
run env ORDER="$T/order" KILN_SRC="$T/src" KILN_BIN="$T/bin" KILN_TEST="$T/ut" KILN_BUILD="$T/ob" \
	sh "$T/src/tests/run.sh" --quick
same "--quick passes" 0 "$rc"
same "and runs the unit test and the hostile and bad-input files only" "badinput hostile-x x-unit" \
	"$(sed -n 's|^PASS \(.*/\)\{0,1\}\([^/ ]*\) (.*|\2|p' "$T/.out" | sed 's/\.sh$//' | sort | tr '\n' ' ' | sed 's/ $//')"
run env ORDER="$T/order" KILN_SRC="$T/src" KILN_BIN="$T/bin" KILN_TEST="$T/ut" KILN_BUILD="$T/ob" \
	sh "$T/src/tests/run.sh" --quick hostile
same "--quick with a pattern narrows it further" "hostile-x" \
	"$(sed -n 's|^PASS .*/\([^/]*\)\.sh (.*|\1|p' "$T/.out" | tr '\n' ' ' | sed 's/ $//')"
