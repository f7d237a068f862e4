#!/bin/sh
# gpucheck on kpack'd libraries (ROCm's TheRock layout): a HIP library compiled by clang-19
# for gfx90a and gfx1100, its code moved into .kpack archives by kpackify.py (HIPK
# wrappers, .rocm_kpack_ref, KPAK archives with zstd frames or plain blobs, as ROCm's
# rocm-kpack writes them); the loader's archive choice, TheRock issue 7081's stub archive,
# ROCM_KPACK_PATH, kernel-library code-object folders, and bad input.
. "$KILN_SRC/tests/lib.sh"
need clang++-19 clang-offload-bundler-19 python3 zstd objcopy /usr/bin/time
cd "$T" || exit 2
py () { /usr/bin/python3 "$KILN_SRC/tools/gpucheck/tests/kpackify.py" "$@" || { notok "kpackify.py $1"; exit 1; }; }
/usr/bin/python3 -c 'import msgpack' 2>/dev/null || missing "python3-msgpack"

for k in ka kb; do
	cat >"$k.hip" <<EOK
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void *f, dim3_ g, dim3_ b, void **a, unsigned long s, void *st);
__attribute__((global)) void $k(float *p) { p[0] = 1.0f; }
EOK
done
hip () { clang++-19 -x hip -nogpulib -nogpuinc -fPIC "$@" 2>"$T/cc.err" || { notok "clang++-19 $*"; cat "$T/cc.err"; exit 1; }; }
hip --offload-arch=gfx90a --offload-arch=gfx1100 -c ka.hip -o ka.o
hip --offload-arch=gfx90a --offload-arch=gfx1100 -c kb.hip -o kb.o
clang-19 -shared -fuse-ld=lld -o libfat.so ka.o kb.o || exit 2
# each translation unit's code object per arch: the archives' kernels (co_index 0 = ka, 1 = kb)
for k in ka kb; do for a in gfx90a gfx1100; do
	hip --offload-arch=$a --cuda-device-only --no-gpu-bundle-output -c $k.hip -o $k-$a.co
done; done
mkdir -p t/lib t/.kpack
py lib libfat.so t/lib/libk.so lib/libk.so '../.kpack/k_@GFXARCH@.kpack'
py archive t/.kpack/k_gfx90a.kpack zstd-per-kernel gfx90a \
	'lib/libk.so#0=gfx90a=ka-gfx90a.co' 'lib/libk.so#1=gfx90a=kb-gfx90a.co'
py archive t/.kpack/k_gfx1100.kpack none gfx1100 \
	'lib/libk.so#0=gfx1100=ka-gfx1100.co' 'lib/libk.so#1=gfx1100=kb-gfx1100.co'

check "targets follows the references into the archives" gpucheck targets t/lib/libk.so
has "two wrappers, four kernels" "$T/.out" "libk.so: 2 bundles, 4 entries"
has "gfx90a from the zstd archive" "$T/.out" "gfx90a "
has "gfx1100 from the plain archive" "$T/.out" "gfx1100 "
check "targets -v names the archive per kernel" gpucheck targets -v t/lib/libk.so
has "archive and arch per entry" "$T/.out" "k_gfx90a.kpack: gfx90a"
exits "cover gfx90a: covered" 0 gpucheck cover --target=gfx90a t/lib/libk.so
exits "cover gfx1100: covered" 0 gpucheck cover --target=gfx1100 t/lib/libk.so
check "cover -v says which archive the loader picks" gpucheck cover -v --target=gfx1100 t/lib/libk.so
has "the archive named" "$T/.out" "k_gfx1100.kpack (gfx1100)"
exits "cover gfx1151: no archive" 1 gpucheck cover --target=gfx1151 t/lib/libk.so
has "it says no archive lists the target" "$T/.out" "no archive its kpack_search_paths reach lists gfx1151"
has "it names the archive the first search path gives for gfx1151" "$T/.out" "features (no t/lib/../.kpack/k_gfx1151.kpack)"
exits "an absolute path: gfx1151 not covered" 1 gpucheck cover --target=gfx1151 "$T/t/lib/libk.so"
has "the archive named with .. resolved" "$T/.out" "(no $T/t/.kpack/k_gfx1151.kpack)"
# no archive at all beside the library (a device wheel not installed): its wrappers are
# still AMD code the loader cannot find, not a library without GPU code
mkdir -p t0/lib && cp t/lib/libk.so t0/lib/ || exit 2
exits "no archive at all: not covered" 1 gpucheck cover --target=gfx90a t0/lib/libk.so
has "no archive at all: both wrappers counted" "$T/.out" "2 of 2 bundles have no code for it"
has "no archive at all: the archive it would open named" "$T/.out" "(no t0/lib/../.kpack/k_gfx90a.kpack)"
lacks "no archive at all: not called host code" "$T/.out" "carry no AMD GPU code"
exits "a folder: the library judged, the archives not scanned as files" 0 gpucheck cover --target=gfx90a t
check "the archive itself: its kernels" gpucheck targets -v t/.kpack/k_gfx90a.kpack
has "keys listed" "$T/.out" "lib/libk.so#1: gfx90a"
check "cover --json says the rule" gpucheck cover --json --target=gfx90a t/lib/libk.so
has "the kpack rule" "$T/.out" '"rule":"kpack: an archive the loader tries holds each co_index, its frame intact"'
check "cover --json --kpack-loader=first says its rule" gpucheck cover --json --kpack-loader=first --target=gfx90a t/lib/libk.so
has "the older loader's rule" "$T/.out" '"rule":"kpack (--kpack-loader=first): the first archive listing the target holds each co_index"'

# the same in a wheel: the archives are members, followed in the one pass over the zip
whl () {
	/usr/bin/python3 - "$@" <<'EOP'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for m in sys.argv[2:]:
        z.write(m, "kp/" + m[2:])
EOP
}
whl kp-1.0-py3-none-any.whl t/lib/libk.so t/.kpack/k_gfx90a.kpack t/.kpack/k_gfx1100.kpack
exits "a wheel: gfx90a from its own archives" 0 gpucheck cover --target=gfx90a kp-1.0-py3-none-any.whl
check "a wheel: cover -v names the member archive" gpucheck cover -v --target=gfx1100 kp-1.0-py3-none-any.whl
has "the archive inside the wheel" "$T/.out" "kp-1.0-py3-none-any.whl!kp/.kpack/k_gfx1100.kpack (gfx1100)"
exits "a wheel: gfx1151 not covered" 1 gpucheck cover --target=gfx1151 kp-1.0-py3-none-any.whl
has "a wheel: the member archive it lacks named" "$T/.out" "(no kp-1.0-py3-none-any.whl!kp/.kpack/k_gfx1151.kpack)"

# TheRock issue 7081: a feature-flag stub that shadows the full archive and lacks a kernel
py archive 't/.kpack/k_gfx90a:xnack-.kpack' none 'gfx90a:xnack-' 'lib/libk.so#0=gfx90a:xnack-=ka-gfx90a.co'
check "targets: per arch, the co_index entries the archives have" gpucheck targets t/lib/libk.so
has "the stub's arch lacks co_index 1" "$T/.out" "gfx90a:xnack-      1 of 2 co_index; lacks 1"
has "the full archive has both" "$T/.out" "kpack gfx90a             2 of 2 co_index"
has "the archives are named" "$T/.out" "kpack: lib/libk.so#N in 3 archives:"
check "targets --json: the kpack summary" gpucheck targets --json t/lib/libk.so
has "lacks in json" "$T/.out" '{"arch":"gfx90a:xnack-","co_indexes":1,"lacks":"1"}'
# the HIP runtime's loader now (rocm-systems shared/kpack) tries the next archive listing
# the target; rocm-kpack e348328's stopped at the stub (--kpack-loader=first)
exits "7081: the current loader tries the next archive: covered" 0 gpucheck cover --target=gfx90a t/lib/libk.so
check "7081: -v names the archive that served co_index 1" gpucheck cover -v --target=gfx90a t/lib/libk.so
exits "7081, --kpack-loader=first: the stub shadows the full archive: NOT covered" 1 gpucheck cover --kpack-loader=first --target=gfx90a t/lib/libk.so
has "names the co_index missing" "$T/.out" "1 of 2 kpack code objects lack it: co_index 1; the loader picks"
has "names the stub the loader picks" "$T/.out" "k_gfx90a:xnack-.kpack (gfx90a:xnack-) lacks lib/libk.so#1"
has "names the archive that has it" "$T/.out" "k_gfx90a.kpack (gfx90a) has it"
has "names the loader" "$T/.out" "the kpack loader of rocm-kpack e348328"
whl kp7081-1.0-py3-none-any.whl t/lib/libk.so t/.kpack/k_gfx90a.kpack 't/.kpack/k_gfx90a:xnack-.kpack'
exits "7081 in a wheel: covered" 0 gpucheck cover --target=gfx90a kp7081-1.0-py3-none-any.whl
exits "7081 in a wheel, --kpack-loader=first: NOT covered" 1 gpucheck cover --kpack-loader=first --target=gfx90a kp7081-1.0-py3-none-any.whl
has "names both members" "$T/.out" "kp7081-1.0-py3-none-any.whl!kp/.kpack/k_gfx90a.kpack (gfx90a) has it"
exits "7081 with XNACK on: the stub is not a candidate" 0 env HSA_XNACK=1 gpucheck cover --kpack-loader=first --target=gfx90a t/lib/libk.so
exits "--kpack-loader=other is a usage error" 2 gpucheck cover --kpack-loader=other --target=gfx90a t/lib/libk.so
exits "ROCM_KPACK_PATH replaces the search paths" 1 env ROCM_KPACK_PATH="$T/t/.kpack/k_gfx1100.kpack" gpucheck cover --target=gfx90a:xnack+ t/lib/libk.so
exits "ROCM_KPACK_DISABLE: nothing loads" 1 env ROCM_KPACK_DISABLE=1 gpucheck cover --target=gfx1100 t/lib/libk.so
rm 't/.kpack/k_gfx90a:xnack-.kpack'

# a kernel library's code objects, rocBLAS's layout: one per arch in library/
mkdir -p rb/rocblas/library
cp ka-gfx90a.co rb/rocblas/library/TensileLibrary_Type_HH_gfx90a.co
cp ka-gfx1100.co rb/rocblas/library/TensileLibrary_Type_HH_gfx1100.co
cp kb-gfx90a.co rb/rocblas/library/Kernels.so-000-gfx90a.hsaco
check "targets on code-object files" gpucheck targets rb
has "a code object's target from e_flags" "$T/.out" "TensileLibrary_Type_HH_gfx1100.co: 1 bundle, 1 entry"
exits "cover gfx1100: the library has its code object" 0 gpucheck cover --target=gfx1100 rb
exits "cover gfx1151: none of the library's code objects" 1 gpucheck cover --target=gfx1151 rb
has "names the folder and what it holds" "$T/.out" "rocblas/library/: no code object for gfx1151 among the library's (gfx90a (2), gfx1100 (1))"

# Tensile's bundle files (Debian experimental's rocBLAS 7.2.4 ships its kernels so): one
# arch each beside a host entry, plain or compressed (CCOB), in library/ with code objects
tbundle () {
	clang-offload-bundler-19 --type=o --targets="host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--$1" \
		--input=/dev/null --input="$2" --output="$3" ${4:-} || exit 2
}
mkdir -p tb/rocblas/library
tbundle gfx1100 ka-gfx1100.co tb/rocblas/library/TensileLibrary_Type_HH_gfx1100.co --compress
tbundle gfx90a ka-gfx90a.co tb/rocblas/library/TensileLibrary_Type_HH_gfx90a.co
cp kb-gfx90a.co tb/rocblas/library/Kernels.so-000-gfx90a.hsaco
exits "Tensile's bundle files: cover gfx1100 through its compressed bundle" 0 gpucheck cover --target=gfx1100 tb
exits "Tensile's bundle files: cover gfx90a through its plain bundle" 0 gpucheck cover --target=gfx90a tb
exits "Tensile's bundle files: cover gfx1151, none of them" 1 gpucheck cover --target=gfx1151 tb
has "one gap, naming the folder and what it holds" "$T/.out" "rocblas/library/: no code object for gfx1151 among the library's (gfx90a (2), gfx1100 (1))"
# a bundle file with two arches is not one arch's file: each of its bundles must cover
tbundle2 () {
	clang-offload-bundler-19 --type=o \
		--targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx1100,hipv4-amdgcn-amd-amdhsa--gfx90a \
		--input=/dev/null --input=ka-gfx1100.co --input=ka-gfx90a.co --output="$1" || exit 2
}
mkdir -p tb2/rocblas/library
tbundle2 tb2/rocblas/library/TensileLibrary_two.co
tbundle gfx1151 ka-gfx1100.co tb2/rocblas/library/TensileLibrary_Type_HH_gfx1151.co
exits "a two-arch bundle file beside a gfx1151 file: cover gfx1151 fails" 1 gpucheck cover --target=gfx1151 tb2
has "the two-arch file is named" "$T/.out" "TensileLibrary_two.co: 1 of 1 bundles lack it"

mkdir -p many/rocblas/library
i=0; while [ $i -lt 300 ]; do cp ka-gfx90a.co "many/rocblas/library/TensileLibrary_T${i}_gfx90a.co"; i=$((i + 1)); done
exits "300 code objects of one library, none for gfx1151" 1 gpucheck cover --target=gfx1151 many
same "the library is named once" "$(grep -c 'no code object for gfx1151' "$T/.out")" 1
has "and counted as one gap" "$T/.out" "NOT covered: 1 of 300 bundles"

# bad input: exit 2, the file and the field
bad () { exits "$1: exit 2" 2 gpucheck targets "$2"; has "$1: names the file and field" "$T/.err" "$3"; }
cp t/.kpack/k_gfx1100.kpack x.kpack
printf 'KPAX' | dd of=x.kpack conv=notrunc 2>/dev/null
bad "bad magic" x.kpack "x.kpack: not a kpack archive: bad magic (offset 0"
cp t/.kpack/k_gfx1100.kpack x.kpack
printf '\002' | dd of=x.kpack bs=1 seek=4 conv=notrunc 2>/dev/null
bad "bad version" x.kpack "kpack version 2, not 1 (offset 4)"
cp t/.kpack/k_gfx1100.kpack x.kpack
printf '\377\377\377' | dd of=x.kpack bs=1 seek=13 conv=notrunc 2>/dev/null
bad "toc offset past the end" x.kpack "is past the end of the file"
head -c "$(($(wc -c <t/.kpack/k_gfx90a.kpack) - 5))" t/.kpack/k_gfx90a.kpack >x.kpack
bad "truncated msgpack toc" x.kpack "msgpack"
py toc x.kpack "$(/usr/bin/python3 -c 'print("[" * 40 + "]" * 40)')"
bad "toc nested too deep" x.kpack "nests deeper than 16 levels"
printf 'KPAK\001\000\000\000\020\000\000\000\000\000\000\000\335\377\377\377\377' >x.kpack
bad "a toc claiming 4G items" x.kpack "claims 4294967295 items but only 0 bytes follow"
/usr/bin/python3 -c 'import sys, struct; n = 4 << 20; open(sys.argv[1], "wb").write(b"KPAK" + struct.pack("<IQ", 1, 16) + b"\xdd" + struct.pack(">I", n) + b"\xc0" * n)' x.kpack
/usr/bin/time -f %M -o rss.t gpucheck targets x.kpack >"$T/.out" 2>"$T/.err"
has "a toc of 4M objects is refused" "$T/.err" "msgpack holds more than 2097152 objects"
[ "$(tail -n 1 rss.t)" -lt 60000 ] && ok "before msgpack-c allocates them (max RSS $(tail -n 1 rss.t) KB)" ||
	notok "before msgpack-c allocates them (max RSS $(tail -n 1 rss.t) KB)"
py toc x.kpack '{"gfx_arches":["gfx90a"],"compression_scheme":"none","blobs":[{"offset":16,"size":99999}],"toc":{"k#0":{"gfx90a":{"ordinal":0,"original_size":99999}}}}'
bad "a blob outside the file" x.kpack "lies outside the data before the toc"
/usr/bin/python3 - "$T/t/.kpack/k_gfx90a.kpack" "$T/x.kpack" <<'EOP'
import sys, msgpack, struct
d = bytearray(open(sys.argv[1], "rb").read())
toff, = struct.unpack_from("<Q", d, 8)
m = msgpack.unpackb(bytes(d[toff:]))
m["toc"]["lib/libk.so#0"]["gfx90a"]["original_size"] -= 1   # the frame inflates past it
open(sys.argv[2], "wb").write(bytes(d[:toff]) + msgpack.packb(m))
EOP
bad "a zstd frame inflating past its size" x.kpack "inflates to"
py ref ref.bin '{"kernel_name":"lib/libk.so","kpack_search_paths":["../../../etc/x_@GFXARCH@.kpack"]}'
objcopy --update-section .rocm_kpack_ref=ref.bin t/lib/libk.so t/lib/libbad.so
bad "a search path climbing out" t/lib/libbad.so "kpack_search_paths[0] '../../../etc/x_@GFXARCH@.kpack' is climbing"
py ref ref.bin '{"kernel_name":"lib/libk.so","kpack_search_paths":["/etc/x.kpack"]}'
objcopy --update-section .rocm_kpack_ref=ref.bin t/lib/libk.so t/lib/libbad.so
bad "an absolute search path" t/lib/libbad.so "is absolute"
py ref ref.bin '{"kpack_search_paths":["../x.kpack"]}'
objcopy --update-section .rocm_kpack_ref=ref.bin t/lib/libk.so t/lib/libbad.so
bad "no kernel_name" t/lib/libbad.so "kernel_name is missing"
cp ka-gfx90a.co bad.co
printf '\001' | dd of=bad.co bs=1 seek=4 conv=notrunc 2>/dev/null
bad "a code object with a bad ELF header" bad.co "bad.co:"
