#!/bin/sh
# bench/real-hipify-noop.sh [TORCH_TREE]: where hipify-wrap's no-op time goes on the real
# torch 1.13.1 tree that tests/real/run.sh hipifies (default build/real/gfx/build/src/torch).
# Prints perf stat (CPU, user, system; 10 runs) for: hipify-wrap's no-op as the hipify
# stage calls it, `srcpin state` (which a no-op no longer runs: it reads srcpin's record), and the floor (one lstat per manifest
# file, bench/real-statfloor.c); then strace -c -f of one no-op and perf's top symbols.
# Needs perf and strace (linux-perf, strace); PYTHON (default build/real/venv/bin/python).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
T=${1:-$src/build/real/gfx/build/src/torch}
bin=${KILN_BIN:-$src/build/bin}
py=${PYTHON:-$src/build/real/venv/bin/python}
series=$src/tests/real/patches/torch/series
man=$T/.git/kiln-hipify/manifest
[ -f "$man" ] || { echo "bench/real-hipify-noop.sh: $T is not hipified by hipify-wrap (run tests/real/run.sh first)" >&2; exit 2; }
for c in perf strace cc; do command -v $c >/dev/null || { echo "bench/real-hipify-noop.sh: needs $c" >&2; exit 2; }; done
W=$(mktemp -d "${TMPDIR:-/tmp}/kiln-hw.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT INT TERM
cc -O2 -o "$W/statfloor" "$src/bench/real-statfloor.c" || exit 2
hw () { "$bin/hipify-wrap" --project=torch --python="$py" --reset --log "$W/hw.log" --series="$series" "$T"; }
hw >/dev/null || exit 1
echo "tree: $T ($(grep -c . "$man") manifest lines, $(find "$T" -type d | wc -l) folders); load: $(cut -d' ' -f1-3 /proc/loadavg)"
pstat () { perf stat -r 10 -e task-clock,user_time,system_time "$@" 2>&1 >/dev/null | awk '/task-clock|user_time|system_time|elapsed/ { $1 = $1; print "  " $0 }'; }
echo "hipify-wrap no-op:"; pstat "$bin/hipify-wrap" --project=torch --python="$py" --reset --log "$W/hw.log" --series="$series" "$T"
echo "srcpin state (a no-op reads its record instead of running it; for comparison):"; pstat "$bin/srcpin" state "$T"
echo "floor, lstat of every manifest file:"; pstat "$W/statfloor" "$T" "$man"
echo "strace -c -f of one no-op:"
strace -f -c -o "$W/strace" "$bin/hipify-wrap" --project=torch --python="$py" --reset --log "$W/hw.log" --series="$series" "$T" >/dev/null 2>&1
sed -n '1,12p' "$W/strace"
strace -f -o "$W/st" "$bin/hipify-wrap" --project=torch --python="$py" --reset --log "$W/hw.log" --series="$series" "$T" >/dev/null 2>&1
echo "syscalls per process (pid, count, call; hipify-wrap is the first pid):"
awk '{ split($2, a, "("); n[$1 " " a[1]]++ } END { for (k in n) if (n[k] > 300) print "  " k, n[k] }' "$W/st" | sort
perf record -q -F 20000 -g -o "$W/perf.data" -- "$bin/hipify-wrap" --project=torch --python="$py" --reset \
	--log "$W/hw.log" --series="$series" "$T" >/dev/null 2>&1
echo "perf, by process and object:"
perf report -i "$W/perf.data" --no-children --sort comm,dso --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -n 10
echo "perf, top symbols:"
perf report -i "$W/perf.data" --no-children --sort comm,sym --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -n 16
