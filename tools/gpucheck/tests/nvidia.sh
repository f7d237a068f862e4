#!/bin/sh
# gpucheck cover's NVIDIA rules on fatbins made by nvcc 13 (compile only, no GPU): a
# module gated by sm_90a-only code, a PTX-only module, family-specific 'f' cubins, and
# NVIDIA's own libraries (one runnable module is enough; none is a warning, not a failure).
. "$KILN_SRC/tests/lib.sh"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$NVCC" ] || optional cuda "no nvcc at $NVCC (CUDA is not a Debian package)"
need cc
cd "$T" || exit 2
printf '__global__ void K(float *x) { x[threadIdx.x] *= 2.0f; }\n' >k.cu
nv () { o=$1; shift; "$NVCC" -c -Xcompiler -fPIC -DK="k_${o%.o}" -o "$o" k.cu "$@" 2>"$T/cc.err" || { notok "nvcc $*"; cat "$T/cc.err"; exit 1; }; }
nv plain.o -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
nv gated.o -gencode arch=compute_90a,code=sm_90a
nv ptx.o -gencode arch=compute_80,code=compute_80
nv fam.o -gencode arch=compute_100f,code=sm_100f -gencode arch=compute_75,code=sm_75
cc -shared -o libown.so plain.o gated.o || exit 2
cc -shared -o libgatedonly.so gated.o || exit 2
cc -shared -o libptx.so ptx.o || exit 2

check "targets: the 'a' and 'f' variants" gpucheck targets gated.o fam.o
has "sm_90a from the fatbin flags" "$T/.out" "sm_90a "
has "sm_100f from the fatbin flags" "$T/.out" "sm_100f "
exits "sm_80: the sm_90a module is gated, not a gap" 0 gpucheck cover --target=sm_80 libown.so
has "gated modules are said" "$T/.out" "1 arch-specific modules of other GPUs skipped"
exits "sm_90: both modules run" 0 gpucheck cover --target=sm_90 libown.so
exits "sm_100: sm_80/sm_90 cubins without PTX do not run" 1 gpucheck cover --target=sm_100 libown.so
exits "sm_80: a library of only sm_90a code has nothing that runs" 1 gpucheck cover --target=sm_80 libgatedonly.so
has "says why" "$T/.out" "all arch-specific for other GPUs"
exits "sm_90: PTX for compute_80 is JIT-compiled" 0 gpucheck cover --target=sm_90 libptx.so
has "said as PTX" "$T/.out" "only as PTX (compute_80)"
exits "sm_75: PTX for compute_80 cannot go down" 1 gpucheck cover --target=sm_75 libptx.so
exits "sm_103: sm_100f runs within its family" 0 gpucheck cover --target=sm_103 fam.o
exits "sm_120: sm_100f does not leave its family" 1 gpucheck cover --target=sm_120 fam.o

# the same sm_75-only code as NVIDIA's library and as your own extension
mkdir -p site/nvidia/cu13/lib site/ext
cc -shared -o site/nvidia/cu13/lib/libcufft.so.12 plain.o || exit 2
cc -shared -o site/ext/_C.so ptx.o || exit 2
# cuFFT's way: its building blocks linked at run time through a dlopen'd libnvJitLink
printf 'const char *jitlib(void) { return "libnvJitLink.so.13"; }\n' >dl.c
cc -shared -fPIC -o site/nvidia/cu13/lib/libcufftjit.so.12 plain.o dl.c || exit 2
exits "sm_75: an NVIDIA library without a module for it is a warning" 0 gpucheck cover -v --target=sm_75 site/nvidia
has "one that dlopens nvJitLink links its code at run time" "$T/.out" "libcufftjit.so.12: covered [NVIDIA library: links its code at run time (nvJitLink/NVRTC)]"
has "the warning names it" "$T/.out" "warning: site/nvidia/cu13/lib/libcufft.so.12: none of its 1 modules runs on sm_75"
exits "sm_75: your own extension without code for it fails" 1 gpucheck cover --target=sm_75 site
has "and names it" "$T/.out" "site/ext/_C.so"
check "cover --json: the rule per file" gpucheck cover --json --target=sm_90 site
has "NVIDIA library rule" "$T/.out" '"nvidia_library":true,"rule":"NVIDIA library: at least one module runs'
has "own code rule" "$T/.out" '"rule":"own code: a runnable module, and every module not arch-gated runs"'
