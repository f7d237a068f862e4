#!/bin/sh
# gpucheck cover on the NVIDIA shapes nvcc links (issue 43), without a GPU: the fatbins are
# built by nvfatbin.py around cubins from `nvcc --cubin` where CUDA is at /usr/local/cuda,
# else around cubins the script writes. The shapes:
# - TORCH_CUDA_ARCH_LIST="8.0+PTX": nvcc's link adds its device-link stub (an sm_80 cubin
#   with no function) as a fatbin of its own beside the module (cubin + PTX): the stub is
#   no gap on sm_90 (the kernel launches there: tests/real/gpu-oracle.sh);
# - sm_75+PTX, and PTX 8.9 + sm_100, the same way;
# - -rdc: the device-linked cubin in .nv_fatbin, the objects' code in __nv_relfatbin.
. "$KILN_SRC/tests/lib.sh"
need cc objcopy python3
cd "$T" || exit 2
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
py () { /usr/bin/python3 "$KILN_SRC/tools/gpucheck/tests/nvfatbin.py" "$@" || { notok "nvfatbin.py $*"; exit 1; }; }
# cubin SM NAME [nofunc]: NAME.cubin for sm_SM, with a kernel, or without any function
if [ -x "$NVCC" ]; then
	echo "# cubins from $NVCC --cubin"
	printf '__global__ void K(float *x) { x[threadIdx.x] *= 2.0f; }\n' >k.cu
	printf 'int host_only(void) { return 0; }\n' >e.cu
	cubin () { "$NVCC" --cubin -arch="sm_$1" -o "$2.cubin" "$([ "${3:-}" = nofunc ] && echo e.cu || echo k.cu)" 2>cc.err ||
		{ notok "nvcc --cubin sm_$1"; cat cc.err; exit 1; }; }
else
	echo "# cubins written by nvfatbin.py (no nvcc at $NVCC)"
	cubin () { py cubin "$2.cubin" "$1" "${3:-K}"; }
fi
cc -shared -fPIC -o host.so -x c /dev/null 2>/dev/null || { printf 'int f(void){return 0;}\n' >h.c; cc -shared -fPIC -o host.so h.c; } || exit 2
# lib NAME SECTION=FATBIN...: host.so with those sections added (each a list of containers)
lib () {
	n=$1; shift; set -- "$@"
	args=
	for s; do args="$args --add-section ${s%%=*}=${s#*=} --set-section-flags ${s%%=*}=alloc,readonly"; done
	# shellcheck disable=SC2086
	objcopy $args host.so "$n" 2>/dev/null || { notok "objcopy $n"; exit 1; }
}
cubin 80 k80; cubin 80 stub80 nofunc; cubin 75 k75; cubin 75 stub75 nofunc
cubin 100 k100; cubin 100 stub100 nofunc

py fatbin stub80.fb sass:80:stub80.cubin
py fatbin mod80.fb sass:80:k80.cubin ptx:80
py cat exe80.bin stub80.fb mod80.fb
lib libptx80.so .nv_fatbin=exe80.bin
exits "8.0+PTX on sm_90: the kernel-less stub is no gap" 0 gpucheck cover --target=sm_90 libptx80.so
has "covered through PTX" "$T/.out" "only as PTX (compute_80)"
check "-v: the rule per module" gpucheck cover -v --target=sm_90 libptx80.so
has "the stub's rule" "$T/.out" "sm_80: device-link stub: a cubin with no function, never needed"
has "the module's rule" "$T/.out" "sm_80, compute_80: PTX: the driver JIT-compiles it"
check "--json: the rule per module" gpucheck cover --json --target=sm_90 libptx80.so
has "the stub is not needed" "$T/.out" '"targets":"sm_80","rule":"device-link stub: a cubin with no function, never needed","runs":false,"needed":false'
has "the module runs" "$T/.out" '"rule":"PTX: the driver JIT-compiles it for this or a newer GPU","runs":true,"needed":true'
exits "8.0+PTX on sm_80: the cubin" 0 gpucheck cover --target=sm_80 libptx80.so
exits "8.0+PTX on sm_75: nothing runs" 1 gpucheck cover --target=sm_75 libptx80.so
lacks "the stub is not named as the gap" "$T/.out" "offset 16384"

# the same stub with a function in it is a module of its own, sm_80 only: a gap on sm_90
py fatbin real80.fb sass:80:k80.cubin
py cat two80.bin real80.fb mod80.fb
lib libtwo80.so .nv_fatbin=two80.bin
exits "an sm_80-only module with a kernel beside it: NOT covered on sm_90" 1 gpucheck cover --target=sm_90 libtwo80.so
has "it is named" "$T/.out" "1 of 2 bundles lack it"
# a compressed cubin is not read: judged as code
py fatbin stubz.fb sasz:80:stub80.cubin
py cat z80.bin stubz.fb mod80.fb
lib libz80.so .nv_fatbin=z80.bin
exits "a compressed stub is judged as code: NOT covered on sm_90" 1 gpucheck cover --target=sm_90 libz80.so
# a cubin whose symbol table runs past its end: judged as code, no crash
py cubin bad.cubin 80 badsym
py fatbin badsym.fb sass:80:bad.cubin
py cat bad80.bin badsym.fb mod80.fb
lib libbad80.so .nv_fatbin=bad80.bin
exits "a cubin with a symbol table past its end: judged as code" 1 gpucheck cover --target=sm_90 libbad80.so

py fatbin stub75.fb sass:75:stub75.cubin
py fatbin mod75.fb sass:75:k75.cubin ptx:75
py cat exe75.bin stub75.fb mod75.fb
lib libptx75.so .nv_fatbin=exe75.bin
exits "7.5+PTX on sm_90: covered" 0 gpucheck cover --target=sm_90 libptx75.so
exits "7.5+PTX on sm_120: covered" 0 gpucheck cover --target=sm_120 libptx75.so

py fatbin stub100.fb sass:100:stub100.cubin
py fatbin mod89.fb ptx:89 sass:100:k100.cubin
py cat exe89.bin stub100.fb mod89.fb
lib libptx89.so .nv_fatbin=exe89.bin
exits "PTX 8.9 + sm_100 on sm_90: covered by the PTX" 0 gpucheck cover --target=sm_90 libptx89.so
exits "PTX 8.9 + sm_100 on sm_100: the cubin" 0 gpucheck cover --target=sm_100 libptx89.so
exits "PTX 8.9 + sm_100 on sm_86: NOT covered" 1 gpucheck cover --target=sm_86 libptx89.so

# -rdc: the linked cubin (sm_80) in .nv_fatbin, the object's cubin + PTX in __nv_relfatbin
py fatbin rel.fb sass:80:k80.cubin ptx:80
py fatbin relnoptx.fb sass:80:k80.cubin
lib librdc.so .nv_fatbin=real80.fb __nv_relfatbin=rel.fb
exits "-rdc on sm_80: the linked cubin" 0 gpucheck cover --target=sm_80 librdc.so
exits "-rdc 8.0+PTX on sm_90: the objects' PTX is JIT-linked" 0 gpucheck cover --target=sm_90 librdc.so
check "-rdc -v: the rules" gpucheck cover -v --target=sm_90 librdc.so
has "the relink rule" "$T/.out" "the linked cubin does not run; the runtime JIT-links the objects' PTX"
has "the object code is the linker's input" "$T/.out" "(__nv_relfatbin): sm_80, compute_80: -rdc object code"
lib librdc2.so .nv_fatbin=real80.fb __nv_relfatbin=relnoptx.fb
exits "-rdc without PTX on sm_90: NOT covered" 1 gpucheck cover --target=sm_90 librdc2.so
# an -rdc object before the device link: its relocatable code is all there is
lib librel.so __nv_relfatbin=rel.fb
exits "an -rdc object alone is judged by its own code" 0 gpucheck cover --target=sm_90 librel.so

# with nvcc: the real linked shapes
if [ -x "$NVCC" ]; then
	printf '__global__ void K(float *x) { x[threadIdx.x] *= 2.0f; }\nvoid run(float *d) { K<<<1, 1>>>(d); }\n' >r.cu
	g80='-gencode arch=compute_80,code=sm_80 -gencode arch=compute_80,code=compute_80'
	# shellcheck disable=SC2086
	"$NVCC" -shared -Xcompiler -fPIC $g80 -o libnv80.so r.cu 2>cc.err || { notok "nvcc 8.0+PTX"; cat cc.err; }
	exits "nvcc 8.0+PTX library on sm_90: covered" 0 gpucheck cover --target=sm_90 libnv80.so
	# shellcheck disable=SC2086
	"$NVCC" -rdc=true -shared -Xcompiler -fPIC $g80 -o libnvrdc.so r.cu 2>cc.err || { notok "nvcc -rdc"; cat cc.err; }
	exits "nvcc -rdc 8.0+PTX library on sm_90: covered by the relink" 0 gpucheck cover --target=sm_90 libnvrdc.so
	exits "nvcc -rdc 8.0+PTX library on sm_75: NOT covered" 1 gpucheck cover --target=sm_75 libnvrdc.so
fi
