#!/bin/sh
# graph-hostile: paths may hold any byte but NUL and newline. Every path option
# (--python, --rocm-path, --stage-cache, --mirror, --builddir, --work-dir, --pins, a pin's wheel, the
# build folder itself) points into a folder whose name holds a space, both quotes, '$',
# '$(...)', backticks and ';' (the build folder and stage cache also ':' and '$x': a
# Python prefix can hold neither, venv refuses ':' and setuptools expands '$x', so
# configure refuses those in --python and --venv, in one line); the toy stack builds there, and nothing in any of the
# names runs: a command substitution or backtick anywhere would create a canary file.
# What cannot work (a newline, '|' in a path ninja must name) is refused in one line.
# Also: the stack.fat edge lists bin/fatwheel, the tool it runs (ninja -t query).
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"

canary=$T/ran
H="$T/h s'q\"d\$(touch $canary)\`touch $canary\`;e"
HC="$H/c:o \$x\$(touch $canary)"
mkdir -p "$H" "$HC" || exit 2
cp -R "$T/mirror" "$H/mirror" && cp -R "$T/rocm" "$H/rocm" && mkdir -p "$H/patches" &&
	cp -R "$T/patches/vision" "$H/patches/" && cp "$T/pins.env" "$H/pins.env" || exit 2
toy_venv "$H/venv"
check "a venv in the hostile folder runs" "$H/venv/bin/python" -c 'import sys'

mkdir -p "$T/w" && cd "$T/w" || exit 2
conf () {
	"$KSRC/configure" --python="$H/venv/bin/python" --pins="$H/pins.env" --mirror="$H/mirror" \
		--rocm-path="$H/rocm" --stage-cache="$HC/cache" --builddir="$HC/build" --jobs=2 \
		--work-dir="$HC/work" KILN_BIN="$KILN_BIN" "$@"
}
check "configure with every path in the hostile folder" conf --arch=gfx1100
exits "configure ran nothing" 1 test -e "$canary"
ninja >"$T/build.log" 2>&1
brc=$?
same "the toy stack builds there" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,40s/^/#   /p' "$T/build.log"
exits "nothing ran while building" 1 test -e "$canary"
same "and works (patched, hipified by its own script)" "30 1110 33 gfx1100" \
	"$("$H/venv/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.scale(3), torchvision.op(1), torchaudio.op(3), torch.ARCH)' 2>&1)"
check "the stage cache holds the wheels" test -n "$(ls "$HC/cache")"
has "the build folder is where it was asked" "$HC/build/build-info.json" '"component":"torch"'
has "the wheels were built in --work-dir" "$HC/build/logs/vision.wheel.log" "building in $HC/work/vision (--work-dir)"
run ninja
same "a second ninja has nothing to do" "ninja: no work to do." "$(cat "$T/.out")"
# a KILN_EXPLAIN rebuild after a manual configure with the same arguments: nothing
check "configure again" conf --arch=gfx1100
run ninja
same "still nothing to do" "ninja: no work to do." "$(cat "$T/.out")"

# a prebuilt wheel in the hostile folder, and a venv kiln makes there
tw=$(ls "$HC"/build/wheels/torch/*.whl) && cp "$tw" "$H/" || exit 2
mkdir -p "$T/w2" && cd "$T/w2" || exit 2
check "configure --pin torch=wheel:HOSTILE --venv=HOSTILE" "$KSRC/configure" --python="$PY3" \
	--venv="$H/kv" --pins="$H/pins.env" --mirror="$H/mirror" KILN_BIN="$KILN_BIN" --arch=cpu \
	--pin "torch=wheel:$H/${tw##*/}"
check "the venv, then torch from the wheel" ninja torch.install
check "torch is installed in kiln's venv" "$H/kv/bin/python" -c 'import torch'
exits "nothing ran" 1 test -e "$canary"

# what cannot be a path: refused, one line, nothing written
cd "$T/w" || exit 2
nl='
'
exits "a newline in --stage-cache: 2" 2 conf --arch=cpu --stage-cache="$T/a${nl}b"
same "one line" 1 "$(lines "$T/.err")"
exits "'|' in the build folder: 2" 2 conf --arch=cpu --builddir="$T/a|b"
same "one line" 1 "$(lines "$T/.err")"
has "says why" "$T/.err" "ninja cannot name a file with '|'"
exits "nothing ran" 1 test -e "$canary"
exits "a venv under a '\$NAME' path: 2" 2 conf --arch=cpu --python="$PY3" --venv="$T/v\$HOME"
same "one line" 1 "$(lines "$T/.err")"
has "says why" "$T/.err" "setuptools"

# the tools each stage runs are edges of the graph: stack.fat runs fatwheel
mkdir -p "$T/q" && cd "$T/q" || exit 2
cp -R "$KILN_SRC/tools" "$KSRC/" || exit 2
cp "$T/pins.env" "$T/fat.env" && echo 'stack_FAT=yes' >>"$T/fat.env" || exit 2
toy_venv "$T/venv"
check "configure a stack with stack_FAT=yes (the tools built here)" "$KSRC/configure" \
	--python="$T/venv/bin/python" --pins="$T/fat.env" --mirror="$T/mirror" --arch=cpu
ninja -t query stack.fat >"$T/query" 2>&1
has "ninja -t query stack.fat lists bin/fatwheel" "$T/query" "build/bin/fatwheel"
ninja -t query build/stamp/stack.fat >"$T/query" 2>&1
has "the stage's own edge has it" "$T/query" "build/bin/fatwheel"
has "and kiln-stage, which runs every stage" "$T/query" "build/bin/kiln-stage"
lacks "but not the tools it does not run" "$T/query" "build/bin/srcpin"
ninja -t query build/stamp/torch.src >"$T/query" 2>&1
has "torch.src runs srcpin" "$T/query" "build/bin/srcpin"
ninja -t query build/stamp/torch.wheel >"$T/query" 2>&1
has "torch.wheel: its parent once, as an input" "$T/query" "build/stamp/torch.patch"
lacks "no --parent option repeats it" build/stack.ninja "--parent="
ninja -t query check-real >"$T/query" 2>&1
has "check-real is a target" "$T/query" "check-real:"
