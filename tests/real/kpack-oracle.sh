#!/bin/sh
# tests/real/kpack-oracle.sh SNAPSHOT [OUT]: gpucheck cover's kpack verdicts against ROCm's
# own kpack loader (issue 43). SNAPSHOT is a fetched ROCm/rocm-kpack (its git directory,
# as the search tool's fetch brings it: /work/.mirror/ROCm+rocm-kpack/repo, or an unpacked
# tree). Its runtime (runtime/src/*.cpp) is compiled unchanged with the oracle program
# tests/real/kpack-oracle.cpp, which loads every HIPK code object of a library through
# kpack_load_code_object as the HIP runtime calls it. The archives are written by the
# snapshot's own Python writer (rocm_kpack.kpack.PackedKernelArchive, zstd and none);
# the library by tools/gpucheck/tests/kpackify.py from a clang-19 HIP build. Each case
# runs the oracle and `gpucheck cover --kpack-loader=first` (the loader of that snapshot)
# in the same environment; every verdict must be equal. The default loader (next) is run
# too and shown beside, where it may differ by design (TheRock issue 7081's shape).
# Needs clang++-19, g++, msgpack-c's C++ headers, libzstd, python3 with msgpack and
# zstandard (python3-zstandard). OUT gets oracle.txt and log.txt. GPUCHECK names the
# gpucheck to judge (default build/bin/gpucheck of this checkout).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
SNAP=${1:?usage: kpack-oracle.sh SNAPSHOT [OUT]}
OUT=${2:-/tmp/kpack-oracle}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
GC=${GPUCHECK:-$src/build/bin/gpucheck}
LOG=$OUT/log.txt
: >"$LOG"
for c in clang++-19 clang-19 g++ objcopy zstd python3; do
	command -v "$c" >/dev/null || { echo "kpack-oracle: needs $c"; exit 2; }
done
[ -x "$GC" ] || { echo "kpack-oracle: no gpucheck at $GC (run ninja, or set GPUCHECK)"; exit 2; }
[ -f /usr/include/msgpack.hpp ] || { echo "kpack-oracle: needs msgpack-c's C++ headers (libmsgpack-dev)"; exit 2; }
/usr/bin/python3 -c 'import msgpack, zstandard' 2>/dev/null ||
	{ echo "kpack-oracle: needs python3-msgpack and python3-zstandard (the writer's)"; exit 2; }
W=$(mktemp -d /tmp/kpack-oracle.XXXXXX) || exit 2
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/rk"
if [ -d "$SNAP/runtime/src" ]; then
	cp -R "$SNAP/." "$W/rk/" && snap="tree $SNAP"
else
	git --git-dir="$SNAP" archive HEAD | tar -x -C "$W/rk" || exit 2
	snap="$(git --git-dir="$SNAP" log -1 --format='%h %cs %s' HEAD)"
fi
echo "snapshot: $snap" | tee -a "$LOG"
mkdir -p "$W/o"
for f in "$W"/rk/runtime/src/*.cpp; do
	g++ -std=c++17 -O1 -I"$W/rk/runtime/include" -I"$W/rk/runtime/src" -c "$f" -o "$W/o/${f##*/}.o" >>"$LOG" 2>&1 ||
		{ echo "kpack-oracle: the snapshot's ${f##*/} does not build"; exit 2; }
done
ORA=$W/kpack-oracle
g++ -std=c++17 -O1 -I"$W/rk/runtime/include" "$src/tests/real/kpack-oracle.cpp" "$W"/o/*.o -lzstd -o "$ORA" >>"$LOG" 2>&1 ||
	{ echo "kpack-oracle: the oracle does not build"; exit 2; }

cd "$W" || exit 2
for k in ka kb; do
	cat >"$k.hip" <<EOK
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void *f, dim3_ g, dim3_ b, void **a, unsigned long s, void *st);
__attribute__((global)) void $k(float *p) { p[0] = 1.0f; }
EOK
	clang++-19 -x hip -nogpulib -nogpuinc -fPIC --offload-arch=gfx1100 -c "$k.hip" -o "$k.o" 2>>"$LOG" || exit 2
	clang++-19 -x hip -nogpulib -nogpuinc --offload-arch=gfx1100 --cuda-device-only --no-gpu-bundle-output \
		-c "$k.hip" -o "$k.co" 2>>"$LOG" || exit 2
done
clang-19 -shared -fuse-ld=lld -o libfat.so ka.o kb.o || exit 2
# the upstream writer: arc DIR NAME SCHEME ARCH[,ARCH] [KEY=ARCH=FILE...] (default: both
# kernels for each arch)
arc () {
	PYTHONPATH=$W/rk/python /usr/bin/python3 - "$@" <<'EOP' >>"$LOG" 2>&1 || { echo "kpack-oracle: the writer failed"; exit 2; }
import sys
from pathlib import Path
from rocm_kpack.kpack import PackedKernelArchive
from rocm_kpack.compression import NoOpCompressor, ZstdCompressor
d, name, scheme, arches = sys.argv[1:5]
arches = arches.split(",")
ents = [e.split("=", 2) for e in sys.argv[5:]] or \
    [("lib/libk.so#%d" % i, a, f) for a in arches for i, f in enumerate(["ka.co", "kb.co"])]
a = PackedKernelArchive("test", arches[0], arches,
                        compressor=ZstdCompressor() if scheme == "zstd" else NoOpCompressor())
for key, arch, f in ents:
    a.add_kernel(a.prepare_kernel(key, arch, open(f, "rb").read()))
a.finalize_archive()
Path(d, ".kpack").mkdir(parents=True, exist_ok=True)
a.write(Path(d, ".kpack", name))
EOP
}
# lib DIR: the kpack'd library in DIR/lib
lib () {
	mkdir -p "$1/lib" && /usr/bin/python3 "$src/tools/gpucheck/tests/kpackify.py" lib libfat.so "$1/lib/libk.so" \
		lib/libk.so '../.kpack/k_@GFXARCH@.kpack' || exit 2
}
P=amdgcn-amd-amdhsa--
# devices: the gpucheck target and the arch list the HIP runtime passes (its ISA name, then
# the generic target of hip_fatbin.cpp's TargetGenericMap, features kept)
dev () {
	case $1 in
	gfx90a) echo "gfx90a:sramecc+|${P}gfx90a:sramecc+:xnack-" ;;
	gfx90a-xnack) echo "gfx90a:sramecc+:xnack+|${P}gfx90a:sramecc+:xnack+" ;;
	gfx942) echo "gfx942|${P}gfx942:sramecc+:xnack- ${P}gfx9-4-generic:sramecc+:xnack-" ;;
	gfx942-noecc) echo "gfx942:sramecc-|${P}gfx942:sramecc-:xnack- ${P}gfx9-4-generic:sramecc-:xnack-" ;;
	gfx1100) echo "gfx1100|${P}gfx1100 ${P}gfx11-generic" ;;
	gfx1151) echo "gfx1151|${P}gfx1151 ${P}gfx11-generic" ;;
	gfx1201) echo "gfx1201|${P}gfx1201 ${P}gfx12-generic" ;;
	esac
}
total=0 agree=0
printf '%-44s %-7s %-7s %-7s %s\n' case oracle first next agree >"$OUT/oracle.txt"
# case NAME DIR DEVICE [ENV=VALUE]: the oracle and gpucheck on DIR/lib/libk.so (or LIBPATH)
case_ () {
	n=$1 d=$2 dv=$(dev "$3"); shift 3
	t=${dv%%|*} arches=${dv#*|}
	l=${LIBPATH:-$d/lib/libk.so}
	# shellcheck disable=SC2086
	o=$(env "$@" "$ORA" "$l" $arches 2>&1); orc=$?
	f=$(env "$@" "$GC" cover -v --kpack-loader=first --target="$t" "$l" 2>&1); frc=$?
	x=$(env "$@" "$GC" cover -v --target="$t" "$l" 2>&1); xrc=$?
	total=$((total + 1))
	word () { case $1 in 0) echo loads ;; 1) echo fails ;; *) echo "exit$1" ;; esac; }
	a=NO; [ "$orc" -le 1 ] && [ "$orc" = "$frc" ] && { a=yes; agree=$((agree + 1)); }
	printf '%-44s %-7s %-7s %-7s %s\n' "$n" "$(word $orc)" "$(word $frc)" "$(word $xrc)" "$a" >>"$OUT/oracle.txt"
	{ echo "== $n: $* oracle $l $arches: exit $orc"; echo "$o"; echo "-- gpucheck cover --kpack-loader=first --target=$t: exit $frc"
	  echo "$f"; echo "-- gpucheck cover --target=$t: exit $xrc"; echo "$x"; } >>"$LOG"
}

lib A; arc A k_gfx90a.kpack zstd gfx90a; arc A k_gfx1100.kpack none gfx1100
for v in gfx90a gfx90a-xnack gfx1100 gfx1151 gfx1201 gfx942; do case_ "two archives (zstd, none): $v" A "$v"; done
lib B; arc B k_gfx11-generic.kpack zstd gfx11-generic
for v in gfx1151 gfx1100 gfx1201; do case_ "gfx11-generic archive: $v" B "$v"; done
arc B k_gfx1151.kpack none gfx1151 'lib/libk.so#0=gfx1151=ka.co'
case_ "gfx1151 archive lacking #1 before generic" B gfx1151
lib C; arc C k_gfx90a.kpack zstd gfx90a; arc C 'k_gfx90a:xnack-.kpack' none 'gfx90a:xnack-' 'lib/libk.so#0=gfx90a:xnack-=ka.co'
case_ "7081: stub gfx90a:xnack- beside gfx90a: gfx90a" C gfx90a
case_ "7081: the same, xnack on" C gfx90a-xnack
lib D; arc D 'k_gfx942:sramecc+.kpack' zstd 'gfx942:sramecc+'
case_ "gfx942:sramecc+ archive: bare gfx942" D gfx942
case_ "gfx942:sramecc+ archive: gfx942:sramecc-" D gfx942-noecc
lib E; arc E k_gfx90a.kpack zstd gfx90a; arc E k_gfx1100.kpack zstd gfx1100
case_ "ROCM_KPACK_PATH naming nothing: gfx90a" E gfx90a ROCM_KPACK_PATH="$W/none.kpack"
case_ "ROCM_KPACK_PATH naming gfx1100's: gfx90a" E gfx90a ROCM_KPACK_PATH="$W/E/.kpack/k_gfx1100.kpack"
case_ "ROCM_KPACK_PATH naming gfx1100's: gfx1100" E gfx1100 ROCM_KPACK_PATH="$W/E/.kpack/k_gfx1100.kpack"
case_ "ROCM_KPACK_PATH_PREFIX naming nothing: gfx90a" E gfx90a ROCM_KPACK_PATH_PREFIX="$W/none.kpack"
case_ "ROCM_KPACK_DISABLE: gfx90a" E gfx90a ROCM_KPACK_DISABLE=1
mkdir -p F/lib && ln -s "$W/E/lib/libk.so" F/lib/libk.so
case_ "a library reached through a link: gfx90a" F gfx90a
lib G; arc G k_gfx90a.kpack zstd gfx90a; printf 'KPAK\001\000\000\000\377\377\377\377\000\000\000\000' >G/.kpack/k_gfx1100.kpack
case_ "broken gfx1100 archive: gfx90a" G gfx90a
case_ "broken gfx1100 archive: gfx1100" G gfx1100
lib H; arc H k_gfx90a.kpack zstd gfx90a
/usr/bin/python3 - H/.kpack/k_gfx90a.kpack <<'EOP'
import msgpack, struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
toff, = struct.unpack_from("<Q", d, 8)
m = msgpack.unpackb(bytes(d[toff:]))
m["toc"]["lib/libk.so#1"]["gfx90a"]["original_size"] += 1
open(sys.argv[1], "wb").write(bytes(d[:toff]) + msgpack.packb(m))
EOP
case_ "a zstd frame short of its original_size: gfx90a" H gfx90a
lib I; arc I k_gfx90a.kpack zstd gfx90a,gfx1100
case_ "one archive of two arches, by ROCM_KPACK_PATH: gfx1100" I gfx1100 ROCM_KPACK_PATH="$W/I/.kpack/k_gfx90a.kpack"

echo "$agree of $total verdicts of gpucheck --kpack-loader=first equal the loader's ($snap)" >>"$OUT/oracle.txt"
cat "$OUT/oracle.txt"
[ "$agree" = "$total" ]
