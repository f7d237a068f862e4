#!/bin/sh
# tests/real/flash-aiter.sh: the flash-attention tier of the real-upstream tests (opt-in;
# tests/real/run.sh runs it with KILN_REAL_TRACKS=flash): AITER (ROCm/aiter) and
# flash-attention (Dao-AILab/flash-attention) at the commits env/versions.env pins, built
# by the stack graph from local mirrors with no network at all (ninja runs in a network
# namespace of its own: unshare -n), on this machine (Debian 12, no GPU, no ROCm, no PyPI):
#   aiter       the pure-Python package (aiter_ENV: AITER_TRITON_ONLY=1: no CK, no hsa
#               blobs, no prebuilt kernels), kiln's series (patches/aiter) applied;
#   flash_attn  the Triton AMD backend's pure-Python wheel (FLASH_ATTENTION_TRITON_AMD_ENABLE
#               =TRUE; BUILD_TARGET=rocm, since Debian's torch 1.13.1 is a CPU build), kiln's
#               series (patches/flash_attn) applied: its setup.py uses the aiter stage's
#               install instead of pip-installing its submodule; both trees' submodules
#               (cutlass, composable_kernel, aiter) left empty (C_SUBMODULES=no).
# The build requirements come from a wheelhouse made here of Debian's own packages
# (setuptools and wheel wheels; packaging, setuptools_scm, typing-extensions repacked from
# python3-packaging, python3-setuptools-scm, python3-typing-extensions). What cannot be had
# here is dropped by the tier's own patches (tests/real/patches/aiter, flash_attn: 0002),
# added to kiln's series: aiter's pyproject asks for pybind11>=3.0.1, ninja, pandas,
# psutil and flydsl==0.1.9.dev599 and its setup_requires for ninja and vcs_versioning,
# flash-attention's setup_requires for ninja; none is used by these builds, none has a
# Debian 12 package or wheel here (setuptools would download a missing setup_requires
# from inside the build). Not built here: stack.smoke (importing flash_attn's Triton
# backend needs triton, which has no Debian package, and a ROCm torch), any GPU kernel
# (no ROCm; AITER's CK/HIP modules and flash-attention's CK backend need hipcc and a
# GPU target's device libraries), vLLM (its CMake build needs a ROCm or CUDA torch).
# Measured 2026-11-25 on a 2-core machine shared with other builds (load about 40), from
# scratch: ninja aiter.install flash_attn.install 952 s (aiter.src 3m00s, aiter.deps 2m22s,
# aiter.wheel 7m22s, aiter.install 1m17s, flash_attn.wheel 1m08s; a quieter run earlier:
# aiter.wheel 44 s, flash_attn.wheel 12 s), a no-op ninja 0.04 s; the wheels
# amd_aiter-0.1.dev2092+g9bab838.d20260602-cp311-cp311-linux_x86_64.whl (4.2 MB, 1386
# files; setuptools_scm's version of the patched tree, platform-tagged by AITER's own
# ForcePlatlibDistribution, no GPU code) and flash_attn-2.8.4-py3-none-any.whl (0.2 MB).
# The fetched flash-attention snapshot lacked one blob (assets/fa4_paper.pdf): the tier
# then builds a parentless commit of the pinned tree less that file (named in the figures).
# Steps: mirrors, wheelhouse, venv; configure; ninja aiter.install flash_attn.install
# without network; the wheels' names, contents and GPU code; a no-op ninja. Figures in
# $W/figures. Resumable ($W/done); KILN_REAL_FRESH=1 starts over.
# Settings: KILN_FLASH_GIT, KILN_AITER_GIT (git folders or URLs holding the pinned
# commits; default the GitHub repositories), KILN_SRC, KILN_BUILD, KILN_REAL_DIR.
set -u
KILN_SRC=$(cd "${KILN_SRC:-$(dirname "$0")/../..}" && pwd) || exit 2
. "$KILN_SRC/tests/real/real.inc"
real_begin flash-aiter
PY3=/usr/bin/python3
DP=/usr/lib/python3/dist-packages
pin () { sed -n "s/^$1=//p" "$KILN_SRC/env/versions.env"; }

for c in git ninja unshare clang-19 "$PY3"; do
	command -v "$c" >/dev/null 2>&1 || { notok "flash-aiter: needs $c (./configure --install-deps installs it)"; exit 1; }
done
"$PY3" -c 'import torch' 2>/dev/null || { notok "flash-aiter: $PY3 has no torch (apt-get install python3-torch)"; exit 1; }
[ -d "$DP/setuptools_scm" ] || { notok "flash-aiter: no python3-setuptools-scm (./configure --install-deps installs it)"; exit 1; }
# offline CMD...: CMD in a network namespace of its own (root: unshare -n; else a user
# namespace too, unshare -rn)
if unshare -n true 2>/dev/null; then offline () { unshare -n "$@"; }
elif unshare -rn true 2>/dev/null; then offline () { unshare -rn "$@"; }
else notok "flash-aiter: cannot make a network namespace (unshare -n or -rn)"; exit 1; fi

# --- 1. mirrors of the pinned commits ---------------------------------------------------
mirror () {
	# mirror NAME GIT SHA: a bare clone in $W/mirror/NAME.git holding SHA
	[ -d "$W/mirror/$1.git" ] && git --git-dir="$W/mirror/$1.git" cat-file -e "$3^{commit}" 2>/dev/null && return 0
	rm -rf "$W/mirror/$1.git" && mkdir -p "$W/mirror"
	git clone -q --bare "$2" "$W/mirror/$1.git" 2>"$W/mirror-$1.err" &&
		git --git-dir="$W/mirror/$1.git" cat-file -e "$3^{commit}" 2>/dev/null
}
FSHA=$(pin flash_attn_SHA) ASHA=$(pin aiter_SHA)
t0=$(now)
if ! mirror flash_attn "${KILN_FLASH_GIT:-https://github.com/Dao-AILab/flash-attention}" "$FSHA" ||
   ! mirror aiter "${KILN_AITER_GIT:-https://github.com/ROCm/aiter}" "$ASHA"; then
	echo "skip flash-aiter: optional tier flash: no repository holding flash-attention $FSHA and aiter $ASHA (set KILN_FLASH_GIT, KILN_AITER_GIT)"
	exit 0
fi
fig "mirrors: bare clones of flash-attention and aiter (s)" "$(since "$t0")"
# whole NAME SHA: the commit to build: SHA itself when the mirror holds every blob of its
# tree, else (a snapshot may leave its largest files out) a parentless commit of the same
# tree without the missing files, named in the figures; prints the commit
whole () {
	g=$W/mirror/$1.git
	miss=$(git --git-dir="$g" ls-tree -r "$2" | awk '$2 == "blob" { print $3 "\t" $4 }' |
		while IFS='	' read -r h f; do git --git-dir="$g" cat-file -e "$h" 2>/dev/null || printf '%s\n' "$f"; done)
	[ -n "$miss" ] || { printf '%s\n' "$2"; return 0; }
	fig "$1: files the mirror lacks, left out of the commit built here" "$(printf '%s' "$miss" | tr '\n' ' ')"
	export GIT_INDEX_FILE="$W/$1.index" GIT_AUTHOR_NAME=kiln GIT_AUTHOR_EMAIL=kiln@example.invalid \
		GIT_COMMITTER_NAME=kiln GIT_COMMITTER_EMAIL=kiln@example.invalid GIT_AUTHOR_DATE="1980-01-01T00:00:00Z" GIT_COMMITTER_DATE="1980-01-01T00:00:00Z"
	rm -f "$GIT_INDEX_FILE"
	# an index of the tree (read-tree wants a work tree named; it writes only the index)
	mkdir -p "$W/$1.wt"
	git --git-dir="$g" --work-tree="$W/$1.wt" read-tree "$2" &&
		printf '%s\n' "$miss" | git --git-dir="$g" --work-tree="$W/$1.wt" update-index --force-remove --stdin &&
		t=$(git --git-dir="$g" write-tree) &&
		c=$(git --git-dir="$g" commit-tree "$t" -m "$1 $2 without the files this mirror lacks: $miss") &&
		git --git-dir="$g" update-ref "refs/tags/kiln-real-$1" "$c" && printf '%s\n' "$c"
	r=$?
	rm -f "$GIT_INDEX_FILE"
	unset GIT_INDEX_FILE
	return $r
}
FREF=$(whole flash_attn "$FSHA") && AREF=$(whole aiter "$ASHA") ||
	{ notok "flash-aiter: cannot make the commits to build"; exit 1; }
[ "$FREF" = "$FSHA" ] || fig "flash_attn: commit built (the pin's tree less the files above)" "$FREF"
[ "$AREF" = "$ASHA" ] || fig "aiter: commit built (the pin's tree less the files above)" "$AREF"

# --- 2. the wheelhouse: Debian's packages as wheels ---------------------------------------
mkw () { "$PY3" "$KILN_SRC/tests/regress/toy-mkwheel.py" "$W/wheelhouse" "$@" >/dev/null; }
if ! done_ wheelhouse; then
	rm -rf "$W/wheelhouse" && mkdir -p "$W/wheelhouse" &&
		cp /usr/share/python-wheels/setuptools-*.whl /usr/share/python-wheels/wheel-*.whl "$W/wheelhouse/" &&
		mkw packaging "$("$PY3" -c 'import packaging; print(packaging.__version__)')" "" "packaging=$DP/packaging" &&
		mkw typing-extensions "$(sed -n 's/^Version: //p' "$DP"/typing_extensions-*.dist-info/METADATA)" "" \
			"typing_extensions.py=$DP/typing_extensions.py" &&
		mkw setuptools-scm "$(sed -n 's/^Version: //p' "$DP"/setuptools_scm-*.dist-info/METADATA)" \
			"packaging>=20.0|setuptools|typing-extensions" "setuptools_scm=$DP/setuptools_scm" &&
		mark wheelhouse || { notok "flash-aiter: cannot make the wheelhouse"; exit 1; }
fi
fig "wheelhouse" "$(cd "$W/wheelhouse" && ls | tr '\n' ' ')"

# --- 3. the venv, a stand-in ROCm folder, the pins ---------------------------------------
if ! done_ venv; then
	rm -rf "$W/venv" && "$PY3" -m venv --system-site-packages "$W/venv" >>"$W/log" 2>&1 &&
		"$W/venv/bin/python" -c 'import torch' 2>>"$W/log" && mark venv ||
		{ notok "flash-aiter: $PY3 -m venv --system-site-packages failed"; exit 1; }
fi
# configure's --arch=gfx1151 wants a ROCm folder: clang-19 as its compiler (nothing here
# compiles GPU code: both builds are pure Python)
mkdir -p "$W/rocm/llvm/bin" && ln -sf "$(command -v clang-19)" "$W/rocm/llvm/bin/clang"
for c in aiter flash_attn; do
	rm -rf "$W/patches/$c" && mkdir -p "$W/patches" && cp -R "$KILN_SRC/patches/$c" "$W/patches/" &&
		cp "$KILN_SRC"/tests/real/patches/$c/0002-*.patch "$W/patches/$c/" &&
		(cd "$W/patches/$c" && ls 0002-*.patch >>series) || { notok "flash-aiter: cannot make $W/patches/$c"; exit 1; }
done
sed -e "s|^flash_attn_ENV=\"|flash_attn_ENV=\"BUILD_TARGET=rocm |" -e "s|^flash_attn_REF=.*|flash_attn_REF=$FREF|" \
	-e "s|^flash_attn_SHA=.*|flash_attn_SHA=$FREF|" -e "s|^aiter_REF=.*|aiter_REF=$AREF|" \
	-e "s|^aiter_SHA=.*|aiter_SHA=$AREF|" "$KILN_SRC/env/versions.env" >"$W/pins.env"
printf 'aiter_PATCHES=%s\nflash_attn_PATCHES=%s\nstack_WITHOUT=vision,audio\nstack_COVER=no\n' \
	"$W/patches/aiter" "$W/patches/flash_attn" >>"$W/pins.env"

# --- 4. configure and build, without network ------------------------------------------------
t0=$(now)
mkdir -p "$W/b" && (cd "$W/b" && "$KILN_SRC/configure" --arch=gfx1151 --pins="$W/pins.env" --pin torch=system \
	--with=flash_attn --python="$W/venv/bin/python" --rocm-path="$W/rocm" --mirror="$W/mirror" \
	--git-cache="$W/git" --wheelhouse="$W/wheelhouse" KILN_BIN="$KB") >"$W/configure.out" 2>&1 ||
	{ notok "flash-aiter: configure failed"; sed 's/^/#   /' "$W/configure.out"; exit 1; }
fig "configure (s)" "$(since "$t0")"
grep -q "flash_attn: its Triton AMD backend is AITER's" "$W/configure.out" &&
	ok "configure brings aiter in with flash_attn's Triton AMD backend" || notok "configure did not bring aiter in"
if ! done_ build; then
	: >"$W/build.out"
	t0=$(now)
	if offline nice ninja -C "$W/b" aiter.install flash_attn.install >>"$W/build.out" 2>&1; then
		fig "ninja aiter.install flash_attn.install, no network (s)" "$(since "$t0")"
		mark build
	else
		notok "flash-aiter: the build failed without network"; showfail "$W/build.out"; exit 1
	fi
fi
stagefigs build "$W/build.out"
ok "aiter and flash_attn built by the graph in a network namespace of their own (unshare -n)"

# --- 5. what was built ---------------------------------------------------------------------
B=$W/b/build
aw=$(cat "$B/wheels/aiter.picked") fw=$(cat "$B/wheels/flash_attn.picked")
fig "aiter wheel" "${aw##*/} ($(wc -c <"$aw") bytes)"
fig "flash_attn wheel" "${fw##*/} ($(wc -c <"$fw") bytes)"
case "${aw##*/}" in amd_aiter-*.whl) ok "aiter: ${aw##*/}" ;; *) notok "aiter's wheel is ${aw##*/}" ;; esac
case "${fw##*/}" in flash_attn-2.8.4-*.whl) ok "flash_attn: ${fw##*/}" ;; *) notok "flash_attn's wheel is ${fw##*/}" ;; esac
members () { "$PY3" -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$1" >"$W/members.out"; }
members "$aw"
fig "aiter wheel: files (all, under aiter/ops/triton/)" "$(grep -c . "$W/members.out"), $(grep -c '^aiter/ops/triton/' "$W/members.out")"
grep -q '^aiter/ops/triton/_triton_kernels/flash_attn_triton_amd/' "$W/members.out" &&
	ok "aiter's wheel holds the Triton AMD flash-attention kernels flash_attn imports" ||
	notok "aiter's wheel lacks aiter/ops/triton/_triton_kernels/flash_attn_triton_amd"
members "$fw"
grep -q '^flash_attn/flash_attn_interface.py$' "$W/members.out" && ok "flash_attn's wheel holds flash_attn_interface.py" ||
	notok "flash_attn's wheel lacks flash_attn_interface.py"
# gpucheck targets lists each file with GPU code ("FILE: N bundles, M entries"), the
# stack.smoke check's test; a pure-Python wheel lists none
for w in "$aw" "$fw"; do
	"$KB/gpucheck" targets "$w" >"$W/targets.out" 2>&1
	if grep -q ': [0-9]* bundles*, ' "$W/targets.out"; then notok "${w##*/} carries GPU code: $(head -n 1 "$W/targets.out")"
	else ok "${w##*/}: no GPU code (pure Python; stack.smoke names it and passes it)"; fi
done
grep -q 'Using the installed aiter (FLASH_ATTENTION_SKIP_AITER_INSTALL=TRUE)' "$B/logs/flash_attn.wheel.log" &&
	ok "flash_attn's setup.py used the aiter stage's install (kiln's patch)" || notok "flash_attn's build did not say it used the installed aiter"
grep -q 'pip install' "$B/logs/flash_attn.wheel.log" && notok "pip ran inside flash_attn's build" || ok "no pip inside flash_attn's build"
v=$("$W/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("amd-aiter"), m.version("flash_attn"))' 2>&1)
fig "installed versions (amd-aiter flash_attn)" "$v"
o=$("$W/venv/bin/python" -c 'import importlib.util as u; print(u.find_spec("aiter").origin)' 2>&1)
case "$o" in "$W/venv/"*) ok "aiter is installed in the venv ($o)" ;; *) notok "aiter's origin: $o" ;; esac
[ -z "$(ls -A "$B/src/flash_attn/third_party/aiter" 2>/dev/null)" ] && [ -z "$(ls -A "$B/src/flash_attn/csrc/cutlass" 2>/dev/null)" ] &&
	ok "flash-attention's submodules stayed empty (flash_attn_SUBMODULES=no)" || notok "flash-attention's submodules were checked out"

# --- 6. no-op ----------------------------------------------------------------------------
: >"$W/noop.out"
t0=$(now)
offline ninja -C "$W/b" aiter.install flash_attn.install >"$W/noop.out" 2>&1
fig "no-op ninja (s)" "$(since "$t0")"
grep -q 'no work to do' "$W/noop.out" && ok "a second ninja has no work to do" || { notok "a second ninja did work"; showfail "$W/noop.out"; }

echo "# figures ($W/figures):"
sed 's/^/#   /' "$W/figures"
[ "$fails" = 0 ]
