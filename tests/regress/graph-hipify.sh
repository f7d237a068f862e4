#!/bin/sh
# graph-hipify: a series change through the graph keeps the mtime of every hipified file
# whose bytes do not change. vision (graph-toy.inc's) gets a hipify like torch's: each
# csrc/*.cu becomes a new file csrc/hip/*.hip, and csrc/ops.c is rewritten in place. A
# patch added to the series edits one .cu: vision.patch and vision.hipify rerun, the
# edited file's output is new, every other output (and the file rewritten in place)
# keeps its mtime: torch.patch's srcpin checkout --force would remove them, so the patch
# stage gives them to hipify-wrap first (hipify-wrap --undo) and the hipify stage puts
# back those it makes again.
. "$KILN_SRC/tests/lib.sh"
need clang-19 stat touch
. "$KILN_SRC/tests/regress/graph-toy.inc"

V=$T/mirror/vision
mkdir -p "$V/csrc"
for n in a b c; do
	printf '// kernel %s\nvoid %s_launch(cudaStream_t s) { (void)s; }\n' "$n" "$n" >"$V/csrc/$n.cu"
done
cat >"$V/tools/hipify.sh" <<'EOF'
# the toy's hipify, shaped like torch's: each csrc/*.cu hipified into a new file
# csrc/hip/*.hip, and csrc/ops.c rewritten in place; progress lines as hipify prints them
mkdir -p csrc/hip
for f in csrc/*.cu; do
	o=csrc/hip/$(basename "$f" .cu).hip
	sed 's/cudaStream_t/hipStream_t/g' "$f" >"$o"
	echo "$f -> $o [ok]"
done
sed -i 's|return 0; /\* cuda \*/|return 1000; /* hip */|' csrc/ops.c
echo "csrc/ops.c -> csrc/ops.c [ok]"
EOF
(cd "$V" && git add -A && git commit -qm "vision v3: CUDA sources" && git tag v3) || exit 2
sed -i 's/^vision_REF=.*/vision_REF=v3/' "$T/pins.env"

cd "$T" && mkdir -p b && cd b || exit 2
conf () {
	"$KSRC/configure" --python="$T/va/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--rocm-path="$T/rocm" --arch=gfx1151 --without=audio --jobs=2 KILN_BIN="$KILN_BIN"
}
toy_venv "$T/va"
check "configure --arch=gfx1151" conf
ninja vision.hipify >"$T/first.log" 2>&1
same "ninja vision.hipify succeeds" 0 "$?"
S=$T/b/build/src/vision
for n in a b c; do
	check "hipify made csrc/hip/$n.hip" grep -q hipStream_t "$S/csrc/hip/$n.hip"
done
has "ops.c rewritten in place" "$S/csrc/ops.c" "return 1000; /* hip */"
# a fixed old mtime on every hipified file (the same bytes: hipify-wrap rehashes them and
# finds its own), so that a file written again shows a new one whatever the clock
touch -d @1000000000 "$S"/csrc/hip/*.hip "$S/csrc/ops.c"

# a patch added to the series edits b.cu
(
	cd "$V" && git checkout -q v3 && sed -i 's|// kernel b|// kernel b, edited by a patch|' csrc/b.cu &&
		git diff >"$T/patches/vision/0002-b.patch" && git checkout -q csrc/b.cu
) || exit 2
printf '0002-b.patch\n' >>"$T/patches/vision/series"
check "configure after the series change" conf
KILN_EXPLAIN=1 ninja vision.hipify >"$T/bump.log" 2>&1
same "ninja vision.hipify after the series change succeeds" 0 "$?"
same "vision.patch and vision.hipify reran" "vision.hipify vision.patch" "$(rebuilt "$T/bump.log")"
has "the patch stage gave hipify's files to hipify-wrap first" "$T/b/build/logs/vision.patch.log" \
	"files hipify made or rewrote kept aside for the next run"
has "the edit reached b.hip" "$S/csrc/hip/b.hip" "kernel b, edited by a patch"
mt () { stat -c %Y "$S/$1"; }
same "a.hip keeps its mtime" 1000000000 "$(mt csrc/hip/a.hip)"
same "c.hip keeps its mtime" 1000000000 "$(mt csrc/hip/c.hip)"
same "ops.c, rewritten in place to the same bytes, keeps its mtime" 1000000000 "$(mt csrc/ops.c)"
check "b.hip, made from the edited b.cu, is new" test "$(mt csrc/hip/b.hip)" != 1000000000
has "hipify's summary counts the mtimes kept" "$T/b/build/logs/vision.hipify.log" "3 mtimes kept"
ninja vision.hipify >"$T/noop.log" 2>&1
has "then a no-op" "$T/noop.log" "no work to do"

# --undo by hand: the pristine tree back, the outputs aside; a second --undo has nothing
check "hipify-wrap --undo" hipify-wrap --undo "$S"
has "--undo says what it kept aside" "$T/.out" "4 files hipify made or rewrote kept aside"
check "the outputs are gone from the tree" test ! -e "$S/csrc/hip/a.hip"
has "ops.c has its original back" "$S/csrc/ops.c" "return 0; /* cuda */"
check "hipify-wrap --undo again" hipify-wrap --undo "$S"
has "nothing to undo" "$T/.out" "nothing to undo"
check "hipify-wrap puts the kept files back" hipify-wrap --project=generic --python="$T/va/bin/python" \
	--series="$T/patches/vision/series" "$S" -- sh tools/hipify.sh
has "4 mtimes kept" "$T/.out" "4 mtimes kept"
same "a.hip keeps its mtime through --undo and a run" 1000000000 "$(mt csrc/hip/a.hip)"
