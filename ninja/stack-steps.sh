#!/bin/sh
# stack-steps.sh STEP COMPONENT SETTINGS: the work of one stack stage. kiln-stage runs it
# (with KILN_STAGE, KILN_STAGE_OUT, the log as stdout and stderr) only when the stage's key
# changed. SETTINGS is $builddir/stack.env; the stage's key file holds its inputs. Each
# step_NAME function is hashed into its own stages' keys: editing one reruns only those.
#
# Nothing here reads SETTINGS or the key file as shell text: `kiln-stage env SETTINGS KEY
# -- sh stack-steps.sh ...` (the stage rule in stack.ninja) reads both with kv.c and hands
# each KEY=VALUE over as the environment variable KILN_K_KEY, with the names in KILN_KEYS.
# Below, each becomes a plain shell variable (B, PY, URL, REF, ...), not exported; a
# value is only ever expanded inside double quotes by the steps, never parsed.
set -eu
step=$1 c=$2
for k in ${KILN_KEYS:?run by kiln-stage env (see ninja/stack.ninja)}; do
	case "$k" in
	[A-Za-z_]*) ;;
	*) echo "kiln: bad setting name '$k'" >&2; exit 2 ;;
	esac
	unset "$k"
	eval "$k=\${KILN_K_$k}"
	unset "KILN_K_$k"
done
unset KILN_KEYS k
PATH=$KBIN:$PATH
export PATH
# srcpin reads the mirror folder from its environment: a path with spaces stays whole
if [ -n "$MIRROR" ]; then SRCPIN_MIRROR=$MIRROR; export SRCPIN_MIRROR; fi
src=$B/src/$c
say () { printf 'kiln: %s\n' "$*" >&2; }
die () { say "$KILN_STAGE: $*"; exit 1; }
# the steps' $(mirror) adds no argument any more: SRCPIN_MIRROR above says it
mirror () { return 0; }

step_src () {
	commit=$(srcpin fetch "$c" "$URL" "$REF" --cache="$B/git" $(mirror)) ||
		die "srcpin could not fetch $REF from $URL"
	case "$commit" in
	"$SHA"*) ;;
	*) die "$REF of $URL is $commit, but the pin expects $SHA (update ${c}_SHA, or pin the commit)" ;;
	esac
	srcpin checkout "$c" --commit "$commit" --into "$src" --submodules --force --cache="$B/git" $(mirror)
	printf '%s %s\n' "$URL" "$commit" >"$B/src/$c.id"
}

step_patch () {
	# back to the pinned commit, pristine, then the series: an edited patch is never
	# applied over its older self. A pristine tree may still carry an old series (its
	# SERIES_DIGEST): when this stage wants none, that tree is checked out afresh too
	# (srcpin patch itself starts afresh when it is given another series)
	st=$(srcpin state "$src") || die "$src is not a srcpin checkout; run ninja $c.src"
	commit=$(printf '%s\n' "$st" | sed -n 's/^COMMIT=//p')
	[ -n "$commit" ] || die "$src is not a srcpin checkout; run ninja $c.src"
	have=$(printf '%s\n' "$st" | sed -n 's/^SERIES_DIGEST=//p')
	if ! printf '%s\n' "$st" | grep -qx 'PRISTINE=yes' || { [ "$SERIES" = none ] && [ -n "$have" ]; }; then
		srcpin checkout "$c" --commit "$commit" --into "$src" --submodules --force --cache="$B/git" $(mirror)
	fi
	if [ "$SERIES" != none ]; then
		srcpin patch "$src" "$SERIES_FILE"
	fi
	srcpin state "$src" | grep -E '^(URL|COMMIT|SERIES_DIGEST)=' | tr '\n' ' ' >"$B/src/$c.id"
	echo >>"$B/src/$c.id"
}

step_hipify () {
	# the patch stage left the tree pristine + series; --reset lets hipify-wrap put it
	# back the same way (srcpin checkout, then the series) before it hipifies again
	set -- --project="$PROJECT" --python="$PY" --reset --log "$B/logs/$c.hipify-run.log"
	[ "$SERIES" != none ] && set -- "$@" --series="$SERIES_FILE"
	if [ "$PROJECT" = generic ]; then
		[ -n "$CMD" ] || die "${c}_HIPIFY=generic needs ${c}_HIPIFY_CMD, the command that hipifies the tree"
		hipify-wrap "$@" "$src${SUBDIR:+/$SUBDIR}" -- sh -c "$CMD"
	else
		hipify-wrap "$@" "$src${SUBDIR:+/$SUBDIR}"
	fi
}

step_wheel () {
	out=$KILN_STAGE_OUT
	dir=$src${SUBDIR:+/$SUBDIR}
	mods=
	for m in $MODULES; do mods="$mods --module=$m"; done
	set -- --prepend-path "$(dirname "$PY")"
	for p in $PROFILES; do set -- "$@" --profile "$p"; done
	# the target Python must import what this build compiles against, and nothing else:
	# asked in the environment the build gets (not ninja's own), from the folder it runs
	# in. A component that builds against nothing (torch) has nothing to check; without
	# --module the check would look for torch, which torch's own source folder holds.
	if [ -n "$mods" ]; then
		envclean "$@" -- envclean --check --python="$PY" --cwd="$dir" $mods ||
			die "envclean --check found problems with $PY in $dir (above); fix them, then run ninja again"
	fi
	set -- "$@" --set MAX_JOBS="$JOBS" --set CMAKE_POLICY_VERSION_MINIMUM=3.5
	case "$BACKEND" in
	gfx) set -- "$@" --set PYTORCH_ROCM_ARCH="$ARCH" --set ROCM_PATH="$ROCM_PATH" --set ROCM_HOME="$ROCM_PATH" \
		--set USE_FLASH_ATTENTION="$FLASH" --set GPU_TARGETS="$ARCH" ;;
	cuda) set -- "$@" --set TORCH_CUDA_ARCH_LIST="$(echo "$ARCH" | tr ';' '\n' | sed 's/^sm_\([0-9]*\)\([0-9]\)\(a*\)$/\1.\2\3/' | tr '\n' ';' | sed 's/;$//')" ;;
	esac
	case "$CACHE" in
	ccache|sccache) set -- "$@" --set CMAKE_C_COMPILER_LAUNCHER="$CACHE" --set CMAKE_CXX_COMPILER_LAUNCHER="$CACHE" \
		--set CMAKE_HIP_COMPILER_LAUNCHER="$CACHE" --set HIP_CLANG_LAUNCHER="$CACHE" ;;
	esac
	for e in $ENV; do set -- "$@" --set "$e"; done
	cd "$dir"
	build=$BUILD
	if [ -z "$build" ]; then
		if [ -f setup.py ]; then build=setup; else build=build; fi
	fi
	case "$build" in
	setup) envclean "$@" -- "$PY" setup.py bdist_wheel -d "$out" ;;
	build) envclean "$@" -- "$PY" -m build --wheel --no-isolation --outdir "$out" . ;;
	pip) envclean "$@" -- "$PY" -m pip wheel --no-deps --no-build-isolation --no-index -w "$out" . ;;
	*) die "${c}_BUILD=$build: use setup, build or pip" ;;
	esac
}

step_pick () {
	if [ -n "${WHEEL:-}" ]; then from=$WHEEL; else from=$B/wheels/$c; fi
	w=$(wheelpick --python="$PY" --name "$DIST" "$from") ||
		die "no wheel in $from fits $PY (wheelpick -v --python=$PY $from says why)"
	mkdir -p "$B/wheels"
	printf '%s\n' "$w" >"$B/wheels/$c.picked.tmp"
	mv -f "$B/wheels/$c.picked.tmp" "$B/wheels/$c.picked"
	echo "picked $w"
}

step_install () {
	w=$(cat "$B/wheels/$c.picked")
	# from the wheel's folder: pip reads a ';' in a path argument as a marker separator
	(cd "$(dirname "$w")" && "$PY" -m pip install --no-deps --force-reinstall --no-index \
		--disable-pip-version-check "./${w##*/}")
	record "$w"
}

step_system () {
	"$PY" -c "import $IMPORT" || die "--pin $c=system, but $PY cannot import $IMPORT"
	record ""
}

# record W: this component's build-info record, then build-info.json
record () {
	mkdir -p "$B/info"
	{
		echo "COMPONENT=$c"
		[ -d "$src" ] && srcpin state "$src" 2>/dev/null | grep -E '^(URL|COMMIT|SERIES_DIGEST)='
		[ -n "${REF:-}" ] && [ "$step" != system ] && echo "REF=$REF"
		if [ -n "$1" ]; then
			n=${1##*/}
			echo "WHEEL=$n"
			echo "VERSION=$(echo "$n" | cut -d- -f2)"
			echo "WHEEL_SHA256=$(sha256sum "$1" | cut -c1-64)"
		else
			echo "VERSION=$("$PY" -c "import importlib.metadata as m; print(m.version('$DIST'))" 2>/dev/null || echo system)"
		fi
		echo "ARCH=$(echo "$ARCH_LIST" | tr ';' ,)"
		echo "PYTHON=$PY"
		echo "PY_ABI=$PY_ABI"
	} | kiln-stage kv -o "$B/info/$c.info"
	kiln-stage info -o "$B/build-info.json" "$B/info"
}

step_fat () {
	for k in $COMPONENTS; do
		w=$(cat "$B/wheels/$k.picked")
		set -- -q
		[ "$BACKEND" = gfx ] && set -- "$@" --rocm="$ROCM_PATH" --arch="$(echo "$ARCH" | tr ';' ,)"
		[ "$k" = torch ] && set -- "$@" --layout=pkg:torch/lib
		fatwheel "$@" "$w" -w "$KILN_STAGE_OUT" || die "fatwheel could not bundle $w"
	done
}

step_smoke () {
	for m in $IMPORTS; do
		"$PY" -c "import $m; print('$m', getattr($m, '__version__', ''), $m.__file__)" ||
			die "$PY cannot import $m"
	done
	if [ "$BACKEND" != cpu ] && [ "$COVER" != no ]; then
		site=$("$PY" -c 'import torch, os; print(os.path.dirname(torch.__file__))')
		for a in $(echo "$ARCH" | tr ';' ' '); do
			gpucheck cover --target="$a" "$site" || die "torch's GPU code does not cover $a (above)"
		done
		if gpucheck --arch >/dev/null 2>&1; then gpucheck smoke --python="$PY"; fi
	fi
}

step_venv () {
	# the target venv kiln owns (--venv=DIR), made from the base interpreter; --clear
	# only over a venv (configure refuses a folder that is something else)
	set --
	[ "$SYSTEM_SITE" = yes ] && set -- --system-site-packages
	[ -f "$VENV/pyvenv.cfg" ] && set -- "$@" --clear
	"$BASE" -m venv "$@" "$VENV"
	"$VENV/bin/python" -c 'import sys; print("venv", sys.prefix, "from", sys.base_prefix)'
}

# one line: sh has read it whole before the step runs, so an edit of this file during a
# long stage cannot make the shell read on into changed text
"step_$step"; exit $?
