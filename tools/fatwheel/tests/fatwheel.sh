#!/bin/sh
# fatwheel on real wheels: a pip-built extension linking Debian's libzstd and libgit2 and
# a private library; repaired, checked with wheel unpack / unzip, installed in a venv and
# imported with the system copies hidden.
. "$KILN_SRC/tests/lib.sh"
need unzip readelf gcc
PY=/usr/bin/python3
[ -x $PY ] || skip_all "needs Debian's /usr/bin/python3"
$PY -c 'import setuptools, wheel, venv' 2>/dev/null || skip_all "needs python3-setuptools python3-wheel python3-venv"
[ -e /usr/include/zstd.h ] && [ -e /usr/include/git2.h ] || skip_all "needs libzstd-dev libgit2-dev"

# --- a real extension wheel ------------------------------------------------------------
mkdir -p "$T/priv" "$T/src/zdemo/sub" "$T/dist" "$T/out"
cat >"$T/priv/priv.c" <<'EOF'
int priv_answer(void) { return 42; }
EOF
gcc -shared -fPIC -Wl,-soname,libpriv.so.1 -o "$T/priv/libpriv.so.1" "$T/priv/priv.c"
ln -s libpriv.so.1 "$T/priv/libpriv.so"
cat >"$T/src/zdemo/__init__.py" <<'EOF'
from ._z import version
EOF
: >"$T/src/zdemo/sub/__init__.py"
cat >"$T/src/_z.c" <<'EOF'
#include <Python.h>
#include <zstd.h>
static PyObject *version(PyObject *s, PyObject *a) { return PyUnicode_FromString(ZSTD_versionString()); }
static PyMethodDef m[] = {{"version", version, METH_NOARGS, ""}, {0}};
static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "_z", 0, -1, m};
PyMODINIT_FUNC PyInit__z(void) { return PyModule_Create(&d); }
EOF
cat >"$T/src/_g.c" <<'EOF'
#include <Python.h>
#include <git2.h>
int priv_answer(void);
static PyObject *info(PyObject *s, PyObject *a) {
	int ma, mi, re; git_libgit2_version(&ma, &mi, &re);
	return PyUnicode_FromFormat("%d.%d %d", ma, mi, priv_answer());
}
static PyMethodDef m[] = {{"info", info, METH_NOARGS, ""}, {0}};
static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "_g", 0, -1, m};
PyMODINIT_FUNC PyInit__g(void) { return PyModule_Create(&d); }
EOF
cat >"$T/src/setup.py" <<EOF
from setuptools import setup, Extension
setup(name="zdemo", version="1.0", packages=["zdemo", "zdemo.sub"],
      ext_modules=[Extension("zdemo._z", ["_z.c"], libraries=["zstd"]),
                   Extension("zdemo.sub._g", ["_g.c"], libraries=["git2", "priv"],
                             library_dirs=["$T/priv"])])
EOF
(cd "$T/src" && $PY -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$T/dist" .) >"$T/pip.log" 2>&1 ||
	{ sed 's/^/# /' "$T/pip.log" | tail -20; notok "pip builds the test wheel"; exit 1; }
W=$(ls "$T"/dist/zdemo-1.0-*.whl)
WN=${W##*/}
insum=$(sha256sum "$W")
ok "pip built $WN"

# --- usage ----------------------------------------------------------------------------
check "--help exits 0" fatwheel --help
has "--help shows the synopsis" "$T/.out" "IN.whl -w OUTDIR"
exits "no arguments is a usage error" 2 fatwheel
exits "an unknown option is a usage error" 2 fatwheel --frobnicate "$W" -w "$T/out"
exits "--layout must be libs or pkg:DIR" 2 fatwheel --layout=pkg:../x "$W" -w "$T/out"

# --- a library nobody can find is an error naming who needs it ------------------------
exits "a missing library exits 1" 1 fatwheel "$W" -w "$T/out"
has "the error names the library" "$T/.err" "libpriv.so.1 needed by zdemo/sub/_g."
same "nothing is written when a library is missing" "" "$(ls "$T/out")"
mkdir -p "$T/fake"
printf 'not a library\n' >"$T/fake/libpriv.so.1"
exits "a non-ELF file where the library should be is not bundled" 1 fatwheel --lib-path "$T/fake" "$W" -w "$T/out"
has "and the error says why it was skipped" "$T/.err" "skipped $T/fake/libpriv.so.1: not an ELF file"

# --- dry run --------------------------------------------------------------------------
check "--dry-run plans" fatwheel -n --lib-path "$T/priv" "$W" -w "$T/out"
has "the plan bundles libzstd from the system" "$T/.out" "bundle   zdemo.libs/libzstd.so.1 <- /"
has "the plan bundles libgit2's own needs (transitive)" "$T/.out" "zdemo.libs/libssh2.so.1"
has "the plan bundles libpriv from --lib-path" "$T/.out" "zdemo.libs/libpriv.so.1 <- $T/priv/libpriv.so.1"
has "the plan sets a relative RPATH two folders up" "$T/.out" 'edit     zdemo/sub/_g.cpython'
has "... to \$ORIGIN/../../zdemo.libs" "$T/.out" 'RPATH=$ORIGIN/../../zdemo.libs'
lacks "libc is never bundled" "$T/.out" "libc.so.6"
same "--dry-run writes nothing" "" "$(ls "$T/out")"
check "--dry-run --json is JSON" fatwheel -n --json --lib-path "$T/priv" "$W" -w "$T/out"
cp "$T/.out" "$T/plan.json"
check "... that python parses, with the bundled list" $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dry_run"] is True
assert any(b["needed"] == "libzstd.so.1" for b in d["bundled"]), d
assert any(e["member"].startswith("zdemo/sub/_g") for e in d["edited"]), d' "$T/plan.json"

# --- the repair -----------------------------------------------------------------------
check "repair" fatwheel --lib-path "$T/priv" "$W" -w "$T/out"
O=$(cat "$T/.out")
same "prints the absolute path of the output" "$T/out/$WN" "$O"
same "the input is not modified" "$insum" "$(sha256sum "$W")"
check "unzip -t accepts the output" unzip -tq "$O"
check "wheel unpack checks every RECORD hash" $PY -m wheel unpack -d "$T/u" "$O"
U=$T/u/zdemo-1.0
check "RECORD is last, .dist-info after the libraries, RECORD has an empty hash" $PY -c '
import sys, zipfile
n = zipfile.ZipFile(sys.argv[1]).namelist()
assert n[-1] == "zdemo-1.0.dist-info/RECORD", n
d = [i for i, x in enumerate(n) if ".dist-info/" in x]
l = [i for i, x in enumerate(n) if x.startswith("zdemo.libs/")]
assert l and min(d) > max(l) and d == list(range(min(d), len(n))), n
rec = zipfile.ZipFile(sys.argv[1]).read(n[-1]).decode()
assert "zdemo-1.0.dist-info/RECORD,,\n" in rec, rec
assert len(rec.splitlines()) == len(n), (len(rec.splitlines()), len(n))' "$O"
check "untouched members are copied as the same compressed bytes" $PY -c '
import sys, zipfile
def raw(path):
    z = zipfile.ZipFile(path); f = open(path, "rb"); out = {}
    for i in z.infolist():
        f.seek(i.header_offset + 26); nl, xl = [int.from_bytes(f.read(2), "little") for _ in "ab"]
        f.seek(i.header_offset + 30 + nl + xl); out[i.filename] = (i.compress_type, f.read(i.compress_size))
    return out
a, b = raw(sys.argv[1]), raw(sys.argv[2])
same = [k for k in a if k in b and a[k] == b[k]]
assert "zdemo/__init__.py" in same and "zdemo-1.0.dist-info/METADATA" in same, same
assert a["zdemo-1.0.dist-info/WHEEL"] == b["zdemo-1.0.dist-info/WHEEL"]
assert [k for k in a if ".so" in k and a[k] == b[k]] == [], "edited ELF members must differ"' "$W" "$O"
readelf -d "$U"/zdemo/sub/_g.*.so >"$T/g.dyn"
has "the extension gets DT_RPATH \$ORIGIN/../../zdemo.libs" "$T/g.dyn" 'Library rpath: [$ORIGIN/../../zdemo.libs]'
lacks "and no DT_RUNPATH" "$T/g.dyn" "RUNPATH"
readelf -d "$U"/zdemo.libs/libgit2.so.* >"$T/git2.dyn"
has "a bundled library that needs bundled ones gets \$ORIGIN" "$T/git2.dyn" 'Library rpath: [$ORIGIN]'
same "the platform tag is kept by default" "$WN" "${O##*/}"

# --- install it and import it with the system copies hidden ---------------------------
check "a fresh venv" $PY -m venv "$T/venv"
check "pip installs the repaired wheel" "$T/venv/bin/pip" install -q --no-deps --no-index "$O"
zstd=$(readlink -f /lib/x86_64-linux-gnu/libzstd.so.1 2>/dev/null || readlink -f /usr/lib/libzstd.so.1)
git2=$(ldconfig -p | sed -n 's/.*libgit2\.so\.[0-9.]* .*=> //p' | head -n1)
git2=$(readlink -f "$git2")
hide () { unshare -m sh -c 'for f in "$@"; do mount --bind /dev/null "$f" || exit 3; done; cd /; LD_DEBUG=libs '"$T"'/venv/bin/python -c "import zdemo, zdemo.sub._g as g; print(zdemo.version(), g.info())"' sh "$zstd" "$git2"; }
if unshare -m true 2>/dev/null; then
	run hide
	if [ "$rc" = 0 ]; then ok "imports with libzstd and libgit2 hidden"; else notok "imports with libzstd and libgit2 hidden (exit $rc)"; _show; fi
	has "the extension runs (zstd version, libgit2 version, libpriv)" "$T/.out" " 42"
	has "LD_DEBUG shows libzstd loaded from the wheel" "$T/.err" "calling init: $T/venv/lib/python3.11/site-packages/zdemo/../zdemo.libs/libzstd.so.1"
	has "LD_DEBUG shows libgit2 loaded from the wheel" "$T/.err" "/zdemo.libs/libgit2.so."
	lacks "no library comes from the system's copy of libzstd" "$T/.err" "calling init: $zstd"
	unshare -m sh -c 'mount --bind /dev/null "$1" && /usr/bin/python3 -c "import ctypes; ctypes.CDLL(\"libzstd.so.1\")"' sh "$zstd" >/dev/null 2>&1 &&
		notok "the hiding works (the system libzstd still loads)" || ok "the hiding works (the system libzstd no longer loads)"
else
	echo "skip optional tier privileged: import with hidden libraries needs unshare -m"
fi

# --- options --------------------------------------------------------------------------
mkdir -p "$T/o2" "$T/o3" "$T/o4"
check "--soname-hash --plat=auto" fatwheel --soname-hash --plat=auto --lib-path "$T/priv" "$W" -w "$T/o2"
O2=$(cat "$T/.out")
case ${O2##*/} in zdemo-1.0-cp3*-manylinux_2_[0-9]*_x86_64.whl) ok "--plat=auto names manylinux_2_N" ;; *) notok "--plat=auto names manylinux_2_N (${O2##*/})" ;; esac
check "wheel unpack of the hashed wheel" $PY -m wheel unpack -d "$T/u2" "$O2"
U2=$(ls -d "$T"/u2/zdemo-1.0)
n=$(ls "$U2/zdemo.libs" | grep -c '^libzstd-[0-9a-f]\{8\}\.so\.1$')
same "the bundled libzstd is named libzstd-HASH8.so.1" 1 "$n"
readelf -d "$U2"/zdemo/_z.*.so >"$T/z2.dyn"
has "the extension's DT_NEEDED names the hashed library" "$T/z2.dyn" "Shared library: [libzstd-"
readelf -d "$U2"/zdemo.libs/libzstd-*.so.1 >"$T/zl.dyn"
has "the hashed library's SONAME is its new name" "$T/zl.dyn" "Library soname: [libzstd-"
glibc=$(for f in "$U2"/zdemo/_z.*.so "$U2"/zdemo/sub/_g.*.so "$U2"/zdemo.libs/*; do readelf -V "$f"; done |
	sed -n 's/.*Name: GLIBC_2\.\([0-9]*\).*/\1/p' | sort -n | tail -n1)
case ${O2##*/} in *manylinux_2_${glibc}_x86_64.whl) ok "--plat=auto is the highest GLIBC_2.$glibc needed" ;; *) notok "--plat=auto is GLIBC 2.$glibc (${O2##*/})" ;; esac
has "WHEEL's Tag line is retagged" "$U2/zdemo-1.0.dist-info/WHEEL" "-manylinux_2_${glibc}_x86_64"
check "pip installs the retagged wheel" $PY -m venv "$T/venv2"
check "... into a fresh venv" "$T/venv2/bin/pip" install -q --no-deps --no-index "$O2"
check "and the hashed libraries load" "$T/venv2/bin/python" -c "import zdemo, zdemo.sub._g as g; assert g.info().endswith(' 42')"

# a build tag is kept as written when the platform tag is renamed
WB=$(printf '%s' "${W##*/}" | sed 's/^zdemo-1\.0-/zdemo-1.0-07local-/')
mkdir -p "$T/bt" "$T/obt" && cp "$W" "$T/bt/$WB" || exit 2
check "a wheel with a build tag" fatwheel --plat=auto --lib-path "$T/priv" "$T/bt/$WB" -w "$T/obt"
case $(cat "$T/.out") in */zdemo-1.0-07local-cp3*-manylinux_2_${glibc}_x86_64.whl) ok "... keeps its build tag as written (07local)" ;;
*) notok "... keeps its build tag as written ($(cat "$T/.out"))" ;; esac
check "--layout=pkg:zdemo/lib" fatwheel --layout=pkg:zdemo/lib --plat=linux_x86_64 --lib-path "$T/priv" "$W" -w "$T/o3"
check "wheel unpack (pkg layout)" $PY -m wheel unpack -d "$T/u3" "$(cat "$T/.out")"
[ -f "$T/u3/zdemo-1.0/zdemo/lib/libpriv.so.1" ] && ok "libraries go to zdemo/lib" || notok "libraries go to zdemo/lib"
readelf -d "$T"/u3/zdemo-1.0/zdemo/_z.*.so >"$T/z3.dyn"
has "RPATH is \$ORIGIN/lib" "$T/z3.dyn" 'Library rpath: [$ORIGIN/lib]'

check "--exclude a soname and an unmatched pattern" fatwheel --json --exclude 'libgit2.so.*' --exclude 'librocblas.so' --lib-path "$T/priv" "$W" -w "$T/o4"
has "an unmatched --exclude is a warning" "$T/.err" "--exclude 'librocblas.so' matched no library"
lacks "the excluded library is not bundled" "$T/.out" '"libgit2.so'
lacks "nor what only it needed" "$T/.out" "libssh2"
has "the rest is" "$T/.out" '"zdemo.libs/libzstd.so.1"'

# --- --include, --arch, --rocm ------------------------------------------------------------
mkdir -p "$T/inc/library" "$T/rocm/lib" "$T/o5" "$T/o6" "$T/o7"
echo a >"$T/inc/library/TensileLibrary_gfx1030.dat"
echo b >"$T/inc/library/TensileLibrary_gfx90a.dat"
echo c >"$T/inc/library/TensileLibrary_fallback.dat"
echo "1002:1234, 0x00, AMD Test" >"$T/amdgpu.ids"
cp "$T/priv/libpriv.so.1" "$T/rocm/lib/"
check "--include a folder and a file with --arch, --rocm=DIR" fatwheel --rocm="$T/rocm" --include "$T/inc/library" --include "$T/amdgpu.ids" --arch=gfx1030,gfx1100 "$W" -w "$T/o5"
unzip -Z1 "$(cat "$T/.out")" >"$T/o5.list"
has "the included file is in the library folder" "$T/o5.list" "zdemo.libs/amdgpu.ids"
has "an included file for a listed target is kept" "$T/o5.list" "zdemo.libs/library/TensileLibrary_gfx1030.dat"
has "a file naming no target is kept" "$T/o5.list" "zdemo.libs/library/TensileLibrary_fallback.dat"
lacks "a file for another target is dropped" "$T/o5.list" "gfx90a"
has "libpriv came from --rocm" "$T/o5.list" "zdemo.libs/libpriv.so.1"
# in the tarball, libpriv needs libpriv2 (a second round of the closure, a second pass)
mkdir -p "$T/tarroot/rocm-6.4.0/lib"
echo 'int priv2(void) { return 2; }' >"$T/priv2.c"
gcc -shared -fPIC -Wl,-soname,libpriv2.so.1 -o "$T/tarroot/rocm-6.4.0/lib/libpriv2.so.1" "$T/priv2.c"
gcc -shared -fPIC -Wl,-soname,libpriv.so.1 -o "$T/tarroot/rocm-6.4.0/lib/libpriv.so.1.0.0" "$T/priv/priv.c" \
	-Wl,--no-as-needed -L"$T/tarroot/rocm-6.4.0/lib" -l:libpriv2.so.1 -Wl,-rpath,'$ORIGIN:/opt/rocm/lib'
ln -s libpriv.so.1.0.0 "$T/tarroot/rocm-6.4.0/lib/libpriv.so.1"
tar -C "$T/tarroot" -czf "$T/rocm.tar.gz" rocm-6.4.0
check "--rocm=TARBALL (read in place, symlink followed)" fatwheel --json --rocm="$T/rocm.tar.gz" "$W" -w "$T/o6"
has "libpriv came from the tarball" "$T/.out" '"from":"tar:rocm-6.4.0/lib/libpriv.so.1.0.0"'
has "and what it needs, from the tarball too" "$T/.out" '"from":"tar:rocm-6.4.0/lib/libpriv2.so.1"'
check "wheel unpack (tarball)" $PY -m wheel unpack -d "$T/u6" "$(ls "$T"/o6/*.whl)"
check "a library from the tarball that needs nothing bundled is bundled byte for byte" cmp "$T/u6/zdemo-1.0/zdemo.libs/libpriv2.so.1" "$T/tarroot/rocm-6.4.0/lib/libpriv2.so.1"
readelf -d "$T/u6/zdemo-1.0/zdemo.libs/libpriv.so.1" >"$T/p6.dyn"
has "the one that needs libpriv2 gets \$ORIGIN" "$T/p6.dyn" 'Library rpath: [$ORIGIN]'
lacks "... and loses its RUNPATH into the build machine's /opt/rocm" "$T/p6.dyn" "RUNPATH"
LD_LIBRARY_PATH=$T/priv run fatwheel -n "$W" -w "$T/o7"
same "LD_LIBRARY_PATH is searched by default (as auditwheel and ld.so do)" 0 "$rc"
LD_LIBRARY_PATH=$T/priv run fatwheel -n --no-ld-library-path "$W" -w "$T/o7"
same "--no-ld-library-path leaves it out" 1 "$rc"
LD_LIBRARY_PATH=$T/priv run fatwheel -n --use-ld-library-path "$W" -w "$T/o7"
same "--use-ld-library-path (the old switch) is still taken" 0 "$rc"

# --- no patchelf at run time ---------------------------------------------------------------
mkdir -p "$T/o8"
run env PATH="$KILN_BIN" fatwheel --soname-hash --ldpaths "$T/priv:/usr/lib/$(gcc -print-multiarch):/lib/$(gcc -print-multiarch)" "$W" -w "$T/o8"
same "repairs with no patchelf (nor anything else) on PATH" 0 "$rc"
exits "--patchelf is refused with the reason" 2 fatwheel --patchelf=/usr/bin/patchelf "$W" -w "$T/o8"
has "... naming it" "$T/.err" "fatwheel edits ELF files itself"
