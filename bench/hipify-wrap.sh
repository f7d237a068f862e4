#!/bin/sh
# bench/hipify-wrap.sh [VISION_TREE]: hipify-wrap's no-op check beside re-running the
# hipify script itself, on a torchvision tree (v0.14.1 matches Debian's torch 1.13.1).
#   VISION_TREE: an unpacked torchvision source tree (copied, never modified). Without
#   it the script uses Debian's pytorch-vision orig tarball found in $VISION_TARBALL
#   (get it with: apt-get source --download-only pytorch-vision, needs a deb-src line).
#   HIPIFY_WRAP=path (default build/bin/hipify-wrap), PYTHON=interpreter with torch.
# Target (issue 8): the no-op check < 100 ms; the ratio to the script goes in the note.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
hw=${HIPIFY_WRAP:-$src/build/bin/hipify-wrap}
py=${PYTHON:-/usr/bin/python3}
[ -x "$hw" ] || { echo "bench/hipify-wrap.sh: no $hw; build it (ninja) or set HIPIFY_WRAP" >&2; exit 2; }
command -v hyperfine >/dev/null 2>&1 || { echo "bench/hipify-wrap.sh: needs hyperfine" >&2; exit 2; }
"$py" -c 'import torch.utils.hipify.hipify_python' 2>/dev/null ||
	{ echo "bench/hipify-wrap.sh: $py has no torch (apt-get install python3-torch)" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/hipify-bench.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM

if [ $# -gt 0 ]; then
	[ -d "$1" ] || { echo "bench/hipify-wrap.sh: $1: not a folder" >&2; exit 2; }
	cp -R "$1" "$T/vision"
else
	tb=${VISION_TARBALL:-pytorch-vision_0.14.1.orig.tar.gz}
	[ -f "$tb" ] || { echo "bench/hipify-wrap.sh: give a torchvision tree, or VISION_TARBALL=path/to/pytorch-vision_0.14.1.orig.tar.gz" >&2; exit 2; }
	mkdir -p "$T/vision" && tar -xzf "$tb" -C "$T/vision" --strip-components=1 || exit 2
fi
cp -R "$T/vision" "$T/plain"
V=$T/vision
# torchvision's setup.py hipify call, what a build without hipify-wrap reruns every time
script="import os
from torch.utils.hipify import hipify_python
hipify_python.hipify(project_directory=os.getcwd(), output_directory=os.getcwd(), includes='torchvision/csrc/ops/cuda/*', show_detailed=True, is_pytorch_extension=True)"

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
echo "tree: $(find "$V" -type f | wc -l) files, $(du -sh "$V" | cut -f1)"
echo "== first run (hipifies)"
s=$(date +%s.%N)
"$hw" --project=vision --python="$py" "$V" || exit 1
e=$(date +%s.%N)
echo "hipify-wrap first run: $(echo "$s $e" | awk '{printf "%.2f s", $2 - $1}')"
s=$(date +%s.%N)
(cd "$T/plain" && "$py" -I -c "$script" >/dev/null 2>&1) || exit 1
e=$(date +%s.%N)
echo "hipify script alone, first run: $(echo "$s $e" | awk '{printf "%.2f s", $2 - $1}')"
echo "== second run: hipify-wrap's no-op check vs rerunning the hipify script"
hyperfine -N --style basic --warmup 3 --runs 30 --export-json "$T/noop.json" \
	"$hw --project=vision --python=$py $V" >/dev/null
(cd "$T/plain" && hyperfine --style basic --warmup 1 --runs 5 --export-json "$T/script.json" \
	"$py -I -c \"$script\"" >/dev/null)
"$py" - "$T/noop.json" "$T/script.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["results"][0]
b = json.load(open(sys.argv[2]))["results"][0]
med = lambda r: sorted(r["times"])[len(r["times"]) // 2] * 1e3
print("hipify-wrap no-op:      median %.1f ms, min %.1f ms (target < 100 ms)" % (med(a), min(a["times"]) * 1e3))
print("hipify script rerun:    median %.1f ms, min %.1f ms" % (med(b), min(b["times"]) * 1e3))
print("ratio (script / no-op): %.0fx" % (med(b) / med(a)))
PY
out=$("$hw" --project=vision --python="$py" "$V")
echo "second run prints: $out"
