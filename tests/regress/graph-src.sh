#!/bin/sh
# graph-src: the folder a wheel stage builds in, as the build sees it: envclean --check
# runs in the build's environment (ninja's PYTHONPATH and LD_LIBRARY_PATH do not fail a
# stage whose build never sees them) and from the component's source folder (a copy of a
# module there that shadows the installed one stops the stage); and a component whose
# patch series is removed is built from its pinned commit again, without the old patches.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"

toy_folder
conf () {
	"$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--jobs=2 KILN_BIN="$KILN_BIN" --arch=cpu "$@"
}
build () { ninja "$@" >"$T/ninja.log" 2>&1; brc=$?; got=$(rebuilt "$T/ninja.log"); }
imp () { "$T/venv/bin/python" -c "$1" 2>&1; }
vsrc=$b/build/src/vision

check "configure --arch=cpu with the toy pins" conf
build vision.install
same "first build of vision succeeds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/ninja.log"
same "vision is patched (+100)" 110 "$(imp 'import torchvision; print(torchvision.op(1))')"

# ninja's own environment reaches a copy of torch (PYTHONPATH) and another libtorch
# (LD_LIBRARY_PATH); envclean removes both from the build, so the stage builds
mkdir -p "$T/shadow/py/torch" "$T/shadow/lib"
printf 'raise ImportError("the shadow torch")\n' >"$T/shadow/py/torch/__init__.py"
tlib=$("$T/venv/bin/python" -c 'import torch, os; print(os.path.dirname(torch.__file__))')/lib/libtorch_toy.so
cp "$tlib" "$T/shadow/lib/" && printf 'x' >>"$T/shadow/lib/libtorch_toy.so" || exit 2
exits "the check in ninja's environment finds the shadows" 1 \
	env PYTHONPATH="$T/shadow/py" LD_LIBRARY_PATH="$T/shadow/lib" \
	envclean --check --python="$T/venv/bin/python" --cwd="$vsrc" --module=torch
toy_commit vision v2 5
check "configure --pin vision=v2" conf --pin vision=v2
export PYTHONPATH="$T/shadow/py" LD_LIBRARY_PATH="$T/shadow/lib"
build vision.install
unset PYTHONPATH LD_LIBRARY_PATH
same "PYTHONPATH and LD_LIBRARY_PATH in ninja's environment: vision builds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,40s/^/#   /p' "$T/ninja.log"
same "and only vision's stages ran" "vision.deps vision.install vision.patch vision.pick vision.src vision.wheel" "$got"
lacks "no envclean finding" "$T/ninja.log" "envclean --check found problems"
same "the new vision is installed" 115 "$(imp 'import torchvision; print(torchvision.op(1))')"

# a vision commit that carries a torch package beside its setup.py: run from vision's
# source folder, the build would import it instead of the installed torch
(cd "$T/mirror/vision" && mkdir torch && printf 'raise ImportError("vision'\''s torch")\n' >torch/__init__.py &&
	git add torch && git commit -qm "a torch inside vision" && git tag shadow) || exit 2
check "configure --pin vision=shadow" conf --pin vision=shadow
build vision.wheel
same "a torch in vision's source folder: vision.wheel fails" 1 "$brc"
has "envclean --check looked in vision's source folder" "$T/ninja.log" \
	"torch: 2 copies on sys.path: $vsrc/torch (the working folder; source tree with setup.py; no metadata) is imported"
has "and the stage says so" "$T/ninja.log" "kiln: vision.wheel: envclean --check found problems with $T/venv/bin/python in $vsrc"
exits "no stamp for vision.wheel" 1 test -f "$b/build/stamp/vision.wheel"

# the series is removed: vision.patch goes back to the pinned commit, without the patch.
# (A wheel build touches the tree, and a touched tree is checked out afresh anyway; a
# tree that only the series changed is pristine, so that is the one to start from.)
check "back to vision v2" conf --pin vision=v2
build vision.patch
same "vision v2 patched" 0 "$brc"
check "patched: srcpin state" srcpin state "$vsrc"
has "patched: the tree is pristine" "$T/.out" "PRISTINE=yes"
same "patched: and carries the series" yes "$(sed -n 's/^SERIES_DIGEST=[0-9a-f]\{64\}$/yes/p' "$T/.out")"
rm "$T/patches/vision/series"
build vision.patch
same "series removed: vision.patch reruns" 0 "$brc"
same "series removed: only vision.patch" "vision.patch" "$got"
same "series removed: the tree is the pinned commit" "$(git -C "$T/mirror/vision" rev-parse v2)" "$(git -C "$vsrc" rev-parse HEAD)"
same "series removed: no file differs from it" "" "$(git -C "$vsrc" status --porcelain --untracked-files=no)"
check "series removed: srcpin state" srcpin state "$vsrc"
has "series removed: a series digest is recorded" "$T/.out" "SERIES_DIGEST="
same "series removed: and it is empty" "" "$(sed -n 's/^SERIES_DIGEST=//p' "$T/.out")"
has "series removed: pristine" "$T/.out" "PRISTINE=yes"
same "series removed: the id names no series" "" "$(sed -n 's/.*SERIES_DIGEST=\([0-9a-f]*\).*/\1/p' "$b/build/src/vision.id")"
build vision.install
same "series removed: vision builds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,40s/^/#   /p' "$T/ninja.log"
same "series removed: the installed vision has no patch (+1)" 16 "$(imp 'import torchvision; print(torchvision.op(1))')"
printf '0001-add.patch\n' >"$T/patches/vision/series"
build vision.install
same "the series back: vision is patched again" 115 "$(imp 'import torchvision; print(torchvision.op(1))')"
