#!/bin/sh
# graph-mk: mk/kiln.mk drives configure and ninja from a CI Makefile: KILN_ variables
# become configure options, a changed variable reconfigures, kiln-STAGE runs one stage;
# values with spaces and quotes reach configure as they are, and a kiln folder whose path
# holds spaces works through KILN_TOP.
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
KILN_CONFIGURE_FLAGS = $(shq "KILN_BIN=$KILN_BIN")
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

# --- spaces and quotes: kiln's folder, the pins, the mirror and the python ---------------
S="$T/k i l n"
mkdir -p "$S/pins it's" "$S/ci" && cp -R "$KSRC" "$S/kiln" && cp "$T/pins.env" "$S/pins it's/pins.env" &&
	ln -s "$T/mirror" "$S/mirror \$x" && ln -s "$T/venv" "$S/venv 'v'" || exit 2
cd "$S/ci" || exit 2
cat >Makefile <<MK
KILN_TOP = $S/kiln
KILN_ARCH = cpu
KILN_PYTHON = $S/venv 'v'/bin/python
KILN_PINS = ../pins it's/pins.env
KILN_MIRROR = ../mirror \$\$x
KILN_CONFIGURE_FLAGS = $(shq "KILN_BIN=$KILN_BIN")
include $(printf '%s' "$S" | sed 's/ /\\ /g')/kiln/mk/kiln.mk
MK
check "spaced paths: make kiln-torch.src" make kiln-torch.src
has "configure got the python whole" kiln-build/.kiln-flags "--python=$S/venv 'v'/bin/python"
has "the pins, from the Makefile's folder" kiln-build/.kiln-flags "--pins=$S/ci/../pins it's/pins.env"
has "the mirror, with its \$ as it is" kiln-build/.kiln-flags "--mirror=$S/ci/../mirror \$x"
has "torch.src ran" "$T/.out" "torch.src: rebuilt in"
check "same variables: make kiln-torch.src again" make kiln-torch.src
lacks "no configure" "$T/.out" "checking for"
cat >Makefile.top <<MK
KILN_ARCH = cpu
include $(printf '%s' "$S" | sed 's/ /\\ /g')/kiln/mk/kiln.mk
MK
exits "no KILN_TOP in a spaced folder: make fails" 2 make -f Makefile.top KILN_BUILD_DIR=other kiln-configure
has "and says to set KILN_TOP" "$T/.err" "set KILN_TOP to kiln's folder"
