#!/bin/sh
# graph-cmakeext: a wheel whose setup.py drives CMake, as torchaudio 2.6's does
# (tools/setup_helpers/extension.py: cmake with -DCMAKE_INSTALL_PREFIX=the package folder,
# then cmake --build . --target install): a shared library and an extension module linked
# to it, __FILE__ in the library. Through the graph, on graph-toy.inc's stack:
# - two build folders whose paths differ in length give the same wheel, byte for byte
#   (CMake's install step edits the build RPATH out in place, leaving NULs of the build
#   path's length, unless kiln links with the install RPATH from the start);
# - audio.wheel.verify (the rebuild in work/audio.verify, 7 bytes longer) says identical;
# - --cache=ccache gives the same wheel as no cache, on misses and on hits (ccache's
#   base_dir would hand the compiler relative paths: another __FILE__);
# - the two-folder and ccache comparisons fail without these fixes: the same builds with
#   KILN_TEST_RPATH_EDIT (the project turns CMake's in-place edit back on) or with
#   CCACHE_BASEDIR given back through audio_ENV differ.
. "$KILN_SRC/tests/lib.sh"
need cmake ccache readelf cmp
. "$KILN_SRC/tests/regress/graph-toy.inc"

# audio v2: a CMake build inside setup.py (torchaudio's shape), linked to the toy torch
A=$T/mirror/audio
mkdir -p "$A/csrc"
cat >"$A/setup.py" <<'EOF'
import os, subprocess, sysconfig, torch
from setuptools import setup, Extension
from setuptools.command.build_ext import build_ext

class CMakeBuild(build_ext):
    def build_extension(self, ext):
        # one CMake run builds both libraries (as torchaudio's does)
        if ext.name != "torchaudio._C":
            return
        extdir = os.path.abspath(os.path.dirname(self.get_ext_fullpath(ext.name)))
        os.makedirs(self.build_temp, exist_ok=True)
        subprocess.check_call(["cmake", os.path.abspath("."), "-GNinja", "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_INSTALL_PREFIX=" + extdir, "-DTORCH_DIR=" + os.path.dirname(torch.__file__),
            "-DPY_INCLUDE=" + sysconfig.get_paths()["include"]], cwd=self.build_temp)
        subprocess.check_call(["cmake", "--build", ".", "--target", "install"], cwd=self.build_temp)

    def get_ext_filename(self, fullname):
        # _C.so, libtoyaudio.so: no ABI tag (torchaudio strips it the same way)
        return os.path.join(*fullname.split(".")) + ".so"

setup(name="torchaudio", version=open("VERSION").read().strip(), packages=["torchaudio"],
      ext_modules=[Extension("torchaudio.lib.libtoyaudio", sources=[]), Extension("torchaudio._C", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
EOF
cat >"$A/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(toyaudio C)
add_library(libtoyaudio SHARED csrc/lib.c)
target_include_directories(libtoyaudio PRIVATE ${TORCH_DIR}/include)
target_link_libraries(libtoyaudio ${TORCH_DIR}/lib/libtorch_toy.so)
add_library(_C SHARED csrc/module.c)
target_include_directories(_C PRIVATE ${PY_INCLUDE})
target_link_libraries(_C libtoyaudio)
set_target_properties(libtoyaudio _C PROPERTIES PREFIX "")
set_target_properties(libtoyaudio PROPERTIES INSTALL_RPATH "$ORIGIN/../../torch/lib")
set_target_properties(_C PROPERTIES INSTALL_RPATH "$ORIGIN/lib")
install(TARGETS libtoyaudio LIBRARY DESTINATION lib)
install(TARGETS _C LIBRARY DESTINATION .)
EOF
# KILN_TEST_RPATH_EDIT: the build without kiln's setting (the CMake edit this test proves
# gone): the project itself turns it off again
cat >>"$A/CMakeLists.txt" <<'EOF'
if (DEFINED ENV{KILN_TEST_RPATH_EDIT})
  set_target_properties(libtoyaudio _C PROPERTIES BUILD_WITH_INSTALL_RPATH OFF)
endif()
EOF
cat >"$A/csrc/lib.c" <<'EOF'
int torch_toy_scale(int x);
int toyaudio_op(int x) { return torch_toy_scale(x) + 7; }
/* an assert's text, as libtorchaudio's TORCH_CHECK carries it */
const char *toyaudio_file(void) { return __FILE__; }
EOF
cat >"$A/csrc/module.c" <<'EOF'
#define PY_SSIZE_T_CLEAN
#include <Python.h>
int toyaudio_op(int x);
const char *toyaudio_file(void);
static PyObject *op(PyObject *self, PyObject *args)
{
	int x;
	if (!PyArg_ParseTuple(args, "i", &x))
		return NULL;
	return PyLong_FromLong(toyaudio_op(x));
}
static PyObject *file(PyObject *self, PyObject *args) { return PyUnicode_FromString(toyaudio_file()); }
static PyMethodDef methods[] = {{"op", op, METH_VARARGS, "op"}, {"file", file, METH_NOARGS, "file"},
	{NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, methods};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&mod); }
EOF
rm -f "$A/csrc/ops.c"
printf 'import torch\nfrom torchaudio._C import op, file\n__version__ = "toy"\n' >"$A/torchaudio/__init__.py"
printf '1.0.3\n' >"$A/VERSION"
(cd "$A" && git add -A && git commit -qm "audio v2: CMake inside setup.py" && git tag v2) || exit 2
sed -i 's/^audio_REF=.*/audio_REF=v2/' "$T/pins.env"

# in_ DIR PINS VENV [OPTION...]: configure the build folder DIR (made) for the toy stack:
# cpu, no vision
in_ () {
	d=$1 p=$2 v=$3; shift 3
	mkdir -p "$d" && (cd "$d" && "$KSRC/configure" --python="$v/bin/python" --pins="$p" \
		--mirror="$T/mirror" --arch=cpu --without=vision --jobs=2 KILN_BIN="$KILN_BIN" "$@")
}
# build DIR NAME TARGET...: ninja in DIR, output in $T/NAME.log, status in $brc
build () { d=$1 n=$2; shift 2; ninja -C "$d" "$@" >"$T/$n.log" 2>&1; brc=$?
	[ "$brc" = 0 ] || { sed -n '1,30s/^/#   /p' "$T/$n.log"; tail -n 20 "$d/build/logs/audio.wheel.log" 2>/dev/null | sed 's/^/#   log: /'; }
	same "$n: ninja $* succeeds" 0 "$brc"; }
# wheel DIR: the audio wheel a build folder made
wheel () { ls "$1"/build/wheels/audio/*.whl 2>/dev/null | head -n 1; }
# unz WHEEL MEMBER OUT: one member's bytes into OUT
unz () { "$PY3" -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$@"; }
# runpath FILE: its RUNPATH (or RPATH)
runpath () { readelf -d "$1" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p; s/.*(RPATH).*\[\(.*\)\]$/\1/p'; }
P=$T/pins.env
toy_venv "$T/va"
toy_venv "$T/venv-of-another-length"

check "a: configure" in_ "$T/a" "$P" "$T/va"
build "$T/a" a audio.install
wa=$(wheel "$T/a")
check "a: the wheel holds the library CMake installed" unz "$wa" torchaudio/lib/libtoyaudio.so "$T/a-lib.so"
check "a: and the extension" unz "$wa" torchaudio/_C.so "$T/a-C.so"
same "a: the installed extension runs (toy torch's scale 10, +7); the library's __FILE__ is prefix-mapped" \
	"17 /kiln/src/audio/csrc/lib.c" "$(cd / && "$T/va/bin/python" -c 'import torchaudio; print(torchaudio.op(1), torchaudio.file())' 2>&1)"
same "a: _C.so's RUNPATH is the install one, linked so (CMAKE_BUILD_WITH_INSTALL_RPATH)" "\$ORIGIN/lib" "$(runpath "$T/a-C.so")"
lacks "a: no build folder in _C.so" "$T/a-C.so" "$T/"
lacks "a: no build folder in libtoyaudio.so" "$T/a-lib.so" "$T/"

# another build folder, its path 22 bytes longer, another venv: the same wheel
B=$T/b-folder-22-bytes-longer
check "b: configure a folder of another length" in_ "$B" "$P" "$T/venv-of-another-length"
build "$B" b audio.wheel
check "b: the same wheel as a, byte for byte" cmp "$wa" "$(wheel "$B")"
build "$T/a" verify audio.wheel.verify
has "a: audio.wheel.verify (the rebuild in work/audio.verify) says identical" "$T/verify.log" "identical: the stage is reproducible"

# --cache=ccache: misses (c), then every compile a hit (d, the same --work-dir), both the
# uncached wheel's bytes
export CCACHE_DIR="$T/ccache"
check "c: configure --cache=ccache --work-dir" in_ "$T/c" "$P" "$T/va" --cache=ccache --work-dir="$T/wd"
build "$T/c" c audio.wheel
has "c: ccache compiled them (misses)" "$T/c.log" "audio.wheel: rebuilt in"
check "c: with ccache, the wheel built without it, byte for byte" cmp "$wa" "$(wheel "$T/c")"
check "d: configure another folder with the same --work-dir" in_ "$T/d" "$P" "$T/venv-of-another-length" --cache=ccache --work-dir="$T/wd"
build "$T/d" d audio.wheel
has "d: every compile of audio a ccache hit" "$T/d.log" "hits (100%)"
check "d: from ccache's hits, the wheel built without it, byte for byte" cmp "$wa" "$(wheel "$T/d")"

# the checks above can fail: without kiln's settings the bytes differ. CMake's in-place
# RPATH edit (the project turns the install RPATH off again, KILN_TEST_RPATH_EDIT) in two
# folders of different lengths; ccache's base_dir given back through audio_ENV
{ cat "$P"; echo 'audio_ENV="KILN_TEST_RPATH_EDIT=1"'; } >"$T/edit.env"
check "e: configure, the RPATH edited at install" in_ "$T/e" "$T/edit.env" "$T/va"
build "$T/e" e audio.wheel
check "f: configure, the same, a longer folder" in_ "$B-f" "$T/edit.env" "$T/venv-of-another-length"
build "$B-f" f audio.wheel
exits "e, f: with CMake's in-place RPATH edit the wheels differ" 1 cmp -s "$(wheel "$T/e")" "$(wheel "$B-f")"
unz "$(wheel "$B-f")" torchaudio/_C.so "$T/f-C.so"
exits "f: _C.so differs from a's" 1 cmp -s "$T/a-C.so" "$T/f-C.so"
{ cat "$P"; echo "audio_ENV=\"CCACHE_BASEDIR=$T\""; } >"$T/basedir.env"
check "g: configure --cache=ccache, CCACHE_BASEDIR given back" in_ "$T/g" "$T/basedir.env" "$T/va" --cache=ccache
build "$T/g" g audio.wheel
unz "$(wheel "$T/g")" torchaudio/lib/libtoyaudio.so "$T/g-lib.so"
exits "g: with CCACHE_BASEDIR the library differs from the uncached one" 1 cmp -s "$T/a-lib.so" "$T/g-lib.so"
lacks "g: its __FILE__ is relative, not the mapped path" "$T/g-lib.so" "/kiln/src/audio/csrc/lib.c"
