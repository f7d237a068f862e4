#!/bin/sh
# graph-venv: configure refuses an externally managed interpreter (PEP 668: Debian's
# /usr/bin/python3) with one line naming the venv to make, and --venv=DIR makes kiln
# create and own the target venv as the stage stack.venv that every stage using the
# target Python follows; the toy stack builds and installs into it.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"

mkdir -p "$T/b" && cd "$T/b" || exit 2
conf () {
	"$KSRC/configure" --pins="$T/pins.env" --mirror="$T/mirror" --jobs=2 KILN_BIN="$KILN_BIN" --arch=cpu "$@"
}
check "Debian's python3 is externally managed" test -f /usr/lib/python3.11/EXTERNALLY-MANAGED
exits "an externally managed --python is refused: 2" 2 conf --python="$PY3"
same "refused in one line" 1 "$(lines "$T/.err")"
has "the line names PEP 668" "$T/.err" "is externally managed (PEP 668"
has "and the venv command to run" "$T/.err" "$PY3 -m venv "
has "and --venv" "$T/.err" "--venv=DIR"
exits "nothing was generated" 1 test -f build/stack.ninja

mkdir -p "$T/notvenv" && : >"$T/notvenv/precious"
exits "--venv over a folder that is no venv: 2" 2 conf --python="$PY3" --venv="$T/notvenv"
check "and the folder is untouched" test -f "$T/notvenv/precious"

check "--venv=DIR is accepted with the managed python as its base" conf --python="$PY3" --venv="$T/v"
has "stack.venv is a stage" build/stack.ninja "build stack.venv: phony"
has "its key names the base interpreter" build/keys/stack.venv "BASE=\"$PY3\""
has "and its version" build/keys/stack.venv "BASE_VERSION=\"$("$PY3" -c 'import sys; print(" ".join(sys.version.split()))')"
has "no system site packages without a system pin" build/keys/stack.venv 'SYSTEM_SITE="no"'
has "the install stages use the venv's python" build/keys/torch.install "PY=\"$T/v/bin/python\""
ninja -t query build/stamp/torch.install >"$T/q" 2>&1
has "torch.install follows stack.venv" "$T/q" "build/stamp/stack.venv"
ninja -t query build/stamp/vision.wheel >"$T/q" 2>&1
has "so does vision.wheel" "$T/q" "build/stamp/stack.venv"
ninja -t query build/stamp/torch.src >"$T/q" 2>&1
lacks "fetching does not wait for it" "$T/q" "stack.venv"

check "ninja stack.venv" ninja stack.venv
check "the venv exists" test -x "$T/v/bin/python"
same "it is a venv of the base" "$("$PY3" -c 'import sys; print(sys.base_prefix)')" \
	"$("$T/v/bin/python" -c 'import sys; print(sys.base_prefix)')"
# the toy's setup.py bdist_wheel needs the wheel package (as any real build needs its
# own build requirements in the target environment)
check "wheel into the venv" "$T/v/bin/python" -m pip install -q --no-index --disable-pip-version-check "$WHEELWHL"
ninja >"$T/build.log" 2>&1
same "the stack builds into the venv" 0 "$?"
same "and works there" "30 110 33" \
	"$("$T/v/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.scale(3), torchvision.op(1), torchaudio.op(3))' 2>&1)"
run ninja
same "then nothing to do" "ninja: no work to do." "$(cat "$T/.out")"

check "a system pin asks for system site packages" conf --python="$PY3" --venv="$T/v" --pin torch=system
has "SYSTEM_SITE=yes" build/keys/stack.venv 'SYSTEM_SITE="yes"'
