#!/bin/sh
# kiln-stage run as a person watches a long build: toy stages whose inner build is a real
# ninja build of C files (ninja's [N/M] lines, a .ninja_log), run by an outer ninja as
# the stack's graph runs them. Live progress on a terminal (script's pseudo-terminal,
# a narrow one too) and plain lines without one (a pipe; never into a file ninja writes
# at its own offset), the estimate from the last build, the first real error of a
# failed stage named with its log line (gcc's error, a linker's undefined reference,
# a Python traceback's exception, CMake's error) before the tail, bad logs (none
# recognised, binary garbage, a 300 KB line), trace.json (valid JSON, inner steps, the
# spans of two wheel stages that ran in parallel overlap) and kiln-stage report.
. "$KILN_SRC/tests/lib.sh"
need ninja cc script python3 kiln-stage
cd "$T" || exit 2
mkdir -p logs

# inner.sh STAGE [PEER]: the stage's inner build, three C files compiled by a real ninja
# (one at a time); bad.wheel's last file does not compile. With PEER, the stage waits
# until PEER's inner build has started too, so both run at once under ninja -j2.
cat >inner.sh <<'EOF2'
t=$KILN_T/tree.$1; rm -rf "$t"; mkdir -p "$t"; cd "$t" || exit 2
printf 'int a(void) { return 1; }\n' >a.c
printf 'int b(void) { return 2; }\n' >b.c
if [ "$1" = bad.wheel ]; then printf 'int c(void) { return 3 }\n' >c.c; else printf 'int c(void) { return 3; }\n' >c.c; fi
printf 'rule cc\n  command = cc -c $in -o $out\nbuild a.o: cc a.c\nbuild b.o: cc b.c\nbuild c.o: cc c.c\n' >build.ninja
: >"$KILN_T/$1.started"
if [ -n "${2:-}" ]; then
	until [ -e "$KILN_T/$2.started" ]; do sleep 0.1; done
fi
echo "  Building wheel for $1 (pyproject.toml): started"
ninja -j1; rc=$?
[ -z "${KILN_STAGE_NINJALOG:-}" ] || cp .ninja_log "$KILN_STAGE_NINJALOG"
[ $rc = 0 ] && echo "wheel of $1" >"$KILN_STAGE_OUT/$1-1.0-py3-none-any.whl"
exit $rc
EOF2
for s in bad.wheel vision.wheel audio.wheel; do printf 'STAGE=%s\nREF=v1\n' "$s" >"$s.key"; done
{
	printf 'rule stage\n  command = kiln-stage run --key=$stage.key --stamp=$out --logdir=logs --out=out/$stage $stage -- sh %s $stage $peer\n  description = $stage\n' "$(shq "$T/inner.sh")"
	printf 'build bad.stamp: stage bad.wheel.key\n  stage = bad.wheel\n'
	printf 'build vision.stamp: stage vision.wheel.key\n  stage = vision.wheel\n  peer = audio.wheel\n'
	printf 'build audio.stamp: stage audio.wheel.key\n  stage = audio.wheel\n  peer = vision.wheel\n'
} >build.ninja
export KILN_T="$T"
log=$T/logs/bad.wheel.log

# a terminal: one line redrawn in place (\r ... ESC[K) per report, then the first error
KILN_PROGRESS_EVERY=0 script -qec "ninja bad.stamp" /dev/null >tty.out 2>&1
has "terminal: the inner build's count, in place" tty.out "$(printf '\rbad.wheel: 2/3 compiled, ')"
has "terminal: the line is cleared to its end" tty.out "$(printf '(log: %s)\033[K' "$log")"
has "terminal: pip's phase before the count" tty.out "bad.wheel: Building wheel for bad.wheel (pyproject.toml): started, "
has "the failure is named" tty.out "kiln: bad.wheel failed (exit 1) after"
has "the first error: gcc's, with its line in the log" tty.out "kiln: bad.wheel: first error (compiler), line "
n=$(sed -n 's/.*first error (compiler), line \([0-9]*\) of.*/\1/p' tty.out | head -n 1)
has "... and its text" tty.out "c.c:1:23: error: expected"
check "... that line of the log is gcc's error" sh -c 'sed -n "$1p" "$2" | grep -q "^c.c:1:23: error:"' - "$n" "$log"
has "then the tail" tty.out "kiln: bad.wheel: last 30 lines of $log"
has "then the log's path" tty.out "kiln: bad.wheel failed; full log: $log"
check "the error comes before the tail" sh -c 'grep -n "first error\|last 30 lines" tty.out | head -n 1 | grep -q "first error"'
check "no status file is left" test ! -e logs/bad.wheel.status
exits "report: the stage failed in the last build (exit 1)" 1 kiln-stage report "$T"
cp "$T/.out" report1.out
check "report: failed, with its time" grep -q "^bad.wheel  *failed  *[0-9.]*s  *-$" report1.out
has "report: one stage" report1.out "1 stage: 0 built"

# KILN_EXPLAIN still says why the stage ran
KILN_EXPLAIN=1 run ninja bad.stamp
has "KILN_EXPLAIN: why it ran" "$T/.out" "kiln: bad.wheel: running: no stamp yet"
has "KILN_EXPLAIN: and the first error" "$T/.out" "first error (compiler)"

# a terminal narrower than the line: cut to its width, no wrap
KILN_PROGRESS_EVERY=0 script -qec "stty cols 30; ninja bad.stamp" /dev/null >narrow.out 2>&1
tr '\r' '\n' <narrow.out | sed -n 's/\x1b\[K$//p' | grep '^bad.wheel' >narrow.lines
check "narrow terminal: lines are drawn" test -s narrow.lines
check "narrow terminal: none is wider than 29" awk 'length($0) > 29 { exit 1 }' narrow.lines

# no terminal, a pipe: plain lines, each report at interval 0, none at the default 300 s
KILN_PROGRESS_EVERY=0 ninja bad.stamp 2>&1 | cat >plain.out
has "pipe: a plain line" plain.out "kiln: bad.wheel: 3/3 compiled, "
has "pipe: with the log" plain.out "(log: $log)"
lacks "pipe: no escape" plain.out "$(printf '\033')"
lacks "pipe: no carriage return" plain.out "$(printf '\r')"
ninja bad.stamp 2>&1 | cat >plain300.out
lacks "pipe, default interval: no line in a short stage" plain300.out "compiled, "
has "pipe, default interval: the failure still named" plain300.out "first error (compiler)"
# a file ninja writes at its own offset: nothing written beside it
KILN_PROGRESS_EVERY=0 ninja bad.stamp >file.out 2>&1
lacks "file: no progress line" file.out "compiled, "
lacks "file: no escape" file.out "$(printf '\033')"
has "file: the failure" file.out "first error (compiler)"
KILN_PROGRESS=0 KILN_PROGRESS_EVERY=0 ninja bad.stamp 2>&1 | cat >off.out
lacks "KILN_PROGRESS=0: no progress" off.out "compiled, "

# two wheel stages at once: both build, in parallel; then trace.json and the report
rm -f "$T"/*.started
check "two wheel stages build in parallel" ninja -j2 vision.stamp audio.stamp
check "trace.json is there" test -s trace.json
cat >trace.py <<'EOF2'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
stages = {e["name"]: e for e in ev if e.get("cat") == "stage"}
inner = [e for e in ev if e.get("cat") == "inner"]
v, a = stages["vision.wheel"], stages["audio.wheel"]
print("stages", " ".join(sorted(stages)))
print("results", v["args"]["result"], a["args"]["result"])
print("overlap", v["ts"] < a["ts"] + a["dur"] and a["ts"] < v["ts"] + v["dur"])
vi = [e for e in inner if e["pid"] == v["pid"]]
print("inner", len(vi), " ".join(sorted(e["name"] for e in vi)))
print("nested", all(v["ts"] - 2000000 <= e["ts"] and e["ts"] + e["dur"] <= v["ts"] + v["dur"] + 2000000 for e in vi))
print("complete", all(e["ph"] in ("X", "M") and "pid" in e and "tid" in e for e in ev))
EOF2
python3 trace.py trace.json >trace.txt 2>&1
has "trace.json: valid JSON, both stages" trace.txt "stages audio.wheel bad.wheel vision.wheel"
has "trace.json: both built" trace.txt "results built built"
has "trace.json: the two wheel stages' spans overlap" trace.txt "overlap True"
has "trace.json: vision's inner steps from its .ninja_log" trace.txt "inner 3 a.o b.o c.o"
has "trace.json: inside the stage's span" trace.txt "nested True"
has "trace.json: complete events and metadata only" trace.txt "complete True"
exits "report: the last build failed nowhere (exit 0)" 0 kiln-stage report "$T"
cp "$T/.out" report.out
has "report: the header" report.out "STAGE"
check "report: vision built" grep -q "^vision.wheel  *built " report.out
check "report: bad.wheel not run by this build" grep -q "^bad.wheel  *not run " report.out
has "report: the total" report.out "3 stages: 2 built, 0 restored from cache, 0 up to date"

# the next build of a stage: an estimate from the last one (kept beside its log)
check "the last build's time is kept" test -s logs/vision.wheel.time
printf 'STAGE=vision.wheel\nREF=v2\n' >vision.wheel.key
: >"$T/audio.wheel.started"
KILN_PROGRESS_EVERY=0 ninja vision.stamp 2>&1 | cat >again.out
check "the estimate is given" grep -q "vision.wheel: .*compiled, .*\(about .* left\|longer than the last build\)" again.out
touch audio.wheel.key
run ninja audio.stamp
check "report --json: valid, vision built, audio up to date" sh -c 'kiln-stage report --json "$1" |
	python3 -c "import json,sys; s={x[\"stage\"]: x[\"result\"] for x in json.load(sys.stdin)[\"stages\"]}; sys.exit(not (s[\"audio.wheel\"] == \"up to date\"))"' - "$T"
exits "report: no records is a usage error" 2 kiln-stage report "$T/nowhere"

# the stage cache's answer: a miss when built, a hit when restored (runs by hand from
# this script are one build: their parent shell's)
mkdir -p c/logs
printf 'STAGE=r\nREF=v1\n' >c/r.key
rstage () { kiln-stage run --key=c/r.key --stamp=c/r.stamp --logdir=c/logs --out=c/out --stage-cache="$T/c/cache" r -- sh "$T/inner.sh" r; }
check "cache: built" rstage
printf 'STAGE=r\nREF=v2\n' >c/r.key
check "cache: another key, built" rstage
printf 'STAGE=r\nREF=v1\n' >c/r.key
check "cache: the first key again, restored" rstage
has "cache: restored" "$T/.out" "r: restored from the stage cache"
kiln-stage report --json c >c/report.json
check "report --json: the restored run says hit" python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["stages"]; sys.exit(not (s[0]["result"] == "restored" and s[0]["cache"] == "hit"))' c/report.json
kiln-stage report c >c/report.txt
check "report: restored from cache, hit" grep -q "^r  *restored from cache  *[0-9.]*s  *hit$" c/report.txt
python3 -c 'import json, sys; e = [x for x in json.load(open(sys.argv[1]))["traceEvents"] if x.get("cat") == "stage"]; print(e[0]["args"]["result"], e[0]["args"]["cache"])' c/trace.json >c/trace.txt 2>&1
has "trace.json: the span says restored, hit" c/trace.txt "restored hit"
exits "report: a stray argument" 2 kiln-stage report --bogus

# the first real error in other logs: a step that prints them and fails
cat >errs.sh <<'EOF2'
case $1 in
link) printf 'int nothere(void);\nint main(void) { return nothere(); }\n' >"$KILN_T/l.c"; cc "$KILN_T/l.c" -o "$KILN_T/l" ;;
python) python3 -c 'import json
def f():
    import kiln_no_such_module
f()' ;;
cmake) echo '-- The C compiler identification is GNU'; printf 'CMake Error at CMakeLists.txt:3 (find_package):\n  Could not find a package configuration file provided by "Torch"\n\n\n-- Configuring incomplete, errors occurred!\n' ;;
wrapped) echo 'a.c:1:1: error: unknown type name'; echo 'error: subprocess-exited-with-error'; echo 'error: command /usr/bin/gcc failed' ;;
none) i=0; while [ $i -lt 50 ]; do echo "step $i"; i=$((i + 1)); done ;;
garbage) head -c 3000 "$KILN_T/garbage" ;;
long) awk 'BEGIN { for (i = 0; i < 300000; i++) printf "x"; printf "\n" }' ;;
esac
exit 1
EOF2
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%c", (i * 37) % 256 }' >garbage
printf '\033]0;title\007\033[2J\n' >>garbage
for k in link python cmake wrapped none garbage long; do
	printf 'STAGE=%s\n' "$k" >"$k.key"
	run kiln-stage run --key="$k.key" --stamp="$k.stamp" --logdir=logs "$k" -- sh "$T/errs.sh" "$k"
	cp "$T/.err" "err.$k"
done
has "linker: undefined reference named" err.link "first error (linker)"
has "... with its text" err.link "undefined reference to"
has "python: the traceback named" err.python "first error (Python)"
has "... and its exception line" err.python "ModuleNotFoundError: No module named 'kiln_no_such_module'"
has "cmake: CMake's error named" err.cmake "first error (CMake), line 4 of"
has "wrapped: the compiler's error, not pip's wrapper" err.wrapped "a.c:1:1: error: unknown type name"
lacks "... the wrapper is not the first error" err.wrapped "first error (compiler), line 4"
has "none recognised: said" err.none "no compiler, CMake, Python or linker error recognised"
has "none recognised: the tail still shown" err.none "step 49"
has "garbage: said, no crash" err.garbage "kiln: garbage failed; full log:"
lacks "garbage: no escape in the summary" err.garbage "$(printf '\033')"
has "long line: no crash" err.long "kiln: long failed; full log:"
check "long line: cut in the summary" awk 'length($0) > 1000 { exit 1 }' err.long

# two stages at once on a terminal: one draws, its line holding both
for s in vision.wheel audio.wheel; do printf 'STAGE=%s\nREF=v3\n' "$s" >"$s.key"; done
rm -f "$T"/*.started
KILN_PROGRESS_EVERY=0 script -qec "ninja -j2 vision.stamp audio.stamp" /dev/null >two.out 2>&1
check "terminal, two stages: one line holds both" grep -q "wheel: [^|]* compiled, [^|]* | [a-z]*.wheel: " two.out
has "terminal, two stages: both built" two.out "audio.wheel: rebuilt in"
