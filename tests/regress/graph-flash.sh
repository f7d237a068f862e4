#!/bin/sh
# graph-flash: flash-attention's Triton AMD backend against the aiter component, on toy
# upstreams in the shape of the real ones (read with the search tool; no upstream code):
#   aiter       ROCm/aiter: a pyproject.toml whose [build-system] requires setuptools,
#               wheel and packaging (no build-backend: setup.py), a setup.py that builds
#               the pure-Python package with AITER_TRITON_ONLY=1 and otherwise a HIP
#               library (here: compiled for the first PYTORCH_ROCM_ARCH target only, a
#               build that drops the others without a word), and the package path
#               flash-attention imports (aiter/ops/triton/_triton_kernels/flash_attn_triton_amd)
#   flash_attn  Dao-AILab/flash-attention since the move to AITER (2026-03): no
#               pyproject.toml, a third_party/aiter submodule, and a setup.py that for the
#               Triton AMD backend (FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE) runs `git
#               submodule update --init third_party/aiter` and `pip install
#               --no-build-isolation third_party/aiter` inside its build unless told not to
#               (FLASH_ATTENTION_SKIP_AITER_INSTALL=TRUE, what kiln's patch adds upstream)
# Proves: --with=flash_attn brings aiter in and builds it first; flash_attn's build uses
# the aiter stage's install (it records the aiter it saw); C_SUBMODULES=no leaves the
# submodule empty; without the variable the build reaches for the network and fails;
# --without=aiter is refused in one line; a wheel whose GPU code lacks an --arch target
# fails stack.smoke naming the wheel and the file in it.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"
need clang-19

# the build requirements aiter's pyproject declares, offline: Debian's setuptools and
# wheel wheels, and packaging made a wheel from Debian's python3-packaging
mkdir -p "$T/wheelhouse"
cp /usr/share/python-wheels/setuptools-*.whl /usr/share/python-wheels/wheel-*.whl "$T/wheelhouse/" || exit 2
"$PY3" "$KILN_SRC/tests/regress/toy-mkwheel.py" "$T/wheelhouse" packaging 23.0 "" \
	"packaging=/usr/lib/python3/dist-packages/packaging" >/dev/null || missing "needs python3-packaging"

mk_aiter () {
	d=$T/mirror/aiter
	k=$d/aiter/ops/triton/_triton_kernels/flash_attn_triton_amd
	mkdir -p "$k" "$d/csrc"
	cat >"$d/pyproject.toml" <<'EOF'
[build-system]
requires = [
    "setuptools>=45",
    "wheel",
    "packaging",
]

[tool.ruff]
target-version = "py310"
EOF
	cat >"$d/setup.py" <<'EOF'
import os, subprocess
from setuptools import setup, Distribution
from setuptools.command.build_py import build_py

# the toy's switches, named as aiter's setup.py names them
TRITON_ONLY = os.environ.get("AITER_TRITON_ONLY", "0") == "1"

class ForcePlatlib(Distribution):
    def has_ext_modules(self):
        return not TRITON_ONLY

class BuildPy(build_py):
    def run(self):
        super().run()
        if TRITON_ONLY:
            return
        # the HIP library: only the first target of PYTORCH_ROCM_ARCH (the toy's build
        # drops the others without a word, as vLLM's CMake does for an arch it lacks)
        first = os.environ["PYTORCH_ROCM_ARCH"].split(";")[0]
        clang = os.path.join(os.environ["ROCM_PATH"], "llvm", "bin", "clang")
        o = os.path.join("build", "kern.o")
        os.makedirs("build", exist_ok=True)
        subprocess.check_call([clang, "-x", "hip", "-nogpulib", "-nogpuinc", "-fPIC", "-c",
                               "csrc/kern.hip", "-o", o, "--offload-arch=" + first])
        subprocess.check_call([os.environ.get("CC", "cc"), "-shared", "-o",
                               os.path.join(self.build_lib, "aiter", "libkern.so"), o])

setup(name="amd-aiter", version=open("VERSION").read().strip(),
      packages=["aiter", "aiter.ops", "aiter.ops.triton", "aiter.ops.triton._triton_kernels",
                "aiter.ops.triton._triton_kernels.flash_attn_triton_amd"],
      distclass=ForcePlatlib, cmdclass={"build_py": BuildPy})
EOF
	# the toy torch's HIP kernel (graph-toy.inc) serves as AITER's
	cp "$T/mirror/torch/csrc/kernel.hip" "$d/csrc/kern.hip" || exit 2
	printf '0.1.16\n' >"$d/VERSION"
	printf '__version__ = "0.1.16"\n' >"$d/aiter/__init__.py"
	for p in ops ops/triton ops/triton/_triton_kernels; do : >"$d/aiter/$p/__init__.py"; done
	printf 'def flash_attn_2(q):\n    return "aiter-triton:%%s" %% q\n' >"$k/__init__.py"
	printf '/build/\n*.egg-info\n' >"$d/.gitignore"
	(cd "$d" && git init -q -b main . && git add . && git commit -qm "toy aiter" && git tag v0.1.16) || exit 2
}

mk_flash () {
	d=$T/mirror/flash_attn
	mkdir -p "$d/flash_attn"
	cat >"$d/setup.py" <<'EOF'
import os, subprocess, sys
import torch
from setuptools import setup

# the toy's switches, named as flash-attention's setup.py names them
BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")
IS_ROCM = BUILD_TARGET == "rocm" or (BUILD_TARGET == "auto" and torch.ARCH.startswith("gfx"))
TRITON = os.getenv("FLASH_ATTENTION_TRITON_AMD_ENABLE", "FALSE") == "TRUE"
if IS_ROCM and TRITON:
    if os.getenv("FLASH_ATTENTION_SKIP_AITER_INSTALL", "FALSE") == "TRUE":
        import aiter
        seen = "%s %s" % (aiter.__version__, os.path.dirname(aiter.__file__))
    else:
        # what upstream does inside its build: the submodule, then pip on it
        if os.path.isdir(".git"):
            subprocess.run(["git", "submodule", "update", "--init", "third_party/aiter"], check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                        "third_party/aiter"], check=True)
        seen = "pip"
    with open("flash_attn/_aiter.py", "w") as f:
        f.write("BUILT_AGAINST = %r\n" % seen)

setup(name="flash_attn", version=open("VERSION").read().strip(), packages=["flash_attn"])
EOF
	cat >"$d/flash_attn/__init__.py" <<'EOF'
from aiter.ops.triton._triton_kernels.flash_attn_triton_amd import flash_attn_2
from flash_attn._aiter import BUILT_AGAINST
def flash_attn_func(q):
    return flash_attn_2(q)
EOF
	printf '2.8.4\n' >"$d/VERSION"
	printf '/build/\n*.egg-info\nflash_attn/_aiter.py\n' >"$d/.gitignore"
	(cd "$d" && git init -q -b main . && git add . && git commit -qm "toy flash-attention" &&
		git -c protocol.file.allow=always submodule -q add "$T/mirror/aiter" third_party/aiter &&
		git config -f .gitmodules submodule.third_party/aiter.url https://example.invalid/toy/aiter &&
		git add .gitmodules && git commit -qm "third_party/aiter" && git tag v2.8.4) || exit 2
}

mk_aiter; mk_flash
cat >>"$T/pins.env" <<'EOF'
stack_WITHOUT=vision,audio
aiter_URL=https://example.invalid/toy/aiter
aiter_REF=v0.1.16
aiter_SUBMODULES=no
aiter_ENV="AITER_TRITON_ONLY=1 AITER_USE_SYSTEM_TRITON=1"
flash_attn_URL=https://example.invalid/toy/flash_attn
flash_attn_REF=v2.8.4
flash_attn_SUBMODULES=no
flash_attn_ENV="FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE FLASH_ATTENTION_FORCE_BUILD=TRUE FLASH_ATTENTION_SKIP_AITER_INSTALL=TRUE"
EOF
toy_venv "$T/venv"

# conf DIR PINS [ARG]...: the toy stack with --with=flash_attn for AMD targets
conf () {
	cdir=$1 cp=$2
	shift 2
	mkdir -p "$cdir" && cd "$cdir" || exit 2
	"$KSRC/configure" --python="$T/venv/bin/python" --pins="$cp" --mirror="$T/mirror" \
		--rocm-path="$T/rocm" --wheelhouse="$T/wheelhouse" --jobs=2 --with=flash_attn KILN_BIN="$KILN_BIN" "$@"
}

check "configure --with=flash_attn" conf "$T/b" "$T/pins.env" --arch=gfx1100
has "configure says aiter comes with flash_attn's Triton AMD backend" "$T/.out" \
	"flash_attn: its Triton AMD backend is AITER's: the aiter component is built first"
for s in aiter.src aiter.patch aiter.deps aiter.wheel aiter.install flash_attn.wheel flash_attn.install; do
	grep -q "^build \$bdir/stamp/$s:" build/stack.ninja && ok "the graph has $s" || notok "the graph has $s"
done
grep '^build \$bdir/stamp/flash_attn.wheel:' build/stack.ninja | grep -q 'stamp/aiter.install' &&
	ok "flash_attn.wheel comes after aiter.install" || notok "flash_attn.wheel comes after aiter.install"
has "flash_attn.wheel's key names the modules it builds against" build/keys/flash_attn.wheel 'MODULES="torch aiter"'
has "flash_attn.src's key: no submodules" build/keys/flash_attn.src 'SUBMODULES="no"'
lacks "torch.src's key has no SUBMODULES line (keys of other trees as before)" build/keys/torch.src SUBMODULES

ninja >"$T/first.log" 2>&1; brc=$?
same "the stack builds" 0 "$brc"
[ "$brc" = 0 ] || { tail -n 40 "$T/first.log" | sed 's/^/#   /'; }
got=$(rebuilt "$T/first.log")
case " $got " in
*" aiter.install "*" flash_attn.wheel "*) ok "aiter and flash_attn were built ($got)" ;;
*) notok "aiter and flash_attn were built (got $got)" ;;
esac
a=$(grep -n 'aiter.install: rebuilt' "$T/first.log" | cut -d: -f1)
f=$(grep -n 'flash_attn.wheel: rebuilt' "$T/first.log" | cut -d: -f1)
[ -n "$a" ] && [ -n "$f" ] && [ "$a" -lt "$f" ] && ok "aiter.install finished before flash_attn.wheel" ||
	notok "aiter.install finished before flash_attn.wheel (lines $a, $f)"
site=$("$T/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
same "flash_attn was built against the aiter stage's install" "0.1.16 $site/aiter" \
	"$("$T/venv/bin/python" -c 'import flash_attn; print(flash_attn.BUILT_AGAINST)' 2>&1)"
same "flash_attn runs AITER's Triton kernel path" "aiter-triton:q" \
	"$(cd / && "$T/venv/bin/python" -c 'import flash_attn; print(flash_attn.flash_attn_func("q"))' 2>&1)"
check "the submodule folder stayed empty (flash_attn_SUBMODULES=no)" test -z "$(ls -A build/src/flash_attn/third_party/aiter 2>/dev/null)"
lacks "no pip inside flash_attn's build" build/logs/flash_attn.wheel.log "pip install"
has "aiter's build requirements came from the wheelhouse" build/deps/aiter.lock "packaging==23.0"
w=$(cat build/wheels/aiter.picked)
case "${w##*/}" in amd_aiter-0.1.16-py3-none-any.whl) ok "aiter's wheel is pure Python (${w##*/})" ;;
*) notok "aiter's wheel is pure Python (${w##*/})" ;; esac
has "stack.smoke names the wheels without GPU code" build/logs/stack.smoke.log "smoke: ${w##*/}: no GPU code"
has "stack.smoke imports flash_attn" build/logs/stack.smoke.log "flash_attn"
check "a second ninja: no work" ninja
has "no work to do" "$T/.out" "no work to do"

# without the variable the toy does what upstream's setup.py does: the submodule and pip,
# both reaching for the network; the build fails and says where
sed 's/ FLASH_ATTENTION_SKIP_AITER_INSTALL=TRUE//' "$T/pins.env" >"$T/pins-pip.env"
check "configure without FLASH_ATTENTION_SKIP_AITER_INSTALL" conf "$T/b2" "$T/pins-pip.env" --arch=gfx1100
exits "flash_attn.wheel fails" 1 ninja flash_attn.wheel
has "its build reached for the submodule's URL" build/logs/flash_attn.wheel.log "example.invalid/toy/aiter"
check "no stamp for flash_attn.wheel" test ! -f build/stamp/flash_attn.wheel

# --without=aiter with the Triton backend: one line
exits "--without=aiter is refused" 2 conf "$T/b3" "$T/pins.env" --arch=gfx1100 --without=aiter
same "in one line" 1 "$(grep -c . "$T/.err")"
has "naming the pip install it would run" "$T/.err" "would pip-install third_party/aiter inside its build"

# a wheel whose GPU code lacks an --arch target fails stack.smoke naming wheel and file
sed 's/^aiter_ENV=.*/aiter_ENV="AITER_USE_SYSTEM_TRITON=1"/' "$T/pins.env" >"$T/pins-hip.env"
check "configure aiter with its HIP library, two targets" conf "$T/b4" "$T/pins-hip.env" --arch=gfx1100,gfx1151
exits "stack.smoke fails" 1 ninja stack.smoke
w=$(cat build/wheels/aiter.picked)
has "naming the wheel, the file and the target" "$T/.out" \
	"${w##*/} does not cover gfx1151 (its aiter/libkern.so lacks gfx1151)"
has "torch's folder covers both" build/logs/stack.smoke.log "gfx1151: covered natively"
check "no stamp for stack.smoke" test ! -f build/stamp/stack.smoke
check "configure the same for gfx1100 alone" conf "$T/b4" "$T/pins-hip.env" --arch=gfx1100
check "stack.smoke passes: the wheel covers its one target" ninja stack.smoke
