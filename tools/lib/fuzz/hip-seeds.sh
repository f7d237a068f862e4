#!/bin/sh
# hip-seeds.sh DIR MODE: real HIP artifacts compiled by clang-19 without ROCm, written
# into DIR for the offload fuzz targets. MODE: elf (whole objects and libraries),
# fatbin (.hip_fatbin sections), ccob (the compressed bundles alone).
set -e
d=$1 mode=$2
command -v clang++-19 >/dev/null || exit 0
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cat >"$w/k.hip" <<'K'
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void *f, dim3_ g, dim3_ b, void **a, unsigned long s, void *st);
__attribute__((global)) void k(float *x) { x[0] = 1.0f; }
K
hip () { clang++-19 -x hip -nogpulib -nogpuinc -fPIC "$@"; }
hip --offload-arch=gfx803 --offload-arch=gfx1151 -c "$w/k.hip" -o "$w/plain.o"
hip --offload-arch=gfx90a:xnack- --offload-arch=gfx1100 --offload-compress -c "$w/k.hip" -o "$w/ccob.o"
hip --offload-arch=gfx11-generic -mcode-object-version=6 -c "$w/k.hip" -o "$w/generic.o"
hip --offload-arch=gfx906 -fgpu-rdc -c "$w/k.hip" -o "$w/rdc.o"
case "$mode" in
elf) cp "$w"/*.o "$d/" ;;
fatbin|ccob)
	for o in plain ccob generic; do
		objcopy -O binary --only-section=.hip_fatbin "$w/$o.o" "$d/$o.fatbin"
	done
	[ "$mode" = ccob ] && rm -f "$d/plain.fatbin" "$d/generic.fatbin"
	;;
esac
