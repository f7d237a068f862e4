#!/bin/sh
# tests/real/gpu-ggml.sh DEV [OUT]: ggml (ggml-org/ggml) with GGML_CUDA=ON for sm_90, built
# by the stack graph from env/tracks/ggml-cuda.env on a CUDA machine, and ggml.smoke's
# `test-backend-ops test -b CUDA0 -j JOBS` (every op on the GPU compared with the CPU
# backend, JOBS workers: test-backend-ops' -j, tests/test-backend-ops.cpp at the pin).
# DEV as tests/real/gpu.sh reads it (tests/real/gpu-prep.sh), plus DEV/mirror/ggml.git: a
# bare mirror of ggml holding the commit the track pins (a shallow one is enough:
#   git clone --bare --depth 1 https://github.com/ggml-org/ggml DEV/mirror/ggml.git).
# Two steps (KILN_GPU_GGML_STEPS, default "build test"), so that each fits a 10-minute call
# on a machine that keeps KILN_GPU_WORK between calls:
#   build  kiln's tools (gpu.sh's tools step), configure, ninja ggml.install
#   test   ninja stack (ggml.smoke: test-backend-ops), a no-op ninja, gpucheck targets and
#          cover of libggml-cuda.so
# Every step's time goes to OUT/figures, its output to OUT/log; ggml.smoke's log
# (test-backend-ops' output) to OUT/test-backend-ops.log, also when the step fails.
# Environment: KILN_GPU_WORK, KILN_GPU_PYTHON and KILN_GPU_ARCH as for gpu.sh;
# KILN_GGML_JOBS (test-backend-ops' workers, default 8); KILN_GGML_TIMEOUT (seconds: stops
# the test step's ninja with SIGINT after that long, so the log is still copied).
set -u
DEV=$(cd "${1:?usage: gpu-ggml.sh DEV [OUT]}" && pwd) || exit 2
OUT=${2:-${OUT:-/tmp/kiln-gpu-out}}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
K=$DEV/kiln
W=${KILN_GPU_WORK:-/tmp/kiln-gpu}
PY=${KILN_GPU_PYTHON:-/opt/torch/.venv/bin/python}
ARCH=${KILN_GPU_ARCH:-sm_90}
STEPS=${KILN_GPU_GGML_STEPS:-build test}
JOBS=${KILN_GGML_JOBS:-8}
mkdir -p "$W" && W=$(cd "$W" && pwd) || exit 2
KILN_GPU_WORK=$W
export KILN_GPU_WORK
. "$K/tests/real/gpu.inc"
want () { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
if want build; then
	KILN_GPU_STEPS=tools sh "$K/tests/real/gpu.sh" "$DEV" "$OUT" || exit 1
fi
KB=$W/tools/build/bin
PATH=$W/bin:$(dirname "$PY"):/usr/local/cuda/bin:$PATH
export PATH
b=$W/ggml
lim () { if [ -n "${KILN_GGML_TIMEOUT:-}" ]; then timeout -s INT "$KILN_GGML_TIMEOUT" "$@"; else "$@"; fi; }
if want build; then
	log "== cmake: $(cmake --version | head -n 1); nvcc: $(nvcc --version | tail -n 1)"
	# the track, with test-backend-ops' workers
	sed "s|^ggml_CHECK=.*|ggml_CHECK=\"test-backend-ops test -b CUDA0 -j $JOBS\"|" \
		"$K/env/tracks/ggml-cuda.env" >"$W/ggml-cuda.env"
	mkdir -p "$b"
	t configure-ggml env -C "$b" "$K/configure" --arch="$ARCH" --python="$PY" \
		--pins="$W/ggml-cuda.env" --mirror="$DEV/mirror" --jobs="$(nproc)" \
		PKG_CONFIG="$W/bin/pkg-config" KILN_BIN="$KB" || exit 1
	t ninja-ggml-install ninja -C "$b" ggml.install
	grep -E '^ggml\.[a-z]*: ' "$OUT/log" | tee -a "$OUT/figures"
	tail -n 60 "$b/build/logs/ggml.build.log" >"$OUT/ggml.build.log.tail" 2>/dev/null
fi
if want test; then
	t ninja-stack lim ninja -C "$b" stack
	grep -E '^(ggml|stack)\.[a-z]*: ' "$OUT/log" | sort -u | tee -a "$OUT/figures"
	cp "$b/build/logs/ggml.smoke.log" "$OUT/test-backend-ops.log" 2>/dev/null
	cp "$b/build/build-info.json" "$OUT/build-info.json" 2>/dev/null
	t ninja-noop ninja -C "$b" stack
	t gpucheck-targets sh -c "'$KB/gpucheck' targets '$b/build/prefix/ggml/lib/libggml-cuda.so' | tee '$OUT/targets'"
	t gpucheck-cover "$KB/gpucheck" cover --target="$ARCH" "$b/build/prefix/ggml/lib/libggml-cuda.so"
	log "== test-backend-ops: $(grep -E 'tests passed|Backend CUDA0|FAIL' "$OUT/test-backend-ops.log" | tail -n 3 | tr '\n' ' ')"
fi
log "== $fails steps failed"
[ "$fails" = 0 ]
