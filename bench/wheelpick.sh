#!/bin/sh
# bench/wheelpick.sh: wheelpick beside pip's own resolution of the same folder.
#   sh bench/wheelpick.sh [WHEELPICK] [N]   N empty wheel files with valid names (10000);
#                                           whole-process wall time of wheelpick three ways
#                                           and of pip install --dry-run on that folder
#   sh bench/wheelpick.sh build [N]         build wheelpick with cc into /tmp/wheelpick-bin
#                                           (for a machine without the kiln build), then run
# Figures: median wall ms (hyperfine when present, with the mean user+system CPU ms, which
# a loaded machine disturbs less; otherwise a timing loop through sh).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
# the interpreter itself, not a wrapper script (a pyenv shim is never cached, and costs
# a shell start besides)
py=$("$py" -c 'import sys; print(sys.executable)') || exit 2
export PIP_CONFIG_FILE=/dev/null

if [ "${1:-}" = build ]; then
	wp=/tmp/wheelpick-bin
	cc -O2 -std=c17 -D_GNU_SOURCE -I"$src/tools/lib" "$src"/tools/wheelpick/check.c \
		"$src"/tools/wheelpick/pick.c "$src"/tools/wheelpick/target.c \
		"$src"/tools/wheelpick/wheelpick.c "$src"/tools/lib/util.c "$src"/tools/lib/atomic.c \
		"$src"/tools/lib/hash.c "$src"/tools/lib/json.c "$src"/tools/lib/proc.c \
		"$src"/tools/lib/mapfile.c "$src"/tools/lib/elffile.c "$src"/tools/lib/pep440.c \
		"$src"/tools/lib/wheelname.c -o "$wp" -lcrypto -ldl ||
		exit 2
	shift
else
	wp=${1:-$src/build/bin/wheelpick}
	[ $# -gt 0 ] && shift
fi
n=${1:-10000}
[ -x "$wp" ] || { echo "bench: $wp is not built (ninja, or: sh bench/wheelpick.sh build)"; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/wheelpick-bench.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT INT TERM
export XDG_CACHE_HOME=$dir/cache
mkdir -p "$dir/dist"
# torch-2.A.B+LABEL-cpXY-cpXY-PLATFORM.whl: 10 x 25 versions, 5 labels, 4 Pythons, 2 platforms
awk -v n="$n" 'BEGIN {
	split("cp310 cp311 cp312 cp313", py, " ")
	split("linux_x86_64 manylinux_2_28_x86_64", pl, " ")
	split("rocm6.3 rocm6.4 rocm7.0 cu126 cu128", lb, " ")
	for (a = 0; k < n; a++) for (b = 0; b < 25 && k < n; b++) for (c = 1; c <= 5 && k < n; c++)
	for (p = 1; p <= 4 && k < n; p++) for (q = 1; q <= 2 && k < n; q++) {
		printf "torch-2.%d.%d+%s-%s-%s-%s.whl\n", a, b, lb[c], py[p], py[p], pl[q]; k++
	}
}' | (cd "$dir/dist" && xargs touch)
echo "== $(ls "$dir/dist" | wc -l) wheel files; $(uname -m), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
pyver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
pipver=$("$py" -m pip --version 2>/dev/null | cut -d' ' -f2)
echo "== wheelpick: $wp; python: $(command -v "$py") $pyver, pip $pipver"
echo "== choice: $("$wp" --python="$py" "$dir/dist")"

# median wall ms of COMMAND (a string run by sh)
median () {
	if command -v hyperfine >/dev/null 2>&1; then
		hyperfine -N -i -w 3 -r "${2:-30}" --export-json "$dir/h.json" "$1" >/dev/null 2>&1 ||
			hyperfine -i -w 3 -r "${2:-30}" --export-json "$dir/h.json" "$1" >/dev/null 2>&1
		"$py" -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"][0]; print("%.1f ms (cpu %.1f ms)" % (r["median"] * 1000, (r["user"] + r["system"]) * 1000))' "$dir/h.json"
	else
		i=0; : >"$dir/t"
		while [ $i -lt "${2:-30}" ]; do
			t0=$(date +%s%N); sh -c "$1" >/dev/null 2>&1; t1=$(date +%s%N)
			echo $(( (t1 - t0) / 1000 )) >>"$dir/t"; i=$((i + 1))
		done
		sort -n "$dir/t" | awk '{ v[NR] = $1 } END { printf "%.1f ms\n", v[int((NR + 1) / 2)] / 1000 }'
	fi
}

"$wp" --python="$py" "$dir/dist" >/dev/null   # fill the interpreter cache
f=$(median "true")
echo "floor: the timing itself (true):                     $f"
a=$(median "$wp --python-version=$pyver $dir/dist")
b=$(median "$wp --python=$py $dir/dist")
c=$(median "$wp --no-cache --python=$py $dir/dist" 20)
echo "wheelpick --python-version=$pyver (no Python run):   $a"
echo "wheelpick --python=$py (cached interpreter answer):  $b"
echo "wheelpick --no-cache --python=$py (runs Python once): $c"
if [ -n "$pipver" ]; then
	# pip chooses, then fails reading the empty chosen file: the time covers the choice
	p=$(median "$py -m pip install -q --dry-run --ignore-installed --no-deps --no-index --find-links $dir/dist torch" 5)
	echo "pip $pipver install --dry-run --find-links (choice, then it fails on the empty file): $p"
	echo "pip's choice: $("$py" -m pip install --dry-run --ignore-installed --no-deps --no-index \
		--find-links "$dir/dist" torch 2>&1 | sed -n 's/^Processing //p')"
	echo "ratio pip / wheelpick (cached): $(awk -v p="${p%% *}" -v w="${b%% *}" 'BEGIN { printf "%.0fx", p / w }')"
	echo "ratio pip / wheelpick (--no-cache): $(awk -v p="${p%% *}" -v w="${c%% *}" 'BEGIN { printf "%.0fx", p / w }')"
fi
