#!/bin/sh
# fatwheel with auditwheel repair's options, same meaning: `fatwheel repair` (--plat=auto,
# -w wheelhouse), -w created with its parents, --plat TAG checked against what the wheel
# needs (GLIBC and, through the manylinux policy, GLIBCXX/CXXABI) with auditwheel's tag
# set, --only-plat, --no-update-tags, -L, -z, --ldpaths, the accepted no-ops, and clear
# errors for what fatwheel does not do. The wheel: a pip-built C extension that needs a
# private C++ library (GLIBCXX_3.4.21: manylinux_2_24 at least) and Debian's libzstd.
. "$KILN_SRC/tests/lib.sh"
need unzip readelf gcc g++
PY=/usr/bin/python3
MA=$(gcc -print-multiarch)
[ -x $PY ] && $PY -c 'import setuptools, wheel' 2>/dev/null || { notok "needs python3-setuptools python3-wheel"; exit 1; }
[ -e /usr/include/zstd.h ] || { notok "needs libzstd-dev"; exit 1; }

mkdir -p "$T/priv" "$T/src/cxdemo" "$T/dist"
cat >"$T/priv/cx.cc" <<'EOF2'
#include <string>
extern "C" int cx_len(const char *s) { std::string a(s); a += "!"; return (int)a.size(); }
EOF2
g++ -O2 -shared -fPIC -Wl,-soname,libcx.so.1 -o "$T/priv/libcx.so.1" "$T/priv/cx.cc"
ln -s libcx.so.1 "$T/priv/libcx.so"
echo 'from ._c import n' >"$T/src/cxdemo/__init__.py"
cat >"$T/src/_c.c" <<'EOF2'
#include <Python.h>
#include <zstd.h>
int cx_len(const char *);
static PyObject *n(PyObject *s, PyObject *a) { return PyLong_FromLong(cx_len("abc") + 0 * (long)ZSTD_versionNumber()); }
static PyMethodDef m[] = {{"n", n, METH_NOARGS, ""}, {0}};
static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "_c", 0, -1, m};
PyMODINIT_FUNC PyInit__c(void) { return PyModule_Create(&d); }
EOF2
cat >"$T/src/setup.py" <<EOF2
from setuptools import setup, Extension
setup(name="cxdemo", version="1.0", packages=["cxdemo"],
      ext_modules=[Extension("cxdemo._c", ["_c.c"], libraries=["cx", "zstd"], library_dirs=["$T/priv"])])
EOF2
(cd "$T/src" && $PY -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$T/dist" .) >"$T/pip.log" 2>&1 ||
	{ sed 's/^/# /' "$T/pip.log" | tail -20; notok "pip builds the test wheel"; exit 1; }
W=$(ls "$T"/dist/cxdemo-1.0-*-linux_x86_64.whl) || { notok "a linux_x86_64 wheel"; exit 1; }
ok "pip built ${W##*/}"

# what the wheel needs once libcx and libzstd are in: GLIBC from readelf, GLIBCXX_3.4.21 -> 2_24
g=$(for f in "$T/priv/libcx.so.1" "$(readlink -f /usr/lib/$MA/libzstd.so.1)"; do readelf -V "$f"; done |
	sed -n 's/.*Name: GLIBC_2\.\([0-9]*\).*/\1/p' | sort -n | tail -n1)
x=$(readelf -V "$T/priv/libcx.so.1" | sed -n 's/.*Name: GLIBCXX_3\.4\.\([0-9]*\).*/\1/p' | sort -n | tail -n1)
same "libcx needs GLIBCXX_3.4.21 (the test's premise)" 21 "$x"
need=$g; [ "$need" -lt 24 ] && need=24

# without libzstd (--exclude), only GLIBCXX_3.4.21 asks for more than manylinux_2_17
unzip -p "$W" 'cxdemo/_c.*.so' >"$T/ext.so"
gx=$(for f in "$T/priv/libcx.so.1" "$T/ext.so"; do readelf -V "$f"; done |
	sed -n 's/.*Name: GLIBC_2\.\([0-9]*\).*/\1/p' | sort -n | tail -n1)
[ "$gx" -lt 24 ] && ok "without libzstd the objects need GLIBC 2.$gx only (premise)" || notok "premise: GLIBC 2.$gx < 2.24"
check "--plat=auto --exclude libzstd" fatwheel --plat=auto --exclude 'libzstd.so.*' --lib-path "$T/priv" "$W" -w "$T/x1"
o=$(cat "$T/.out")
case ${o##*/} in *-manylinux_2_24_x86_64.whl) ok "--plat=auto maps GLIBCXX_3.4.21 to manylinux_2_24" ;; *) notok "--plat=auto maps GLIBCXX_3.4.21 to manylinux_2_24 (${o##*/})" ;; esac
exits "--plat manylinux2014_x86_64 is refused for GLIBCXX_3.4.21 alone" 1 fatwheel --plat manylinux2014_x86_64 --exclude 'libzstd.so.*' --lib-path "$T/priv" "$W" -w "$T/x2"
has "... saying so" "$T/.err" "cannot repair to manylinux2014_x86_64: it needs manylinux_2_24 (GLIBC 2.$gx, and GLIBCXX/CXXABI versions)"
check "--plat manylinux_2_24_x86_64 is accepted" fatwheel --plat manylinux_2_24_x86_64 --exclude 'libzstd.so.*' --lib-path "$T/priv" "$W" -w "$T/x3"

check "--dry-run --json names the C++ policy" fatwheel -n --json --exclude 'libzstd.so.*' --lib-path "$T/priv" "$W"
has "... cxx_policy manylinux_2_24" "$T/.out" '"cxx_policy":"manylinux_2_24"'

# fatwheel repair: auditwheel's defaults
mkdir -p "$T/cwd"
(cd "$T/cwd" && run fatwheel repair --lib-path "$T/priv" "$W"; echo "$rc" >"$T/rc")
same "fatwheel repair (no -w) succeeds" 0 "$(cat "$T/rc")"
o=$(ls "$T"/cwd/wheelhouse/*.whl 2>/dev/null)
[ -n "$o" ] && ok "... into ./wheelhouse, created" || notok "... into ./wheelhouse, created"
unzip -Z1 "$o" >"$T/repair.list"
grep -q '^cxdemo\.libs/libcx-[0-9a-f]\{8\}\.so\.1$' "$T/repair.list" && ok "... with hashed sonames, as auditwheel names them" ||
	{ notok "... with hashed sonames"; sed 's/^/#   /' "$T/repair.list"; }
case ${o##*/} in
cxdemo-1.0-*-manylinux_2_${need}_x86_64.whl) ok "fatwheel repair picks manylinux_2_$need (--plat=auto)" ;;
*) notok "--plat=auto counts GLIBCXX (got ${o##*/}, want manylinux_2_${need}_x86_64)" ;;
esac

# -w: created with its parents
check "-w a/b/c is created with its parents" fatwheel --lib-path "$T/priv" "$W" -w "$T/a/b/c"
[ -n "$(ls "$T"/a/b/c/*.whl 2>/dev/null)" ] && ok "... and holds the wheel" || notok "... and holds the wheel"
: >"$T/file"
exits "-w naming a file is refused" 1 fatwheel --lib-path "$T/priv" "$W" -w "$T/file/sub"

# --plat TAG: checked, with auditwheel's tag set
exits "--plat manylinux2014_x86_64 is refused with libzstd too" 1 fatwheel --plat manylinux2014_x86_64 --lib-path "$T/priv" "$W" -w "$T/p1"
has "... saying so" "$T/.err" "cannot repair to manylinux2014_x86_64: it needs manylinux_2_$need"
top=$(ldd --version | sed -n '1s/.* 2\.\([0-9]*\)$/\1/p')
if [ "$need" -lt "$top" ]; then
	check "--plat manylinux_2_${top}_x86_64" fatwheel --plat manylinux_2_${top}_x86_64 --lib-path "$T/priv" "$W" -w "$T/p2"
	o=$(cat "$T/.out")
	same "... is tagged with the older policy it also meets, as auditwheel does" \
		"cxdemo-1.0-$(echo "${W##*/}" | cut -d- -f3,4)-manylinux_2_${need}_x86_64.manylinux_2_${top}_x86_64.whl" "${o##*/}"
	check "--only-plat" fatwheel --only-plat --plat manylinux_2_${top}_x86_64 --lib-path "$T/priv" "$W" -w "$T/p3"
	o=$(cat "$T/.out")
	case ${o##*/} in *-manylinux_2_${top}_x86_64.whl) ok "--only-plat gives only the tag asked for" ;; *) notok "--only-plat (${o##*/})" ;; esac
fi
exits "--plat for another architecture is refused" 2 fatwheel --plat manylinux_2_28_aarch64 --lib-path "$T/priv" "$W" -w "$T/p4"
check "--no-update-tags" fatwheel --no-update-tags --lib-path "$T/priv" "$W" -w "$T/p5"
o=$(cat "$T/.out")
same "... keeps the platform tag" "${W##*/}" "${o##*/}"

# -L, -z, --ldpaths, the no-ops
check "-L .mylibs" fatwheel -L .mylibs --lib-path "$T/priv" "$W" -w "$T/p6"
unzip -Z1 "$(cat "$T/.out")" >"$T/p6.list"
has "... puts the libraries in cxdemo.mylibs/" "$T/p6.list" "cxdemo.mylibs/libcx.so.1"
exits "-L with a slash is refused" 2 fatwheel -L a/b "$W" -w "$T/p6"
exits "-L with --layout is refused" 2 fatwheel -L .x --layout=libs "$W" -w "$T/p6"
check "-z 9" fatwheel -z 9 --lib-path "$T/priv" "$W" -w "$T/p7"
check "--zip-compression-level=1" fatwheel --zip-compression-level=1 --lib-path "$T/priv" "$W" -w "$T/p8"
[ "$(wc -c <"$(ls "$T"/p7/*.whl)")" -lt "$(wc -c <"$(ls "$T"/p8/*.whl)")" ] && ok "-z 9 is smaller than -z 1" || notok "-z 9 is smaller than -z 1"
exits "-z 0 (stored) is refused" 2 fatwheel -z 0 "$W" -w "$T/p7"
check "--ldpaths replaces the system folders" fatwheel --ldpaths "$T/priv:/usr/lib/$MA:/lib/$MA" "$W" -w "$T/p9"
exits "--ldpaths without libzstd's folder: missing library" 1 fatwheel --ldpaths "$T/priv" "$W" -w "$T/p10"
has "... naming it" "$T/.err" "libzstd.so.1"
check "--disable-isa-ext-check and --allow-pure-python-wheel are accepted" \
	fatwheel --disable-isa-ext-check --allow-pure-python-wheel --lib-path "$T/priv" "$W" -w "$T/p11"
exits "--strip is refused" 2 fatwheel --strip "$W" -w "$T/p12"
has "... with a reason" "$T/.err" "not supported"
exits "two wheels are refused" 2 fatwheel repair "$W" "$W"
has "... one at a time" "$T/.err" "one at a time"
exits "an unknown auditwheel option is refused" 2 fatwheel repair --frobnicate "$W"
