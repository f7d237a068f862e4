#!/bin/sh
# gpucheck cover on kpack'd libraries, shape by shape against the loader the HIP runtime
# uses (issue 43): the generic target it asks for after the ISA (gfx11-generic for
# gfx1151), a non-empty ROCM_KPACK_PATH replacing the search paths even when it names
# nothing usable, the archive resolved from the library's real path (a link elsewhere),
# only the archives and entries the device needs opened (a broken archive or frame of
# another arch is no error), the next archive listing the target tried (the older loader
# with --kpack-loader=first stops), and a bare gfx942 taken as gfx942:sramecc+.
# tests/real/kpack-oracle.sh compares the same shapes with ROCm's own loader.
. "$KILN_SRC/tests/lib.sh"
need clang++-19 python3 zstd objcopy
cd "$T" || exit 2
/usr/bin/python3 -c 'import msgpack' 2>/dev/null || missing "python3-msgpack"
py () { /usr/bin/python3 "$KILN_SRC/tools/gpucheck/tests/kpackify.py" "$@" || { notok "kpackify.py $1"; exit 1; }; }
cat >ka.hip <<'EOK'
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void *f, dim3_ g, dim3_ b, void **a, unsigned long s, void *st);
__attribute__((global)) void ka(float *p) { p[0] = 1.0f; }
EOK
sed 's/ka/kb/' ka.hip >kb.hip
hip () { clang++-19 -x hip -nogpulib -nogpuinc -fPIC "$@" 2>"$T/cc.err" || { notok "clang++-19 $*"; cat "$T/cc.err"; exit 1; }; }
hip --offload-arch=gfx1100 -c ka.hip -o ka.o
hip --offload-arch=gfx1100 -c kb.hip -o kb.o
clang-19 -shared -fuse-ld=lld -o libfat.so ka.o kb.o || exit 2
hip --offload-arch=gfx1100 --cuda-device-only --no-gpu-bundle-output -c ka.hip -o a.co
hip --offload-arch=gfx1100 --cuda-device-only --no-gpu-bundle-output -c kb.hip -o b.co
mkdir -p t/lib t/.kpack
py lib libfat.so t/lib/libk.so lib/libk.so '../.kpack/k_@GFXARCH@.kpack'
# ARCHIVE ARCH: one archive holding both kernels for ARCH (zstd frames)
arc () { py archive "t/.kpack/k_$1.kpack" zstd-per-kernel "$1" "lib/libk.so#0=$1=a.co" "lib/libk.so#1=$1=b.co"; }

# the generic target: the HIP runtime asks for gfx1151, then gfx11-generic
arc gfx11-generic
exits "gfx1151 from a gfx11-generic archive: covered" 0 gpucheck cover --target=gfx1151 t/lib/libk.so
check "-v names the generic archive" gpucheck cover -v --target=gfx1151 t/lib/libk.so
has "the archive and target" "$T/.out" "k_gfx11-generic.kpack (gfx11-generic)"
exits "gfx1100 too" 0 gpucheck cover --target=gfx1100 t/lib/libk.so
exits "gfx1201 is not of that family: NOT covered" 1 gpucheck cover --target=gfx1201 t/lib/libk.so
has "the miss names both targets asked for" "$T/.out" "lists gfx1201 or gfx12-generic or a subset of their features"
exits "gfx90a has no generic target in HIP's list: NOT covered" 1 gpucheck cover --target=gfx90a t/lib/libk.so
arc gfx1151
check "the ISA's own archive comes first" gpucheck cover -v --target=gfx1151 t/lib/libk.so
has "k_gfx1151.kpack chosen" "$T/.out" "k_gfx1151.kpack (gfx1151)"
rm t/.kpack/k_gfx1151.kpack

# ROCM_KPACK_PATH: non-empty, it replaces the search paths, usable or not
exits "ROCM_KPACK_PATH naming a missing file: NOT covered" 1 env ROCM_KPACK_PATH="$T/nothing.kpack" gpucheck cover --target=gfx1151 t/lib/libk.so
has "says why" "$T/.out" "ROCM_KPACK_PATH replaces the search paths and names no usable archive"
printf 'junk' >junk.kpack
exits "ROCM_KPACK_PATH naming a broken archive: NOT covered" 1 env ROCM_KPACK_PATH="$T/junk.kpack" gpucheck cover --target=gfx1151 t/lib/libk.so
has "the skipped archive named" "$T/.out" "the loader skipped $T/junk.kpack: not a kpack archive"
exits "ROCM_KPACK_PATH naming the archive: covered" 0 env ROCM_KPACK_PATH="$T/junk.kpack:$T/t/.kpack/k_gfx11-generic.kpack" gpucheck cover --target=gfx1151 t/lib/libk.so
exits "ROCM_KPACK_PATH of only colons is empty: the search paths" 0 env ROCM_KPACK_PATH="::" gpucheck cover --target=gfx1151 t/lib/libk.so
exits "ROCM_KPACK_PATH_PREFIX comes first, the search paths still count" 0 env ROCM_KPACK_PATH_PREFIX="$T/nothing.kpack" gpucheck cover --target=gfx1151 t/lib/libk.so

# a library reached through a link: the archive is found from its real folder
mkdir -p elsewhere/lib && ln -s "$T/t/lib/libk.so" elsewhere/lib/libk.so
exits "a linked library: its archives from the real path" 0 gpucheck cover --target=gfx1151 elsewhere/lib/libk.so
check "-v names the archive beside the real library" gpucheck cover -v --target=gfx1151 elsewhere/lib/libk.so
has "the real folder's archive" "$T/.out" "$T/t/lib/../.kpack/k_gfx11-generic.kpack (gfx11-generic)"
ln -s "$T/t/lib" linkdir
exits "a linked folder: the same" 0 gpucheck cover --target=gfx1151 linkdir/libk.so

# only the archives the device needs are opened: a broken gfx90a archive is not read
printf 'KPAK\001\000\000\000\377\377\377\377\000\000\000\000' >t/.kpack/k_gfx90a.kpack
exits "a broken archive of another arch: no error, covered" 0 gpucheck cover --target=gfx1151 t/lib/libk.so
lacks "and nothing said about it" "$T/.err" "k_gfx90a.kpack"
exits "the device's own archive broken: NOT covered (the loader skips it)" 1 gpucheck cover --target=gfx90a t/lib/libk.so
has "the reason names it" "$T/.out" "no usable archive its kpack_search_paths reach lists gfx90a:xnack- or a subset of its features; the loader skipped $T/t/lib/../.kpack/k_gfx90a.kpack: toc offset"
exits "targets reads every archive: the broken one is an input error" 2 gpucheck targets t/lib/libk.so
rm t/.kpack/k_gfx90a.kpack

# only the entries the device needs: one archive of two arches, gfx90a's frames corrupt
# (ZSTD stands for the bytes of a frame: flipped after the frame header)
py archive t/.kpack/k_gfx90a.kpack zstd-per-kernel gfx90a,gfx1100 \
	'lib/libk.so#0=gfx1100=a.co' 'lib/libk.so#1=gfx1100=b.co' 'lib/libk.so#0=gfx90a=a.co' 'lib/libk.so#1=gfx90a=b.co'
/usr/bin/python3 - t/.kpack/k_gfx90a.kpack <<'EOP'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
pos = 64 + 4
for i in range(4):
    n, = struct.unpack_from("<I", d, pos)
    if i >= 2:                       # the gfx90a frames: garble their blocks
        for j in range(pos + 4 + 12, pos + 4 + n - 4):
            d[j] ^= 0x5a
    pos += 4 + n
open(sys.argv[1], "wb").write(bytes(d))
EOP
ROCM_KPACK_PATH=$T/t/.kpack/k_gfx90a.kpack; export ROCM_KPACK_PATH
exits "gfx1100's entries of a mixed archive: covered" 0 gpucheck cover --target=gfx1100 t/lib/libk.so
exits "gfx90a's corrupt frames: NOT covered" 1 gpucheck cover --target=gfx90a t/lib/libk.so
has "the frame named" "$T/.out" "zstd frame 2 at offset"
unset ROCM_KPACK_PATH
rm t/.kpack/k_gfx90a.kpack

# the next archive listing the target: a stub (xnack-) lacking co_index 1 beside the full
arc gfx90a
py archive 't/.kpack/k_gfx90a:xnack-.kpack' none 'gfx90a:xnack-' 'lib/libk.so#0=gfx90a:xnack-=a.co'
exits "a stub before the full archive: the current loader goes on: covered" 0 gpucheck cover --target=gfx90a t/lib/libk.so
exits "--kpack-loader=first stops at the stub" 1 gpucheck cover --kpack-loader=first --target=gfx90a t/lib/libk.so
# a stub whose frame for co_index 0 is broken: the next archive serves it
py archive 't/.kpack/k_gfx90a:xnack-.kpack' zstd-per-kernel 'gfx90a:xnack-' 'lib/libk.so#0=gfx90a:xnack-=a.co' 'lib/libk.so#1=gfx90a:xnack-=b.co'
/usr/bin/python3 - 't/.kpack/k_gfx90a:xnack-.kpack' <<'EOP'
import msgpack, struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
toff, = struct.unpack_from("<Q", d, 8)
m = msgpack.unpackb(bytes(d[toff:]))
m["toc"]["lib/libk.so#0"]["gfx90a:xnack-"]["original_size"] += 7
open(sys.argv[1], "wb").write(bytes(d[:toff]) + msgpack.packb(m))
EOP
exits "a lying frame in the first archive, the next one holds it: covered" 0 gpucheck cover --target=gfx90a t/lib/libk.so
exits "--kpack-loader=first: NOT covered" 1 gpucheck cover --kpack-loader=first --target=gfx90a t/lib/libk.so
has "the frame's size is the reason" "$T/.out" "inflates to"
rm 't/.kpack/k_gfx90a:xnack-.kpack' t/.kpack/k_gfx90a.kpack

# a bare gfx942 is gfx942:sramecc+ (MI300 runs with SRAM ECC on)
arc 'gfx942:sramecc+'
exits "gfx942 from a gfx942:sramecc+ archive: covered" 0 gpucheck cover --target=gfx942 t/lib/libk.so
exits "gfx942:sramecc- does not take it" 1 gpucheck cover --target=gfx942:sramecc- t/lib/libk.so
rm 't/.kpack/k_gfx942:sramecc+.kpack'
arc 'gfx942:sramecc-'
exits "gfx942 from a gfx942:sramecc- archive only: NOT covered" 1 gpucheck cover --target=gfx942 t/lib/libk.so
has "the ISA asked for" "$T/.out" "lists gfx942:sramecc+:xnack- or gfx9-4-generic:sramecc+:xnack- or a subset"
exits "gfx942:sramecc- named: covered" 0 gpucheck cover --target=gfx942:sramecc- t/lib/libk.so
