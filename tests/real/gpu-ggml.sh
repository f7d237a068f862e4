#!/bin/sh
# tests/real/gpu-ggml.sh DEV [OUT]: ggml (ggml-org/ggml) with GGML_CUDA=ON for sm_90, built
# by the stack graph from env/tracks/ggml-cuda.env on a CUDA machine, and ggml.smoke's
# `test-backend-ops test -b CUDA0` (every op on the GPU compared with the CPU backend).
# DEV as tests/real/gpu.sh reads it (tests/real/gpu-prep.sh), plus DEV/mirror/ggml.git: a
# bare mirror of ggml holding the commit the track pins (a shallow one is enough:
#   git clone --bare --depth 1 https://github.com/ggml-org/ggml DEV/mirror/ggml.git).
# kiln's tools are built by gpu.sh's tools step. Every step's time goes to OUT/figures,
# its output to OUT/log; ggml.smoke's log (test-backend-ops' output) to OUT/test-backend-ops.log.
# Environment: KILN_GPU_WORK, KILN_GPU_PYTHON and KILN_GPU_ARCH as for gpu.sh.
set -u
DEV=$(cd "${1:?usage: gpu-ggml.sh DEV [OUT]}" && pwd) || exit 2
OUT=${2:-${OUT:-/tmp/kiln-gpu-out}}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
K=$DEV/kiln
W=${KILN_GPU_WORK:-/tmp/kiln-gpu}
PY=${KILN_GPU_PYTHON:-/opt/torch/.venv/bin/python}
ARCH=${KILN_GPU_ARCH:-sm_90}
KILN_GPU_STEPS=tools sh "$K/tests/real/gpu.sh" "$DEV" "$OUT" || exit 1
KB=$W/tools/build/bin
PATH=$W/bin:$(dirname "$PY"):/usr/local/cuda/bin:$PATH
export PATH
fails=0
log () { printf '%s\n' "$*" | tee -a "$OUT/log"; }
# t NAME CMD...: as gpu.sh's: CMD's output to the log, its time to figures
t () {
	n=$1; shift
	log "== $n: $*"
	t0=$(date +%s.%N)
	"$@" >>"$OUT/log" 2>&1
	rc=$?
	f=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }')
	printf '%-28s %8s s  exit %s\n' "$n" "$f" "$rc" | tee -a "$OUT/figures" | tee -a "$OUT/log"
	[ "$rc" = 0 ] || fails=$((fails + 1))
	return "$rc"
}
log "== cmake: $(cmake --version | head -n 1); nvcc: $(nvcc --version | tail -n 1)"
b=$W/ggml
mkdir -p "$b"
t configure-ggml env -C "$b" "$K/configure" --arch="$ARCH" --python="$PY" \
	--pins="$K/env/tracks/ggml-cuda.env" --mirror="$DEV/mirror" --jobs="$(nproc)" \
	PKG_CONFIG="$W/bin/pkg-config" KILN_BIN="$KB" || exit 1
t ninja-ggml ninja -C "$b" stack
grep -E '^ggml\.[a-z]*: ' "$OUT/log" | tee -a "$OUT/figures"
cp "$b/build/logs/ggml.smoke.log" "$OUT/test-backend-ops.log" 2>/dev/null
tail -n 60 "$b/build/logs/ggml.build.log" >"$OUT/ggml.build.log.tail" 2>/dev/null
cp "$b/build/build-info.json" "$OUT/build-info.json" 2>/dev/null
t ninja-noop ninja -C "$b" stack
t gpucheck-targets sh -c "'$KB/gpucheck' targets '$b/build/prefix/ggml/lib/libggml-cuda.so' | tee '$OUT/targets'"
t gpucheck-cover "$KB/gpucheck" cover --target="$ARCH" "$b/build/prefix/ggml/lib/libggml-cuda.so"
log "== test-backend-ops: $(grep -E 'tests passed|Backend CUDA0|OK|FAIL' "$OUT/test-backend-ops.log" | tail -n 3 | tr '\n' ' ')"
log "== $fails steps failed"
[ "$fails" = 0 ]
