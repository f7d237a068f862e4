#!/bin/sh
# graph-triton: triton through the graph on a toy tree shaped like triton-lang/triton:
# setup.py in python/ (until 3.4) or at the root (read from the tree), the package named
# triton, an AMD backend under third_party/amd/backend, and setup.py's offline settings
# (TRITON_OFFLINE_BUILD, LLVM_SYSPATH): without them the toy downloads its LLVM from the
# URL its cmake/llvm-hash.txt names, as triton does. kiln builds it offline with the LLVM
# pinned as an input (triton_INPUTS: an archive and its sha256, fetched and unpacked by
# triton.inputs), no proton for ROCm; configure refuses a triton whose LLVM is not pinned.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"

R=$T/mirror/triton
mkdir -p "$R/python/triton" "$R/third_party/amd/backend" "$R/cmake"
printf '3c6d0d2f1e0ab00cbd9fdd9a3a6c1d0dd15f8d5c\n' >"$R/cmake/llvm-hash.txt"
printf 'def compile(src):\n    return "amdgcn:" + src\n' >"$R/third_party/amd/backend/compiler.py"
printf '' >"$R/third_party/amd/backend/__init__.py"
printf 'from triton._build import LLVM, PROTON\n__version__ = "3.3.0"\n' >"$R/python/triton/__init__.py"
mkdir -p "$R/python/triton/backends"
printf '' >"$R/python/triton/backends/__init__.py"
# setup.py: triton's shape (python/setup.py before 3.4): LLVM from LLVM_SYSPATH, or with
# TRITON_OFFLINE_BUILD an early stop, or else a download; the name from TRITON_WHEEL_NAME
cat >"$R/python/setup.py" <<'EOF2'
import os, sys, urllib.request
from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = HERE if os.path.isdir(os.path.join(HERE, "third_party")) else os.path.dirname(HERE)
PY = os.path.join(ROOT, "python")

def llvm():
    p = os.environ.get("LLVM_SYSPATH")
    if p:
        if not os.path.isfile(os.path.join(p, "include", "llvm", "Config", "llvm-config.h")):
            sys.exit("LLVM_SYSPATH=%s holds no LLVM" % p)
        return p
    if os.environ.get("TRITON_OFFLINE_BUILD"):
        sys.exit("Requested an offline build but LLVM_SYSPATH is not set")
    rev = open(os.path.join(ROOT, "cmake", "llvm-hash.txt")).read().strip()[:8]
    url = "https://oaitriton.blob.core.windows.net/public/llvm-builds/llvm-%s-ubuntu-x64.tar.gz" % rev
    print("downloading and extracting %s ..." % url)
    urllib.request.urlretrieve(url, "llvm.tar.gz")

class BuildPy(build_py):
    def run(self):
        p = llvm()
        super().run()
        with open(os.path.join(self.build_lib, "triton", "_build.py"), "w") as f:
            f.write("LLVM = %r\nPROTON = %r\n" % (p, os.environ.get("TRITON_BUILD_PROTON", "ON")))

setup(name=os.environ.get("TRITON_WHEEL_NAME", "triton"), version="3.3.0",
      packages=["triton", "triton.backends", "triton.backends.amd"],
      package_dir={"triton": os.path.relpath(os.path.join(PY, "triton")),
                   "triton.backends.amd": os.path.relpath(os.path.join(ROOT, "third_party", "amd", "backend"))},
      cmdclass={"build_py": BuildPy})
EOF2
printf '/build/\n/dist/\n*.egg-info\n' >"$R/.gitignore"
(cd "$R" && git init -q -b main . && git add . && git commit -qm "toy triton 3.3" && git tag v3.3.0) || exit 2
# 3.4 moved setup.py to the root
(cd "$R" && git mv python/setup.py setup.py && git commit -qm "toy triton: setup.py at the root" && git tag v3.4.0) || exit 2

# the pinned LLVM: a tarball with one top folder
mkdir -p "$T/llvm/llvm-3c6d0d2f-ubuntu-x64/include/llvm/Config"
printf '#define LLVM_VERSION_MAJOR 21\n' >"$T/llvm/llvm-3c6d0d2f-ubuntu-x64/include/llvm/Config/llvm-config.h"
tar -C "$T/llvm" -czf "$T/llvm.tar.gz" llvm-3c6d0d2f-ubuntu-x64 || exit 2
LSHA=$(sha256sum "$T/llvm.tar.gz" | cut -c1-64)

tpins () {
	cat >"$T/pins-triton.env" <<EOF2
stack_WITHOUT=vision,audio
stack_WITH=triton
torch_URL=https://example.invalid/toy/torch
torch_REF=v1
torch_HIPIFY=
triton_URL=https://example.invalid/toy/triton
triton_REF=$1
$2
EOF2
}
toy_folder
conf () {
	"$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/pins-triton.env" --mirror="$T/mirror" \
		--rocm-path="$T/rocm" --jobs=2 KILN_BIN="$KILN_BIN" "$@"
}
nb () { n=$1; shift; ninja "$@" >"$T/$n.log" 2>&1; brc=$?; got=$(rebuilt "$T/$n.log"); }
imp () { "$T/venv/bin/python" -c "$1" 2>&1; }

tpins v3.3.0 ""
exits "triton without a pinned LLVM: configure says so: 2" 2 conf --arch=gfx1100
has "one line naming the settings" "$T/.err" "triton builds offline (TRITON_OFFLINE_BUILD=1) and needs the LLVM its tree pins"
tpins v3.3.0 "triton_INPUTS=\"LLVM_SYSPATH=file://$T/llvm.tar.gz#sha256=0000\""
exits "an input without a good sha256: 2" 2 conf --arch=gfx1100
has "one line naming the word" "$T/.err" "triton_INPUTS: 'LLVM_SYSPATH=file://$T/llvm.tar.gz#sha256=0000' has no #sha256=HEX"

tpins v3.3.0 "triton_INPUTS=\"LLVM_SYSPATH=file://$T/llvm.tar.gz#sha256=$LSHA\""
check "configure --with=triton, LLVM pinned" conf --arch=gfx1100
stagesin "$b/build/stack.ninja" triton.inputs triton.deps triton.wheel triton.pick triton.install
after "$b/build/stack.ninja" triton.wheel triton.inputs
nb first triton.install
same "triton builds offline" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/first.log"
has "setup.py found in python/" "$b/build/logs/triton.wheel.log" "setup.py is in python/ of the tree: building there"
ls "$b"/build/wheels/triton >"$T/wheels" 2>&1
has "the wheel is named triton" "$T/wheels" "triton-3.3.0"
same "LLVM came from the pinned input, proton off for ROCm" \
	"$(cd "$b/build" && pwd -P)/inputs/$LSHA/llvm-3c6d0d2f-ubuntu-x64 OFF" \
	"$(imp 'import triton; print(triton.LLVM, triton.PROTON)')"
same "the AMD backend is in the package" "amdgcn:k" "$(imp 'import triton.backends.amd.compiler as c; print(c.compile("k"))')"

tpins v3.4.0 "triton_INPUTS=\"LLVM_SYSPATH=file://$T/llvm.tar.gz#sha256=$LSHA\""
check "configure --pin triton=v3.4.0 (setup.py at the root)" conf --arch=gfx1100
nb root triton.install
same "the root layout builds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/root.log"
lacks "no python/ this time" "$b/build/logs/triton.wheel.log" "setup.py is in python/"
lacks "triton.inputs did not run again (same archive)" "$T/root.log" "triton.inputs: rebuilt"

# without the offline settings the toy downloads its LLVM: the guard names the URL
tpins v3.4.0 "triton_INPUTS=\"LLVM_SYSPATH=file://$T/llvm.tar.gz#sha256=$LSHA\"
triton_ENV=\"TRITON_OFFLINE_BUILD= LLVM_SYSPATH=\""
check "configure: triton_ENV undoes the offline settings" conf --arch=gfx1100
nb dl triton.wheel
same "the download fails the stage" 1 "$brc"
has "naming the URL its llvm-hash.txt gives" "$T/dl.log" \
	"kiln: triton.wheel: the build tried to download https://oaitriton.blob.core.windows.net/public/llvm-builds/llvm-3c6d0d2f-ubuntu-x64.tar.gz (1 request(s)"
