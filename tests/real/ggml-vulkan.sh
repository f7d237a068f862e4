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
KILN_BUILD=$(cd "${KILN_BUILD:-$KILN_SRC/build}" 2>/dev/null && pwd) || { echo "not ok ggml-vulkan: no build folder (./configure && ninja first)"; exit 1; }
KB=$KILN_BUILD/bin
[ -x "$KB/kiln-stage" ] || KB=${KILN_BIN:-$KB}
W=${KILN_REAL_DIR:-$KILN_BUILD/real}/ggml-vulkan
GIT=${KILN_GGML_GIT:-https://github.com/ggml-org/ggml}
OPS=${KILN_GGML_OPS:-ADD,MUL,RMS_NORM,SOFT_MAX,GET_ROWS}
TRACK=$KILN_SRC/env/tracks/ggml-vulkan.env
[ "${KILN_REAL_FRESH:-0}" = 1 ] && rm -rf "$W"
mkdir -p "$W/done" || exit 2
W=$(cd "$W" && pwd)
fails=0
: >>"$W/figures"
ok () { echo "ok $*"; }
notok () { echo "not ok $*"; fails=$((fails + 1)); }
fig () {
	grep -v "^$1	" "$W/figures" >"$W/figures.tmp" 2>/dev/null
	printf '%s\t%s\n' "$1" "$2" >>"$W/figures.tmp"
	mv -f "$W/figures.tmp" "$W/figures"
}
now () { date +%s.%N; }
since () { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }
done_ () { [ -f "$W/done/$1" ]; }
mark () { : >"$W/done/$1"; }
stages () { sed -n 's/^\([a-z_]*\.[a-z]*\): rebuilt in \(.*\)$/\1 \2/p' "$1"; }
nin () { o=$1; shift; t0=$(now); nice ninja -C "$W/b" "$@" >>"$o" 2>&1; rc=$?; took=$(since "$t0"); return $rc; }
showfail () { tail -n 25 "$1" | sed 's/^/#   /'; }

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

# --- 1. the first build ------------------------------------------------------------------
if ! done_ first; then
	t0=$(now)
	conf "$W/pins.env" || { notok "ggml-vulkan: configure failed (see $W/log)"; exit 1; }
	fig "configure (s)" "$(since "$t0")"
	: >"$W/first.out"
	if nin "$W/first.out" stack; then
		fig "first ninja stack (s)" "$took"
		mark first
	else
		notok "ggml-vulkan: ninja stack failed"; showfail "$W/first.out"; exit 1
	fi
fi
stages "$W/first.out" | while read -r s t; do fig "first: $s" "$t"; done
got=$(stages "$W/first.out" | cut -d' ' -f1 | sort | tr '\n' ' ')
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
: >"$W/noop.out"
nin "$W/noop.out" stack
grep -q 'no work to do' "$W/noop.out" && ok "a second ninja has no work to do" || notok "a second ninja did work"
fig "no-op ninja stack (s)" "$took"

# --- 3. a pin bump: a patch added to ggml's series ----------------------------------------
if ! done_ bump; then
	rm -rf "$W/patches" && mkdir -p "$W/patches" && cp -R "$KILN_SRC/patches/ggml" "$W/patches/" &&
		cp "$KILN_SRC"/tests/real/bump/ggml-0002-*.patch "$W/patches/ggml/" &&
		(cd "$W/patches/ggml" && ls ggml-0002-*.patch >>series) ||
		{ notok "bump: cannot make $W/patches"; exit 1; }
	PATCHES=$W/patches/ggml
	sed "s|^ggml_PATCHES=.*|ggml_PATCHES=$PATCHES|" "$W/pins.env" >"$W/bump.env"
	conf "$W/bump.env" || { notok "bump: configure failed"; exit 1; }
	: >"$W/bump.out"
	if KILN_EXPLAIN=1 nin "$W/bump.out" stack; then
		fig "bump: ninja stack after adding a ggml patch (s)" "$took"
		mark bump
	else
		notok "bump: ninja stack failed"; showfail "$W/bump.out"; exit 1
	fi
fi
stages "$W/bump.out" | while read -r s t; do fig "bump: $s" "$t"; done
got=$(stages "$W/bump.out" | cut -d' ' -f1 | sort | tr '\n' ' ')
[ "$got" = "ggml.build ggml.install ggml.patch ggml.smoke stack.smoke " ] &&
	ok "bump: only ggml's stages after its series reran ($got)" || notok "bump: the stages that ran: $got"
h=$(sed -n 's/^ggml.build: rebuilt in [^(]*(\(.*\))$/\1/p' "$W/bump.out")
[ -n "$h" ] && fig "bump: ggml.build compiler cache" "$h"

echo "# figures (also in $W/figures):"
sed 's/^/#   /' "$W/figures"
[ "$fails" = 0 ] && echo "# ggml-vulkan: all checks passed" || echo "# ggml-vulkan: $fails checks failed"
[ "$fails" = 0 ]
