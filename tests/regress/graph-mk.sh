#!/bin/sh
# graph-mk: mk/kiln.mk drives configure and ninja from a CI Makefile: KILN_ variables
# become configure options, a changed variable reconfigures, kiln-STAGE runs one stage.
. "$KILN_SRC/tests/lib.sh"
need make
. "$KILN_SRC/tests/regress/graph-toy.inc"

toy_venv "$T/venv"
mkdir -p "$T/ci" && cd "$T/ci" || exit 2
cat >Makefile <<MK
KILN_ARCH = cpu
KILN_PYTHON = $T/venv/bin/python
KILN_PINS = $T/pins.env
KILN_MIRROR = $T/mirror
KILN_CONFIGURE_FLAGS = KILN_BIN=$KILN_BIN
include $KSRC/mk/kiln.mk
MK

check "make kiln-torch.src" make kiln-torch.src
has "configure ran with the KILN_ options" "$T/.out" "--arch=cpu"
has "torch.src ran" "$T/.out" "torch.src: rebuilt in"
same "the build folder has the resolved commit" "https://example.invalid/toy/torch $(git -C "$T/mirror/torch" rev-parse v1)" \
	"$(cat kiln-build/build/src/torch.id)"
lacks "--arch=cpu: no hipify stage" kiln-build/build/stack.ninja "hipify"
check "make kiln-torch.src again" make kiln-torch.src
lacks "same variables: no configure" "$T/.out" "checking for"
has "and ninja has no work" "$T/.out" "ninja: no work to do."

toy_commit torch v2 20
check "make kiln-torch.src KILN_PIN=torch=v2" make kiln-torch.src KILN_PIN=torch=v2
has "a changed variable reconfigures" "$T/.out" "checking for"
has "the pin reached configure" kiln-build/config.mk "KILN_PIN_OVERRIDES = torch=v2"
has "torch.src reran" "$T/.out" "torch.src: rebuilt in"
same "at the new commit" "https://example.invalid/toy/torch $(git -C "$T/mirror/torch" rev-parse v2)" \
	"$(cat kiln-build/build/src/torch.id)"

exits "no KILN_ARCH: make fails" 2 make -f "$KSRC/mk/kiln.mk" KILN_BUILD_DIR="$T/other" kiln-build
has "and says to set it" "$T/.err" "kiln.mk: set KILN_ARCH"
