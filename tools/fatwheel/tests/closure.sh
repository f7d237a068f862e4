#!/bin/sh
# fatwheel's closure policy, one copy per soname as ld.so loads one: a library found under
# two names is bundled once when the bytes are the same and refused when they differ; with
# --soname-hash, a library that a manylinux system library loads too (glib's libpcre2-8)
# keeps its soname, so the process does not get a renamed second copy of it.
. "$KILN_SRC/tests/lib.sh"
need unzip readelf gcc
PY=/usr/bin/python3
[ -x $PY ] || missing "needs Debian's /usr/bin/python3"
$PY -c 'import setuptools, wheel, venv' 2>/dev/null || missing "needs python3-setuptools python3-wheel python3-venv"
multi=$(gcc -print-multiarch)
glib=$(ls /usr/lib/$multi/libglib-2.0.so.0 /lib/$multi/libglib-2.0.so.0 2>/dev/null | head -n1)
[ -n "$glib" ] || missing "needs libglib2.0-0"
readelf -d "$glib" | grep -q 'Shared library: \[libpcre2-8.so.0\]' || missing "needs a libglib-2.0 that links libpcre2-8 (Debian's)"

# libdup.so.1, and libalt.so.1: the name a second extension links, which at run time is
# the same library (a link to libdup.so.1) or a different one with libdup's soname
mkdir -p "$T/build" "$T/same" "$T/diff" "$T/src/cdemo" "$T/dist"
cat >"$T/build/dup.c" <<'EOF'
int dup_answer(void) { return 42; }
EOF
gcc -shared -fPIC -Wl,-soname,libdup.so.1 -o "$T/build/libdup.so.1" "$T/build/dup.c"
gcc -shared -fPIC -Wl,-soname,libalt.so.1 -o "$T/build/libalt.so.1" "$T/build/dup.c"
ln -s libdup.so.1 "$T/build/libdup.so"
ln -s libalt.so.1 "$T/build/libalt.so"
cp "$T/build/libdup.so.1" "$T/same/" && ln -s libdup.so.1 "$T/same/libalt.so.1"
cp "$T/build/libdup.so.1" "$T/diff/"
sed 's/42/43/' "$T/build/dup.c" >"$T/build/dup2.c"
gcc -shared -fPIC -Wl,-soname,libdup.so.1 -o "$T/diff/libalt.so.1" "$T/build/dup2.c"
: >"$T/src/cdemo/__init__.py"
for m in a b; do
	cat >"$T/src/_$m.c" <<EOF
#include <Python.h>
int dup_answer(void);
static PyObject *f(PyObject *s, PyObject *a) { return PyLong_FromLong(dup_answer()); }
static PyMethodDef m[] = {{"answer", f, METH_NOARGS, ""}, {0}};
static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "_$m", 0, -1, m};
PyMODINIT_FUNC PyInit__$m(void) { return PyModule_Create(&d); }
EOF
done
# _p: glib (a manylinux system library) and libpcre2-8, which glib itself loads
cat >"$T/src/_p.c" <<'EOF'
#include <Python.h>
const char *glib_check_version(unsigned, unsigned, unsigned);
int pcre2_config_8(unsigned, void *);
static PyObject *f(PyObject *s, PyObject *a) { unsigned v = 0; pcre2_config_8(3, &v); return PyUnicode_FromFormat("%d %s", (int)v, glib_check_version(2, 0, 0) ? "old" : "ok"); }
static PyMethodDef m[] = {{"check", f, METH_NOARGS, ""}, {0}};
static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "_p", 0, -1, m};
PyMODINIT_FUNC PyInit__p(void) { return PyModule_Create(&d); }
EOF
cat >"$T/src/setup.py" <<EOF
from setuptools import setup, Extension
setup(name="cdemo", version="1.0", packages=["cdemo"],
      ext_modules=[Extension("cdemo._a", ["_a.c"], libraries=["dup"], library_dirs=["$T/build"]),
                   Extension("cdemo._b", ["_b.c"], libraries=["alt"], library_dirs=["$T/build"]),
                   Extension("cdemo._p", ["_p.c"], extra_link_args=["-l:libglib-2.0.so.0", "-l:libpcre2-8.so.0"])])
EOF
(cd "$T/src" && $PY -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$T/dist" .) >"$T/pip.log" 2>&1 ||
	{ sed 's/^/# /' "$T/pip.log" | tail -20; notok "pip builds the test wheel"; exit 1; }
W=$(ls "$T"/dist/cdemo-1.0-*.whl)
mkdir -p "$T/in" && unzip -q -d "$T/in" "$W"
readelf -d "$T"/in/cdemo/_b.*.so >"$T/in.dyn"
has "pip built ${W##*/}; _b needs libalt.so.1" "$T/in.dyn" "Shared library: [libalt.so.1]"

# --- the same library under two names: one copy -----------------------------------------
for hash in "" --soname-hash; do
	o=$T/o-same$hash
	check "same bytes under two names ($hash): repaired" fatwheel -q $hash --lib-path "$T/same" "$W" -w "$o"
	rm -rf "$o/u" && mkdir -p "$o/u" && unzip -q -d "$o/u" "$o"/*.whl
	same "one copy of libdup is bundled ($hash)" 1 "$(ls "$o/u/cdemo.libs" | grep -c '^lib\(dup\|alt\)')"
	lib=$(ls "$o/u/cdemo.libs" | grep '^libdup')
	readelf -d "$o"/u/cdemo/_a.*.so >"$o/a.dyn"
	readelf -d "$o"/u/cdemo/_b.*.so >"$o/b.dyn"
	has "_a needs the bundled $lib" "$o/a.dyn" "Shared library: [$lib]"
	has "_b's libalt.so.1 is renamed to the same $lib" "$o/b.dyn" "Shared library: [$lib]"
	mkdir -p "$o/site" && (cd "$o/site" && unzip -q "$o"/*.whl)
	check "both extensions load the one copy ($hash)" env PYTHONPATH="$o/site" $PY -c "import cdemo._a as a, cdemo._b as b; assert a.answer() == b.answer() == 42"
done

# --- two different libraries with one soname: ld.so would load one for both ----------
exits "different bytes under one soname is an error" 1 fatwheel --lib-path "$T/diff" "$W" -w "$T/o-diff"
has "... naming the soname" "$T/.err" "two different libraries have the soname libdup.so.1"
has "... and both paths" "$T/.err" "$T/diff/libdup.so.1 (needed as libdup.so.1 by cdemo/_a."
has "... (the second)" "$T/.err" "$T/diff/libalt.so.1 (needed as libalt.so.1 by cdemo/_b."
same "the error is one line" 1 "$(lines "$T/.err")"
same "nothing is written" "" "$(ls "$T/o-diff" 2>/dev/null)"

# --- --soname-hash leaves what a system library loads under its own name -------------
check "--soname-hash with glib" fatwheel --soname-hash --lib-path "$T/same" "$W" -w "$T/o-sys"
has "it says why libpcre2-8 keeps its soname" "$T/.err" "libpcre2-8.so.0 keeps its soname: the system's libglib-2.0.so.0 loads it too"
mkdir -p "$T/o-sys/u" && unzip -q -d "$T/o-sys/u" "$T"/o-sys/*.whl
[ -f "$T/o-sys/u/cdemo.libs/libpcre2-8.so.0" ] && ok "libpcre2-8 is bundled as libpcre2-8.so.0" || { notok "libpcre2-8 is bundled as libpcre2-8.so.0"; ls "$T/o-sys/u/cdemo.libs" | sed 's/^/#   /'; }
readelf -d "$T/o-sys/u/cdemo.libs/libpcre2-8.so.0" >"$T/pcre.dyn" 2>&1
has "its SONAME is unchanged" "$T/pcre.dyn" "Library soname: [libpcre2-8.so.0]"
readelf -d "$T"/o-sys/u/cdemo/_p.*.so >"$T/p.dyn"
has "_p still needs libpcre2-8.so.0" "$T/p.dyn" "Shared library: [libpcre2-8.so.0]"
has "_p needs glib from the system" "$T/p.dyn" "Shared library: [libglib-2.0.so.0]"
n=$(ls "$T/o-sys/u/cdemo.libs" | grep -c '^libdup-[0-9a-f]\{8\}\.so\.1$')
same "a library no system library loads is still hashed" 1 "$n"
mkdir -p "$T/o-sys/site" && (cd "$T/o-sys/site" && unzip -q "$T"/o-sys/*.whl)
run env LD_DEBUG=libs PYTHONPATH="$T/o-sys/site" $PY -c "import cdemo._p as p; print(p.check())"
same "the extension runs (pcre2 link size 2, glib ok)" "2 ok" "$(cat "$T/.out")"
same "one libpcre2-8 is initialised in the process" 1 "$(grep -c 'calling init: .*libpcre2-8' "$T/.err")"
