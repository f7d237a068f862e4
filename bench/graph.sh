#!/bin/sh
# bench/graph.sh [KILN_BIN]: the stack graph's speed and precision on the toy stack of
# tests/regress/graph-toy.inc (real git repos, real pip-built C-extension wheels):
#   - time of the first full build of the default graph (torch, vision, audio)
#   - no-op ninja on the default graph and on the full graph (all 7 components), with
#     hyperfine when present (else a timing loop); the target is < 50 ms
#   - stages rerun per change (bump vision, bump torch, edit a patch, change --arch,
#     same configure args) against the minimum the stage model allows
# KILN_BIN: folder with release builds of kiln-stage, srcpin, envclean, wheelpick
# [build/bin of the current folder].
KILN_SRC=$(cd "$(dirname "$0")/.." && pwd)
KILN_BIN=${1:-${KILN_BIN:-$(pwd)/build/bin}}
KILN_BIN=$(cd "$KILN_BIN" && pwd) || exit 2
export KILN_SRC KILN_BIN
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"

toy_venv "$T/venv"
mkdir -p "$T/b" && cd "$T/b" || exit 2
conf () {
	"$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--rocm-path="$T/rocm" --jobs=2 KILN_BIN="$KILN_BIN" "$@" >/dev/null
}
now () { date +%s.%N; }
build () { ninja >"$T/$1.log" 2>&1 || { echo "ninja failed:"; tail -40 "$T/$1.log"; exit 1; }; got=$(rebuilt "$T/$1.log"); }
count () { [ -z "$1" ] && echo 0 || echo "$1" | wc -w | tr -d ' '; }
report () {
	# report CASE MINIMUM
	n=$(count "$got")
	printf '%-34s rerun %2d  minimum %2d  %s\n' "$1" "$n" "$2" "$([ "$n" = "$2" ] && echo equal || echo "DIFFERENT: $got")"
}
noop () {
	# noop LABEL: time a no-op ninja
	if command -v hyperfine >/dev/null 2>&1; then
		hyperfine -N --warmup 3 --runs 50 --export-json "$T/h.json" ninja >/dev/null 2>&1
		"$PY3" -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%-34s mean %.1f ms  min %.1f ms  max %.1f ms  (hyperfine, 50 runs)" % (sys.argv[2], r["mean"]*1e3, r["min"]*1e3, r["max"]*1e3))' "$T/h.json" "$1"
	else
		t0=$(now); i=0; while [ $i -lt 50 ]; do ninja >/dev/null; i=$((i + 1)); done; t1=$(now)
		echo "$1 $(echo "($t1 - $t0) * 20" | bc) ms per run (50 runs)"
	fi
}

echo "== default graph (torch vision audio), --arch=gfx1100"
conf --arch=gfx1100
t0=$(now); build first; t1=$(now)
printf '%-34s %.1f s, %d stages\n' "first build (toy, 3 wheels)" "$(echo "$t1 - $t0" | bc)" "$(count "$got")"
[ "$(ninja)" = "ninja: no work to do." ] || { echo "second ninja had work"; exit 1; }
noop "no-op ninja, default graph"

toy_commit vision v2 5
conf --arch=gfx1100 --pin vision=v2
build bump-vision; report "bump vision" 7
toy_commit torch v2 20
conf --arch=gfx1100 --pin vision=v2 --pin torch=v2
build bump-torch; report "bump torch" 12
sed -i 's/^+#define ADD 100/+#define ADD 200/' "$T/patches/vision/0001-add.patch"
build edit-patch; report "edit vision's patch in place" 6
conf --arch=gfx1151 --pin vision=v2 --pin torch=v2
build arch; report "--arch gfx1100 -> gfx1151" 10
conf --arch=gfx1151 --pin vision=v2 --pin torch=v2
build same; report "configure again, same arguments" 0

echo "== full graph (+ triton aotriton flash_attn vllm), --arch=gfx1151"
for c in triton flash_attn vllm aotriton; do mk_ext "$c" "kiln_toy_$c"; toy_commit "$c" v1 3; done
cat >>"$T/pins.env" <<'EOF'
triton_URL=https://example.invalid/toy/triton
triton_REF=v1
triton_DIST=kiln_toy_triton
triton_IMPORT=kiln_toy_triton
triton_DEPS=torch
triton_SUBDIR=
aotriton_URL=https://example.invalid/toy/aotriton
aotriton_REF=v1
flash_attn_URL=https://example.invalid/toy/flash_attn
flash_attn_REF=v1
flash_attn_DIST=kiln_toy_flash_attn
flash_attn_IMPORT=kiln_toy_flash_attn
vllm_URL=https://example.invalid/toy/vllm
vllm_REF=v1
vllm_DIST=kiln_toy_vllm
vllm_IMPORT=kiln_toy_vllm
EOF
t0=$(now); conf --arch=gfx1151 --pin vision=v2 --pin torch=v2 --with=triton,aotriton,flash_attn,vllm; t1=$(now)
printf '%-34s %.2f s (checks + kiln-stage graph, first time)\n' "configure, full graph" "$(echo "$t1 - $t0" | bc)"
t0=$(now); conf --arch=gfx1151 --pin vision=v2 --pin torch=v2 --with=triton,aotriton,flash_attn,vllm; t1=$(now)
printf '%-34s %.2f s (nothing changed, nothing written)\n' "configure again, full graph" "$(echo "$t1 - $t0" | bc)"
t0=$(now); build full; t1=$(now)
printf '%-34s %.1f s, %d stages (%d in the graph)\n' "adding 4 components" "$(echo "$t1 - $t0" | bc)" \
	"$(count "$got")" "$(grep -c '^build \$bdir/stamp/' build/stack.ninja)"
report "full graph: add the 4 components" 18
[ "$(ninja)" = "ninja: no work to do." ] || { echo "second ninja had work"; exit 1; }
noop "no-op ninja, full graph"
toy_commit torch v3 30
conf --arch=gfx1151 --pin vision=v2 --pin torch=v3 --with=triton,aotriton,flash_attn,vllm
build full-torch; report "full graph: bump torch" 21
