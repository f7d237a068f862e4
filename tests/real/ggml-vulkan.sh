#!/bin/sh
# tests/real/ggml-vulkan.sh: the Vulkan tier of ninja check-real (opt-in; tests/real/run.sh
# runs it after its own tiers): ggml (ggml-org/ggml at the commit env/tracks/ggml-vulkan.env
# pins) built by the stack graph with GGML_VULKAN=ON, and test-backend-ops on Mesa's
# lavapipe (a Vulkan device on the CPU) through ggml.smoke. Measured 2026-11-25 on a 2-core
# machine shared with other builds (load about 20): ggml.build 56m34s (glslc's shaders, then
# ggml-vulkan.cpp; by hand on a quieter machine the same build took 11 to 13 minutes),
# ggml.smoke 26m36s (lavapipe compiles a pipeline per quant type; Mesa's shader cache makes
# the second run 1m13s), the bump's ggml.build 3m52s (ccache 186/186 hits). Steps:
#   1. configure and ninja: every stage once, the prefix holds libggml-vulkan.so and the
#      carried test-backend-ops; ggml.smoke runs `test-backend-ops test -b Vulkan0 -o OPS`
#      with GGML_VK_VISIBLE_DEVICES=0 (ggml uses CPU-type devices only when named); OPS is
#      KILN_GGML_OPS (default ADD,MUL,RMS_NORM,SOFT_MAX,GET_ROWS: the whole list takes
#      hours on lavapipe with 2 cores), printed with the counts it reports;
#   2. a no-op ninja;
#   3. a pin bump: a patch added to ggml's series (tests/real/bump/ggml-0002-*.patch) reruns
#      ggml.patch, ggml.build, ggml.install, ggml.smoke and stack.smoke, nothing else
#      (with --cache=ccache: the rebuild's hit rate is in ggml.build's summary line).
# Needs: cmake, glslc, libvulkan-dev, spirv-headers, mesa-vulkan-drivers (env/deps/*-test.txt)
# and ggml's repository: KILN_GGML_GIT (a git folder or URL holding the pinned commit, default
# https://github.com/ggml-org/ggml); it is cloned bare and shallow into $W/mirror/ggml.git.
# Resumable like run.sh ($W/done); KILN_REAL_FRESH=1 starts over. Figures in $W/figures.
set -u
KILN_SRC=$(cd "${KILN_SRC:-$(dirname "$0")/../..}" && pwd) || exit 2
. "$KILN_SRC/tests/real/real.inc"
real_begin ggml-vulkan
GIT=${KILN_GGML_GIT:-https://github.com/ggml-org/ggml}
OPS=${KILN_GGML_OPS:-ADD,MUL,RMS_NORM,SOFT_MAX,GET_ROWS}
TRACK=$KILN_SRC/env/tracks/ggml-vulkan.env

for c in cmake glslc git ninja; do
	command -v "$c" >/dev/null 2>&1 || { notok "ggml-vulkan: needs $c (./configure --install-deps installs it)"; exit 1; }
done
ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 ||
	{ notok "ggml-vulkan: no lavapipe (apt-get install mesa-vulkan-drivers)"; exit 1; }
. "$KILN_SRC/tests/real/ggml.inc"
ggmlmirror "$W/mirror" ggml
# the track, with the lavapipe device, the subset of ops and the series by absolute path
sed -e "s|^ggml_CHECK=.*|ggml_CHECK=\"test-backend-ops test -b Vulkan0 -o $OPS\"|" "$TRACK" >"$W/pins.env"
printf 'ggml_ENV="GGML_VK_VISIBLE_DEVICES=0"\nggml_PATCHES=%s\n' "${PATCHES:-$KILN_SRC/patches/ggml}" >>"$W/pins.env"
py=$W/venv/bin/python
[ -x "$py" ] || python3 -m venv --without-pip "$W/venv" || { notok "ggml-vulkan: python3 -m venv failed"; exit 1; }
conf () {
	mkdir -p "$W/b" && (cd "$W/b" && "$KILN_SRC/configure" --arch=cpu --pins="$1" --python="$py" \
		--mirror="$W/mirror" --cache=ccache KILN_BIN="$KB") >>"$W/log" 2>&1
}

# phase NAME PINS WHAT: configure with PINS, then ninja stack (once: resumable), its output
# in $W/NAME.out, its time the figure "NAME: WHAT (s)"; each stage's time a figure; the
# stages that ran in $got (sorted, space-separated)
phase () {
	if ! done_ "$1"; then
		t0=$(now)
		conf "$2" || { notok "ggml-vulkan: $1: configure failed (see $W/log)"; exit 1; }
		fig "$1: configure (s)" "$(since "$t0")"
		: >"$W/$1.out"
		if KILN_EXPLAIN=1 nin "$W/b" "$W/$1.out" stack; then
			fig "$1: $3 (s)" "$took"
			mark "$1"
		else
			notok "ggml-vulkan: $1: ninja stack failed"; showfail "$W/$1.out"; exit 1
		fi
	fi
	stagefigs "$1:" "$W/$1.out"
	got=$(stages "$W/$1.out" | cut -d' ' -f1 | sort | tr '\n' ' ')
}

# --- 1. the first build ------------------------------------------------------------------
phase first "$W/pins.env" "ninja stack"
[ "$got" = "ggml.build ggml.install ggml.patch ggml.smoke ggml.src stack.smoke " ] &&
	ok "first build: every stage once ($got)" || notok "first build: the stages that ran: $got"
P=$W/b/build/prefix/ggml
[ -f "$P/lib/libggml-vulkan.so" ] && [ -x "$P/bin/test-backend-ops" ] &&
	ok "the prefix holds libggml-vulkan.so and the carried test-backend-ops" || notok "the prefix lacks libggml-vulkan.so or test-backend-ops"
L=$W/b/build/logs/ggml.smoke.log
grep -q 'Backend Vulkan0: .*OK' "$L" && grep -q 'llvmpipe' "$L" &&
	ok "test-backend-ops on lavapipe: ops $OPS: $(sed -n 's/^ *\([0-9]*\/[0-9]* tests passed\)/\1/p' "$L" | tr '\n' ',' | sed 's/,$//'), $(grep -c 'not supported' "$L") cases not supported" ||
	{ notok "test-backend-ops on lavapipe"; tail -n 20 "$L" | sed 's/^/#   /'; }

# --- 2. no-op -----------------------------------------------------------------------------
noop "$W/b" stack ggml

# --- 3. a pin bump: a patch added to ggml's series ----------------------------------------
rm -rf "$W/patches" && mkdir -p "$W/patches" && cp -R "$KILN_SRC/patches/ggml" "$W/patches/" &&
	cp "$KILN_SRC"/tests/real/bump/ggml-0002-*.patch "$W/patches/ggml/" &&
	(cd "$W/patches/ggml" && ls ggml-0002-*.patch >>series) ||
	{ notok "bump: cannot make $W/patches"; exit 1; }
sed "s|^ggml_PATCHES=.*|ggml_PATCHES=$W/patches/ggml|" "$W/pins.env" >"$W/bump.env"
phase bump "$W/bump.env" "ninja stack after adding a ggml patch"
[ "$got" = "ggml.build ggml.install ggml.patch ggml.smoke stack.smoke " ] &&
	ok "bump: only ggml's stages after its series reran ($got)" || notok "bump: the stages that ran: $got"
h=$(sed -n 's/^ggml.build: rebuilt in [^(]*(\(.*\))$/\1/p' "$W/bump.out")
[ -n "$h" ] && fig "bump: ggml.build compiler cache" "$h"

real_end ggml-vulkan
