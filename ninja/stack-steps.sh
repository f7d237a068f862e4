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
# lists ($ENV, $MODULES, $PROFILES ...) are split into words, never expanded as globs
# (PROFILES at "|", the others at white space)
set -f
step=$1 c=$2
# the stamp, for step_imagecheck (the image rule passes it after SETTINGS)
stampf=${4:-}
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

# torchpin: C_REF=@torch, the pin torch's own source tree gives C (torch.patch ran
# first): AOTriton's commit from cmake/External/aotriton.cmake (or, in older trees,
# .ci/docker/aotriton_version.txt), triton's from .ci/docker/ci_commit_pins/triton.txt.
# Prints the commit; $B/src/C.derived records it and where it came from.
torchpin () {
	t=$B/src/torch
	case "$c" in
	aotriton)
		f=cmake/External/aotriton.cmake
		r=$(sed -n 's/^[[:space:]]*set(__AOTRITON_CI_COMMIT "\([0-9a-f]\{7,40\}\)").*/\1/p' "$t/$f" 2>/dev/null | head -n 1)
		if [ -z "$r" ] && [ -f "$t/.ci/docker/aotriton_version.txt" ]; then
			f=.ci/docker/aotriton_version.txt
			r=$(sed -n 4p "$t/$f" | tr -d ' \r')
		fi ;;
	triton)
		f=.ci/docker/ci_commit_pins/triton.txt
		r=$(head -n 1 "$t/$f" 2>/dev/null | tr -d ' \r') ;;
	*) die "${c}_REF=@torch: torch's tree pins only aotriton and triton" ;;
	esac
	case "$r" in
	''|*[!0-9a-f]*) die "${c}_REF=@torch: no commit for $c in torch's $f ($t/$f); pin ${c}_REF yourself" ;;
	esac
	printf 'REF_RESOLVED=%s\nREF_FROM=torch:%s\n' "$r" "$f" >"$B/src/$c.derived"
	say "${c}_REF=@torch: $r (torch's $f)"
	printf '%s\n' "$r"
}

step_src () {
	# debsrc:PACKAGE/VERSION: a Debian source package made into a local git mirror
	# (ninja/debsrc.sh), unless --mirror already holds this component
	url=$URL
	case "$URL" in
	debsrc:*)
		if [ -z "$MIRROR" ] || [ ! -d "$MIRROR/$c.git" ]; then
			pv=${URL#debsrc:}
			sh "$KILN_SRC/ninja/debsrc.sh" "${pv%%/*}" "${pv#*/}" "$B/debsrc/$c.git" >/dev/null ||
				die "could not make a git mirror of Debian's source package ${pv%%/*} ${pv#*/} (above)"
			url=$B/debsrc/$c.git
		fi ;;
	esac
	# fetch and checkout in one srcpin run (one libgit2 start); a commit other than the
	# pin's SHA stops it (exit 1) before the tree is touched
	rc=0
	commit=$(clean -- srcpin checkout "$c" "$url" "$REF" ${SHA:+"--expect=$SHA"} --into "$src" \
		--submodules --force --cache="$GITC" $(mirror)) || rc=$?
	if [ "$rc" = 1 ] && [ -n "$SHA" ]; then
		commit=$(clean -- srcpin fetch "$c" "$url" "$REF" --offline --cache="$GITC" $(mirror))
		die "$REF of $URL is $commit, but the pin expects $SHA (update ${c}_SHA, or pin the commit)"
	fi
	[ "$rc" = 0 ] || die "srcpin could not fetch $REF from $url"
	printf '%s %s\n' "$URL" "$commit" >"$B/src/$c.id"
	# where the objects came from: the --mirror copy srcpin uses for this URL (the order
	# of srcpin(1)), or the URL itself; build-info records it beside the URL
	from=$url
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
	# With --work-dir the copy is WORK_DIR/$c for every build folder (nvcc names internal
	# symbols after the source's real path): one build at a time uses it, through a lock
	# held until this step ends, and verify rebuilds there too. Without it the copy is
	# $B/work/$c, and verify rebuilds beside it ($c.verify), which also proves that the
	# bytes do not depend on the folder.
	if [ -n "${WORK_DIR:-}" ]; then
		wroot=$WORK_DIR work=$WORK_DIR/$c
		mkdir -p "$wroot" || die "cannot create --work-dir $wroot"
		[ -d "$wroot" ] && [ ! -L "$wroot" ] && [ -O "$wroot" ] || die "--work-dir $wroot is not a folder of yours"
		exec 9>>"$wroot/.$c.lock" || die "cannot open the lock $wroot/.$c.lock"
		if ! flock -n 9; then
			say "waiting for another build in $work"
			flock 9 || die "cannot lock $wroot/.$c.lock"
		fi
		say "building in $work (--work-dir)"
	else
		wroot=$B/work work=$B/work/$c
		[ -n "${KILN_STAGE_VERIFY:-}" ] && work=$B/work/$c.verify
	fi
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
		# CFLAGS is split on white space (and quotes) by every build system: a folder
		# whose name holds them cannot be mapped, and the build goes on without the map
		case "$m" in
		*[!A-Za-z0-9_./:=+,@%-]*) say "cannot map ${m%=*} in CFLAGS (its name has spaces, quotes or shell characters); its path stays in the binaries"; continue ;;
		esac
		maps="$maps -ffile-prefix-map=$m -fdebug-prefix-map=$m"
	done
	cuda=
	for m in $maps; do cuda="$cuda -Xcompiler=$m"; done

	set -- --set HOME="$work.home" --set SOURCE_DATE_EPOCH="$sde" --set MAX_JOBS="$JOBS" \
		--set CMAKE_POLICY_VERSION_MINIMUM=3.5 --set GIT_CEILING_DIRECTORIES="$wroot" \
		--set CFLAGS="${maps# }" --set CXXFLAGS="${maps# }" --set HIPFLAGS="${maps# }" \
		--set CUDAFLAGS="${cuda# }"
	if [ -n "$version" ]; then
		case "$c" in
		torch) set -- "$@" --set PYTORCH_BUILD_VERSION="$version" --set PYTORCH_BUILD_NUMBER=0 ;;
		*) set -- "$@" --set BUILD_VERSION="$version" ;;
		esac
	fi
	case "$BACKEND" in
	gfx) set -- "$@" --set PYTORCH_ROCM_ARCH="$ARCH" --set ROCM_PATH="$ROCM_PATH" --set ROCM_HOME="$ROCM_PATH" --set HIP_PATH="$ROCM_PATH" \
		--set USE_FLASH_ATTENTION="$FLASH" --set GPU_TARGETS="$ARCH" ;;
	cuda) set -- "$@" --keep CUDA_HOME --keep CUDA_PATH --keep CUDACXX --set TORCH_CUDA_ARCH_LIST="$(echo "$ARCH" | tr ';' '\n' | sed 's/^sm_\([0-9]*\)\([0-9]\)\(a*\)$/\1.\2\3/' | tr '\n' ';' | sed 's/;$//')" ;;
	esac
	# a distribution's ROCm (--rocm-path=/usr) keeps its device libraries under lib/llvm-N
	[ "$BACKEND" != gfx ] || ! dl=$(rocmdevlib) || set -- "$@" --set HIP_DEVICE_LIB_PATH="$dl" --set CMAKE_PREFIX_PATH="$ROCM_PATH"
	# the compiler cache keeps its own settings (its folder defaults to the caller's): the
	# caller's CCACHE_* and SCCACHE_* cross envclean -i as settings (--keep cannot: -i
	# starts from its allow-list)
	case "$CACHE" in
	ccache|sccache)
		set -- "$@" --set CMAKE_HIP_COMPILER_LAUNCHER="$CACHE" --set HIP_CLANG_LAUNCHER="$CACHE"
		for v in $(passenv CCACHE_ SCCACHE_); do eval "set -- \"\$@\" --set \"$v=\${$v-}\""; done
		set -- "$@" --set CCACHE_BASEDIR="$work" --set SCCACHE_BASEDIRS="$work"
		[ -n "${CCACHE_DIR:-}" ] || set -- "$@" --set CCACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/ccache"
		[ -n "${SCCACHE_DIR:-}" ] || set -- "$@" --set SCCACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/sccache" ;;
	esac
	# sccache: a server of this stage's own (its port), so its counters are this stage's
	# compiles; compilers reach it through wrappers first on PATH (below)
	if [ "$CACHE" = sccache ]; then
		command -v sccache >/dev/null 2>&1 || die "--cache=sccache, but there is no sccache here (install sccache)"
		[ -z "${DISTRIBUTE:-}" ] || die "--cache=sccache cannot hand its misses to $DISTRIBUTE (sccache has no prefix command); use --cache=ccache with --distribute"
		scport=$(clean -- "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
			die "$PY cannot find a free port for the sccache server"
		set -- "$@" --set SCCACHE_SERVER_PORT="$scport"
		# sccache waits 10 s for its server by default, too short on a loaded builder;
		# a caller's own SCCACHE_CONF is kept
		scwait=
		if [ -z "${SCCACHE_CONF:-}" ]; then
			scwait=", startup timeout 120 s"
			echo 'server_startup_timeout_ms = 120000' >"$work.home/sccache.conf"
			set -- "$@" --set SCCACHE_CONF="$work.home/sccache.conf"
		fi
	fi
	# nvcc on CUDA builds: a wrapper gives each source file its own -frandom-seed (its
	# path in the copy: nvcc otherwise draws module ids at random, so two builds of one
	# file differ), -objtemp (temporary file names hold a process id) and the prefix maps
	# to the host compiler
	# (torch's cpp_extension passes no CFLAGS to nvcc), then runs nvcc, through ccache
	# when it is the cache. setuptools builds reach it as PYTORCH_NVCC, CMake builds as
	# CMAKE_CUDA_COMPILER_LAUNCHER. The wrapper is fixed text; the values come as settings.
	if [ "$BACKEND" = cuda ]; then
		r=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
		[ -x "$r" ] || r=$(command -v nvcc) || r=
		case "$r" in *[!A-Za-z0-9_./+,@%-]*) die "the nvcc path $r holds spaces, quotes or shell characters" ;; esac
		if [ -n "$r" ]; then
			mkdir -p "$B/ccwrap" || die "cannot create $B/ccwrap"
			cat >"$B/ccwrap/nvcc.tmp" <<'EOF2'
#!/bin/sh
# kiln's nvcc for one wheel stage: a seed per source file (its path in the build copy,
# KILN_NVCC_WORK) and the stage's prefix maps, so two builds give the same bytes. As
# PYTORCH_NVCC it runs KILN_NVCC; as CMAKE_CUDA_COMPILER_LAUNCHER ("launch") it runs
# the compiler CMake names. KILN_NVCC_CACHE is the compiler cache, or empty.
set -f
case ${0##*/} in
nvcc) set -- $KILN_NVCC "$@" ;;
esac
# A compile (-c, -dc, -dw) also takes -objtemp: its temporary files, whose names end up
# in the object, are named after the object instead of nvcc's process id.
seed= objtemp=
for a do
	case $a in
	*.cu|*.cpp|*.cc|*.cxx|*.c) case $a in "$KILN_NVCC_WORK"/*) seed=${a#"$KILN_NVCC_WORK"/} ;; *) seed=$a ;; esac ;;
	-c|-dc|-dw|--compile|--device-c|--device-w) objtemp=-objtemp ;;
	esac
done
nv=$1; shift
exec $KILN_NVCC_CACHE "$nv" ${seed:+"-frandom-seed=$seed"} $objtemp $KILN_NVCC_FLAGS "$@"
EOF2
			chmod 755 "$B/ccwrap/nvcc.tmp" && mv -f "$B/ccwrap/nvcc.tmp" "$B/ccwrap/nvcc" &&
				ln -sf nvcc "$B/ccwrap/launch" || die "cannot write $B/ccwrap/nvcc"
			nvcache=
			[ "$CACHE" = ccache ] && nvcache=ccache
			set -- "$@" --set PYTORCH_NVCC="$B/ccwrap/nvcc" --set CMAKE_CUDA_COMPILER_LAUNCHER="$B/ccwrap/launch" \
				--set KILN_NVCC="$r" --set KILN_NVCC_CACHE="$nvcache" --set KILN_NVCC_WORK="$work" \
				--set KILN_NVCC_FLAGS="${cuda# }"
		fi
	fi
	# configure's CC (CC_CMD), when one was given, compiles the stack too
	[ -n "${CC_CMD:-}" ] && set -- "$@" --set CC="$CC_CMD"
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
		for v in $(passenv DISTCC_); do eval "set -- \"\$@\" --set \"$v=\${$v-}\""; done
		set -- "$@" --set DISTCC_HOSTS="$DISTRIBUTE_HOSTS" --set MAX_JOBS="$slots" \
			--set DISTCC_DIR="$work.home/.distcc"
		mkdir -p "$work.home/.distcc"
		dist=distcc ;;
	icecream)
		command -v icecc >/dev/null 2>&1 || die "--distribute=icecream, but there is no icecc here (install icecc)"
		for v in $(passenv ICECC_); do eval "set -- \"\$@\" --set \"$v=\${$v-}\""; done
		dist=icecc ;;
	*) dist= ;;
	esac
	if [ "$CACHE" = sccache ]; then
		# sccache takes no compiler links: one two-line wrapper per compiler, which hands
		# the real compiler to sccache
		masq=$work.home/bin
		mkdir -p "$masq"
		for cc in cc gcc c++ g++ clang clang++ x86_64-linux-gnu-gcc x86_64-linux-gnu-g++ ${CC_CMD:+"${CC_CMD##*/}"}; do
			r=$(command -v "$cc") || continue
			case "$r" in /*\'*|[!/]*) continue ;; esac
			printf '#!/bin/sh\nexec sccache '"'%s'"' "$@"\n' "$r" >"$masq/$cc" && chmod 755 "$masq/$cc" ||
				die "cannot write $masq/$cc"
		done
		set -- "$@" --prepend-path "$masq"
	elif [ -n "$dist" ] || [ "$CACHE" = ccache ]; then
		# compilers called by name (setuptools' CC, a setup.py's own "cc", CMake's) reach the
		# cache and the distributor through a folder of links first on PATH; ccache runs
		# first and hands misses to the distributor (CCACHE_PREFIX)
		masq=$work.home/bin
		mkdir -p "$masq"
		front=$dist
		[ "$CACHE" = ccache ] && front=ccache
		fp=$(command -v "$front") || die "no $front on PATH"
		for cc in cc gcc c++ g++ clang clang++ x86_64-linux-gnu-gcc x86_64-linux-gnu-g++ ${CC_CMD:+"${CC_CMD##*/}"}; do
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
	[ "$CACHE" = sccache ] && scstart "$@"
	case "$build" in
	setup) clean "$@" -- "$PY" setup.py bdist_wheel -d "$out" ;;
	build) clean "$@" -- "$PY" -m build --wheel --no-isolation --outdir "$out" . ;;
	pip) clean "$@" -- "$PY" -m pip wheel --no-deps --no-build-isolation --no-index -w "$out" . ;;
	*) [ "$CACHE" = sccache ] && scstop "$@"; die "${c}_BUILD=$build: use setup, build or pip" ;;
	esac || { [ "$CACHE" = sccache ] && scstop "$@"; die "the build failed (its tree is kept in $work)"; }
	if [ "$CACHE" = ccache ]; then
		ccstats "$@" >"$work.home/ccache.after"
		hitrate "$work.home/ccache.before" "$work.home/ccache.after"
	fi
	if [ "$CACHE" = sccache ]; then
		clean "$@" -- sccache --show-stats --stats-format=json >"$work.home/sccache.json" 2>/dev/null || :
		scstop "$@"
		schitrate "$work.home/sccache.json"
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

# passenv PREFIX...: the names of the exported variables that start with a PREFIX (and
# are plain names), one a line, for the caller to hand over with --set NAME=VALUE
passenv () {
	for p; do
		env | sed -n "s/^\($p[A-Za-z0-9_]*\)=.*/\1/p"
	done | sort -u
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

# scstart [ENVCLEAN-OPTION]...: this stage's sccache server (SCCACHE_SERVER_PORT), started
# in the build's environment so it has the build's storage settings; with --cache-remote
# the server must use that storage: an sccache built without it (Debian 12's has only
# local disk: `sccache --help` lists its storage features) stops the stage in one line
scstart () {
	clean "$@" -- sccache --start-server >"$work.home/sccache.start" 2>&1 ||
		die "sccache could not start its server: $(grep -m 1 -i 'error' "$work.home/sccache.start" || tail -n 1 "$work.home/sccache.start")${CACHE_REMOTE:+ (--cache-remote=$CACHE_REMOTE: is this sccache built with that storage? sccache --help lists its features)}"
	loc=$(clean "$@" -- sccache --show-stats --stats-format=json 2>/dev/null |
		clean -- "$PY" -c 'import json, sys; print(json.load(sys.stdin).get("cache_location", "?"))') || loc=?
	say "sccache: server on port $scport$scwait, storage: $loc"
	case "${CACHE_REMOTE:-}:$loc" in
	:*) ;;
	*:"Local disk"*)
		scstop "$@"
		die "--cache-remote=$CACHE_REMOTE: this sccache ($(sccache --version 2>/dev/null)) stores on local disk only; it has no storage for that URL (sccache --help lists its features; WebDAV needs sccache >= 0.4.0 built with it)" ;;
	esac
}
# scstop [ENVCLEAN-OPTION]...: stop this stage's sccache server
scstop () { clean "$@" -- sccache --stop-server >/dev/null 2>&1 || :; }
# schitrate JSON: sccache's hits in this stage (its own server's counters), in its log and
# the stage's summary line ("sccache 12/40 hits (30%), local disk")
schitrate () {
	clean -- "$PY" -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("sccache: no statistics"); sys.exit(0)
s = d["stats"]
h = sum(s["cache_hits"]["counts"].values())
n = h + sum(s["cache_misses"]["counts"].values())
loc = d.get("cache_location", "?")
where = "local disk" if loc.startswith("Local disk") else loc.split(",")[0].split(":")[0].strip()
print("sccache %d/%d hits (%d%%), %s" % (h, n, 100 * h // n, where) if n else "sccache: no compiles")
' "$1" >"$1.rate" || return 0
	say "$(cat "$1.rate")"
	[ -z "${KILN_STAGE_NOTE:-}" ] || cp "$1.rate" "$KILN_STAGE_NOTE" 2>/dev/null || :
}

# clean [ENVCLEAN-OPTION]... -- CMD...: CMD under envclean, starting from its allow-list
# (-i) plus the profiles: no caller variable (PIP_*, CFLAGS, CMAKE_*, SRCPIN_MIRROR ...)
# and no pip configuration file reaches it; the target Python's folder comes first on PATH
clean () {
	n=$#
	# PROFILES is a "|"-separated list (paths may hold spaces)
	o=$IFS IFS='|'
	for p in $PROFILES; do set -- "$@" --profile="$p"; done
	IFS=$o
	while [ "$n" -gt 0 ]; do set -- "$@" "$1"; shift; n=$((n - 1)); done
	# srcpin's mirror setting crosses the clean environment as a setting, not a word
	if [ -n "${SRCPIN_MIRROR:-}" ]; then
		envclean -i --set PIP_CONFIG_FILE=/dev/null --set SRCPIN_MIRROR="$SRCPIN_MIRROR" \
			--prepend-path "$(dirname "$PY")" "$@"
	else
		envclean -i --set PIP_CONFIG_FILE=/dev/null --prepend-path "$(dirname "$PY")" "$@"
	fi
}

# record W: this component's build-info record, then build-info.json
record () {
	mkdir -p "$B/info"
	{
		echo "COMPONENT=$c"
		[ -d "$src" ] && clean -- srcpin state "$src" 2>/dev/null | grep -E '^(URL|COMMIT|SERIES_DIGEST)='
		[ -f "$B/src/$c.fetched" ] && echo "FETCHED_FROM=$(cat "$B/src/$c.fetched")"
		[ -n "${REF:-}" ] && [ "$step" != system ] && echo "REF=$REF"
		[ "${REF:-}" = @torch ] && [ -f "$B/src/$c.derived" ] && cat "$B/src/$c.derived"
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
	lock
	kiln-stage info -o "$B/build-info.json" "$B/info"
}

# lock: $B/requirements.lock, pip's --require-hashes form: every wheel kiln installed as
# NAME==VERSION --hash=sha256:... (the hash of the file in its build-info record), then
# the target environment's other packages with their exact versions as comments (kiln did
# not install them from a wheel it can hash)
lock () {
	clean -- "$PY" -c '
import importlib.metadata as md, os, re, sys
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
info, hashes = sys.argv[1], {}
for f in sorted(os.listdir(info)):
    if not f.endswith(".info"):
        continue
    kv = {}
    for l in open(os.path.join(info, f), encoding="utf-8"):
        k, _, v = l.rstrip("\n").partition("=")
        kv[k] = v.strip("\x27\"")
    if kv.get("WHEEL") and kv.get("WHEEL_SHA256"):
        hashes[norm(kv["WHEEL"].split("-")[0])] = kv["WHEEL_SHA256"]
have, other = [], []
for d in md.distributions():
    n = d.metadata["Name"]
    if not n:
        continue
    (have if norm(n) in hashes else other).append((norm(n), d.version))
print("# the target environment, locked by kiln (%s); install with" % sys.executable)
print("#   pip install --require-hashes --no-deps -r requirements.lock")
for n, v in sorted(set(have)):
    print("%s==%s --hash=sha256:%s" % (n, v, hashes[n]))
for n, v in sorted(set(other)):
    print("# %s==%s (not installed by kiln: no wheel hash)" % (n, v))
' "$B/info" >"$B/requirements.lock.$c.tmp" || die "cannot list the packages of $PY"
	mv -f "$B/requirements.lock.$c.tmp" "$B/requirements.lock"
}

# cfq TEXT: TEXT as a quoted Containerfile string ("..." with \ " $ escaped)
cfq () { printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"$]/\\&/g')"; }
# cfjoin INSTRUCTION: the "KEY"=VALUE lines of stdin as one Containerfile INSTRUCTION,
# continued over lines (nothing when stdin is empty)
cfjoin () { sed -e '$!s/$/ \\/' -e "1s/^/$1 /" -e '1!s/^/\t/'; }

# step_oci: not a stage's step: the container builder, for step_image and
# step_imagecheck (and so in stack.image's key). podman, else buildah (one that runs);
# storage as the host's podman has it (CONTAINERS_STORAGE_CONF, storage.conf, else the
# driver podman picked when it made the storage: naming one would fail on a storage
# another driver made, "database configuration mismatch"); chroot isolation: a
# COPY-only Containerfile runs nothing. imgid REF prints REF's image ID (64 hex digits)
# and fails when the storage has no such image; imgdigest REF its digest; imgstore the
# driver and the storage root.
step_oci () {
	if podman --version >/dev/null 2>&1; then bld=podman
	elif buildah --version >/dev/null 2>&1; then bld=buildah
	else die "--image needs podman or buildah (apt-get install podman)"; fi
	if [ "$bld" = podman ]; then
		imgid () { "$bld" image inspect --format '{{.Id}}' "$1"; }
		imgdigest () { "$bld" image inspect --format '{{.Digest}}' "$1"; }
		imgstore () { "$bld" info --format '{{.Store.GraphDriverName}} {{.Store.GraphRoot}}'; }
	else
		imgid () { "$bld" inspect --type image --format '{{.FromImageID}}' "$1"; }
		imgdigest () { "$bld" inspect --type image --format '{{.FromImageDigest}}' "$1"; }
		imgstore () { "$bld" info --format '{{.store.GraphDriverName}} {{.store.GraphRoot}}'; }
	fi
}

# step_imagecheck: not a stage's step: the image rule (ninja/stack.ninja) runs it before
# kiln-stage run, every time ninja runs stack.image's edge. The stamp's ID is the image
# this stage built; when the storage no longer has it under $IMAGE (podman rmi, or the
# name moved to another image), the stamp is removed, so the stage builds it again, and
# KILN_EXPLAIN and the stage's summary say why. It also writes the edge's depfile
# (STAMP.d): the storage's list of images, so that ninja runs this edge again when that
# list changes (an rmi, a build, a tag, a pull) and a plain no-op stays a no-op otherwise.
step_imagecheck () {
	KILN_STAGE=stack.image
	step_oci
	st=${stampf:?imagecheck STEP COMP SETTINGS STAMP}
	# the depfile: DRIVER-images/images.json under the storage's root (its format:
	# make's, spaces and # escaped with a backslash, $ doubled)
	# (a list not there yet keeps the edge running until the build has made it)
	store=$(imgstore 2>"$st.d.err") || store=$(imgstore 2>"$st.d.err") || store="failed: $(tail -n 1 "$st.d.err")"
	rm -f "$st.d.err"
	list=${store#* }/${store%% *}-images/images.json
	case "$store" in
	?*' '/*) ;;
	*) say "stack.image: $bld info: $store; ninja will not notice the image leaving the storage"
	   list= ;;
	esac
	{
		printf '%s:' "$(printf '%s' "$st" | sed 's/[ #]/\\&/g; s/\$/$$/g')"
		[ -z "$list" ] || printf ' %s' "$(printf '%s' "$list" | sed 's/[ #]/\\&/g; s/\$/$$/g')"
		echo
	} >"$st.d.tmp" && mv -f "$st.d.tmp" "$st.d"
	[ -f "$st" ] || return 0
	id=$(sed -n 's/^ID=//p' "$st" | tr -d "\"'")
	case "$id" in
	sha256:*) ;;
	*) return 0 ;;
	esac
	cur=$(imgid "$IMAGE" 2>/dev/null) || cur=
	[ "sha256:$cur" != "$id" ] || return 0
	if [ -z "$cur" ]; then why="input image missing: $IMAGE ($id) is not in $bld's storage"
	else why="input image changed: $IMAGE is now sha256:$cur, not $id, the image this stage built"; fi
	# the reason, for kiln-stage run's KILN_EXPLAIN line and summary note (STAMP.why)
	printf '%s\n' "$why" >"$st.why"
	rm -f "$st"
}

step_image () {
	# this step lists its own folders ($B/wheels/*.picked, $B/stamp/*) with globs
	set +f
	step_oci
	# the stage's identity (kiln-stage run --id-file, the stamp's ID): the image's ID,
	# written last
	rm -f "$B/image.id"
	# the base: pinned by ID or digest (image_BASE); another image under that name stops here
	from=scratch
	if [ "$BASE_REF" != scratch ]; then
		id=$(imgid "$BASE_REF" 2>/dev/null) ||
			die "image base $BASE_REF is not in $bld's storage (pull or import it first)"
		dg=$(imgdigest "$BASE_REF" 2>/dev/null) || dg=
		want=${BASE#sha256:}
		case "$id" in
		"$want"*) from=$id ;;
		*) [ "$BASE" = "$dg" ] && from=$id ||
			die "image base $BASE_REF is sha256:$id, but the pins say image_BASE=$BASE (check the new base, then update image_BASE)" ;;
		esac
	fi
	# the lock and build-info once more, whole: install stages that ran side by side may
	# each have seen only part of the other's records
	lock
	kiln-stage info -o "$B/build-info.json" "$B/info" || die "no build-info records in $B/info"
	ctx=$B/image.ctx
	# one tree, one COPY, one layer: what the image adds, at the paths it has there
	root=$ctx/root
	rm -rf "$ctx" && mkdir -p "$root/opt/kiln/wheels" || die "cannot create $ctx"
	prefix=$(clean -- "$PY" -c 'import sys; print(sys.prefix)') || die "$PY does not run"
	bprefix=$(clean -- "$PY" -c 'import sys; print(sys.base_prefix)')
	site=$(clean -- "$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	{
		echo "# Generated by kiln (stage stack.image); edits are lost"
		echo "FROM $from"
		# the wheels kiln installed, the lock and build-info
		for p in "$B"/wheels/*.picked; do
			[ -f "$p" ] || continue
			w=$(cat "$p")
			cp "$w" "$root/opt/kiln/wheels/" || die "cannot copy $w"
		done
		for f in requirements.lock build-info.json; do
			if [ -f "$B/$f" ]; then cp "$B/$f" "$root/opt/kiln/$f" || die "cannot copy $B/$f"; fi
		done
		# the target environment: the venv whole at its own path, else its site-packages
		if [ "$prefix" != "$bprefix" ]; then
			mkdir -p "$root$prefix" && cp -a "$prefix/." "$root$prefix/" || die "cannot copy $prefix"
			printf '"VIRTUAL_ENV"=%s\n"PATH"=%s\n' "$(cfq "$prefix")" \
				"$(cfq "$prefix/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")" >"$ctx/env"
		else
			mkdir -p "$root$site" && cp -a "$site/." "$root$site/" || die "cannot copy $site"
			: >"$ctx/env"
		fi
		echo 'COPY ["root/", "/"]'
		# the profiles' runtime environment, as envclean applies it to the stages
		o=$IFS IFS='|'
		for f in $PROFILES; do
			IFS=$o
			kiln-stage env "$f" -- sh -c 'for k in $KILN_KEYS; do eval "v=\${KILN_K_$k}"; printf "%s\t%s\n" "$k" "$v"; done'
		done | while IFS="$(printf '\t')" read -r k v; do
			printf '"%s"=%s\n' "$k" "$(cfq "$v")"
		done >>"$ctx/env"
		IFS=$o
		{
			echo '"org.opencontainers.image.title"='"$(cfq "$IMAGE")"
			if [ "$from" != scratch ]; then
				echo '"org.opencontainers.image.base.name"='"$(cfq "$BASE_REF")"
				echo '"org.opencontainers.image.base.digest"='"$(cfq "${dg:-sha256:$id}")"
			fi
			kiln-stage labels --format=containerfile "$B/info" >"$ctx/bi" ||
				die "no build-info records in $B/info"
			sed 's/^LABEL //' "$ctx/bi"
			# the key of every stage the image holds
			for st in "$B"/stamp/*; do
				n=${st##*/}
				case "$n" in stack.image|*.missing) continue ;; esac
				k=$(sed -n 's/^KEY=//p' "$st" | head -n 1 | tr -d '"')
				if [ -n "$k" ]; then echo "\"kiln.stage.$n\"=\"$k\""; fi
			done
		} >"$ctx/labels"
		# one ENV and one LABEL instruction, a KEY=VALUE a line: each instruction is a
		# step of the build, and on vfs storage each step copies the whole base
		cfjoin ENV <"$ctx/env"
		cfjoin LABEL <"$ctx/labels"
	} >"$ctx/Containerfile" || die "cannot write $ctx/Containerfile"
	rm -f "$ctx/env" "$ctx/labels" "$ctx/bi"
	# --layers=false: no cached image for each step, one commit at the end
	"$bld" build --isolation=chroot --layers=false --format=oci -f "$ctx/Containerfile" -t "$IMAGE" "$ctx" ||
		die "$bld build failed (the context is kept in $ctx)"
	id=$(imgid "$IMAGE") || die "$bld has no image $IMAGE after the build"
	cp "$ctx/Containerfile" "$B/Containerfile.tmp" && mv -f "$B/Containerfile.tmp" "$B/Containerfile"
	rm -rf "$ctx"
	echo "image $IMAGE sha256:$id"
	printf 'sha256:%s\n' "$id" >"$B/image.id.tmp" && mv -f "$B/image.id.tmp" "$B/image.id"
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

step_srctorch () {
	# C.src for C_REF=@torch: the commit torch's patched tree pins (torchpin), then the
	# ordinary src step; a source-only component's build-info record says where it came
	# from (a built one's install record does too). The stage's summary line (and so
	# KILN_EXPLAIN's output) says what @torch resolved to, and what it was before.
	was=
	[ ! -f "$B/src/$c.derived" ] || was=$(sed -n 's/^REF_RESOLVED=//p' "$B/src/$c.derived")
	REF=$(torchpin) || exit 1
	note="${c}_REF=@torch: $REF from torch's $(sed -n 's/^REF_FROM=torch://p' "$B/src/$c.derived")"
	case "$was" in
	''|"$REF") ;;
	*) note="$note, was $was" ;;
	esac
	[ -z "${KILN_STAGE_NOTE:-}" ] || printf '%s\n' "$note" >"$KILN_STAGE_NOTE"
	step_src
	mkdir -p "$B/info"
	{ echo "COMPONENT=$c"; echo "URL=$URL"; echo "COMMIT=$commit"; echo "REF=@torch"; cat "$B/src/$c.derived"; } |
		kiln-stage kv -o "$B/info/$c.info"
}

step_sdk () {
	# its helpers are defined here, inside it, so that they are part of this step's text
	# (its stages' key), not of the shared preamble every stage's key holds
	# sdkwheels: rocm_KIND=wheels, TheRock's rocm[libraries,devel,device-gfxNNNN...]==VERSION
	# ($REQ: one device extra per --arch) from rocm_INDEX alone into the target Python;
	# $ROCM_PATH ($B/rocm/wheels) becomes a link to `rocm-sdk path --root`, which also links
	# the device wheels' files into that tree (TheRock: rocm_sdk/_devel.py). Every rocm
	# package installed goes into build-info and requirements.lock with its version and hash.
	sdkwheels () {
		case "$INDEX" in
		http://*|https://*) set -- --index-url "$INDEX" ;;
		*) [ -d "$INDEX" ] || die "rocm_INDEX=$INDEX is neither a URL nor a folder of wheels"
		   set -- --no-index --find-links "$INDEX" ;;
		esac
		mkdir -p "$B/rocm" "$B/info"
		# resolve first (pip only warns about an extra a package lacks): every --arch must
		# have its device extra, or nothing is installed
		clean -- "$PY" -m pip install --disable-pip-version-check --dry-run --report "$B/rocm/pip-plan.json" "$@" "$REQ" ||
			die "pip cannot resolve $REQ from $INDEX (does it have that rocm release?); nothing was installed"
		sdkextras
		sdkdigests
		clean -- "$PY" -m pip install --disable-pip-version-check --report "$B/rocm/pip-report.json" "$@" "$REQ" ||
			die "pip could not install $REQ from $INDEX"
		root=$(clean -- rocm-sdk path --root) || die "rocm-sdk path --root failed (are TheRock's rocm wheels installed in $PY?)"
		[ -f "$root/.info/version" ] || [ -d "$root/lib" ] || die "rocm-sdk path --root names $root, which is not a ROCm SDK"
		ln -sfn "$root" "$ROCM_PATH.new" && mv -T "$ROCM_PATH.new" "$ROCM_PATH"
		echo "ROCm from wheels ($REQ): $root"
		sdkrecord
	}
	# sdkextras: pip's plan ($B/rocm/pip-plan.json) has rocm's device extra for every --arch
	# (pip itself only warns about a missing extra), or the step stops with one line
	sdkextras () {
		clean -- "$PY" -c '
import json, re, sys
plan, index, archs = json.load(open(sys.argv[1])), sys.argv[2], [a.split(":")[0] for a in sys.argv[3].split(";")]
m = [i["metadata"] for i in plan.get("install", []) if re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower() == "rocm"]
if not m:
    # already installed at that version: pip plans nothing; its own metadata says
    import importlib.metadata as md
    try:
        d = md.distribution("rocm")
        m = [{"version": d.version, "provides_extra": d.metadata.get_all("Provides-Extra") or []}]
    except md.PackageNotFoundError:
        sys.exit("rocm_INDEX=%s: no package rocm to install (TheRock'"'"'s selector package)" % index)
have = sorted(e for e in m[0].get("provides_extra", []) if e.startswith("device-"))
for a in archs:
    if "device-" + a not in have:
        sys.exit("rocm_INDEX=%s: rocm %s there has no extra device-%s (it has %s): no GPU code for %s would be installed; use an index and release that build %s, or a ROCm from env/rocm-channels.env" %
                 (index, m[0]["version"], a, ", ".join(have) or "none", a, a))
' "$B/rocm/pip-plan.json" "$INDEX" "$ARCH_LIST" || die "nothing was installed (above)"
	}
	# sdkdigests: every file pip would fetch, held to the digest of its first fetch (trust on
	# first use, $B/rocm.lock, as the tarballs): a package changed on the index is refused
	# here, before anything is installed
	sdkdigests () {
		clean -- "$PY" -c '
import json, sys
for i in json.load(open(sys.argv[1])).get("install", []):
    d = i.get("download_info", {})
    h = d.get("archive_info", {}).get("hashes", {}).get("sha256") or d.get("archive_info", {}).get("hash", "").partition("sha256=")[2]
    if d.get("url") and h:
        print(d["url"], h)
' "$B/rocm/pip-plan.json" >"$B/rocm/pip-plan.digests" || die "cannot read pip's plan $B/rocm/pip-plan.json"
		while read -r u h; do
			kiln-stage sdklock "$B/rocm.lock" "$u" --sha256="$h" >/dev/null || die "nothing was installed (above)"
		done <"$B/rocm/pip-plan.digests"
	}
	# sdkrecord: one build-info record per rocm package pip installed (pip's --report: name,
	# version, the file and its sha256), then build-info.json and requirements.lock
	sdkrecord () {
		clean -- "$PY" -c '
import json, os, re, sys
rep, info = json.load(open(sys.argv[1])), sys.argv[2]
for i in rep.get("install", []):
    m = i.get("metadata", {})
    n = re.sub(r"[-_.]+", "-", m.get("name", "")).lower()
    if not (n == "rocm" or n.startswith("rocm-sdk")):
        continue
    d = i.get("download_info", {})
    h = d.get("archive_info", {}).get("hashes", {}).get("sha256", "")
    with open(os.path.join(info, "rocm~%s.info" % n), "w") as f:
        f.write("COMPONENT=rocm\nDIST=%s\nVERSION=%s\nWHEEL=%s\nWHEEL_SHA256=%s\n" %
                (n, m.get("version", ""), os.path.basename(d.get("url", "")), h))
    print("rocm package: %s==%s sha256:%s" % (n, m.get("version", ""), h))
' "$B/rocm/pip-report.json" "$B/info" || die "cannot read pip's report $B/rocm/pip-report.json"
		lock
		kiln-stage info -o "$B/build-info.json" "$B/info"
	}
	# the ROCm SDK tarball (rocm_URL), unpacked into $ROCM_PATH: kiln-stage unpack fills a
	# temporary folder beside it and renames it last, so a folder of that name is always
	# whole. A URL is downloaded first (with resume) into $B/rocm/dl; a path or file:// is
	# read where it is. Pinned with rocm_SHA256, that digest is checked; without it (AMD
	# publishes none) the first fetch locks the digest in $B/rocm.lock, and every later
	# one must match it (trust on first use).
	[ "$KIND" = wheels ] && { sdkwheels; return; }
	lock=$B/rocm.lock
	case "$URL" in
	http://*|https://*|ftp://*)
		if [ -n "$SHA256" ]; then
			tar=$B/rocm/dl/$SHA256.tar
			kiln-stage fetch "$URL" --sha256="$SHA256" -o "$tar" || die "cannot fetch the ROCm SDK $URL"
		else
			tar=$B/rocm/dl/${ROCM_PATH##*/}.tar
			kiln-stage fetch "$URL" --lock="$lock" -o "$tar" || die "cannot fetch the ROCm SDK $URL"
		fi ;;
	file://*) tar=${URL#file://} ;;
	*) tar=$URL ;;
	esac
	sha=$SHA256
	[ -n "$sha" ] || sha=$(kiln-stage sdklock "$lock" "$URL" "$tar") || die "the ROCm SDK $URL is refused (above)"
	kiln-stage unpack "$tar" --into="$ROCM_PATH" --sha256="$sha" --layout=rocm ||
		die "cannot unpack the ROCm SDK $URL"
	v=$(cat "$ROCM_PATH/.info/version" 2>/dev/null) ||
		v=$(sed -n 's/.*"rocm[-_]version": *"\([^"]*\)".*/\1/p' "$ROCM_PATH/share/therock/therock_manifest.json" 2>/dev/null | head -n 1)
	echo "ROCm ${v:-(version not recorded)} in $ROCM_PATH (sha256 $sha)"
	set +f
	for k in "$ROCM_PATH"/.kpack/*.kpack; do [ -f "$k" ] && echo "kernel pack: ${k#"$ROCM_PATH"/}"; done
	set -f
}

# rocmdevlib: the folder of the device libraries (ockl.bc ...) of the ROCm at $ROCM_PATH, in
# the layouts configure knows (rocm_layout): /opt/rocm's amdgcn/bitcode, TheRock's
# llvm/amdgcn/bitcode, Debian's and Ubuntu's lib/llvm-N/lib/clang/N/amdgcn/bitcode,
# Fedora's lib64/clang/N/amdgcn/bitcode; fails when none holds them
rocmdevlib () {
	set +f
	for d in "$ROCM_PATH/amdgcn/bitcode" "$ROCM_PATH/llvm/amdgcn/bitcode" "$ROCM_PATH"/lib/llvm-*/lib/clang/*/amdgcn/bitcode \
		"$ROCM_PATH"/llvm/lib/clang/*/lib/amdgcn/bitcode "$ROCM_PATH"/lib64/clang/*/amdgcn/bitcode "$ROCM_PATH"/lib/clang/*/amdgcn/bitcode; do
		[ -f "$d/ockl.bc" ] && { set -f; printf '%s\n' "$d"; return 0; }
	done
	set -f
	return 1
}

step_check () {
	# its helpers are defined here, inside it, so that they are part of this step's text
	# (its stages' key), not of the shared preamble every stage's key holds
	# rocmlibs: ROCm's GPU libraries under $ROCM_PATH, one path a line: lib/, lib64/ and a
	# distribution's multiarch folder (Debian, Ubuntu: lib/x86_64-linux-gnu)
	rocmlibs () {
		set +f
		for d in "$ROCM_PATH/lib" "$ROCM_PATH/lib64" "$ROCM_PATH"/lib/*-linux-gnu; do
			for f in "$d"/librocblas.so* "$d"/libhipblaslt.so* "$d"/librocsparse.so* "$d"/libMIOpen.so* \
				"$d"/librocrand.so* "$d"/librocfft.so* "$d"/librocsolver.so* "$d"/libhipsparselt.so* \
				"$d"/librccl.so* "$d"/libhipfft.so* "$d"/libhiprand.so*; do
				[ -f "$f" ] && [ ! -L "$f" ] && printf '%s\n' "$f"
			done
		done
		set -f
	}
	# libname FILE: the library's own name (rocBLAS, hipBLASLt, ...)
	libname () {
		case "${1##*/}" in
		librocblas.*) echo rocBLAS ;; libhipblaslt.*) echo hipBLASLt ;; librocsparse.*) echo rocSPARSE ;;
		libMIOpen.*) echo MIOpen ;; librocrand.*) echo rocRAND ;; librocfft.*) echo rocFFT ;;
		librocsolver.*) echo rocSOLVER ;; libhipsparselt.*) echo hipSPARSELt ;; librccl.*) echo RCCL ;;
		libhipfft.*) echo hipFFT ;; libhiprand.*) echo hipRAND ;; *) echo "${1##*/}" ;;
		esac
	}
	# kernfolders FILE: the kernel-library folders of the library FILE (rocBLAS's and
	# hipBLASLt's Tensile code objects: LIBDIR/rocblas/library, Debian's versioned
	# LIBDIR/rocblas/VERSION/library)
	kernfolders () {
		n=${1##*/}; n=${n#lib}; n=${n%%.so*}
		case "$n" in rocblas|hipblaslt) ;; *) return 0 ;; esac
		set +f
		for k in "${1%/*}/$n/library" "${1%/*}/$n"/*/library; do [ -d "$k" ] && printf '%s\n' "$k"; done
		set -f
	}
	# generic A: the family's generic target the loader falls back to (tools/lib/arch.c's
	# arch_table, which this mirrors; code object v6)
	generic () {
		case "${1%%:*}" in
		gfx900|gfx902|gfx904|gfx906|gfx909|gfx90c) echo gfx9-generic ;;
		gfx940|gfx941|gfx942|gfx950) echo gfx9-4-generic ;;
		gfx101[0-3]) echo gfx10-1-generic ;; gfx103[0-6]) echo gfx10-3-generic ;;
		gfx11*) echo gfx11-generic ;; gfx12*) echo gfx12-generic ;;
		esac
	}
	# kpackcheck FILE A: the kernel packs FILE's .rocm_kpack_ref names (search paths such as
	# ../.kpack/blas_lib_@GFXARCH@.kpack, relative to FILE's folder), tried in the loader's
	# order: the exact target (with its features), the bare processor, the family's generic
	# target. Prints each pack a line missing for A; exit 0 when FILE names none
	kpackcheck () {
		LC_ALL=C grep -qaF .rocm_kpack_ref "$1" || return 0
		for t in $(LC_ALL=C grep -oaE '(\.\./)*\.?kpack/[A-Za-z0-9_.+-]*@GFXARCH@[A-Za-z0-9_.+-]*' "$1" | sort -u); do
			found=
			for c in "$2" "${2%%:*}" $(generic "$2"); do
				p=${1%/*}/$(printf '%s' "$t" | sed "s/@GFXARCH@/$c/")
				[ -f "$p" ] && { found=$p; break; }
			done
			[ -n "$found" ] || undot "${1%/*}/$(printf '%s' "$t" | sed "s/@GFXARCH@/$2/")"
		done
	}
	# undot PATH: PATH below $ROCM_PATH with its ../ parts resolved (lib/../.kpack/x: .kpack/x)
	undot () {
		d=${1#"$ROCM_PATH"/} r=
		while [ -n "$d" ]; do
			case "$d" in
			../*) case "$r" in */*) r=${r%/*} ;; *) r= ;; esac; d=${d#../} ;;
			*/*) r=${r:+$r/}${d%%/*}; d=${d#*/} ;;
			*) r=${r:+$r/}$d; d= ;;
			esac
		done
		printf '%s\n' "$r"
	}
	# kernnames DIR A: does the kernel-library folder DIR hold code objects for A by name
	# (Tensile's *_gfxNNNN.co, Kernels.so-*-gfxNNNN[-xnack+].hsaco); prints the targets it has
	kernnames () {
		set +f
		has=$(for f in "$1"/*.co "$1"/*.hsaco; do [ -f "$f" ] && printf '%s\n' "${f##*/}"; done |
			sed -n 's/.*[_-]\(gfx[0-9a-f]*\)\(-xnack[+-]\)*\.\(co\|hsaco\)$/\1/p' | sort -u | tr '\n' ' ' | sed 's/ $//; s/ /, /g')
		set -f
		printf '%s\n' "$has"
		case ", $has, " in *", ${2%%:*}, "*) return 0 ;; esac
		return 1
	}
	# libcheck A FILE: one library for target A, in its three parts: its own code-object
	# bundles (gpucheck cover), the kernel packs it references (.kpack), its kernel-library
	# folders (Tensile). Prints "A: PATH: covered (part)" lines for the log; returns the
	# parts lacking A, "; "-separated, in $lacks
	libcheck () {
		lacks= rel=${2#"$ROCM_PATH"/}
		if out=$(gpucheck cover --target="$1" "$2" 2>&1); then echo "$1: $rel: covered (code-object bundles)"
		else case "$out" in
			*"carry no AMD GPU code"*) echo "$1: $rel: no code-object bundles (host code, or kernel packs)" ;;
			*) has=$(printf '%s\n' "$out" | sed -n 's/^[^;]*) has \([^;]*\).*/\1/p' | head -n 1)
			   fix=$(printf '%s\n' "$out" | sed -n 's/^ *fix: //p' | head -n 1)
			   lacks="its code-object bundles ($rel has ${has:-none}; gpucheck: ${fix:-no fix})" ;;
		esac; fi
		miss=$(kpackcheck "$2" "$1" | tr '\n' ' ')
		if [ -n "$miss" ]; then
			lacks="${lacks:+$lacks; }its kernel pack ${miss% } (missing; install rocm[device-${1%%:*}] or a tarball carrying it)"
		elif LC_ALL=C grep -qaF .rocm_kpack_ref "$2"; then echo "$1: $rel: covered (kernel packs present)"
		fi
		for k in $(kernfolders "$2"); do
			kr=${k#"$ROCM_PATH"/}
			if gpucheck cover --target="$1" "$k" >/dev/null 2>&1; then echo "$1: $kr: covered (kernel library)"; continue; fi
			if has=$(kernnames "$k" "$1"); then echo "$1: $kr: covered (kernel library, by name)"; continue; fi
			lacks="${lacks:+$lacks; }its Tensile kernels ($kr has ${has:-none})"
		done
	}
	# every GPU library of the SDK must carry code each --arch can run (native, the
	# family's generic target, or an ISA-compatible one) in every part: its code-object
	# bundles, its kernel packs, its kernel-library folders. One line per library lacking
	# an arch, naming the parts, before any compile.
	# paths may hold spaces: the lists below are split at newlines only
	IFS='
'
	libs=$(rocmlibs)
	[ -n "$libs" ] || die "$ROCM_PATH has none of ROCm's GPU libraries (rocBLAS, hipBLASLt, rocSPARSE, MIOpen, rocRAND, ...) in lib/, lib64/ or lib/*-linux-gnu/: not a ROCm SDK"
	bad=0
	for a in $(printf '%s\n' "$ARCH" | tr ';' '\n'); do
		n=0 nbad=0
		for f in $libs; do
			n=$((n + 1))
			libcheck "$a" "$f"
			[ -z "$lacks" ] && continue
			say "rocm.check: $(libname "$f") (${f#"$ROCM_PATH"/}) has no code for $a in $lacks; use a ROCm built for $a (env/rocm-channels.env names the channel), the family's generic target, or leave that library's feature off"
			nbad=$((nbad + 1)) bad=1
		done
		echo "$a: $n GPU libraries, $((n - nbad)) covered, $nbad lacking it"
	done
	[ "$bad" = 0 ] || die "the ROCm at $ROCM_PATH lacks code for --arch=$(printf '%s' "$ARCH" | tr ';' ,)"
}

# one line: sh has read it whole before the step runs, so an edit of this file during a
# long stage cannot make the shell read on into changed text
"step_$step"; exit $?
