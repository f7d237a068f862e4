#!/bin/sh
# tests/real/gpu.sh DEV [OUT]: kiln on a CUDA machine, end to end, with a real CUDA
# extension (pytorch/extension-cpp) built by the stack graph for sm_90 against the
# machine's torch. Written for the project's GPU machine (Ubuntu 24.04, NVIDIA H100,
# CUDA 13.0 at /usr/local/cuda, torch 2.11.0+cu130 with cmake and ninja in
# /opt/torch/.venv, no libgit2/libarchive/libdeflate/patchelf, no network), and runs
# on any such machine. DEV holds what the machine lacks:
#   DEV/kiln/            kiln's source (git archive HEAD | tar -x -C DEV/kiln)
#   DEV/debs/*.deb       Debian 12's libgit2, libarchive, libdeflate, OpenSSL, zstd, zlib,
#                        pcre2, pkgconf, ccache and patchelf (for auditwheel) packages with their libraries,
#                        and setuptools and wheel as wheels (the deps stage's --wheelhouse)
#                        (tests/real/gpu-debs.txt lists them; apt-get download them)
#   DEV/mirror/vision.git  a bare git mirror of pytorch/extension-cpp (the graph carries a
#                        custom extension in a component slot; vision's is used here)
#   DEV/aw/src           optional: auditwheel's source (git archive of pypa/auditwheel at
#                        6.7.0, its src/ folder) with Debian's python3-pyelftools and
#                        python3-packaging copied beside it; the fat step then times
#                        `auditwheel repair` on the same wheel, side by side with fatwheel
# The .debs are unpacked with dpkg -x, never installed: kiln's tools are linked against
# them (DT_RPATH, which also serves their own dependencies), pkg-config reads their .pc files through PKG_CONFIG_SYSROOT_DIR.
# Every step's time goes to OUT/figures, every output to OUT/log (and the terminal).
# Environment: KILN_GPU_WORK (scratch, default /tmp/kiln-gpu), KILN_GPU_PYTHON
# (/opt/torch/.venv/bin/python), KILN_GPU_ARCH (sm_90), KILN_GPU_STEPS (the steps to run,
# default "tools stack check noop ccache repro fat cover"; "cover" runs gpucheck cover
# --target=ARCH over the venv's site-packages, from a cold page cache and warm, and with an
# extension built by nvcc for sm_80 only (no PTX) beside it, which must fail naming it;
# "repro" builds in a second
# folder and compares the wheels byte for byte, then runs vision.wheel.verify; "ccacheplain" builds once more with
# --cache=ccache and nothing else, to show that it does not reach a setuptools build;
# "torchfat" makes the venv's torch wheel (venv-wheel.py) and times fatwheel and
# auditwheel repairing it with NVIDIA's libraries excluded and bundled, then imports torch
# from the fat wheel in a fresh venv and runs torch.ones(1, device="cuda") there).
set -u
DEV=$(cd "${1:?usage: gpu.sh DEV [OUT]}" && pwd) || exit 2
OUT=${2:-${OUT:-/tmp/kiln-gpu-out}}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
W=${KILN_GPU_WORK:-/tmp/kiln-gpu}
PY=${KILN_GPU_PYTHON:-/opt/torch/.venv/bin/python}
ARCH=${KILN_GPU_ARCH:-sm_90}
STEPS=${KILN_GPU_STEPS:-tools stack check noop ccache repro fat cover}
K=$DEV/kiln
R=$W/root
LIB=$R/usr/lib/x86_64-linux-gnu
mkdir -p "$W/bin" || exit 2
PATH=$W/bin:$(dirname "$PY"):/usr/local/cuda/bin:$PATH
export PATH
. "$K/tests/real/gpu.inc"

want () { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }

# --- the Debian libraries, unpacked; pkg-config, ccache and patchelf that use them ---------
unpack () {
	mkdir -p "$R"
	for d in "$DEV"/debs/*.deb; do dpkg -x "$d" "$R" || return 1; done
	# the -dev packages' lib*.so links are absolute or relative to /usr: make them point
	# into the unpacked tree
	find "$LIB" -maxdepth 1 -type l | while read -r l; do
		to=$(readlink "$l")
		case "$to" in /*) ln -sf "$R$to" "$l" ;; esac
	done
	cat >"$W/bin/pkg-config" <<EOF
#!/bin/sh
PKG_CONFIG_LIBDIR=$LIB/pkgconfig:$R/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$R LD_LIBRARY_PATH=$LIB exec $R/usr/bin/pkgconf "\$@"
EOF
	cat >"$W/bin/patchelf" <<EOF
#!/bin/sh
exec $R/usr/bin/patchelf "\$@"
EOF
	# ccache finds libhiredis through LD_LIBRARY_PATH, set for it alone (not for the
	# compilers it runs, which get the machine's own libraries)
	cat >"$W/bin/ccache" <<EOF
#!/bin/sh
LD_LIBRARY_PATH=$LIB exec $R/usr/bin/ccache "\$@"
EOF
	chmod +x "$W/bin/pkg-config" "$W/bin/patchelf" "$W/bin/ccache"
	pkg-config --modversion libgit2 libarchive libdeflate libcrypto zlib libzstd libcurl
}

if want tools; then
	log "== machine: $(uname -m) $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release) $(nproc) CPUs"
	log "== gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -n 1)"
	log "== env: CC=${CC-unset} CXX=${CXX-unset} CUDA_HOME=${CUDA_HOME-unset}"
	log "== nvcc: $(nvcc --version 2>&1 | tail -n 1)"
	log "== torch: $("$PY" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))' 2>&1 | tail -n 1)"
	t unpack-debs unpack || exit 1
	mkdir -p "$W/tools"
	# kiln's own build: Debian's headers first (OpenSSL's configuration header is in the
	# multiarch folder, which the compiler only searches under /usr); the tools find the
	# unpacked libraries by their rpath
	t configure-tools env -C "$W/tools" "$K/configure" PKG_CONFIG="$W/bin/pkg-config" \
		CFLAGS="-O2 -g -I$R/usr/include -I$R/usr/include/x86_64-linux-gnu" \
		LDFLAGS="-Wl,--disable-new-dtags,-rpath,$LIB" || exit 1
	t build-tools ninja -C "$W/tools" -j"$(nproc)" build/bin/srcpin build/bin/envclean \
		build/bin/wheelpick build/bin/hipify-wrap build/bin/gpucheck build/bin/fatwheel \
		build/bin/kiln-stage || exit 1
	for b in "$W"/tools/build/bin/*; do
		ldd "$b" | grep -q 'not found' && { log "$b: a library is not found:"; ldd "$b" | tee -a "$OUT/log"; }
	done
fi
KB=$W/tools/build/bin

# the pin file: extension-cpp in vision's slot; C_ENV cannot hold spaces, so the ccache
# build names compiler wrappers (see ccache below)
pins () {
	sha=$(git --git-dir="$DEV/mirror/vision.git" rev-parse HEAD)
	cat >"$W/ext.env" <<EOF
# pytorch/extension-cpp, built against the machine's torch ($PY)
torch_KIND=system
vision_URL=https://github.com/pytorch/extension-cpp
vision_REF=$sha
vision_SHA=$sha
vision_DIST=extension_cpp
vision_IMPORT=extension_cpp
vision_ENV="$1"
EOF
}

# stack B CACHE ENV: configure build folder B and build the stack in it; every build
# folder builds its wheels in one work folder, as CUDA builds must to give the same bytes
stack () {
	b=$1 cache=$2
	pins "$3"
	mkdir -p "$W/$b"
	t "configure-$b" env -C "$W/$b" "$K/configure" --arch="$ARCH" --python="$PY" --pin torch=system \
		--pins="$W/ext.env" --without=audio --mirror="$DEV/mirror" --cache="$cache" --work-dir="$W/wd" \
		--wheelhouse="$R/usr/share/python-wheels" \
		PKG_CONFIG="$W/bin/pkg-config" KILN_BIN="$KB" || return 1
	t "ninja-stack-$b" ninja -C "$W/$b" stack || { tail -n 40 "$W/$b"/build/logs/*.log | tee -a "$OUT/log"; return 1; }
}

if want stack; then
	# CC and CXX named explicitly: the stage's key file sets a shell variable CC (the
	# compiler's version line), which replaces an exported CC in the build's environment
	stack b1 none "USE_CUDA=1 CC=$(command -v gcc) CXX=$(command -v g++)"
	cat "$W/b1/build/logs/vision.wheel.log" "$W/b1/build/logs/stack.smoke.log" >>"$OUT/log" 2>&1
	cat "$W/b1/build/build-info.json" >"$OUT/build-info.json" 2>/dev/null
fi

if want check; then
	site=$("$PY" -c 'import extension_cpp, os; print(os.path.dirname(extension_cpp.__file__))')
	so=$(ls "$site"/_C*.so | head -n 1)
	log "extension: $so"
	t gpucheck-targets "$KB/gpucheck" targets "$so"
	t gpucheck-cover "$KB/gpucheck" cover --target="$ARCH" "$so"
	t gpucheck-cover-json sh -c "'$KB/gpucheck' cover --target='$ARCH' --json '$so' >'$OUT/cover.json'"
	t gpucheck-arch "$KB/gpucheck" --arch
	t gpucheck-smoke "$KB/gpucheck" smoke --python="$PY"
	t ext-op-on-gpu "$PY" -c '
import torch, extension_cpp
a = torch.randn(1 << 20, device="cuda"); b = torch.randn(1 << 20, device="cuda")
r = extension_cpp.ops.mymuladd(a, b, 2.5)
torch.cuda.synchronize()
err = (r - (a * b + 2.5)).abs().max().item()
assert r.is_cuda and torch.allclose(r, a * b + 2.5, rtol=1e-5, atol=1e-5), "mymuladd differs from a*b+2.5 by %g" % err
print("mymuladd on", torch.cuda.get_device_name(0), "over", r.numel(), "floats, max error", err)'
fi

if want noop; then
	t ninja-noop-b1 ninja -C "$W/b1" stack
	ninja -C "$W/b1" -n stack | tee -a "$OUT/log"
fi

if want ccache; then
	# --cache=ccache sets CMAKE_*_COMPILER_LAUNCHER, which a setuptools extension never
	# reads; the compilers are named through the environment instead: CC/CXX for the host
	# compiler (torch.utils.cpp_extension reads CXX), PYTORCH_NVCC for nvcc
	mkdir -p "$W/cc"
	for c in gcc g++; do printf '#!/bin/sh\nexec ccache %s "$@"\n' "$(command -v $c)" >"$W/cc/$c"; done
	printf '#!/bin/sh\nexec ccache %s "$@"\n' "$(command -v nvcc)" >"$W/cc/nvcc"
	chmod +x "$W"/cc/*
	export CCACHE_DIR="$W/ccache"
	rm -rf "$CCACHE_DIR"
	ce="USE_CUDA=1 CCACHE_DIR=$CCACHE_DIR CCACHE_BASEDIR=$W CCACHE_NOHASHDIR=1 CC=$W/cc/gcc CXX=$W/cc/g++ PYTORCH_NVCC=$W/cc/nvcc"
	ccache -z >/dev/null
	stack b2 ccache "$ce"
	ccache -s | tee -a "$OUT/log"
	ccache -z >/dev/null
	stack b3 ccache "$ce"
	ccache -s -v | tee -a "$OUT/log"
	cat "$W/b3/build/logs/vision.wheel.log" >>"$OUT/log"
fi

if want ccacheplain; then
	# --cache=ccache alone, as the graph sets it: ccache counts no call for this build
	export CCACHE_DIR="$W/ccache-plain"
	rm -rf "$CCACHE_DIR"
	ccache -z >/dev/null
	stack b4 ccache "USE_CUDA=1 CC=$(command -v gcc) CXX=$(command -v g++)"
	ccache -s | tee -a "$OUT/log"
	grep -c 'ccache' "$W/b4/build/logs/vision.wheel.log" | sed 's/^/lines naming ccache in the wheel log: /' | tee -a "$OUT/log"
fi

if want repro; then
	# reproducible bytes with nvcc: the same pins in a second build folder (another path,
	# no compiler cache) must give the same wheel, byte for byte; then kiln-stage verify
	# rebuilds b1's wheel stage in scratch and compares it member by member
	stack b5 none "USE_CUDA=1 CC=$(command -v gcc) CXX=$(command -v g++)"
	w1=$(cat "$W/b1/build/wheels/vision.picked") w5=$(cat "$W/b5/build/wheels/vision.picked")
	log "wheels: $w1 $w5"
	t repro-cmp cmp "$w1" "$w5"
	t repro-verify ninja -C "$W/b1" vision.wheel.verify
	sha256sum "$w1" "$w5" | tee -a "$OUT/log"
fi

if want fat; then
	w=$(cat "$W/b1/build/wheels/vision.picked")
	log "wheel: $w"
	mkdir -p "$W/fat"
	rm -f "$W"/fat/*.whl
	t fatwheel "$KB/fatwheel" --plat=auto \
		--exclude 'libc10*' --exclude 'libtorch*' --exclude 'libcuda.so*' "$w" -w "$W/fat"
	fw=$(ls "$W"/fat/*.whl | head -n 1)
	"$KB/fatwheel" -n --json --plat=auto --exclude 'libc10*' \
		--exclude 'libtorch*' --exclude 'libcuda.so*' "$w" -w "$W/fat2" >"$OUT/fatwheel-plan.json" 2>&1
	if [ -d "$DEV/aw/src/auditwheel" ]; then
		# the peer, side by side: three runs each, best time of each
		rm -rf "$W/aw" "$W/fat3"
		for i in 1 2 3; do
			t "auditwheel-repair-$i" env PYTHONPATH="$DEV/aw/src" "$PY" -m auditwheel repair \
				--exclude 'libc10*' --exclude 'libtorch*' --exclude 'libcuda.so*' -w "$W/aw" "$w"
			t "fatwheel-repair-$i" "$KB/fatwheel" -q --plat=auto --exclude 'libc10*' \
				--exclude 'libtorch*' --exclude 'libcuda.so*' "$w" -w "$W/fat3"
		done
		ls -l "$W"/aw/*.whl "$W"/fat3/*.whl | tee -a "$OUT/log"
		grep -E '^(auditwheel|fatwheel)-repair-' "$OUT/figures" | awk '$5 != 0 { bad = 1 } /^auditwheel-repair-/ { if (a == "" || $2 < a) a = $2 } /^fatwheel-repair-/ { if (f == "" || $2 < f) f = $2 }
			END { if (!bad && a != "" && f > 0) printf "fatwheel vs auditwheel, best of 3: %.3f s vs %.3f s, %.1fx\n", f, a, a / f }' \
			| tee -a "$OUT/figures" | tee -a "$OUT/log"
	fi
	# why the extension grew (2026-11-24: _C.abi3.so 182 KB; 2026-11-26: 8.4 MB): its
	# sections, the debug ones summed, and the compile line and setuptools of the build
	so=$W/ext-C.so
	"$PY" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); open(sys.argv[2], "wb").write(z.read([n for n in z.namelist() if n.endswith(".so")][0]))' "$w" "$so" || so=
	[ -n "$so" ] && size -A -d "$so" | grep -E '^(\.debug|\.text|\.nv_fatbin|Total)' | tee -a "$OUT/log"
	grep -h -E 'g\+\+ .*muladd\.cpp|setuptools' "$W/b1/build/logs/vision.wheel.log" "$W/b1/build/logs/vision.deps.log" 2>/dev/null | head -n 6 | cut -c 1-3000 | tee -a "$OUT/log"
	t wheel-check "$KB/wheelpick" --check "$fw"
	python3 -c 'import sys, zipfile; [print(i.filename, i.file_size) for i in zipfile.ZipFile(sys.argv[1]).infolist()]' "$fw" | tee -a "$OUT/log"
	t gpucheck-cover-fat "$KB/gpucheck" cover --target="$ARCH" "$fw"
	# the repaired wheel, installed in place of the built one, still runs the op
	t install-fat "$PY" -m pip install --no-deps --force-reinstall --no-index --disable-pip-version-check "$fw"
	t ext-op-fat "$PY" -c '
import torch, extension_cpp
a = torch.randn(4096, device="cuda")
assert torch.allclose(extension_cpp.ops.mymuladd(a, a, 1.0), a * a + 1.0); print("fat wheel: mymuladd ok")'
fi
# best NAME: the best time of the steps NAME-1, NAME-2 ... in OUT/figures (empty if one failed)
best () { awk -v n="$1-" 'index($1, n) == 1 { if ($5 != 0) bad = 1; if (b == "" || $2 < b) b = $2 } END { if (!bad) print b }' "$OUT/figures"; }
# ratio WHAT FW AW: one line "WHAT: fatwheel F s vs auditwheel A s, Rx" to the figures
ratio () { [ -n "$2" ] && [ -n "$3" ] && awk -v w="$1" -v f="$2" -v a="$3" 'BEGIN { printf "%s: fatwheel %.3f s vs auditwheel %.3f s, %.1fx\n", w, f, a, a / f }' | tee -a "$OUT/figures" | tee -a "$OUT/log"; }

if want torchfat; then
	# the torch wheel of the venv, repaired by both tools: "slim" with NVIDIA's libraries
	# excluded (a retag, nothing to bundle), "fat" with them bundled from the venv's nvidia
	# packages through LD_LIBRARY_PATH, as auditwheel finds them; the same options for
	# both; fatwheel best of KILN_GPU_RUNS (3), auditwheel best of KILN_GPU_AW_RUNS (3;
	# one run of the fat case takes minutes)
	site=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	nv=$(ls -d "$site"/nvidia/*/lib "$site"/nvidia/cu*/lib 2>/dev/null | sort -u | tr '\n' ':')
	rm -rf "$W/tw" && mkdir -p "$W/tw"
	t torch-wheel "$PY" "$K/tests/real/venv-wheel.py" "$PY" "${KILN_GPU_TORCH_DIST:-torch}" "$W/tw" 6
	tw=$(ls "$W"/tw/*.whl | head -n 1)
	ls -l "$tw" | tee -a "$OUT/log"
	# the globs in $slim go to the tools as they are: no file-name expansion while it is used
	slim="--exclude libcu* --exclude libnv* --exclude libnccl* --exclude libcudnn*"
	for i in $(seq "${KILN_GPU_RUNS:-3}"); do
		rm -rf "$W/tf-slim" "$W/tf-fat"
		set -f
		t "fw-torch-slim-$i" env -u LD_LIBRARY_PATH "$KB/fatwheel" repair -q $slim "$tw" -w "$W/tf-slim"
		set +f
		t "fw-torch-fat-$i" env LD_LIBRARY_PATH="$nv" "$KB/fatwheel" repair -q --exclude 'libcuda.so*' "$tw" -w "$W/tf-fat"
	done
	ls -l "$W"/tf-slim/*.whl "$W"/tf-fat/*.whl | tee -a "$OUT/log"
	env LD_LIBRARY_PATH="$nv" "$KB/fatwheel" repair -n --json --exclude 'libcuda.so*' "$tw" -w "$W/tf-x" >"$OUT/torchfat-plan.json" 2>&1
	# the fat wheel in a fresh venv, the venv's nvidia packages off every path: torch's
	# pure-Python needs come from the old venv through a .pth, torch and nvidia not
	rm -rf "$W/fv" "$W/deps" && mkdir -p "$W/deps"
	for e in "$site"/*; do case "${e##*/}" in torch|torch-*|nvidia|nvidia_*|functorch|torchgen|triton|triton-*|*.pth|__pycache__) ;; *) ln -s "$e" "$W/deps/" ;; esac; done
	"$PY" -m venv --without-pip "$W/fv" && fsite=$("$W/fv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') &&
		echo "$W/deps" >"$fsite/deps.pth"
	t install-torchfat "$PY" -m pip --python "$W/fv/bin/python" install -q --no-deps --no-index --no-compile --disable-pip-version-check "$(ls "$W"/tf-fat/*.whl)"
	t torchfat-cuda env -u LD_LIBRARY_PATH "$W/fv/bin/python" -c '
import torch, sys
x = torch.ones(1, device="cuda"); torch.cuda.synchronize()
maps = open("/proc/self/maps").read()
nv = sorted({l.split()[-1] for l in maps.splitlines() if "/nvidia/" in l and "site-packages" in l})
libs = sorted({l.split()[-1].rsplit("/", 1)[-1] for l in maps.splitlines() if "torch.libs/" in l})
print("torch", torch.__version__, "from", torch.__file__, "on", torch.cuda.get_device_name(0), "x =", x.tolist())
print("from torch.libs:", " ".join(libs))
assert not nv, "loaded from the venv nvidia packages: %s" % nv
assert torch.__file__.startswith(sys.prefix), torch.__file__'
	if [ -d "$DEV/aw/src/auditwheel" ]; then
		for i in $(seq "${KILN_GPU_AW_RUNS:-3}"); do
			rm -rf "$W/ta-slim" "$W/ta-fat"
			set -f
			t "aw-torch-slim-$i" env -u LD_LIBRARY_PATH PYTHONPATH="$DEV/aw/src" "$PY" -m auditwheel repair $slim -w "$W/ta-slim" "$tw"
			set +f
			t "aw-torch-fat-$i" env LD_LIBRARY_PATH="$nv" PYTHONPATH="$DEV/aw/src" timeout "${KILN_GPU_AW_LIMIT:-400}" "$PY" -m auditwheel repair --exclude 'libcuda.so*' -w "$W/ta-fat" "$tw"
		done
		ls -l "$W"/ta-slim/*.whl "$W"/ta-fat/*.whl | tee -a "$OUT/log"
		ratio "torch wheel, NVIDIA excluded (slim)" "$(best fw-torch-slim)" "$(best aw-torch-slim)"
		ratio "torch wheel, NVIDIA bundled (fat)" "$(best fw-torch-fat)" "$(best aw-torch-fat)"
	fi
fi
# cold: drop the page cache (root only; says so otherwise)
cold () { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || log "(cannot drop the page cache: not root; this time is warm)"; }

if want cover; then
	site=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	log "site-packages: $site ($(find "$site" -type f | wc -l) files)"
	# the venv as installed: torch's own CUDA code and NVIDIA's libraries
	cold
	t cover-venv-cold "$KB/gpucheck" cover --target="$ARCH" "$site"
	t cover-venv-warm "$KB/gpucheck" cover --target="$ARCH" "$site"
	cold
	t targets-venv-cold sh -c "'$KB/gpucheck' targets --json '$site' >'$OUT/targets-venv.json'"
	t cover-venv-json sh -c "'$KB/gpucheck' cover --target='$ARCH' --json -v '$site' >'$OUT/cover-venv.json'"
	"$KB/gpucheck" cover --target="$ARCH" -v "$site" >"$OUT/cover-venv.txt" 2>&1
	# an extension made for sm_80 alone, without PTX: it cannot run on sm_90
	mkdir -p "$W/ext80/ext80"
	printf '__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }\nvoid launch(float *x) { scale<<<1, 32>>>(x, 2.0f); }\n' >"$W/ext80/k.cu"
	t nvcc-sm80-only nvcc -shared -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 \
		-o "$W/ext80/ext80/_C.cpython-312-x86_64-linux-gnu.so" "$W/ext80/k.cu"
	"$KB/gpucheck" cover --target="$ARCH" "$site" "$W/ext80" >"$OUT/cover-sm80.txt" 2>&1
	rc=$?
	cat "$OUT/cover-sm80.txt" >>"$OUT/log"
	grep -q '_C.cpython-312-x86_64-linux-gnu.so' "$OUT/cover-sm80.txt" && [ "$rc" = 1 ] &&
		log "cover-sm80-only: exit 1, naming the extension" ||
		{ log "cover-sm80-only: exit $rc, want 1 naming the extension"; fails=$((fails + 1)); }
	cold
	t cover-sm80-cold-exit1 sh -c "'$KB/gpucheck' cover --target='$ARCH' '$site' '$W/ext80' >/dev/null; test \$? = 1"
	# the peer: cuobjdump --list-elf over torch's CUDA library, beside gpucheck targets
	tc=$(ls "$site"/torch/lib/libtorch_cuda.so 2>/dev/null)
	if [ -n "$tc" ] && command -v cuobjdump >/dev/null; then
		t cuobjdump-list-elf sh -c "cuobjdump --list-elf '$tc' | wc -l"
		t gpucheck-targets-torch-cuda "$KB/gpucheck" targets "$tc"
	fi
fi
log "== $fails steps failed"
cat "$OUT/figures"
[ "$fails" = 0 ]
