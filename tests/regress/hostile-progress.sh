#!/bin/sh
# what a step prints, and the note it leaves, reach a person's terminal through kiln's
# progress line, the summary line, a failed stage's first error and tail, kiln-stage
# report and trace.json. A hostile step writes OSC window titles and hyperlinks, CSI,
# DCS, C0 controls, DEL, UTF-8 C1 controls (U+0085, U+009B, U+009D) and raw 8-bit C1
# bytes: none of it may reach the terminal (a pipe and a pseudo-terminal), the JSON
# escapes C1 too, and an overflowing or backwards .ninja_log time or .run span never
# gives a negative (or overflowed: UBSan) duration in trace.json.
. "$KILN_SRC/tests/lib.sh"
need ninja script python3 kiln-stage
cd "$T" || exit 2
mkdir -p logs

# bad FILE: the bytes kiln itself may write to a terminal are printable UTF-8, newline,
# and (drawing the line in place) CR and ESC [ K; ninja's own red FAILED too; nothing
# else: 1 when clean
bad () { python3 - "$1" <<'EOF'
import re, sys
b = open(sys.argv[1], "rb").read().replace(b"\r", b"").replace(b"\x1b[K", b"")
b = b.replace(b"\x1b[31mFAILED: \x1b[0m", b"FAILED: ")
try:
    t = b.decode("utf-8")
except UnicodeDecodeError as e:
    print("#   not UTF-8 at byte %d: %r" % (e.start, b[max(0, e.start - 20):e.start + 20])); sys.exit(0)
m = re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", t)
if m:
    print("#   U+%04X at %d: %r" % (ord(m.group(0)), m.start(), t[max(0, m.start() - 30):m.start() + 30])); sys.exit(0)
sys.exit(1)
EOF
}
clean () { if bad "$2"; then notok "$1"; else ok "$1"; fi; }

# the hostile step: phases, counts, an extension name and a note, all with controls
cat >evil.sh <<'EOF'
printf '\033]0;pwned-title\007  Building wheel for \033]8;;http://evil/\033\\evil\033]8;;\033\\ (pyproject.toml): started\n'
printf '[1/3] \302\2332J\302\2350;c1-title\302\234 compiling\n'
printf "building '\23331mevil\2351;x\007' extension\n"
printf 'Processing \302\205NEL \177DEL \010BS \033P+q\033\\ \033c reset \001\002\n'
printf '[2/3] more \201\237 raw c1\n'
printf 'note: \033]0;note-title\007 \302\2332J \23331m hits\001\n' >"$KILN_STAGE_NOTE"
if [ "$1" = fail ]; then
	printf 'x.c:1:1: error: \033]0;err-title\007 \302\2332J expected \2331m;\n'
	printf 'tail \302\2350;tail-title\007 line \001\n'
	exit 1
fi
echo wheel >"$KILN_STAGE_OUT/evil-1.0-py3-none-any.whl"
EOF
for s in evil.wheel fail.wheel; do printf 'STAGE=%s\nREF=v1\n' "$s" >"$s.key"; done
{
	printf 'rule stage\n  command = kiln-stage run --key=$stage.key --stamp=$out --logdir=logs --out=out/$stage $stage -- sh %s $arg\n  description = $stage\n' "$(shq "$T/evil.sh")"
	printf 'build evil.stamp: stage evil.wheel.key\n  stage = evil.wheel\n  arg = ok\n'
	printf 'build fail.stamp: stage fail.wheel.key\n  stage = fail.wheel\n  arg = fail\n'
} >build.ninja

# --- a pipe: plain lines
KILN_PROGRESS_EVERY=0 ninja evil.stamp 2>&1 | cat >pipe.out
has "pipe: the progress line is there" pipe.out "kiln: evil.wheel: "
has "pipe: the summary line with its note" pipe.out "evil.wheel: rebuilt in "
has "pipe: the note's text, its controls gone" pipe.out "(note:    hits?)"
clean "pipe: no control, escape sequence or C1 reaches it" pipe.out
lacks "pipe: no OSC title text" pipe.out "pwned-title"
lacks "pipe: no OSC in the note" pipe.out "note-title"
rm -f evil.stamp
KILN_PROGRESS_EVERY=0 ninja fail.stamp 2>&1 | cat >pipe-fail.out
has "pipe: the failure is named" pipe-fail.out "kiln: fail.wheel failed"
has "pipe: the first error, made safe" pipe-fail.out "x.c:1:1: error:   expected ;"
has "pipe: the tail, made safe" pipe-fail.out "tail  line ?"
clean "pipe: nothing hostile in the failure's summary" pipe-fail.out
lacks "pipe: no OSC title text from the error line" pipe-fail.out "err-title"

# --- a terminal: the line drawn in place. One stage at a time (-j1): two stages at once
# share the line ("fail.wheel: ... | evil.wheel: ..."), and which one leads it depends on
# which process the machine starts first (the release kiln-stage starts in 10 ms)
rm -f evil.stamp
KILN_PROGRESS_EVERY=0 script -qec "ninja -j1 evil.stamp fail.stamp" /dev/null >tty.out 2>&1
has "terminal: the line is drawn in place" tty.out "$(printf '\revil.wheel: ')"
clean "terminal: no control, escape sequence or C1 but kiln's own CR and ESC[K" tty.out
lacks "terminal: no OSC title text" tty.out "title"

# --- kiln-stage report and trace.json
exits "report: a table (a stage failed: exit 1)" 1 kiln-stage report "$T"
cp "$T/.out" report.out
has "report: the note in the cache column" report.out "note:    hits?"
clean "report: nothing hostile" report.out
run kiln-stage report --json "$T"
cp "$T/.out" report.json
clean "report --json: nothing hostile (C1 escaped as \\u00XX)" report.json
check "report --json: valid JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' report.json
check "trace.json: valid JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' trace.json
clean "trace.json: nothing hostile" trace.json

# a step's .ninja_log with times that overflow, run backwards or exceed 34 years, and a
# .run whose span runs backwards: every dur in trace.json is >= 0
cp logs/evil.wheel.run evil.run.keep
cat >inner.sh <<'EOF'
printf '# ninja log v5\n0\t10\t0\tok.o\tabc\n99999999999999999999\t1\t0\tover-start.o\th\n1\t99999999999999999999\t0\tover-end.o\th\n9223372036854775807\t9223372036854775807\t0\tmax.o\th\n-5\t3\t0\tneg.o\th\n50\t20\t0\tbackwards.o\th\n1099511627777\t1099511627778\t0\tpast34y.o\th\n20\t30\t99999999999999999999\tbigmtime.o\th\n' >"$KILN_STAGE_NINJALOG"
echo wheel >"$KILN_STAGE_OUT/t-1.0-py3-none-any.whl"
EOF
printf 'STAGE=t.wheel\nREF=v1\n' >t.key
check "a stage with a hostile .ninja_log: built" kiln-stage run --key=t.key --stamp=t.stamp --logdir=logs --out=out/t t.wheel -- sh "$T/inner.sh"
check "trace.json: valid JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' trace.json
same "trace.json: no negative dur" "" "$(python3 -c '
import json, sys
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e.get("dur", 0) < 0 or e.get("ts", 0) < -(1 << 53) or e.get("ts", 0) > (1 << 62):
        print(e["name"], e.get("ts"), e.get("dur"))' trace.json)"
same "trace.json: the good step is there, the impossible ones are not" "ok.o" "$(python3 -c '
import json, sys
print(" ".join(sorted(e["name"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "inner" and e["name"] != "bigmtime.o")))' trace.json)"
# a .run whose END is before its START, or past any clock
sed 's/^END=.*/END="1"/' evil.run.keep >logs/evil.wheel.run
printf 'STAGE="huge"\nRESULT="built"\nCACHE="-"\nBUILD="x"\nSTART="99999999999999999999"\nEND="-99999999999999999999"\n' >logs/huge.run
check "a stage after hostile .run records: built" kiln-stage run --key=t.key --stamp=t2.stamp --logdir=logs --out=out/t2 t.wheel -- sh "$T/inner.sh"
same "trace.json: a backwards or absurd span has dur >= 0" "" "$(python3 -c '
import json, sys
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e.get("dur", 0) < 0:
        print(e["name"], e.get("ts"), e.get("dur"))' trace.json)"
run kiln-stage report --json "$T"
same "report --json: no negative duration" "" "$(python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["stages"]:
    if s["duration_us"] < 0:
        print(s["stage"], s["duration_us"])' "$T/.out")"
exit 0
