#!/bin/sh
# gpucheck's kpack reader against hostile input (issue 46), each case bounded in CPU time
# (ulimit -t, far above what it takes: a regression to quadratic or per-entry inflation
# runs past it) and in memory (maximum RSS from /usr/bin/time): a .rocm_kpack_ref
# repeating one search path, or over the 64 KiB the loader reads; one zstd frame named by
# 20000 table entries; frames inflating to 16 MiB each; a frame whose header lies about
# its size; bytes after a frame; and ROCM_KPACK_PATH naming nothing usable.
. "$KILN_SRC/tests/lib.sh"
need clang++-19 python3 zstd objcopy /usr/bin/time
cd "$T" || exit 2
/usr/bin/python3 -c 'import msgpack' 2>/dev/null || missing "python3-msgpack"
py () { /usr/bin/python3 "$KILN_SRC/tools/gpucheck/tests/kpackify.py" "$@" || { notok "kpackify.py $1"; exit 1; }; }
# capped DESC WANT-EXIT CPU-SECONDS MAX-RSS-KB CMD...: the exit status, under a CPU cap, and
# the memory it took
capped () {
	d=$1 want=$2 cpu=$3 kb=$4; shift 4
	(ulimit -t "$cpu"; exec /usr/bin/time -f %M -o "$T/rss" "$@") >"$T/.out" 2>"$T/.err"
	rc=$?
	rss=$(tail -n 1 "$T/rss" 2>/dev/null)
	if [ "$rc" = "$want" ] && [ -n "$rss" ] && [ "$rss" -lt "$kb" ] 2>/dev/null; then
		ok "$d (exit $rc, max RSS $rss KB)"
	else
		notok "$d (exit $rc, want $want; max RSS ${rss:-?} KB, cap $kb; CPU cap $cpu s)"; _show
	fi
}
cat >ka.hip <<'EOK'
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void *f, dim3_ g, dim3_ b, void **a, unsigned long s, void *st);
__attribute__((global)) void ka(float *p) { p[0] = 1.0f; }
EOK
clang++-19 -x hip -nogpulib -nogpuinc -fPIC --offload-arch=gfx90a -c ka.hip -o ka.o 2>cc.err || { notok "clang++-19"; cat cc.err; exit 1; }
clang-19 -shared -fuse-ld=lld -o libfat.so ka.o || exit 2
clang++-19 -x hip -nogpulib -nogpuinc --offload-arch=gfx90a --cuda-device-only --no-gpu-bundle-output -c ka.hip -o a.co 2>cc.err || exit 2
mkdir -p t/lib t/.kpack
py lib libfat.so t/lib/libk.so lib/libk.so '../.kpack/k_@GFXARCH@.kpack'
py archive t/.kpack/k_gfx90a.kpack zstd-per-kernel gfx90a 'lib/libk.so#0=gfx90a=a.co'
capped "the plain library: covered" 0 30 80000 gpucheck cover --target=gfx90a t/lib/libk.so

# a reference repeating one search path: over 64 KiB it is refused, as the loader fails it
/usr/bin/python3 - <<'EOP'
import msgpack
p = "../.kpack/k_@GFXARCH@.kpack"
open("ref100k.bin", "wb").write(msgpack.packb({"kernel_name": "lib/libk.so", "kpack_search_paths": [p] * 100000}))
open("ref2k.bin", "wb").write(msgpack.packb({"kernel_name": "lib/libk.so", "kpack_search_paths": [p] * 2200}))
# distinct spellings of the one folder: ./../, ././../, ...
open("refdist.bin", "wb").write(msgpack.packb({"kernel_name": "lib/libk.so",
    "kpack_search_paths": ["../" + "./" * i + ".kpack/k_@GFXARCH@.kpack" for i in range(1, 140)]}))
EOP
objcopy --update-section .rocm_kpack_ref=ref100k.bin t/lib/libk.so t/lib/lib100k.so || exit 2
capped "100000 copies of one path (2.8 MB): refused" 2 20 80000 gpucheck cover --target=gfx90a t/lib/lib100k.so
has "the loader's 64 KiB named" "$T/.err" "the loader reads at most the first 65536 bytes of it"
objcopy --update-section .rocm_kpack_ref=ref2k.bin t/lib/libk.so t/lib/lib2k.so || exit 2
capped "2200 copies of one path within 64 KiB: read once, covered" 0 20 80000 gpucheck cover --target=gfx90a t/lib/lib2k.so
capped "2200 copies: targets too" 0 20 80000 gpucheck targets t/lib/lib2k.so
objcopy --update-section .rocm_kpack_ref=refdist.bin t/lib/libk.so t/lib/libdist.so || exit 2
capped "139 spellings of one folder: one archive, covered" 0 20 80000 gpucheck cover -v --target=gfx90a t/lib/libdist.so
same "named once" "$(grep -c 'k_gfx90a.kpack (gfx90a)' "$T/.out")" 1
whl () {
	/usr/bin/python3 - "$@" <<'EOP'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for m in sys.argv[2:]:
        z.write(m, "kp/" + m[2:])
EOP
}
cp t/lib/lib100k.so t/lib/libk100k.so
whl w100k-1.0-py3-none-any.whl t/lib/libk100k.so t/.kpack/k_gfx90a.kpack
capped "the same in a wheel: refused" 2 20 80000 gpucheck cover --target=gfx90a w100k-1.0-py3-none-any.whl

# one zstd frame named by 20000 table entries (16 MiB of zeros): inflated once
head -c 16777216 /dev/zero | zstd -q -c -3 >z16.zst
/usr/bin/python3 - "$KILN_SRC/tools/gpucheck/tests" <<'EOP' || exit 2
import sys
sys.path.insert(0, sys.argv[1])
import kpackify
kpackify.frames("many.kpack", ["z16.zst"], [("lib/libk.so#%d" % i, "gfx90a", 0, 16777216) for i in range(20000)])
EOP
capped "one 16 MiB frame for 20000 entries ($(wc -c <many.kpack) bytes): inflated once" 0 30 120000 gpucheck targets many.kpack
has "all entries listed" "$T/.out" "20000 bundles"
# 64 frames of 16 MiB each, streamed: memory stays flat
/usr/bin/python3 "$KILN_SRC/tools/gpucheck/tests/kpackify.py" frames bombs.kpack $(i=0; while [ $i -lt 64 ]; do printf 'z16.zst '; i=$((i + 1)); done) -- \
	$(i=0; while [ $i -lt 64 ]; do printf 'lib/libk.so#%d=gfx90a=%d=16777216 ' $i $i; i=$((i + 1)); done) || exit 2
capped "64 frames of 16 MiB each ($(wc -c <bombs.kpack) bytes): memory stays flat" 0 60 80000 gpucheck targets bombs.kpack
# the same frames claiming 1 GiB each: past its size at 16 MiB, refused
/usr/bin/python3 "$KILN_SRC/tools/gpucheck/tests/kpackify.py" frames liar.kpack z16.zst -- 'lib/libk.so#0=gfx90a=0=1073741824' || exit 2
capped "a frame short of its original_size: refused" 2 30 80000 gpucheck targets liar.kpack
has "says so" "$T/.err" "inflates to 16777216 bytes, not its original_size 1073741824"

# a frame whose header declares a size it does not hold (the old reader trusted it)
head -c 4096 /dev/zero | tr '\0' 'A' >a4k
zstd -q -c -3 a4k >a4k.zst
/usr/bin/python3 - <<'EOP'
d = bytearray(open("a4k.zst", "rb").read())
fhd = d[4]
fcsflag, single = fhd >> 6, (fhd >> 5) & 1
pos = 5 + (0 if single else 1) + [0, 1, 2, 4][fhd & 3]
assert fcsflag == 1, fhd            # a 2-byte size field: value - 256
v = d[pos] | d[pos + 1] << 8
v += 100                             # 4196 claimed, 4096 held
d[pos], d[pos + 1] = v & 0xff, v >> 8
open("lie.zst", "wb").write(bytes(d))
EOP
/usr/bin/python3 "$KILN_SRC/tools/gpucheck/tests/kpackify.py" frames lie.kpack lie.zst -- 'lib/libk.so#0=gfx90a=0=4196' || exit 2
capped "a frame header lying about its size: refused" 2 30 80000 gpucheck targets lie.kpack
has "a corrupt frame" "$T/.err" "inflates to garbage or past its original_size 4196"
/usr/bin/python3 "$KILN_SRC/tools/gpucheck/tests/kpackify.py" frames lie4096.kpack lie.zst -- 'lib/libk.so#0=gfx90a=0=4096' || exit 2
capped "the same frame taken at what it holds: refused too" 2 30 80000 gpucheck targets lie4096.kpack
# bytes after the frame's end
cat a4k.zst >trail.zst; printf 'xxxx' >>trail.zst
/usr/bin/python3 "$KILN_SRC/tools/gpucheck/tests/kpackify.py" frames trail.kpack trail.zst -- 'lib/libk.so#0=gfx90a=0=4096' || exit 2
capped "bytes after a frame: refused" 2 30 80000 gpucheck targets trail.kpack
has "says so" "$T/.err" "bytes follow the frame's end"
/usr/bin/python3 "$KILN_SRC/tools/gpucheck/tests/kpackify.py" frames good.kpack a4k.zst -- 'lib/libk.so#0=gfx90a=0=4096' || exit 2
capped "the honest frame: read" 0 30 80000 gpucheck targets good.kpack
# the lying archive as the library's: cover names the frame, exit 1 (the loader fails it)
cp lie.kpack t/.kpack/k_gfx90a.kpack
capped "cover: the library's only archive lies: NOT covered" 1 30 80000 gpucheck cover --target=gfx90a t/lib/libk.so
has "the reason names the frame" "$T/.out" "zstd frame 0 at offset"

# ROCM_KPACK_PATH naming nothing usable: no fallback to the embedded paths
py archive t/.kpack/k_gfx90a.kpack zstd-per-kernel gfx90a 'lib/libk.so#0=gfx90a=a.co'
capped "ROCM_KPACK_PATH naming nothing: NOT covered" 1 20 80000 env ROCM_KPACK_PATH=/nonexistent/x.kpack gpucheck cover --target=gfx90a t/lib/libk.so
has "no fallback" "$T/.out" "ROCM_KPACK_PATH replaces the search paths and names no usable archive"
