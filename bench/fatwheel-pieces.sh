#!/bin/sh
# bench/fatwheel-pieces.sh [LIB]: one big member deflated on 1, 2, 4 ... CPUs. A wheel
# holds LIB (default: the largest shared library under /usr/lib/$(multiarch), cut to
# SIZE_MB, default 256 MiB) behind a small extension's ELF that needs one private
# library, so fatwheel edits it and deflates it anew in 1 MiB pieces; timed with --jobs=N for N up to nproc (hyperfine,
# RUNS runs, default 3), each output compared byte for byte with --jobs=1's, and set
# beside pigz -6 and libdeflate-gzip -5 of the same bytes (whole stream, one core) and
# auditwheel when AUDITWHEEL names a folder holding its src/ (as bench/fatwheel.sh).
#   FATWHEEL  the fatwheel to time (default: fatwheel on PATH)
# Needs hyperfine, pigz, libdeflate-tools, gcc, python3.
set -u
FATWHEEL=${FATWHEEL:-fatwheel}
RUNS=${RUNS:-3}
B=${TMPDIR:-/tmp}/fatwheel-pieces
for c in hyperfine pigz libdeflate-gzip gcc python3 "$FATWHEEL"; do
	command -v "$c" >/dev/null || { echo "needs $c"; exit 2; }
done
multi=$(gcc -print-multiarch)
lib=${1:-$(ls -S /usr/lib/"$multi"/*.so* | head -n 1)}
rm -rf "$B" && mkdir -p "$B/w/big" "$B/priv" || exit 2
echo 'int priv(void) { return 7; }' >"$B/priv.c"
gcc -shared -fPIC -Wl,-soname,libpriv.so.1 -o "$B/priv/libpriv.so.1" "$B/priv.c" || exit 1
# the member: an ELF header from a small library that needs libpriv, then LIB's bytes
# (fatwheel edits the dynamic section only; the rest is payload)
echo 'int priv(void); int f(void) { return priv(); }' >"$B/ext.c"
gcc -shared -fPIC -o "$B/ext.so" "$B/ext.c" -L"$B/priv" -l:libpriv.so.1 || exit 1
{ cat "$B/ext.so"; head -c $((${SIZE_MB:-256} << 20)) "$lib"; } >"$B/w/big/_big.so"
W=$(python3 "$(dirname "$0")/../tests/regress/toy-mkwheel.py" --tag=cp311-cp311-linux_x86_64 --level=1 \
	"$B" big 1.0 "" big/_big.so="$B/w/big/_big.so") || exit 1
echo "member: $(wc -c <"$B/w/big/_big.so") bytes ($lib); $(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
jobs=1 n=1
while [ "$n" -le "$(nproc)" ]; do jobs="$jobs $n"; n=$((n * 2)); done
jobs=$(echo "$jobs" | tr ' ' '\n' | sort -un | tr '\n' ' ')
for j in $jobs; do
	hyperfine -N -r "$RUNS" --export-json "$B/j$j.json" \
		"$FATWHEEL -q --jobs=$j --lib-path $B/priv $W -w $B/o$j" >/dev/null 2>&1
	t=$(python3 -c 'import json, sys; print("%.3f" % min(json.load(open(sys.argv[1]))["results"][0]["times"]))' "$B/j$j.json")
	same=same; cmp -s "$B/o1/${W##*/}" "$B/o$j/${W##*/}" || same=DIFFERENT
	echo "fatwheel --jobs=$j: $t s (best of $RUNS), $(wc -c <"$B/o$j/${W##*/}") bytes, $same bytes as --jobs=1"
done
for c in "pigz -6 -p 1" "libdeflate-gzip -5"; do
	hyperfine -N -r "$RUNS" --export-json "$B/c.json" "sh -c '$c -c $B/w/big/_big.so >$B/c.gz'" >/dev/null 2>&1
	t=$(python3 -c 'import json, sys; print("%.3f" % min(json.load(open(sys.argv[1]))["results"][0]["times"]))' "$B/c.json")
	echo "$c (whole member, one core): $t s, $(wc -c <"$B/c.gz") bytes"
done
if [ -n "${AUDITWHEEL:-}" ] && [ -d "$AUDITWHEEL/src/auditwheel" ]; then
	t0=$(date +%s.%N)
	LD_LIBRARY_PATH=$B/priv PYTHONPATH=$AUDITWHEEL/src python3 -m auditwheel repair -w "$B/aw" "$W" >/dev/null 2>&1
	rc=$?
	echo "auditwheel repair: $(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }') s (one run), exit $rc"
fi
