# the test runner's counting: only skips that name an optional tier are skips; any other
# skip line (a missing dependency) and a missing `need` command are failures, so a green
# `ninja check` on a fresh machine means every required test ran
. "$KILN_SRC/tests/lib.sh"

# mk NAME BODY: a fake source tree holding one regress script
mk () {
	rm -rf "$T/src"; mkdir -p "$T/src/tests/regress"
	cp "$KILN_SRC/tests/lib.sh" "$KILN_SRC/tests/run.sh" "$T/src/tests/"
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
