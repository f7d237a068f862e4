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
# the git mirrors: one per repository in --git-cache, shared by every build folder
# (srcpin locks a mirror while it fetches); an older stack.env has none: the build folder's
GITC=${GIT_CACHE:-$B/git}
say () { printf 'kiln: %s\n' "$*" >&2; }
die () { say "$KILN_STAGE: $*"; exit 1; }
# the steps' $(mirror) adds no argument any more: SRCPIN_MIRROR above says it
mirror () { return 0; }

step_src () {
	commit=$(clean -- srcpin fetch "$c" "$URL" "$REF" --cache="$GITC" $(mirror)) ||
		die "srcpin could not fetch $REF from $URL"
	case "$commit" in
	"$SHA"*) ;;
	*) die "$REF of $URL is $commit, but the pin expects $SHA (update ${c}_SHA, or pin the commit)" ;;
	esac
	clean -- srcpin checkout "$c" --commit "$commit" --into "$src" --submodules --force --cache="$GITC" $(mirror)
	printf '%s %s\n' "$URL" "$commit" >"$B/src/$c.id"
	# where the objects came from: the --mirror copy srcpin uses for this URL (the order
	# of srcpin(1)), or the URL itself; build-info records it beside the URL
	from=$URL
	if [ -n "$MIRROR" ]; then
		u=${URL#*://}; u=${u%/}; u=${u%.git}
		for d in "$MIRROR/$c.git" "$MIRROR/$c" "$MIRROR/$u.git" "$MIRROR/$u" "$MIRROR/${u#*/}.git" \
			"$MIRROR/${u#*/}" "$MIRROR/${u##*/}.git" "$MIRROR/${u##*/}"; do
			[ -e "$d" ] && { from=$d; break; }
		done
	fi
	printf '%s\n' "$from" >"$B/src/$c.fetched"
	echo "fetched $commit from $from"
}

step_patch () {
	# back to the pinned commit, pristine, then the series: an edited patch is never
	# applied over its older self. A pristine tree may still carry an old series (its
	# SERIES_DIGEST): when this stage wants none, that tree is checked out afresh too
	# (srcpin patch itself starts afresh when it is given another series)
	st=$(clean -- srcpin state "$src") || die "$src is not a srcpin checkout; run ninja $c.src"
	commit=$(printf '%s\n' "$st" | sed -n 's/^COMMIT=//p')
	[ -n "$commit" ] || die "$src is not a srcpin checkout; run ninja $c.src"
	have=$(printf '%s\n' "$st" | sed -n 's/^SERIES_DIGEST=//p')
	if ! printf '%s\n' "$st" | grep -qx 'PRISTINE=yes' || { [ "$SERIES" = none ] && [ -n "$have" ]; }; then
		clean -- srcpin checkout "$c" --commit "$commit" --into "$src" --submodules --force --cache="$GITC" $(mirror)
	fi
	if [ "$SERIES" != none ]; then
		clean -- srcpin patch "$src" "$SERIES_FILE"
	fi
	clean -- srcpin state "$src" | grep -E '^(URL|COMMIT|SERIES_DIGEST)=' | tr '\n' ' ' >"$B/src/$c.id"
	echo >>"$B/src/$c.id"
}

step_hipify () {
	# the patch stage left the tree pristine + series; --reset lets hipify-wrap put it
	# back the same way (srcpin checkout, then the series) before it hipifies again
	set -- --project="$PROJECT" --python="$PY" --reset --log "$B/logs/$c.hipify-run.log"
	[ "$SERIES" != none ] && set -- "$@" --series="$SERIES_FILE"
	if [ "$PROJECT" = generic ]; then
		[ -n "$CMD" ] || die "${c}_HIPIFY=generic needs ${c}_HIPIFY_CMD, the command that hipifies the tree"
		clean -- hipify-wrap "$@" "$src${SUBDIR:+/$SUBDIR}" -- sh -c "$CMD"
	else
		clean -- hipify-wrap "$@" "$src${SUBDIR:+/$SUBDIR}"
	fi
}

step_wheel () {
	out=$KILN_STAGE_OUT
	# The build starts from a tree that is exactly the key: a fresh private copy of the
	# prepared source (pristine + series + hipify). It writes only there and into $out, so
	# nothing of an earlier build (setuptools' build/, *.egg-info, a CMake cache) reaches
	# this one, whatever the build tool, and $src stays pristine. Speed comes from the
	# compiler cache (--cache=), whose paths are stable: the copy is always $B/work/$c.
	work=$B/work/$c
	[ -n "${KILN_STAGE_VERIFY:-}" ] && work=$B/work/$c.verify
	rm -rf "$work" "$work.home" || die "cannot remove the old build tree $work"
	mkdir -p "$work" "$work.home" || die "cannot create $work"
	cp -a --reflink=auto "$src/." "$work/" || die "cannot copy $src to $work"
	dir=$work${SUBDIR:+/$SUBDIR}
	commit=$(clean -- srcpin state "$src" | sed -n 's/^COMMIT=//p')

	# SOURCE_DATE_EPOCH: the pinned commit's time, so archives and embedded dates are a
	# function of the pin (git reads the checkout's objects; 1980-01-01 without git)
	sde=$(git --git-dir="$src/.git" show -s --format=%ct "$commit" 2>/dev/null) || sde=
	case "$sde" in ''|*[!0-9]*) sde=315532800; say "no commit time from git; SOURCE_DATE_EPOCH=$sde" ;; esac

	# the version: a release plus a local label saying how it was built. The release is
	# the pinned tag when it is a version (v0.14.1 -> 0.14.1; upstreams leave version.txt
	# at 0.14.1a0 on their release branches and set it at release time), else the
	# source's version.txt as written (a development snapshot stays a pre-release). The
	# label is kiln.ARCH.gHASH, HASH from this stage's key (sources, series, arch, env,
	# the torch built against): another build gets another label, the same key the same
	# one. Its first segment is letters only, so PEP 440's text order of mixed segments
	# (+rocm10 < +rocm6) never ranks two kiln builds by accident.
	rel=
	for t in ${REF:-} $(git --git-dir="$GITC/$c.git" tag --points-at "$commit" 2>/dev/null); do
		v=${t#v}
		case "$v" in [0-9]*) case "$v" in *[!0-9.]*|*.|*..*) ;; *) rel=$v; break ;; esac ;; esac
	done
	if [ -z "$rel" ] && [ -f "$dir/version.txt" ]; then
		rel=$(sed -n '1{s/[+[:space:]].*//;p;}' "$dir/version.txt")
	fi
	label=kiln.$(printf '%s' "$ARCH" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '.').g$(printf '%.10s' "$KILN_STAGE_KEY")
	version=
	[ -n "$rel" ] && version=$rel+$label
	say "version ${version:-(the project's own: no version tag at $commit and no version.txt)}"

	# file names in objects and debug info: the copy, the build folder and the target
	# Python's prefix are written as fixed paths, so two build folders give the same bytes
	pyprefix=$(clean -- "$PY" -c 'import sys; print(sys.prefix)') || die "$PY does not run"
	maps=
	for m in "$pyprefix=/kiln/python" "$B=/kiln/build" "$work=/kiln/src/$c"; do
		maps="$maps -ffile-prefix-map=$m -fdebug-prefix-map=$m"
	done
	cuda=
	for m in $maps; do cuda="$cuda -Xcompiler=$m"; done

	set -- --set HOME="$work.home" --set SOURCE_DATE_EPOCH="$sde" --set MAX_JOBS="$JOBS" \
		--set CMAKE_POLICY_VERSION_MINIMUM=3.5 --set GIT_CEILING_DIRECTORIES="$B/work" \
		--set CFLAGS="${maps# }" --set CXXFLAGS="${maps# }" --set HIPFLAGS="${maps# }" \
		--set CUDAFLAGS="${cuda# }"
	if [ -n "$version" ]; then
		case "$c" in
		torch) set -- "$@" --set PYTORCH_BUILD_VERSION="$version" --set PYTORCH_BUILD_NUMBER=0 ;;
		*) set -- "$@" --set BUILD_VERSION="$version" ;;
		esac
	fi
	case "$BACKEND" in
	gfx) set -- "$@" --set PYTORCH_ROCM_ARCH="$ARCH" --set ROCM_PATH="$ROCM_PATH" --set ROCM_HOME="$ROCM_PATH" \
		--set USE_FLASH_ATTENTION="$FLASH" --set GPU_TARGETS="$ARCH" ;;
	cuda) set -- "$@" --keep CUDA_HOME --keep CUDA_PATH --keep CUDACXX --set TORCH_CUDA_ARCH_LIST="$(echo "$ARCH" | tr ';' '\n' | sed 's/^sm_\([0-9]*\)\([0-9]\)\(a*\)$/\1.\2\3/' | tr '\n' ';' | sed 's/;$//')" ;;
	esac
	# the compiler cache keeps its own settings (its folder defaults to the caller's)
	case "$CACHE" in
	ccache|sccache)
		set -- "$@" --set CMAKE_C_COMPILER_LAUNCHER="$CACHE" --set CMAKE_CXX_COMPILER_LAUNCHER="$CACHE" \
			--set CMAKE_HIP_COMPILER_LAUNCHER="$CACHE" --set HIP_CLANG_LAUNCHER="$CACHE" \
			--keep CCACHE_ --keep SCCACHE_ --set CCACHE_BASEDIR="$work" --set SCCACHE_BASEDIRS="$work"
		[ -n "${CCACHE_DIR:-}" ] || set -- "$@" --set CCACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/ccache"
		[ -n "${SCCACHE_DIR:-}" ] || set -- "$@" --set SCCACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/sccache" ;;
	esac
	# team caches (issue 20): the compiler cache's remote storage, then the distributed
	# compiler behind it; none of them changes what is compiled, so none is in the key
	case "$CACHE" in
	ccache) [ -z "${CACHE_REMOTE:-}" ] || set -- "$@" --set CCACHE_REMOTE_STORAGE="$CACHE_REMOTE" ;;
	sccache)
		case "${CACHE_REMOTE:-}" in
		redis://*) set -- "$@" --set SCCACHE_REDIS="$CACHE_REMOTE" --set SCCACHE_REDIS_ENDPOINT="$CACHE_REMOTE" ;;
		http://*|https://*) set -- "$@" --set SCCACHE_WEBDAV_ENDPOINT="$CACHE_REMOTE" ;;
		esac ;;
	esac
	masq=
	case "${DISTRIBUTE:-}" in
	distcc)
		command -v distcc >/dev/null 2>&1 || die "--distribute=distcc, but there is no distcc here (install distcc)"
		slots=$(DISTCC_HOSTS=$DISTRIBUTE_HOSTS distcc -j 2>/dev/null) || slots=0
		[ "$slots" -gt "$JOBS" ] 2>/dev/null || slots=$JOBS
		say "distcc: $DISTRIBUTE_HOSTS ($slots slots); preprocessing stays local"
		set -- "$@" --set DISTCC_HOSTS="$DISTRIBUTE_HOSTS" --set MAX_JOBS="$slots" --keep DISTCC_ \
			--set DISTCC_DIR="$work.home/.distcc"
		mkdir -p "$work.home/.distcc"
		dist=distcc ;;
	icecream)
		command -v icecc >/dev/null 2>&1 || die "--distribute=icecream, but there is no icecc here (install icecc)"
		set -- "$@" --keep ICECC_
		dist=icecc ;;
	*) dist= ;;
	esac
	if [ -n "$dist" ] || [ "$CACHE" = ccache ]; then
		# compilers called by name (setuptools' CC, a setup.py's own "cc", CMake's) reach the
		# cache and the distributor through a folder of links first on PATH; ccache runs
		# first and hands misses to the distributor (CCACHE_PREFIX)
		masq=$work.home/bin
		mkdir -p "$masq"
		front=$dist
		[ "$CACHE" = ccache ] && front=ccache
		fp=$(command -v "$front") || die "no $front on PATH"
		for cc in cc gcc c++ g++ clang clang++ x86_64-linux-gnu-gcc x86_64-linux-gnu-g++; do
			command -v "$cc" >/dev/null 2>&1 && ln -sf "$fp" "$masq/$cc"
		done
		if [ "$CACHE" = ccache ] && [ -n "$dist" ]; then
			set -- "$@" --set CCACHE_PREFIX="$dist"
		elif [ -n "$dist" ]; then
			set -- "$@" --set CMAKE_C_COMPILER_LAUNCHER="$dist" --set CMAKE_CXX_COMPILER_LAUNCHER="$dist"
		fi
		set -- "$@" --prepend-path "$masq"
	fi
	for e in $ENV; do set -- "$@" --set "$e"; done

	# the target Python must import what this build compiles against, and nothing else:
	# asked in the environment the build gets, from the tree it runs in (the source, of
	# which the build folder is an exact copy). A component that builds against nothing
	# (torch) has nothing to check; without --module the check would look for torch,
	# which torch's own source folder holds.
	mods=
	for m in $MODULES; do mods="$mods --module=$m"; done
	if [ -n "$mods" ]; then
		clean "$@" -- envclean --check --python="$PY" --cwd="$src${SUBDIR:+/$SUBDIR}" $mods ||
			die "envclean --check found problems with $PY in $src${SUBDIR:+/$SUBDIR} (above); fix them, then run ninja again"
	fi
	cd "$dir" || die "no $dir"
	build=$BUILD
	if [ -z "$build" ]; then
		if [ -f setup.py ]; then build=setup; else build=build; fi
	fi
	[ "$CACHE" = ccache ] && ccstats "$@" >"$work.home/ccache.before"
	case "$build" in
	setup) clean "$@" -- "$PY" setup.py bdist_wheel -d "$out" ;;
	build) clean "$@" -- "$PY" -m build --wheel --no-isolation --outdir "$out" . ;;
	pip) clean "$@" -- "$PY" -m pip wheel --no-deps --no-build-isolation --no-index -w "$out" . ;;
	*) die "${c}_BUILD=$build: use setup, build or pip" ;;
	esac || die "the build failed (its tree is kept in $work)"
	if [ "$CACHE" = ccache ]; then
		ccstats "$@" >"$work.home/ccache.after"
		hitrate "$work.home/ccache.before" "$work.home/ccache.after"
	fi
	cd "$B" && rm -rf "$work" "$work.home"
	ls "$out"
}

step_pick () {
	if [ -n "${WHEEL:-}" ]; then from=$WHEEL; else from=$B/wheels/$c; fi
	w=$(clean -- wheelpick --python="$PY" --name "$DIST" "$from") ||
		die "no wheel in $from fits $PY (wheelpick -v --python=$PY $from says why)"
	mkdir -p "$B/wheels"
	printf '%s\n' "$w" >"$B/wheels/$c.picked.tmp"
	mv -f "$B/wheels/$c.picked.tmp" "$B/wheels/$c.picked"
	echo "picked $w"
}

step_install () {
	w=$(cat "$B/wheels/$c.picked")
	# from the wheel's folder: pip reads a ';' in a path argument as a marker separator
	(cd "$(dirname "$w")" && clean -- "$PY" -m pip install --no-deps --force-reinstall --no-index \
		--disable-pip-version-check "./${w##*/}")
	record "$w"
}

step_system () {
	clean -- "$PY" -c "import $IMPORT" || die "--pin $c=system, but $PY cannot import $IMPORT"
	record ""
}

# ccstats [ENVCLEAN-OPTION]...: ccache's counters in the build's environment (KEY\tVALUE)
ccstats () { clean "$@" -- ccache --print-stats 2>/dev/null || :; }
# hitrate BEFORE AFTER: the compiler cache's hits in this stage, in its log and, through
# $KILN_STAGE_NOTE, in the stage's summary line ("ccache 12/40 hits (30%), 8 remote")
hitrate () {
	awk -F '\t' 'FNR == NR { b[$1] = $2; next } { d[$1] = $2 - b[$1] }
		END { h = d["direct_cache_hit"] + d["preprocessed_cache_hit"]; n = h + d["cache_miss"]
		      if (n > 0) printf "ccache %d/%d hits (%d%%), %d remote\n", h, n, 100 * h / n, d["remote_storage_hit"]
		      else print "ccache: no compiles" }' "$1" "$2" >"$1.rate" || return 0
	say "$(cat "$1.rate")"
	[ -z "${KILN_STAGE_NOTE:-}" ] || cp "$1.rate" "$KILN_STAGE_NOTE" 2>/dev/null || :
}

# clean [ENVCLEAN-OPTION]... -- CMD...: CMD under envclean, starting from its allow-list
# (-i) plus the profiles: no caller variable (PIP_*, CFLAGS, CMAKE_*, SRCPIN_MIRROR ...)
# and no pip configuration file reaches it; the target Python's folder comes first on PATH
clean () {
	n=$#
	for p in $PROFILES; do set -- "$@" --profile="$p"; done
	while [ "$n" -gt 0 ]; do set -- "$@" "$1"; shift; n=$((n - 1)); done
	# srcpin's mirror folder passes the cleaning (the only variable srcpin reads here)
	[ -z "${SRCPIN_MIRROR:-}" ] || set -- --set "SRCPIN_MIRROR=$SRCPIN_MIRROR" "$@"
	envclean -i --set PIP_CONFIG_FILE=/dev/null --prepend-path "$(dirname "$PY")" "$@"
}

# record W: this component's build-info record, then build-info.json
record () {
	mkdir -p "$B/info"
	{
		echo "COMPONENT=$c"
		[ -d "$src" ] && clean -- srcpin state "$src" 2>/dev/null | grep -E '^(URL|COMMIT|SERIES_DIGEST)='
		[ -f "$B/src/$c.fetched" ] && echo "FETCHED_FROM=$(cat "$B/src/$c.fetched")"
		[ -n "${REF:-}" ] && [ "$step" != system ] && echo "REF=$REF"
		if [ -n "$1" ]; then
			n=${1##*/}
			echo "WHEEL=$n"
			echo "VERSION=$(echo "$n" | cut -d- -f2)"
			echo "WHEEL_SHA256=$(sha256sum "$1" | cut -c1-64)"
		else
			echo "VERSION=$(clean -- "$PY" -c "import importlib.metadata as m; print(m.version('$DIST'))" 2>/dev/null || echo system)"
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
		clean -- fatwheel "$@" "$w" -w "$KILN_STAGE_OUT" || die "fatwheel could not bundle $w"
	done
}

step_smoke () {
	for m in $IMPORTS; do
		clean -- "$PY" -c "import $m; print('$m', getattr($m, '__version__', ''), $m.__file__)" ||
			die "$PY cannot import $m"
	done
	if [ "$BACKEND" != cpu ] && [ "$COVER" != no ]; then
		site=$(clean -- "$PY" -c 'import torch, os; print(os.path.dirname(torch.__file__))')
		for a in $(echo "$ARCH" | tr ';' ' '); do
			clean -- gpucheck cover --target="$a" "$site" || die "torch's GPU code does not cover $a (above)"
		done
		if clean -- gpucheck --arch >/dev/null 2>&1; then clean -- gpucheck smoke --python="$PY"; fi
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
