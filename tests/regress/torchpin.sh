#!/bin/sh
# torchpin: C_REF=@torch takes a pin from torch's own source tree, after torch.patch:
# AOTriton's commit from cmake/External/aotriton.cmake, triton's from
# .ci/docker/ci_commit_pins/triton.txt. A torch bump that moves them moves the derived
# pins; the resolved commit is in the stage log, its summary line and build-info's records.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"

# toy aotriton and triton upstreams, two commits each
for n in aotriton triton; do
	mkdir -p "$T/mirror/$n" && (
		cd "$T/mirror/$n" && git init -q && echo one >VERSION && git add -A && git commit -qm one &&
			echo two >VERSION && git commit -qam two
	) || exit 2
done
a1=$(git -C "$T/mirror/aotriton" rev-parse HEAD~1) a2=$(git -C "$T/mirror/aotriton" rev-parse HEAD)
t1=$(git -C "$T/mirror/triton" rev-parse HEAD~1)
# torch v2 pins aotriton a1 and triton t1 the way torch's tree does
pintorch () {
	d=$T/mirror/torch
	mkdir -p "$d/cmake/External" "$d/.ci/docker/ci_commit_pins"
	printf 'if(NOT __AOTRITON_INCLUDED)\n  set(__AOTRITON_VER "0.11b")\n  set(__AOTRITON_CI_COMMIT "%s")\nendif()\n' "$1" \
		>"$d/cmake/External/aotriton.cmake"
	printf '%s\n' "$2" >"$d/.ci/docker/ci_commit_pins/triton.txt"
}
pintorch "$a1" "$t1"
toy_commit torch v2 10
cat >>"$T/pins.env" <<'EOF'
aotriton_URL=https://example.invalid/toy/aotriton
aotriton_REF=@torch
aotriton_KIND=source
triton_URL=https://example.invalid/toy/triton
triton_REF=@torch
triton_ENV="LLVM_SYSPATH=/usr/lib/llvm-19"
EOF
toy_venv "$T/venv"
mkdir -p "$T/b" && cd "$T/b" || exit 2
conf () {
	"$KSRC/configure" --python="$T/venv/bin/python" --mirror="$T/mirror" --pins="$T/pins.env" --jobs=1 \
		KILN_BIN="$KILN_BIN" --arch=cpu "$@"
}
check "configure: aotriton_REF=@torch, triton_REF=@torch" conf --with=aotriton,triton --pin torch=v2
ninja -t query build/stamp/aotriton.src >"$T/q" 2>&1
has "graph: aotriton.src comes after torch.patch" "$T/q" "build/stamp/torch.patch"
check "ninja aotriton.patch triton.src" ninja aotriton.patch triton.src
has "the summary line says what @torch resolved to" "$T/.out" "aotriton.src: rebuilt in"
has "the summary line: the commit and its file" "$T/.out" "(aotriton_REF=@torch: $a1 from torch's cmake/External/aotriton.cmake)"
has "the summary line: triton's too" "$T/.out" "(triton_REF=@torch: $t1 from torch's .ci/docker/ci_commit_pins/triton.txt)"
same "aotriton: torch's pin checked out" "$a1" "$(git -C "$T/b/build/src/aotriton" rev-parse HEAD)"
same "triton: torch's pin checked out" "$t1" "$(git -C "$T/b/build/src/triton" rev-parse HEAD)"
has "the log says where the pin came from" "$T/b/build/logs/aotriton.src.log" "aotriton_REF=@torch: $a1 (torch's cmake/External/aotriton.cmake)"
has "build-info record: resolved" "$T/b/build/info/aotriton.info" "REF_RESOLVED=\"$a1\""
has "build-info record: from" "$T/b/build/info/aotriton.info" "REF_FROM=\"torch:cmake/External/aotriton.cmake\""
check "a second run" ninja aotriton.patch triton.src
has "second run: nothing to do" "$T/.out" "no work to do"

# a torch bump that moves AOTriton's pin moves aotriton's checkout
pintorch "$a2" "$t1"
toy_commit torch v3 10
check "configure: torch v3" conf --with=aotriton,triton --pin torch=v3
KILN_EXPLAIN=1 check "ninja aotriton.patch after the bump" ninja aotriton.patch
same "aotriton follows torch" "$a2" "$(git -C "$T/b/build/src/aotriton" rev-parse HEAD)"
has "KILN_EXPLAIN: why aotriton.src runs" "$T/.out" "kiln: aotriton.src: running: parent torch.patch changed"
has "KILN_EXPLAIN: the new @torch value and the old one" "$T/.out" "(aotriton_REF=@torch: $a2 from torch's cmake/External/aotriton.cmake, was $a1)"

# the step's key: aotriton.src runs the srctorch step (ninja/steps/srctorch.sh), which
# sources lib/src.sh (the fetch the src step runs too); torch.src runs src.sh
rule () { sed -n 's/^\(STEP_SH\|LIB_src\)="\(.*\)"$/\1=\2/p' "$T/b/build/keys/$1" | tr '\n' ' '; }
ra=$(rule aotriton.src) rt=$(rule torch.src)
[ -n "$ra" ] && [ "$ra" != "$rt" ] && ok "step key: aotriton.src's differs from torch.src's" || notok "step key: aotriton.src's differs from torch.src's ($ra $rt)"
printf '\n# an edit\n' >>"$KSRC/ninja/steps/srctorch.sh"
check "configure after editing srctorch.sh" conf --with=aotriton,triton --pin torch=v3
[ "$(rule aotriton.src)" != "$ra" ] && ok "step key: editing srctorch.sh changes aotriton.src's" || notok "step key: editing srctorch.sh changes aotriton.src's"
same "step key: and not torch.src's" "$rt" "$(rule torch.src)"
ra=$(rule aotriton.src)
printf '\n# an edit\n' >>"$KSRC/ninja/steps/lib/src.sh"
check "configure after editing lib/src.sh" conf --with=aotriton,triton --pin torch=v3
[ "$(rule aotriton.src)" != "$ra" ] && ok "step key: editing lib/src.sh (which srctorch.sh sources) changes aotriton.src's" ||
	notok "step key: editing lib/src.sh (which srctorch.sh sources) changes aotriton.src's"
[ "$(rule torch.src)" != "$rt" ] && ok "step key: and torch.src's" || notok "step key: and torch.src's"

# a torch tree without the pin: one line, the fix named
rm -rf "$T/mirror/torch/cmake"
(cd "$T/mirror/torch" && git add -A && git commit -qm "no aotriton" && git tag v4) || exit 2
check "configure: torch v4" conf --with=aotriton --pin torch=v4
exits "ninja aotriton.src: no pin in torch's tree fails" 1 ninja aotriton.src
has "no pin: named with the fix" "$T/.out" "aotriton_REF=@torch: no commit for aotriton in torch's cmake/External/aotriton.cmake"
exits "@torch with torch as a wheel: 2" 2 conf --with=aotriton --pin torch=system
has "@torch needs torch from source" "$T/.err" "aotriton_REF=@torch takes aotriton's pin from torch's source tree"
