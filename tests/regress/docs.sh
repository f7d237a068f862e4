#!/bin/sh
# docs: README.md and docs/*.md as a newcomer meets them. Every command block (a fenced
# block of sh, shell, bash, console, dockerfile or make, or with no language) has a line
# above it saying how it is kept true: "<!-- run -->" (run here, in order, in one shell
# with set -e, in a folder holding a small C-extension project, its wheel in dist/, a venv
# in .venv and kiln's env/) or "<!-- needs: gpu -->" / "<!-- needs: network -->" (it needs
# what CI has not). The stack commands themselves are run on the toy stack by
# tutorial.sh (TUTORIAL.md). Links between the pages must name files that exist.
. "$KILN_SRC/tests/lib.sh"
need cc envclean wheelpick gpucheck fatwheel
PY3=/usr/bin/python3
[ -x "$PY3" ] || missing "needs Debian's /usr/bin/python3"
WHEELWHL=$(ls /usr/share/python-wheels/wheel-*.whl 2>/dev/null | head -n 1)
[ -n "$WHEELWHL" ] || missing "needs python3-wheel-whl (the wheel package for offline venvs)"

# marks FILE: one line per problem ("FILE:LINE: ..."), the runnable blocks into FILE.run
marks () {
	awk -v f="${1#"$KILN_SRC"/}" -v run="$2" '
	function bad(m) { print f ":" NR ": " m; nbad++ }
	/^```/ && !inblock {
		inblock = 1; lang = substr($0, 4); start = NR
		cmd = lang == "" || lang ~ /^(sh|shell|bash|console|dockerfile|make|makefile)$/
		if (cmd && mark == "") bad("a command block with no <!-- run --> or <!-- needs: gpu|network --> line above it")
		if (!cmd && mark != "") bad("a " lang " block is not commands: no mark above it")
		torun = mark == "run" && (lang == "sh" || lang == "")
		if (mark == "run" && !torun) bad("only sh blocks can be run")
		mark = ""; next
	}
	/^```$/ && inblock { inblock = 0; if (torun) print "" >>run; next }
	inblock { if (torun) print >>run; next }
	/^<!-- run -->$/ { mark = "run"; markline = NR; next }
	/^<!-- needs: (gpu|network) -->$/ { mark = "needs"; markline = NR; next }
	/^<!-- (run|needs)/ { bad("unknown mark (<!-- run -->, <!-- needs: gpu -->, <!-- needs: network -->)"); next }
	/^$/ { next }
	{ if (mark != "") bad("the mark of line " markline " is not followed by a block"); mark = "" }
	END { if (inblock) bad("block of line " start " not closed") }' "$1"
}

cd "$T" || exit 2
: >problems
: >run.sh
files="$KILN_SRC/README.md"
for f in "$KILN_SRC"/docs/*.md; do files="$files
$f"; done
n=0
echo "$files" | while IFS= read -r f; do marks "$f" "$T/run.sh" >>problems; done
n=$(echo "$files" | wc -l)
check "README.md and docs/ have pages" test "$n" -ge 9
same "every command block is run here or marked gpu/network" "" "$(cat problems)"
check "some blocks are run" test "$(grep -c . run.sh)" -ge 10

# the marks are checked: a block with no mark, a stray mark, an unknown one are found
printf 'text\n\n```sh\nls\n```\n<!-- run -->\ntext\n<!-- needs: gpus -->\n```sh\nls\n```\n' >bad.md
marks "$T/bad.md" "$T/bad.run" >bad.out
has "a block with no mark is found" bad.out "bad.md:3: a command block with no"
has "a mark with no block is found" bad.out "the mark of line 6 is not followed by a block"
has "an unknown mark is found" bad.out "bad.md:8: unknown mark"

# the links of README.md and docs/*.md name pages that exist
echo "$files" | while IFS= read -r f; do
	d=$(dirname "$f")
	grep -o '](\([^)#:]*\))' "$f" | sed 's/^](//; s/)$//' | while IFS= read -r l; do
		[ -e "$d/$l" ] || echo "${f#"$KILN_SRC"/}: link to $l: no such file"
	done
done >links
same "every link names a file" "" "$(cat links)"

# the folder the runnable blocks run in
mkdir -p w/src w/mypkg && cd w || exit 2
cp -R "$KILN_SRC/env" .
: >mypkg/__init__.py
cat >setup.py <<'EOF2'
from setuptools import setup, Extension
setup(name="mypkg", version="1.0", packages=["mypkg"],
      ext_modules=[Extension("mypkg._c", ["src/c.c"])])
EOF2
cat >src/c.c <<'EOF2'
#include <Python.h>
static struct PyModuleDef m = {PyModuleDef_HEAD_INIT, "_c", 0, -1, 0};
PyMODINIT_FUNC PyInit__c(void) { return PyModule_Create(&m); }
EOF2
{ venv_new "$PY3" "$PWD/.venv" "$WHEELWHL" &&
	"$PY3" -m pip wheel -q --no-deps --no-build-isolation --disable-pip-version-check -w dist .; } >"$T/fixture.log" 2>&1
check "the fixture: a wheel in dist/" sh -c 'ls dist/mypkg-1.0-*.whl'
{ echo 'set -e'; cat "$T/run.sh"; } >"$T/run-e.sh"
sh -x "$T/run-e.sh" >"$T/docs.log" 2>&1
rc=$?
same "every runnable block of README.md and docs/ succeeds" 0 "$rc"
[ "$rc" = 0 ] || tail -n 30 "$T/docs.log" | sed 's/^/#   /'
has "gpucheck: Debian's rocSPARSE covers gfx803" "$T/docs.log" "gfx803: covered natively"
check "wheelpick's pick was installed into the venv" sh -c 'cd "$1" && "$2" -c "import mypkg._c"' - "$T" "$PWD/.venv/bin/python"
check "fatwheel repaired the wheel" sh -c 'ls repaired/mypkg-1.0-*manylinux_2_28_x86_64*.whl'
