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

# mean NAME FILE: the mean of the run named NAME in a hyperfine JSON export, in ms
mean () {
	"$py" -c 'import json, sys
r = [x for x in json.load(open(sys.argv[2]))["results"] if x["command"] == sys.argv[1]][0]
print("%.3f" % (r["mean"] * 1000))' "$1" "$2"
}

echo "== exec overhead (hyperfine -N, no shell; 3000 runs each)"
hyperfine -N --style basic --warmup 100 --runs 3000 --export-json "$T/exec.json" \
	"/bin/true" \
	"$ec -- /bin/true" \
	"$ec -i -- /bin/true" \
	"env -u PYTHONPATH -u PYTHONHOME -u LD_LIBRARY_PATH -u LD_PRELOAD PYTHONNOUSERSITE=1 /bin/true"
t0=$(mean /bin/true "$T/exec.json")
t1=$(mean "$ec -- /bin/true" "$T/exec.json")
t2=$(mean "env -u PYTHONPATH -u PYTHONHOME -u LD_LIBRARY_PATH -u LD_PRELOAD PYTHONNOUSERSITE=1 /bin/true" "$T/exec.json")
echo "exec overhead of envclean: $(echo "$t1 $t0" | awk '{ printf "%.3f", $1 - $2 }') ms (target < 1 ms); of env(1): $(echo "$t2 $t0" | awk '{ printf "%.3f", $1 - $2 }') ms"

echo
echo "== --check (interpreter start included)"
"$py" -m venv --without-pip "$T/venv" || exit 2
has_torch=$("$py" -c 'import importlib.util as u; print(1 if u.find_spec("torch") else 0)' 2>/dev/null)
set -- "$py -c pass" "$ec --check --python=$T/venv" "$ec --check --python=$py --module=numpy --module=torch"
hyperfine -N --style basic --warmup 5 --runs 100 -i --export-json "$T/check.json" "$@"
c1=$(mean "$ec --check --python=$py --module=numpy --module=torch" "$T/check.json")
echo "envclean --check on $py (numpy, torch): $c1 ms (target < 150 ms)"
if [ "$has_torch" = 1 ]; then
	echo
	echo "== what --check avoids: importing torch once"
	hyperfine -N --style basic --warmup 1 --runs 5 "$py -c 'import torch'"
fi
