#!/bin/sh
# kiln-stage reqs against a tree that tries to smuggle a package source past the reader:
# a requirement with an embedded line break (pip reads its requirement files with
# Python's str.splitlines(), which splits on \n \v \f \r, U+001C-U+001E, U+0085, U+2028
# and U+2029, so "six\f--find-links DIR" is a requirement and an option to pip) or any
# other control, in pyproject.toml's strings (TOML escapes and raw bytes) and in every
# requirement file kiln reads (requirements-build.txt, an -r include, vLLM's
# requirements/build/FLAVOUR.txt, requirements.txt), comments included (pip splits the
# lines before it drops comments). Each is refused in one line naming the file and line,
# exit 2, with no control byte in the message. What is legitimate still reads: CRLF,
# a byte order mark, tabs as white space, UTF-8 in comments, TOML's escapes decoded.
# And time stays linear: many requirements, and one big file included many times.
. "$KILN_SRC/tests/lib.sh"
need python3
cd "$T" || exit 2

# ctl FILE: FILE has no byte below 0x20 but newline, no DEL and no byte over 0x7e
# (the message escapes every byte outside printable ASCII: any such byte is one too many)
ctl () { ! LC_ALL=C grep -q '[^ -~]' "$1"; }
# refuse DESC WANT [OPTION...]: kiln-stage reqs on tree t refuses it: exit 2, one line
# that says WANT, nothing on stdout, no control byte written
n=0
refuse () { d=$1 w=$2; shift 2
	run kiln-stage reqs "$@" t
	same "$d: exit 2" 2 "$rc"
	same "$d: one line" 1 "$(lines "$T/.err")"
	has "$d: says '$w'" "$T/.err" "$w"
	same "$d: nothing listed" "" "$(cat "$T/.out")"
	if ctl "$T/.err"; then ok "$d: no control byte in the message"; else notok "$d: a control byte in the message"; od -c "$T/.err" | head -5 | sed 's/^/#   /'; fi; }
# tomlreq DESC ESCAPED-TOML-STRING WANT: a pyproject.toml requirement
tomlreq () { rm -rf t && mkdir t
	printf '[build-system]\nrequires = [\n  "setuptools",\n  %s,\n]\nbuild-backend = "setuptools.build_meta"\n' "$2" >t/pyproject.toml
	refuse "pyproject: $1" "$3"; }
# filereq DESC FILE PRINTF-TEXT WANT [OPTION...]: a requirement file's line
filereq () { d=$1 f=$2 x=$3 w=$4; shift 4; rm -rf t && mkdir -p t/requirements/build
	printf -- "$x" >"t/$f"
	refuse "$f: $d" "$w" "$@"; }

# --- pyproject.toml: TOML escapes that decode to a line break or control
tomlreq 'a \n escape' '"six\n--find-links /tmp/evil"' "t: pyproject.toml:4: 'six\\x0a--find-links /tmp/evil' holds a line break (U+000A): pip would read what follows as a line of its own"
tomlreq 'a \f escape' '"six\f--find-links /tmp/evil"' "holds a line break (U+000C)"
tomlreq 'a \r escape' '"six\r--index-url http://evil"' "holds a line break (U+000D)"
tomlreq 'a \u000b (vertical tab)' '"six\u000b--find-links /tmp/evil"' "holds a line break (U+000B)"
tomlreq 'a \u0085 (NEL)' '"six\u0085--find-links /tmp/evil"' "holds a line break (U+0085)"
tomlreq 'a \u2028 (line separator)' '"six\u2028--find-links /tmp/evil"' "holds a line break (U+2028)"
tomlreq 'a \U00002029 (paragraph separator)' '"six\U00002029--find-links /tmp/evil"' "holds a line break (U+2029)"
tomlreq 'a \u001c (file separator)' '"six\u001c--find-links /tmp/evil"' "holds a line break (U+001C)"
tomlreq 'a \u001d' '"six\u001d-f /tmp/evil"' "holds a line break (U+001D)"
tomlreq 'a \u001e' '"six\u001e-f /tmp/evil"' "holds a line break (U+001E)"
tomlreq 'an \e escape (ESC)' '"six\e]0;pwned\u0007"' "holds a control character (U+001B)"
tomlreq 'a \x1b escape (TOML 1.1)' '"six\x1b[2J"' "holds a control character (U+001B)"
tomlreq 'a \b escape' '"six\b\b\bevil"' "holds a control character (U+0008)"
tomlreq 'a \t inside a requirement' '"six\t>=1.0"' "holds a control character (U+0009)"
tomlreq 'DEL' '"six\u007f"' "holds a control character (U+007F)"
tomlreq 'a C1 CSI (U+009B)' '"six\u009b2J"' "holds a control character (U+009B)"
tomlreq 'U+0000' '"six\u0000--find-links /tmp/evil"' "pyproject.toml:4: a string holding U+0000"
tomlreq 'an escape TOML does not have' '"six\q"' "pyproject.toml:4: an escape TOML does not have"
tomlreq 'a surrogate escape' '"six\ud800"' "pyproject.toml:4: an escape TOML does not have"
tomlreq 'an escape past U+10FFFF' '"six\U00110000"' "pyproject.toml:4: an escape TOML does not have"
tomlreq 'a raw form feed inside the string' "$(printf '"six\f--find-links /tmp/evil"')" "holds a line break (U+000C)"
tomlreq 'a raw CR inside the string' "$(printf '"six\r--find-links /tmp/evil"')" "holds a line break (U+000D)"
tomlreq 'a raw NEL (UTF-8 C2 85)' "$(printf '"six\302\205--find-links /tmp/evil"')" "holds a line break (U+0085)"
tomlreq 'a raw U+2028 (E2 80 A8)' "$(printf '"six\342\200\250--find-links /tmp/evil"')" "holds a line break (U+2028)"
tomlreq 'a raw 0x85 (not UTF-8; latin-1 NEL)' "$(printf '"six\205--find-links /tmp/evil"')" "holds byte 0x85, which is not UTF-8"
tomlreq 'a raw 0x9b (8-bit CSI)' "$(printf '"six\2332J"')" "holds byte 0x9b, which is not UTF-8"
tomlreq 'an overlong NUL (C0 80)' "$(printf '"six\300\200"')" "holds byte 0xc0, which is not UTF-8"
tomlreq 'a literal string with a raw form feed' "$(printf "'six\\f-f /tmp/evil'")" "holds a line break (U+000C)"
tomlreq 'a multi-line string' '"""six
--find-links /tmp/evil"""' "holds a line break (U+000A)"
rm -rf t && mkdir t && printf '[build-system]\nrequires = ["six"]\0\n' >t/pyproject.toml
refuse "pyproject: a NUL byte in the file" "pyproject.toml: holds a NUL byte; it is not a text file"
rm -rf t && mkdir t && printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "x\\u001b]0;t\\u0007"\n' >t/pyproject.toml
refuse "pyproject: a backend with an escape sequence is shown escaped" 'build-backend = "x\x1b]0;t\x07" is not a module' --frontend

# --- requirement files: each splitlines() break, controls, bytes that are not UTF-8
for f in requirements-build.txt requirements/build/rocm.txt requirements.txt; do
	filereq "form feed" "$f" 'ninja\nsix\f--find-links /tmp/evil\n' "t: $f:2: 'six\\x0c--find-links /tmp/evil' holds a line break (U+000C)" --runtime --flavour=rocm
	filereq "vertical tab" "$f" 'six\v--index-url http://evil/\n' "$f:1: 'six\\x0b--index-url http://evil/' holds a line break (U+000B)" --runtime --flavour=rocm
	filereq "a lone CR" "$f" 'six\r--find-links /tmp/evil\n' "$f:1: 'six\\x0d--find-links /tmp/evil' holds a line break (U+000D)" --runtime --flavour=rocm
	filereq "NEL (C2 85)" "$f" 'six\302\205-f /tmp/evil\n' "$f:1: 'six\\xc2\\x85-f /tmp/evil' holds a line break (U+0085)" --runtime --flavour=rocm
done
for c in 034:001C 035:001D 036:001E; do
	filereq "U+${c#*:}" requirements-build.txt "six\\${c%:*}-f /tmp/evil\\n" "holds a line break (U+${c#*:})"
done
filereq "U+2028" requirements-build.txt 'six\342\200\250-f /tmp/evil\n' "holds a line break (U+2028)"
filereq "U+2029" requirements-build.txt 'six\342\200\251-f /tmp/evil\n' "holds a line break (U+2029)"
filereq "a raw 0x85" requirements-build.txt 'six\205-f /tmp/evil\n' "holds byte 0x85, which is not UTF-8"
filereq "a raw 0x9b CSI" requirements-build.txt 'six\2332J\n' "holds byte 0x9b, which is not UTF-8"
filereq "0xff" requirements-build.txt 'six\377\n' "holds byte 0xff, which is not UTF-8"
filereq "a truncated UTF-8 sequence" requirements-build.txt 'six\342\200\n' "holds byte 0xe2, which is not UTF-8"
filereq "an encoded surrogate" requirements-build.txt 'six\355\240\200\n' "holds byte 0xed, which is not UTF-8"
filereq "ESC (an OSC title)" requirements-build.txt 'six\033]0;pwned\007\n' "holds a control character (U+001B)"
filereq "BEL" requirements-build.txt 'six\007\n' "holds a control character (U+0007)"
filereq "DEL" requirements-build.txt 'six\177\n' "holds a control character (U+007F)"
filereq "a tab inside a requirement" requirements-build.txt 'six\t>=1.0\n' "holds a control character (U+0009)"
filereq "a NUL byte" requirements-build.txt 'six\0--find-links /tmp/evil\n' "requirements-build.txt: holds a NUL byte; it is not a text file"
filereq "a form feed in a comment" requirements-build.txt 'six  # note\f--find-links /tmp/evil\n' "requirements-build.txt:1: 'six  # note\\x0c--find-links /tmp/evil' holds a line break (U+000C)"
filereq "a form feed in a comment line" requirements-build.txt '# note\f-f /tmp/evil\nsix\n' "requirements-build.txt:1:"
filereq "a form feed in an option line" requirements-build.txt '--extra-index-url http://x/\f-f /tmp/evil\n' "requirements-build.txt:1:"
filereq "a form feed on a blank line" requirements-build.txt 'six\n\f\n' "requirements-build.txt:2: '\\x0c' holds a line break (U+000C)"
filereq "a UTF-7 declaration (pip decodes +AAw- to a form feed)" requirements-build.txt '# -*- coding: utf-7 -*-\nsix+AAw---find-links /tmp/evil\n' "requirements-build.txt:1: declares the encoding 'utf-7' (PEP 263), which pip would decode the file with"
filereq "a latin-1 declaration on line 2" requirements-build.txt 'ninja\n#coding=latin-1\n' "requirements-build.txt:2: declares the encoding 'latin-1'"
rm -rf t && mkdir t && printf -- '-r x.txt\n' >t/requirements-build.txt && printf '# vim: set fileencoding=cp037 :\nsix\n' >t/x.txt
refuse "a cp037 declaration in an include" "x.txt:1: declares the encoding 'cp037'"
rm -rf t && mkdir -p t/sub && printf -- '-r sub/more.txt\n' >t/requirements-build.txt && printf 'ok\nsix\f-f /tmp/evil\n' >t/sub/more.txt
refuse "an -r include: named by its own path" "t: sub/more.txt:2: 'six\\x0c-f /tmp/evil' holds a line break (U+000C)"
rm -rf t && mkdir t && printf 'six%0300d\f\n' 0 >t/requirements-build.txt
refuse "a long line: shown cut" "$(printf "'six%0117d'..." 0) holds a line break (U+000C)"

# --- legitimate shapes still read
mkdir -p ok/sub
printf '\357\273\277ninja\r\nnumpy\t# numbers\r\n  six  \t\r\n# caf\303\251 \342\202\254 comment\ncmake>=3.27 ; python_version >= "3.9"  # \303\274\n-r sub/a.txt\n-r sub/a.txt\n-r sub/../sub/a.txt\n' >ok/requirements-build.txt
printf 'wheel\n-r ../requirements-build.txt\n' >ok/sub/a.txt
printf '[build-system]\nrequires = ["setuptools\\u003e=62", \047lit\\n\047, """\nmulti"""]\nbuild-backend = "setuptools.build_meta"\n' >ok/pyproject.toml
printf '# -*- coding: utf-8 -*-\n' >ok/requirements.txt
check "legitimate: CRLF, a BOM, tabs, UTF-8 comments, TOML escapes, includes read once, a UTF-8 declaration" kiln-stage reqs --runtime ok
same "legitimate: the requirements" "setuptools>=62	pyproject.toml:2
lit\\n	pyproject.toml:2
multi	pyproject.toml:3
ninja	requirements-build.txt:1
numpy	requirements-build.txt:2
six	requirements-build.txt:3
cmake>=3.27 ; python_version >= \"3.9\"	requirements-build.txt:5
wheel	sub/a.txt:1" "$(cat "$T/.out")"

# --- lock: a wheel pip would install part of, or outside the environment, is refused
# before the deps stage installs anything
# wheel FILE MEMBER...: a zip of those members
wheel () { python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w")
for m in sys.argv[2:]: z.writestr(m, "x = 1\n")' "$@"; }
lockbad () { d=$1 w=$2; shift 2; rm -rf wh && mkdir wh && wheel wh/six-1.17.0-py3-none-any.whl six.py && "$@"
	run kiln-stage lock wh
	same "lock: $d: exit 2" 2 "$rc"
	same "lock: $d: one line" 1 "$(lines "$T/.err")"
	has "lock: $d: names the wheel and says why" "$T/.err" "$w"
	same "lock: $d: no lock printed" "" "$(cat "$T/.out")"
	if ctl "$T/.err"; then ok "lock: $d: no control byte"; else notok "lock: $d: a control byte"; fi; }
lockbad "a .. member" "wh/evil-1.0-py3-none-any.whl: unsafe member path '../../escape.py'" wheel wh/evil-1.0-py3-none-any.whl evil/__init__.py ../../escape.py
lockbad "a .. inside the path" "unsafe member path 'evil/../../x.pth'" wheel wh/evil-1.0-py3-none-any.whl evil/../../x.pth
lockbad "an absolute member" "unsafe member path '/etc/evil'" wheel wh/evil-1.0-py3-none-any.whl /etc/evil
lockbad "a .data/purelib/.. member" "evil-1.0.data/purelib/../../../x" wheel wh/evil-1.0-py3-none-any.whl evil-1.0.data/purelib/../../../x
lockbad "a backslash member" "unsafe member path" wheel wh/evil-1.0-py3-none-any.whl 'evil\..\..\x.py'
lockbad "a member with an escape sequence" "unsafe member path 'evil/\x1b]0;t\x07'" wheel wh/evil-1.0-py3-none-any.whl "$(printf 'evil/\033]0;t\007')"
lockbad "two names for one installed file" "evil-1.0-py3-none-any.whl" wheel wh/evil-1.0-py3-none-any.whl evil/a.py evil/./a.py
lockbad "not a zip" "wh/evil-1.0-py3-none-any.whl:" sh -c 'echo not a zip >wh/evil-1.0-py3-none-any.whl'
lockbad "a truncated zip" "wh/evil-1.0-py3-none-any.whl:" sh -c 'cp wh/six-1.17.0-py3-none-any.whl x.zip && head -c 60 x.zip >wh/evil-1.0-py3-none-any.whl'
rm -rf wh && mkdir wh && wheel wh/six-1.17.0-py3-none-any.whl six.py && wheel wh/ok-1.0-py3-none-any.whl ok/__init__.py ok-1.0.data/scripts/ok ok-1.0.dist-info/RECORD
check "lock: sound wheels are locked" kiln-stage lock wh
same "lock: both" 2 "$(lines "$T/.out")"

# --- linear time: a capped CPU time that quadratic work would pass many times over
mkdir -p big
python3 - <<'EOF' || exit 2
with open("big/requirements-build.txt", "w") as f:
    for i in range(200000):
        f.write("pkg%d>=1.0\n" % i)
    for i in range(100000):
        f.write("-r more.txt\n")
with open("big/more.txt", "w") as f:
    for i in range(200000):
        f.write("more%d\n" % i)
EOF
run sh -c 'ulimit -t 60; exec kiln-stage reqs big'
same "linear: 400k requirements and 100k includes of one 200k-line file read within 60 s of CPU" 0 "$rc"
same "linear: every requirement once" 400000 "$(lines "$T/.out")"
rm -rf big
mkdir -p big
python3 -c 'open("big/pyproject.toml", "w").write("[build-system]\nrequires = [" + ",".join("\"p%d\"" % i for i in range(200000)) + "]\nbuild-backend = \"x.y\"\n" + "[t]\nk = \"" + "\\\"" * 500000 + "\"\n")' || exit 2
run sh -c 'ulimit -t 60; exec kiln-stage reqs big'
same "linear: 200k pyproject requirements and 500k escapes within 60 s of CPU" 0 "$rc"
same "linear: each listed" 200000 "$(lines "$T/.out")"
exit 0
