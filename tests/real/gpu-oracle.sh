#!/bin/sh
# tests/real/gpu-oracle.sh [OUT]: gpucheck's NVIDIA verdicts against the GPU itself
# (issue 43). On a machine with an NVIDIA GPU and nvcc (the project's H200 machine:
# CUDA 13.0 at /usr/local/cuda, no libarchive or msgpack-c, which gpucheck does without),
# builds a matrix of programs and libraries with nvcc (cubins, PTX, arch-specific 'a',
# family-specific 'f', mixed, +PTX, -rdc), launches the kernel of each with lazy and eager
# module loading, and judges each with `gpucheck cover --target=SM`. Every verdict must
# equal the launch: exit 0 when the kernel ran (and wrote its value), 1 when it did not.
# OUT gets oracle.txt (one line per case: name, launch lazy, launch eager, verdict, agree),
# log.txt (nvcc, the launches' messages, gpucheck cover -v per case) and bins.tar.gz (the
# builds, to judge them again elsewhere). Environment: NVCC (/usr/local/cuda/bin/nvcc),
# ORACLE_SM (the GPU's target, default: what gpucheck --arch says, e.g. sm_90).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
OUT=${1:-${OUT:-/tmp/gpu-oracle}}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
W=$(mktemp -d /tmp/gpu-oracle.XXXXXX) || exit 2
LOG=$OUT/log.txt
: >"$LOG"
[ -x "$NVCC" ] || { echo "gpu-oracle: no nvcc at $NVCC"; exit 2; }

# gpucheck, built as bench/gpucheck.sh builds it on a bare machine: the optional
# libraries it finds, the rest compiled out
gc=$W/gpucheck
def=; libs="-lz -ldl"
[ -f /usr/include/zstd.h ] && libs="$libs -lzstd" || def="$def -DOFFLOAD_NO_ZSTD"
[ -f /usr/include/archive.h ] && libs="$libs -larchive" || def="$def -DGPUCHECK_NO_LIBARCHIVE"
[ -f /usr/include/msgpack.h ] && libs="$libs -lmsgpackc" || def="$def -DGPUCHECK_NO_MSGPACK"
mkdir -p "$W/o"
for f in "$src"/tools/lib/*.c; do
	cc -O2 -std=c17 -D_GNU_SOURCE $def -I"$src/tools/lib" -c "$f" -o "$W/o/${f##*/}.o" 2>/dev/null
done
ar rcs "$W/libk.a" "$W"/o/*.o &&
cc -O2 -std=c17 -D_GNU_SOURCE $def -I"$src/tools/lib" "$src"/tools/gpucheck/*.c "$W/libk.a" \
	-o "$gc" $libs -lpthread || { echo "gpu-oracle: gpucheck does not build here"; exit 2; }
echo "gpucheck built with:$def $libs" | tee -a "$LOG"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | tee -a "$LOG"
"$NVCC" --version | tail -1 | tee -a "$LOG"
SM=${ORACLE_SM:-$("$gc" --arch 2>/dev/null | head -1)}
case "$SM" in sm_*) ;; *) echo "gpu-oracle: gpucheck --arch says '$SM', not an sm"; exit 2 ;; esac
echo "device target: $SM" | tee -a "$LOG"

cd "$W" || exit 2
cat >k.cu <<'EOK'
#include <cstdio>
__global__ void K(int *x) { *x = 42; }
extern "C" int run(void)
{
	int *d = 0, h = 0;
	cudaError_t e = cudaMalloc(&d, sizeof *d);
	if (e == cudaSuccess) {
		K<<<1, 1>>>(d);
		e = cudaGetLastError();
	}
	if (e == cudaSuccess)
		e = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
	printf("%s %d\n", cudaGetErrorName(e), h);
	return e == cudaSuccess && h == 42 ? 0 : 1;
}
#ifndef LIB
int main(void) { return run(); }
#endif
EOK
printf 'int run(void);\nint main(void) { return run(); }\n' >main.c

g () { printf -- '-gencode arch=%s,code=%s ' "$1" "$2"; }
# name | exe or so | nvcc flags
cat >cases <<EOC
sm80|exe|$(g compute_80 sm_80)
sm90|exe|$(g compute_90 sm_90)
ptx80|exe|$(g compute_80 compute_80)
sm80+ptx80|exe|$(g compute_80 sm_80)$(g compute_80 compute_80)
sm75+ptx75|exe|$(g compute_75 sm_75)$(g compute_75 compute_75)
ptx89+sm100|exe|$(g compute_89 compute_89)$(g compute_100 sm_100)
sm90a|exe|$(g compute_90a sm_90a)
ptx90a|exe|$(g compute_90a compute_90a)
sm100a|exe|$(g compute_100a sm_100a)
sm100f|exe|$(g compute_100f sm_100f)
ptx100f|exe|$(g compute_100f compute_100f)
sm86|exe|$(g compute_86 sm_86)
sm86+ptx86|exe|$(g compute_86 sm_86)$(g compute_86 compute_86)
ptx90|exe|$(g compute_90 compute_90)
ptx100|exe|$(g compute_100 compute_100)
sm80+sm90a|exe|$(g compute_80 sm_80)$(g compute_90a sm_90a)
sm80+sm100f+ptx100f|exe|$(g compute_80 sm_80)$(g compute_100f sm_100f)$(g compute_100f compute_100f)
sm120f+ptx80|exe|$(g compute_120f sm_120f)$(g compute_80 compute_80)
arch-sm80|exe|-arch=sm_80
rdc-sm80+ptx80|exe|-rdc=true $(g compute_80 sm_80)$(g compute_80 compute_80)
rdc-sm90|exe|-rdc=true $(g compute_90 sm_90)
rdc-sm80|exe|-rdc=true $(g compute_80 sm_80)
rdc-sm80+ptx90|exe|-rdc=true $(g compute_80 sm_80)$(g compute_90 compute_90)
so-sm80+ptx80|so|$(g compute_80 sm_80)$(g compute_80 compute_80)
so-sm80|so|$(g compute_80 sm_80)
so-sm90a+sm100f|so|$(g compute_90a sm_90a)$(g compute_100f sm_100f)
so-rdc-sm80+ptx80|so|-rdc=true $(g compute_80 sm_80)$(g compute_80 compute_80)
so-ptx100f+sm80|so|$(g compute_100f compute_100f)$(g compute_80 sm_80)
EOC

# build every case, 8 at a time: exe -> NAME, so -> libNAME.so + NAME (its host program)
build () {
	IFS='|' read -r n kind flags <<EOB
$1
EOB
	mkdir -p "b/$n"
	if [ "$kind" = exe ]; then
		# shellcheck disable=SC2086
		"$NVCC" $flags -o "b/$n/$n" k.cu >"b/$n/nvcc.log" 2>&1
	else
		# shellcheck disable=SC2086
		"$NVCC" $flags -DLIB -shared -Xcompiler -fPIC -o "b/$n/lib$n.so" k.cu >"b/$n/nvcc.log" 2>&1 &&
			cc -o "b/$n/$n" main.c -L"b/$n" -l"$n" -Wl,-rpath,'$ORIGIN' >>"b/$n/nvcc.log" 2>&1
	fi
	echo $? >"b/$n/nvcc.rc"
}
export NVCC
while IFS= read -r c; do echo "$c"; done <cases | {
	while IFS= read -r c; do
		build "$c" &
		while [ "$(jobs -p | wc -l)" -ge 8 ]; do sleep 0.2; done
	done
	wait
}

agree=0 total=0 bad=0
printf '%-22s %-6s %-6s %-8s %s\n' case lazy eager gpucheck agree >"$OUT/oracle.txt"
while IFS='|' read -r n kind flags; do
	total=$((total + 1))
	{ echo "== $n: nvcc $flags"; cat "b/$n/nvcc.log"; } >>"$LOG"
	if [ "$(cat "b/$n/nvcc.rc")" != 0 ]; then
		printf '%-22s %-6s %-6s %-8s %s\n' "$n" - - - "nvcc-failed" >>"$OUT/oracle.txt"
		bad=$((bad + 1))
		continue
	fi
	judged=b/$n/$n; [ "$kind" = so ] && judged=b/$n/lib$n.so
	l=$(cd "b/$n" && CUDA_MODULE_LOADING=LAZY "./$n" 2>&1); lr=$?
	e=$(cd "b/$n" && CUDA_MODULE_LOADING=EAGER "./$n" 2>&1); er=$?
	"$gc" cover -v --target="$SM" "$judged" >"b/$n/cover.txt" 2>&1; vr=$?
	{ echo "launch LAZY: exit $lr: $l"; echo "launch EAGER: exit $er: $e"; echo "gpucheck cover -v --target=$SM $judged: exit $vr"; cat "b/$n/cover.txt"; } >>"$LOG"
	lz=$([ $lr = 0 ] && echo runs || echo fails); eg=$([ $er = 0 ] && echo runs || echo fails)
	vd=$([ $vr = 0 ] && echo covered || { [ $vr = 1 ] && echo NOT || echo "exit$vr"; })
	if { [ $lr = 0 ] && [ $er = 0 ] && [ $vr = 0 ]; } || { [ $lr != 0 ] && [ $er != 0 ] && [ $vr = 1 ]; }; then
		a=yes; agree=$((agree + 1))
	else
		a=NO
	fi
	printf '%-22s %-6s %-6s %-8s %s\n' "$n" "$lz" "$eg" "$vd" "$a" >>"$OUT/oracle.txt"
done <cases
echo "$agree of $total verdicts equal the launch ($bad builds failed)" >>"$OUT/oracle.txt"
cat "$OUT/oracle.txt"
tar -czf "$OUT/bins.tar.gz" -C "$W" b k.cu main.c cases 2>/dev/null
rm -rf "$W"
[ "$agree" = "$total" ]
