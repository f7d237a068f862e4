#!/bin/sh
# tests/real/bookworm.sh: the real tier's Debian 12 part (run by tests/real/run.sh, or
# alone; about 10 minutes on an idle 2-core machine, 30 to 40 when shared: torchvision's
# C++ build, twice), on this machine, which must be Debian 12. Debian's own sources and
# torch, no GPU, no GitHub, no PyPI:
#   1. Debian's orig tarballs of pytorch-vision 0.14.1 and pytorch 1.13.1+dfsg (apt-get
#      source --download-only, deb-src enabled when missing, kept in the user's cache) made
#      local git mirrors with the upstream tags by ninja/debsrc.sh, at the commits
#      env/tracks/debian.env pins;
#   2. the stack of env/tracks/debian.env with --arch=cpu --pin torch=system (Debian's
#      python3-torch) into a venv with --system-site-packages, vision's build requirements
#      (vision.deps) from Debian's wheels in /usr/share/python-wheels: vision built, installed and
#      smoke-tested (nms, transforms); a no-op ninja; a second build folder restoring from
#      the stage cache; a patch added to vision's series rerunning only vision's stages;
#   3. torch 1.13.1's src, patch (tests/real/patches/torch) and hipify stages on the real
#      tree with --arch=gfx1151 and no ROCm build, then hipify-wrap's no-op on that tree.
# Prints ok / not ok lines, then the figures (also in $W/figures). Resumable: every step
# that finished is recorded in $W/done, ninja resumes inside a step, and a rerun goes on
# where the last one stopped (KILN_REAL_FRESH=1 starts over). Settings: KILN_SRC, KILN_BUILD
# (the tools are taken from $KILN_BUILD/bin, else KILN_BIN), KILN_REAL_DIR (the work
# folder, default $KILN_BUILD/real), XDG_CACHE_HOME or KILN_DEBSRC_CACHE (tarballs),
# KILN_REAL_PYTHON (the Python the venv is made from, default /usr/bin/python3).
set -u
KILN_SRC=$(cd "${KILN_SRC:-$(dirname "$0")/../..}" && pwd) || exit 2
KILN_BUILD=$(cd "${KILN_BUILD:-$KILN_SRC/build}" 2>/dev/null && pwd) || { echo "not ok real: no build folder ${KILN_BUILD:-$KILN_SRC/build} (./configure && ninja first)"; exit 1; }
KB=$KILN_BUILD/bin
[ -x "$KB/kiln-stage" ] || KB=${KILN_BIN:-$KB}
W=${KILN_REAL_DIR:-$KILN_BUILD/real}
SYSPY=${KILN_REAL_PYTHON:-/usr/bin/python3}
CACHE=${KILN_DEBSRC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln/debsrc}
TRACK=$KILN_SRC/env/tracks/debian.env
[ "${KILN_REAL_FRESH:-0}" = 1 ] && rm -rf "$W"
mkdir -p "$W/done" || exit 2
W=$(cd "$W" && pwd)
PY=$W/venv/bin/python
LOG=$W/log
. "$KILN_SRC/tests/real/real.inc"

for t in kiln-stage srcpin envclean wheelpick hipify-wrap gpucheck; do
	[ -x "$KB/$t" ] || { notok "real: $KB/$t is missing (run ninja in $KILN_BUILD first)"; exit 1; }
done
for c in git apt-get ninja "$SYSPY"; do
	command -v "$c" >/dev/null 2>&1 || { notok "real: needs $c (./configure --install-deps installs it)"; exit 1; }
done
"$SYSPY" -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("1.13") else 1)' 2>/dev/null ||
	{ notok "real: $SYSPY has no torch 1.13 (apt-get install python3-torch, Debian 12's)"; exit 1; }
echo "# real tier in $W (log: $W/log)"

# --- debsrc.sh itself, on a package made here (seconds) -------------------------------------
KILN_SRC=$KILN_SRC KILN_BIN=$KB sh "$KILN_SRC/tests/real/debsrc-test.sh" >"$W/debsrc-test.out" 2>&1
n=$(grep -c '^ok' "$W/debsrc-test.out") bad=$(grep -c '^not ok' "$W/debsrc-test.out")
if [ "$bad" = 0 ] && [ "$n" -gt 0 ]; then ok "debsrc-test: $n checks of ninja/debsrc.sh"
else notok "debsrc-test: $bad of $((n + bad)) checks failed"; grep -v '^ok' "$W/debsrc-test.out" | sed 's/^/#   /'; fi

# --- 1. Debian's sources as git mirrors; the target Python: a venv that sees Debian's torch
mirrors "$TRACK" "Debian's orig tarballs of torch 1.13.1 and vision 0.14.1"
mkvenv venv

# --- 2. the debian track, CPU -----------------------------------------------------------------
# the build requirements vision 0.14.1's pyproject.toml declares (setuptools, wheel) come
# from Debian's own wheels (python3-setuptools-whl, python3-wheel-whl): no PyPI here
WH=/usr/share/python-wheels
cpuconf () {
	# $1 folder, $2 pin file
	mkdir -p "$1" && (cd "$1" && "$KILN_SRC/configure" --arch=cpu --pins="$2" --pin torch=system \
		--without=audio --python="$PY" --mirror="$W/mirror" --stage-cache="$W/stage-cache" \
		--wheelhouse="$WH" KILN_BIN="$KB") >>"$LOG" 2>&1
}
if ! done_ cpu; then
	cpuconf "$W/cpu" "$TRACK" || { notok "cpu: configure failed (see $LOG)"; exit 1; }
	if nin "$W/cpu" "$W/cpu.out" stack; then
		fig "cpu: ninja stack, first build (s)" "$took"
		mark cpu
	else
		notok "cpu: ninja stack failed"; showfail "$W/cpu.out"; exit 1
	fi
fi
stagefigs cpu "$W/cpu.out"
# every stage has its stamp and none ran twice; a stage may be missing from the output
# when an interrupted run's stage went on building and the resumed one found it done
# ("waiting for another run of this stage to finish", then up to date)
got=$(stages "$W/cpu.out" | cut -d' ' -f1 | sort -u | tr '\n' ' ')
twice=$(stages "$W/cpu.out" | cut -d' ' -f1 | sort | uniq -d | tr '\n' ' ')
nostamp=
for s in vision.src vision.patch vision.deps torch.install vision.wheel vision.pick vision.install stack.smoke; do
	[ -f "$W/cpu/build/stamp/$s" ] || nostamp="$nostamp $s"
done
[ -z "$nostamp" ] && [ -z "$twice" ] && ok "cpu: every stage is done, none ran twice (ran here: $got)" ||
	notok "cpu: stages without a stamp:${nostamp:- none}; run twice: ${twice:-none}"
grep -q 'waiting for another run of this stage' "$W/cpu.out" &&
	echo "# cpu: a stage of an interrupted run finished on its own; the resumed run waited for it"
v=$("$PY" -c 'import torchvision; print(torchvision.__version__)' 2>>"$LOG")
# the local label is kiln.ARCH.gKEY: the first 10 hex digits of vision.wheel's stage key
wk=$(sed -n 's/^KEY="\(.\{10\}\).*/\1/p' "$W/cpu/build/stamp/vision.wheel")
[ -n "$wk" ] && [ "$v" = "0.14.1+kiln.cpu.g$wk" ] &&
	ok "cpu: torchvision $v installed (the series' 0.14.1, not the tag's 0.14.1a0; labelled with the wheel stage's key)" ||
	notok "cpu: torchvision version is '$v', want 0.14.1+kiln.cpu.g$wk"
grep -q '"vision":{[^}]*"commit":"525ac660105c161ae1f98282a9bbb82955e7d251"' "$W/cpu/build/build-info.json" 2>/dev/null &&
	ok "cpu: build-info.json records vision's commit" || notok "cpu: build-info.json lacks vision's commit"

if s=$(smoke "$PY" 2>&1); then ok "smoke: $s"; else notok "smoke: nms and transforms"; echo "$s" | sed 's/^/#   /'; fi
noop "$W/cpu" stack cpu

# --- another build folder restores from the stage cache ------------------------------------
if ! done_ restore; then
	cpuconf "$W/cpu2" "$TRACK" || { notok "restore: configure failed"; exit 1; }
	if nin "$W/cpu2" "$W/restore.out" stack; then
		fig "restore: ninja stack in a second build folder (s)" "$took"
		# the two wheels, now: the bump below replaces the first folder's
		for d in cpu cpu2; do
			sha256sum "$(cat "$W/$d/build/wheels/vision.picked")" | cut -c1-64
		done >"$W/restore.sha"
		mark restore
	else
		notok "restore: ninja stack failed"; showfail "$W/restore.out"; exit 1
	fi
fi
stagefigs restore "$W/restore.out"
grep -q '^vision.wheel: restored from the stage cache' "$W/restore.out" &&
	ok "restore: vision.wheel restored from the stage cache, not rebuilt" || notok "restore: vision.wheel was not restored"
a=$(sed -n 1p "$W/restore.sha" 2>/dev/null) b=$(sed -n 2p "$W/restore.sha" 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "restore: the restored wheel is the built one, byte for byte" ||
	notok "restore: the wheels differ ($a, $b)"

# --- a patch added to vision's series: only vision's stages rerun ---------------------------
if ! done_ bump; then
	rm -rf "$W/bump"
	mkdir -p "$W/bump/patches" && cp -R "$KILN_SRC/tests/real/patches/vision" "$W/bump/patches/" &&
		cp "$KILN_SRC"/tests/real/bump/0002-*.patch "$W/bump/patches/vision/" &&
		(cd "$W/bump/patches/vision" && ls 0002-*.patch >>series) &&
		sed 's|^vision_PATCHES=.*|vision_PATCHES=patches/vision|' "$TRACK" >"$W/bump/debian.env" ||
		{ notok "bump: cannot make $W/bump"; exit 1; }
	cpuconf "$W/cpu" "$W/bump/debian.env" || { notok "bump: configure failed"; exit 1; }
	if KILN_EXPLAIN=1 nin "$W/cpu" "$W/bump.out" stack; then
		fig "bump: ninja stack after adding a vision patch (s)" "$took"
		mark bump
	else
		notok "bump: ninja stack failed"; showfail "$W/bump.out"; exit 1
	fi
fi
stagefigs bump "$W/bump.out"
got=$(stages "$W/bump.out" | cut -d' ' -f1 | sort -u | tr '\n' ' ')
[ "$got" = "stack.smoke vision.deps vision.install vision.patch vision.pick vision.wheel " ] &&
	ok "bump: only vision's stages after its series reran ($got)" || notok "bump: the stages that ran: $got"
grep -q 'parse_version(torch.__version__) >= parse_version("1.5")' "$W/cpu/build/src/vision/setup.py" &&
	ok "bump: vision's tree carries the added patch" || notok "bump: the added patch is not in vision's tree"
if s=$(smoke "$PY" 2>&1); then ok "bump: smoke after the bump: $s"; else notok "bump: smoke"; echo "$s" | sed 's/^/#   /'; fi

# --- an exported CC reaches the build (known problem: the wheel stage's key file has a
# variable CC, the compiler's version line, and stack-steps.sh sources it over the exported
# CC). A folder without the stage cache, so the wheel is built: it fails in seconds while the
# problem is there. KILN_REAL_STRICT=1 counts it as a failure.
rm -rf "$W/cc"
mkdir -p "$W/cc" && (cd "$W/cc" && "$KILN_SRC/configure" --arch=cpu --pins="$TRACK" --pin torch=system \
	--without=audio --python="$PY" --mirror="$W/mirror" --wheelhouse="$WH" KILN_BIN="$KB") >>"$LOG" 2>&1
if CC=gcc nin "$W/cc" "$W/cc.out" vision.wheel; then
	ok "cc: a build with CC=gcc exported builds vision's wheel"
elif kcc=$(sed -n 's/^CC="\(.*\)"$/\1/p' "$W/cc/build/keys/vision.wheel") && w=${kcc#*\(} && w=${w%% *} &&
	[ -n "$w" ] && grep -qF "error: ($w" "$W/cc/build/logs/vision.wheel.log" 2>/dev/null; then
	if [ "${KILN_REAL_STRICT:-0}" = 1 ]; then notok "cc: CC=gcc exported: the build compiles with CC='$kcc', the key file's"
	else echo "# known problem: with CC=gcc exported, vision's build gets CC='$kcc' (the key file's CC); see $W/cc/build/logs/vision.wheel.log"; fi
else
	notok "cc: CC=gcc exported: vision.wheel failed another way"; showfail "$W/cc.out"
fi
rm -rf "$W/cc/build/src"

# --- 3. torch 1.13.1 from source: src, patch, hipify for gfx1151 without a ROCm build -----------
# The graph stops gfx stages when no ROCm is found; hipify needs none, so a ROCm root that
# only holds Debian's clang-19 (llvm/bin/clang) stands in until the graph lets hipify
# run without ROCm.
clang=$(command -v clang-19 || command -v clang) || { notok "gfx: needs clang-19"; exit 1; }
mkdir -p "$W/rocm-hipify/llvm/bin" && ln -sf "$(readlink -f "$clang")" "$W/rocm-hipify/llvm/bin/clang"
if ! done_ gfx; then
	mkdir -p "$W/gfx" && (cd "$W/gfx" && "$KILN_SRC/configure" --arch=gfx1151 \
		--pins="$KILN_SRC/tests/real/torch-src.env" --without=vision,audio --python="$PY" \
		--mirror="$W/mirror" --rocm-path="$W/rocm-hipify" KILN_BIN="$KB") >>"$LOG" 2>&1 ||
		{ notok "gfx: configure failed (see $LOG)"; exit 1; }
	if nin "$W/gfx" "$W/gfx.out" torch.hipify; then
		fig "gfx: ninja torch.hipify, first build (s)" "$took"
		mark gfx
	else
		notok "gfx: ninja torch.hipify failed"; showfail "$W/gfx.out"; exit 1
	fi
fi
stagefigs gfx "$W/gfx.out"
T=$W/gfx/build/src/torch
"$KB/srcpin" state "$T" >"$W/gfx.state" 2>&1
grep -q '^COMMIT=bd90b65809afdf53621410f98a738b68ff5dd574' "$W/gfx.state" && grep -q '^SERIES_DIGEST=' "$W/gfx.state" &&
	ok "gfx: torch's tree is the pinned commit with the series" || { notok "gfx: srcpin state"; sed 's/^/#   /' "$W/gfx.state"; }
grep -q '#include <cstdint>' "$T/torch/csrc/jit/passes/quantization/quantization_type.h" &&
	ok "gfx: the patch series is applied (quantization_type.h includes <cstdint>)" || notok "gfx: the series is not applied"
h=$(sed -n 's/^hipify: \([0-9]*\) hipified.*/\1/p' "$W/gfx/build/logs/torch.hipify.log" | tail -n 1)
[ -n "$h" ] && [ "$h" -gt 800 ] && [ -f "$T/aten/src/ATen/hip/HIPContext.h" ] &&
	ok "gfx: hipify made $h files on the real tree (aten/src/ATen/hip/HIPContext.h among them)" ||
	notok "gfx: hipify did not run as expected ($h hipified)"
[ -n "$h" ] && fig "gfx: files hipified" "$h"
: >"$W/gfx-noop.out"
nin "$W/gfx" "$W/gfx-noop.out" torch.hipify
grep -q 'no work to do' "$W/gfx-noop.out" && ok "gfx: a second ninja torch.hipify has no work to do" ||
	notok "gfx: a second ninja torch.hipify did work"
fig "gfx: no-op ninja torch.hipify (s)" "$took"

# hipify-wrap itself on the hipified tree, as the hipify stage calls it: up to date
hwnoop "$T" "$KILN_SRC/tests/real/patches/torch/series" "torch 1.13.1"
real_end real
