#!/bin/sh
# bench/envclean.sh [ENVCLEAN]: envclean beside its peers, with hyperfine.
#   1. exec overhead: /bin/true run directly, through envclean (default policy and -i),
#      and through env(1) doing the core of the same removals (the peer).
#   2. --check: the interpreter's bare start, envclean --check on Debian's python3 with
#      python3-torch (module torch) and on a fresh venv, and `import torch`, which is what
#      --check avoids doing.
# Targets (envclean.1 / issue 6): exec overhead < 1 ms; --check < 150 ms all included.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
ec=${1:-$src/build/bin/envclean}
py=${PYTHON:-/usr/bin/python3}
[ -x "$ec" ] || { echo "bench/envclean.sh: no $ec; build it (ninja) or pass its path" >&2; exit 2; }
command -v hyperfine >/dev/null 2>&1 || { echo "bench/envclean.sh: needs hyperfine" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/envclean-bench.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM

# stat NAME FILE: min, p10 and median of the run named NAME in a hyperfine JSON export (ms)
stat () {
	"$py" -c 'import json, sys
r = [x for x in json.load(open(sys.argv[2]))["results"] if x["command"] == sys.argv[1]][0]
t = sorted(r["times"])
print("%.3f %.3f %.3f" % (t[0] * 1e3, t[len(t) // 10] * 1e3, t[len(t) // 2] * 1e3))' "$1" "$2"
}
# delta "A B C" "D E F": the three differences
delta () { echo "$1 $2" | awk '{ printf "min %.3f, p10 %.3f, median %.3f ms", $1 - $4, $2 - $5, $3 - $6 }'; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores (medians suffer from load; min and p10 less)"
echo "== exec overhead (hyperfine -N, no shell; 3000 runs each)"
hyperfine -N --style basic --warmup 100 --runs 3000 --export-json "$T/exec.json" \
	"/bin/true" \
	"$ec -- /bin/true" \
	"$ec -i -- /bin/true" \
	"env -u PYTHONPATH -u PYTHONHOME -u LD_LIBRARY_PATH -u LD_PRELOAD PYTHONNOUSERSITE=1 /bin/true"
t0=$(stat /bin/true "$T/exec.json")
t1=$(stat "$ec -- /bin/true" "$T/exec.json")
t2=$(stat "env -u PYTHONPATH -u PYTHONHOME -u LD_LIBRARY_PATH -u LD_PRELOAD PYTHONNOUSERSITE=1 /bin/true" "$T/exec.json")
echo "exec overhead of envclean over /bin/true alone: $(delta "$t1" "$t0") (target < 1 ms)"
echo "exec overhead of env(1), the peer:              $(delta "$t2" "$t0")"
echo
echo "== --check (interpreter start included)"
"$py" -m venv --without-pip "$T/venv" || exit 2
has_torch=$("$py" -c 'import importlib.util as u; print(1 if u.find_spec("torch") else 0)' 2>/dev/null)
set -- "$py -c pass" "$ec --check --python=$T/venv" "$ec --check --python=$py --module=numpy --module=torch"
hyperfine -N --style basic --warmup 5 --runs 100 -i --export-json "$T/check.json" "$@"
c1=$(stat "$ec --check --python=$py --module=numpy --module=torch" "$T/check.json")
echo "envclean --check on $py (numpy, torch), min p10 median: $c1 ms (target < 150 ms)"
if [ "$has_torch" = 1 ]; then
	echo
	echo "== what --check avoids: importing torch once"
	hyperfine -N --style basic --warmup 1 --runs 5 "$py -c 'import torch'"
fi
