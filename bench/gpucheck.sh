#!/bin/sh
# bench/gpucheck.sh: gpucheck beside its peers, figures printed as it goes.
#   sh bench/gpucheck.sh [GPUCHECK]     detection on captured KFD trees and this machine;
#                                       targets on Debian's librocsparse (1.3 GB, 111 bundles)
#                                       beside clang-offload-bundler-19 --list
#   sh bench/gpucheck.sh device [OUT]   on a machine with an NVIDIA GPU and torch: builds
#                                       gpucheck with cc, runs it on the GPU and on
#                                       libtorch_cuda.so beside cuobjdump --list-elf/--list-ptx
#   sh bench/gpucheck.sh cold [GPUCHECK] [DIR] [SITE]
#                                       from a cold page cache: targets on librocsparse and
#                                       cover on a folder of libraries (default
#                                       /usr/lib/x86_64-linux-gnu), each file evicted with
#                                       POSIX_FADV_DONTNEED first; with KILN_BENCH_DROP=1 (root)
#                                       also after echo 3 >/proc/sys/vm/drop_caches (and cover
#                                       on a Python site-packages, default Debian's
#                                       dist-packages), which slows every other process on
#                                       the machine: run it rarely
set -u
src=$(cd "$(dirname "$0")/.." && pwd)

# ms N CMD...: mean wall milliseconds of N runs (for machines without hyperfine)
ms () {
	n=$1; shift
	t0=$(date +%s%N)
	i=0; while [ $i -lt "$n" ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done
	t1=$(date +%s%N)
	echo "$(( (t1 - t0) / n / 1000 ))" | awk '{ printf "%.2f ms", $1 / 1000 }'
}

if [ "${1:-}" = device ]; then
	out=${2:-/tmp/gpucheck-device}
	mkdir -p "$out"
	gc=/tmp/gpucheck-bin
	def=; libs="-lz -ldl"
	[ -f /usr/include/zstd.h ] && libs="$libs -lzstd" || def="$def -DOFFLOAD_NO_ZSTD"
	[ -f /usr/include/archive.h ] && libs="$libs -larchive" || def="$def -DGPUCHECK_NO_LIBARCHIVE"
	[ -f /usr/include/msgpack.h ] && libs="$libs -lmsgpackc" || def="$def -DGPUCHECK_NO_MSGPACK"
	# tools/lib as a static archive of whatever compiles here (the objects that need
	# libcurl or OpenSSL are left out; gpucheck does not use them)
	o=$(mktemp -d)
	for f in "$src"/tools/lib/*.c; do
		cc -O2 -std=c17 -D_GNU_SOURCE $def -I"$src/tools/lib" -c "$f" -o "$o/${f##*/}.o" 2>/dev/null
	done
	ar rcs "$o/libk.a" "$o"/*.o &&
	cc -O2 -std=c17 -D_GNU_SOURCE $def -I"$src/tools/lib" "$src"/tools/gpucheck/*.c "$o/libk.a" \
		-o "$gc" $libs -lpthread || exit 2
	rm -rf "$o"
	echo "== built with:$def $libs"
	echo "== nvidia-smi"; nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv
	echo "== gpucheck"; "$gc"; echo "exit $?"
	echo "== gpucheck --arch"; "$gc" --arch
	"$gc" --json >"$out/detect.json"
	echo "== detection, mean of 20: full (libcuda) $(ms 20 "$gc"); /proc only $(ms 20 "$gc" --proc=/proc)"
	py=${PYTHON:-python3}
	lib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))')
	ls -l "$lib"
	echo "== gpucheck targets"; "$gc" targets "$lib"
	"$gc" targets -v --json "$lib" >"$out/targets.json"
	cuobjdump --list-elf "$lib" >"$out/list-elf.txt" 2>&1; echo "cuobjdump --list-elf exit $?"
	cuobjdump --list-ptx "$lib" >"$out/list-ptx.txt" 2>&1; echo "cuobjdump --list-ptx exit $?"
	echo "== entries per target: gpucheck vs cuobjdump"
	"$py" - "$out" <<'PY'
import collections, json, re, sys
o = sys.argv[1]
t = json.load(open(o + "/targets.json"))
g = collections.Counter()
for f in t["files"]:
    for b in f.get("bundle_list", []):
        for e in b["entries"]:
            g[e["target"]] += 1
c = collections.Counter()
for name, kind in (("list-elf.txt", "sm"), ("list-ptx.txt", "compute")):
    for line in open(o + "/" + name):
        m = re.search(r"\.(sm_\w+)\.(cubin|ptx)", line)
        if m:
            c[(kind + "_" + m.group(1)[3:]) if kind == "compute" else m.group(1)] += 1
for k in sorted(set(g) | set(c)):
    print("%-14s gpucheck %6d  cuobjdump %6d  %s" % (k, g[k], c[k], "same" if g[k] == c[k] else "DIFFERENT"))
PY
	echo "== time: gpucheck targets $(ms 3 "$gc" targets "$lib"); cuobjdump --list-elf $(ms 3 cuobjdump --list-elf "$lib"); cuobjdump --list-ptx $(ms 3 cuobjdump --list-ptx "$lib")"
	echo "== gpucheck cover (auto)"; "$gc" cover "$lib"; echo "exit $?"
	echo "== gpucheck cover --target=sm_120"; "$gc" cover --target=sm_120 "$lib"; echo "exit $?"
	echo "== gpucheck cover --target=sm_61"; "$gc" cover --target=sm_61 "$lib"; echo "exit $?"
	echo "== gpucheck env"; "$gc" env; echo "exit $?"
	echo "== gpucheck smoke"; "$gc" smoke --python="$(command -v "$py")" --timeout=300; echo "exit $?"
	site=$("$py" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
	echo "== gpucheck cover on $site ($(find "$site" -type f | wc -l) files), cold where drop_caches works"
	for i in 1 2 3; do
		sync; echo 3 2>/dev/null >/proc/sys/vm/drop_caches && c=cold || c=warm
		t0=$(date +%s%N); "$gc" cover --target=sm_90 "$site" >/dev/null 2>&1; t1=$(date +%s%N)
		echo "$c: $(( (t1 - t0) / 1000000 )) ms"
	done
	exit 0
fi

if [ "${1:-}" = cold ]; then
	gc=${2:-$src/build/bin/gpucheck}
	dir=${3:-/usr/lib/x86_64-linux-gnu}
	site=${4:-/usr/lib/python3/dist-packages}
	rs=/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1
	# evict FILE|DIR...: drop their pages from the page cache (mapped pages stay)
	evict () {
		python3 - "$@" <<'PY'
import os, sys
for root in sys.argv[1:]:
    walk = [(root, [], [''])] if os.path.isfile(root) else os.walk(root)
    for d, _, fs in walk:
        for f in fs:
            p = os.path.join(d, f) if f else d
            try:
                if os.path.islink(p):
                    continue
                fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                os.close(fd)
            except OSError:
                pass
PY
	}
	# secs CMD...: wall seconds, major faults and MiB read from the disk of one run
	secs () {
		/usr/bin/time -f '%e %F %I' -o "$tf" "$@" >/dev/null 2>&1
		tail -n 1 "$tf" | awk '{ printf "%.2f s (%d major faults, %.1f MiB read)", $1, $2, $3 * 512 / 1048576 }'
	}
	tf=$(mktemp); trap 'rm -f "$tf"' EXIT
	res () { fincore -nb -o RES "$1" | awk '{ printf "%.1f MiB", $1 / 1048576 }'; }
	nfiles=$(find "$dir" -type f | wc -l)
	echo "== cold file (POSIX_FADV_DONTNEED on it), then warm"
	for i in 1 2 3; do
		evict "$rs"
		echo "gpucheck targets librocsparse (1.3 GB): cold $(secs "$gc" targets "$rs"), read in $(res "$rs"); warm $(secs "$gc" targets "$rs")"
	done
	evict "$rs"
	echo "clang-offload-bundler-19 --list: cold $(secs clang-offload-bundler-19 --list --type=o --input="$rs")"
	echo "== cold folder: gpucheck cover --target=gfx90a $dir ($nfiles files, $(du -sh "$dir" | cut -f1))"
	for i in 1 2 3; do
		evict "$dir"
		echo "cold $(secs "$gc" cover --target=gfx90a "$dir"); warm $(secs "$gc" cover --target=gfx90a "$dir")"
	done
	if [ "${KILN_BENCH_DROP:-0}" = 1 ]; then
		# drop (root): dentries, inodes, the binary and its libraries too
		drop () { sync; echo 3 >/proc/sys/vm/drop_caches; }
		echo "== after sync; echo 3 >/proc/sys/vm/drop_caches before each run"
		for i in 1 2 3; do
			drop; a=$(secs "$gc" targets "$rs")
			drop; b=$(secs "$gc" cover --target=gfx90a "$dir")
			drop; c=$(secs "$gc" cover --target=gfx90a "$site")
			echo "targets librocsparse: $a"
			echo "cover $dir ($nfiles files): $b"
			echo "cover $site ($(find "$site" -type f | wc -l) files): $c"
		done
		drop
		echo "clang-offload-bundler-19 --list librocsparse: $(secs clang-offload-bundler-19 --list --type=o --input="$rs")"
	fi
	exit 0
fi

gc=${1:-$src/build/bin/gpucheck}
rs=/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
# a captured KFD tree: one CPU node, one gfx1151 GPU node with a memory bank
n=$t/class/kfd/kfd/topology/nodes
mkdir -p "$n/0" "$n/1/mem_banks/0"
printf 'cpu_cores_count 16\nsimd_count 0\nmem_banks_count 1\n' >"$n/0/properties"
printf 'cpu_cores_count 0\nsimd_count 80\nsimd_per_cu 2\ngfx_target_version 110501\nvendor_id 4098\ndevice_id 5510\nwave_front_size 32\n' >"$n/1/properties"
printf 'heap_type 1\nsize_in_bytes 103079215104\n' >"$n/1/mem_banks/0/properties"
if command -v hyperfine >/dev/null; then
	hyperfine -N -i -w 5 -r 50 "$gc --sysfs=$t" "$gc --arch --sysfs=$t" "$gc"
	if [ -f "$rs" ]; then
		cat "$rs" >/dev/null  # warm the page cache for both sides
		hyperfine -N -w 1 -r 10 -i "$gc targets $rs" \
			"clang-offload-bundler-19 --list --type=o --input=$rs"
	fi
else
	echo "detection (captured tree): $(ms 50 "$gc" --sysfs="$t")"
	[ -f "$rs" ] && echo "targets librocsparse: $(ms 5 "$gc" targets "$rs")"
	[ -f "$rs" ] && echo "clang-offload-bundler-19 --list: $(ms 2 clang-offload-bundler-19 --list --type=o --input="$rs")"
fi
[ -f "$rs" ] && "$gc" targets "$rs"
echo "clang-offload-bundler-19 --list on the same file prints $(clang-offload-bundler-19 --list --type=o --input="$rs" 2>&1 | wc -l) lines (it stops at the first bundle or finds none)"
