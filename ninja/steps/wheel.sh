# wheel.sh: C.wheel: one wheel from the prepared tree, built the way its release is, in
# a fresh copy, offline, under envclean.
# sources: lib/base.sh lib/tree.sh lib/build.sh lib/cache.sh lib/netguard.sh lib/rocm.sh
. "$steps/lib/base.sh"
. "$steps/lib/tree.sh"
. "$steps/lib/build.sh"
. "$steps/lib/cache.sh"
. "$steps/lib/netguard.sh"
. "$steps/lib/rocm.sh"

# step_wheel: one wheel from the prepared tree, in named pieces (step_wheel_NAME, in
# this file, so part of the wheel stages' key only): the work tree, the version, the
# prefix maps, the build's settings, the compiler cache, the nvcc wrapper, the
# distributed compiler, the build backend, the requirements check, and the build itself.
# The pieces hand envclean's options on through $wargs (warg, lib/build.sh), which
# buildend (lib/build.sh) hands to the build as its arguments.
step_wheel () {
	treesubdir "$src"
	worktree
	step_wheel_version
	step_wheel_maps
	step_wheel_settings
	step_wheel_cache
	step_wheel_nvcc
	step_wheel_hip
	step_wheel_distribute
	step_wheel_offline
	step_wheel_aotriton
	step_wheel_triton
	buildend step_wheel_backend step_wheel_build
}

# step_wheel_build ENVCLEAN-OPTION...: the requirements check and the build itself, with
# the build's envclean options (buildend hands them over); the network guard stopped
step_wheel_build () {
	step_wheel_requirements "$@"
	step_wheel_run "$@"
	netguard_stop
}


step_wheel_version () {
	pinsde
	# the version: a release plus a local label saying how it was built (pinlabel); with
	# no version tag the release is the source's version.txt as written (a development
	# snapshot stays a pre-release)
	pinlabel
	if [ -z "$rel" ] && [ -f "$dir/version.txt" ]; then
		rel=$(sed -n '1{s/[+[:space:]].*//;p;}' "$dir/version.txt")
	fi
	version=
	[ -n "$rel" ] && version=$rel+$label
	say "version ${version:-(the project's own: no version tag at $commit and no version.txt)}"
}

step_wheel_maps () {
	# file names in objects and debug info: the copy, the build folder and the target
	# Python's prefix are written as fixed paths, so two build folders give the same bytes
	pyprefix=$(clean -- "$PY" -c 'import sys; print(sys.prefix)') || die "$PY does not run"
	prefixmaps "$pyprefix=/kiln/python" "$B=/kiln/build" "$work=/kiln/src/$c"
	# CMake run by a setup.py (torchaudio 2.6's tools/setup_helpers/extension.py: cmake,
	# then cmake --build . --target install) links with the build tree's RPATH, and its
	# install step removes that RPATH in place: NULs of the build path's length stay in
	# .dynstr, so the .so depends on the folder (audio.wheel.verify differed in
	# _torchaudio.so). CMAKE_BUILD_WITH_INSTALL_RPATH links with the install RPATH from the
	# start, leaving nothing to edit. The project's cmake line takes no -D from here, so a
	# toolchain file says it, named by CMAKE_TOOLCHAIN_FILE in the environment (CMake 3.21+:
	# the default for a new build tree; cmake-env-variables(7)). torch's own build is left
	# as upstream makes it.
	[ "$c" = torch ] && return 0
	printf 'set(CMAKE_BUILD_WITH_INSTALL_RPATH ON)\n' >"$work.home/kiln-rpath.cmake" ||
		die "cannot write $work.home/kiln-rpath.cmake"
	warg --set CMAKE_TOOLCHAIN_FILE="$work.home/kiln-rpath.cmake"
}

step_wheel_settings () {
	# the build's environment: its own HOME, the dates, the jobs, the maps, the version
	# (torch reads PYTORCH_BUILD_VERSION, setup.py builds of vision and audio
	# BUILD_VERSION), and the GPU targets. -g0 last: setuptools compiles an extension with
	# Python's own CFLAGS ahead of these (Debian's python3.11 sysconfig: "-g -fwrapv -O2
	# ..."; setuptools 66.1.1's customize_compiler appends the environment's), so a wheel
	# carried DWARF it was never meant to ship: the CUDA extension's _C.abi3.so went from
	# 182 KB to 8.4 MB, 8.28 MB of it .debug_* sections (issue 44). gcc takes the last -g
	# option, so a CMake debug build (its -g comes after CFLAGS) keeps its debug info.
	warg --set HOME="$work.home" --set SOURCE_DATE_EPOCH="$sde" --set MAX_JOBS="$JOBS" \
		--set CMAKE_POLICY_VERSION_MINIMUM=3.5 --set GIT_CEILING_DIRECTORIES="$wroot" \
		--set CFLAGS="${maps:+$maps }-g0" --set CXXFLAGS="${maps:+$maps }-g0" --set HIPFLAGS="$maps" \
		--set CUDAFLAGS="$cuda"
	if [ -n "$version" ]; then
		case "$c" in
		torch) warg --set PYTORCH_BUILD_VERSION="$version" --set PYTORCH_BUILD_NUMBER=0 ;;
		*) warg --set BUILD_VERSION="$version" ;;
		esac
	fi
	case "$BACKEND" in
	gfx) warg --set PYTORCH_ROCM_ARCH="$ARCH_CMAKE" --set ROCM_PATH="$ROCM_PATH" --set ROCM_HOME="$ROCM_PATH" --set HIP_PATH="$ROCM_PATH" \
		--set USE_FLASH_ATTENTION="$FLASH" --set GPU_TARGETS="$ARCH_CMAKE" ;;
	cuda) warg --keep CUDA_HOME --keep CUDA_PATH --keep CUDACXX --set TORCH_CUDA_ARCH_LIST="$ARCH_CUDA" ;;
	esac
	# configure's CC (CC_CMD), when one was given, compiles the stack too
	if [ -n "${CC_CMD:-}" ]; then warg --set CC="$CC_CMD"; fi
	# a distribution's ROCm (--rocm-path=/usr) keeps its device libraries under lib/llvm-N
	[ "$BACKEND" != gfx ] || ! dl=$(rocmdevlib) || warg --set HIP_DEVICE_LIB_PATH="$dl" --set CMAKE_PREFIX_PATH="$ROCM_PATH"
}

step_wheel_cache () {
	# the compiler cache's settings (cacheargs, lib/cache.sh); HIP compiles reach it
	# through step_wheel_hip's launcher
	cacheargs
	# sccache: a server of this stage's own (its port), so its counters are this stage's
	# compiles; compilers reach it through wrappers first on PATH (below)
	if [ "$CACHE" = sccache ]; then
		[ -z "${DISTRIBUTE:-}" ] || die "--cache=sccache cannot hand its misses to $DISTRIBUTE (sccache has no prefix command); use --cache=ccache with --distribute"
		scport=$(clean -- "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
			die "$PY cannot find a free port for the sccache server"
		warg --set SCCACHE_SERVER_PORT="$scport"
	fi
}

step_wheel_nvcc () {
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
			warg --set PYTORCH_NVCC="$B/ccwrap/nvcc" --set CMAKE_CUDA_COMPILER_LAUNCHER="$B/ccwrap/launch" \
				--set KILN_NVCC="$r" --set KILN_NVCC_CACHE="$nvcache" --set KILN_NVCC_WORK="$work" \
				--set KILN_NVCC_FLAGS="${cuda# }"
		fi
	fi
}

step_wheel_hip () {
	# ROCm builds: a launcher gives each HIP compile its own -cuid (clang's compilation-unit
	# ID): clang's default hashes the absolute source and object paths, so another build
	# folder gives other bytes, and -fuse-cuid=none makes every object define the same
	# __hip_cuid_ symbol, so two objects of one library do not link (clang-19). The ID is
	# a digest of the source and object paths in the build copy: the same in every build
	# folder, one per compile (as ROCm/TheRock build_tools/cuid_launcher.py does). CMake's
	# HIP language runs it as CMAKE_HIP_COMPILER_LAUNCHER, hipcc (torch's hip_add_library,
	# the cpp_extension builds of vision and audio) as HIP_CLANG_LAUNCHER, where hipcc
	# has it; either way it runs the compiler cache, when there is one.
	[ "$BACKEND" = gfx ] || return 0
	mkdir -p "$B/ccwrap" || die "cannot create $B/ccwrap"
	step_wheel_hiplauncher >"$B/ccwrap/hiplaunch.$c.tmp" && chmod 755 "$B/ccwrap/hiplaunch.$c.tmp" &&
		mv -f "$B/ccwrap/hiplaunch.$c.tmp" "$B/ccwrap/hiplaunch" || die "cannot write $B/ccwrap/hiplaunch"
	hipcache=
	case "$CACHE" in ccache|sccache) hipcache=$CACHE ;; esac
	warg --set CMAKE_HIP_COMPILER_LAUNCHER="$B/ccwrap/hiplaunch" --set HIP_CLANG_LAUNCHER="$B/ccwrap/hiplaunch" \
		--set KILN_HIP_CACHE="$hipcache" --set KILN_HIP_WORK="$work" --set KILN_HIP_WORKP="$(cd "$work" && pwd -P)"
}

# step_wheel_hiplauncher: the launcher's text (fixed; the values come as settings)
step_wheel_hiplauncher () {
	cat <<'EOF2'
#!/bin/sh
# kiln's HIP launcher for one wheel stage: "hiplaunch COMPILER ARG...". A HIP compile (-c
# with --offload-arch, -x hip or a .hip/.cu source) without a cuid of its own gets
# -cuid=ID, ID the digest of its source and object paths in the build copy (KILN_HIP_WORK,
# or its physical path KILN_HIP_WORKP): the same in every build folder, one per compile.
# KILN_HIP_CACHE is the compiler cache, or empty.
set -f
comp=$1
shift
c= hip= own= src= out= prev=
for a do
	case $prev in -o) out=$a ;; -x) [ "$a" = hip ] && hip=1 ;; esac
	case $a in
	-c) c=1 ;;
	--offload-arch=*|--cuda-gpu-arch=*) hip=1 ;;
	-cuid=*|-fuse-cuid=*) own=1 ;;
	-o?*) out=${a#-o} ;;
	-*) ;;
	*.hip|*.cu) hip=1 src=$a ;;
	*.cpp|*.cc|*.cxx|*.c) [ -n "$src" ] || src=$a ;;
	esac
	prev=$a
done
rel () {
	case $1 in /*) p=$1 ;; *) p=$PWD/$1 ;; esac
	case $p in "$KILN_HIP_WORK"/*) p=${p#"$KILN_HIP_WORK"/} ;; "$KILN_HIP_WORKP"/*) p=${p#"$KILN_HIP_WORKP"/} ;; esac
	printf '%s' "$p"
}
if [ -n "$c" ] && [ -n "$hip" ] && [ -z "$own" ] && [ -n "$src" ]; then
	id=$(printf '%s\n%s\n' "$(rel "$src")" "$(rel "${out:-$src.o}")" | sha256sum | cut -c 1-16)
	set -- "$@" "-cuid=$id"
fi
exec $KILN_HIP_CACHE "$comp" "$@"
EOF2
}

step_wheel_distribute () {
	# team caches (issue 20): the compiler cache's remote storage, then the distributed
	# compiler behind it; none of them changes what is compiled, so none is in the key
	case "$CACHE" in
	ccache) [ -z "${CACHE_REMOTE:-}" ] || warg --set CCACHE_REMOTE_STORAGE="$CACHE_REMOTE" ;;
	sccache)
		case "${CACHE_REMOTE:-}" in
		redis://*) warg --set SCCACHE_REDIS="$CACHE_REMOTE" --set SCCACHE_REDIS_ENDPOINT="$CACHE_REMOTE" ;;
		http://*|https://*) warg --set SCCACHE_WEBDAV_ENDPOINT="$CACHE_REMOTE" ;;
		esac ;;
	esac
	masq=
	case "${DISTRIBUTE:-}" in
	distcc)
		command -v distcc >/dev/null 2>&1 || die "--distribute=distcc, but there is no distcc here (install distcc)"
		slots=$(DISTCC_HOSTS=$DISTRIBUTE_HOSTS distcc -j 2>/dev/null) || slots=0
		[ "$slots" -gt "$JOBS" ] 2>/dev/null || slots=$JOBS
		say "distcc: $DISTRIBUTE_HOSTS ($slots slots); preprocessing stays local"
		for v in $(passenv DISTCC_); do eval "warg --set \"$v=\${$v-}\""; done
		warg --set DISTCC_HOSTS="$DISTRIBUTE_HOSTS" --set MAX_JOBS="$slots" \
			--set DISTCC_DIR="$work.home/.distcc"
		mkdir -p "$work.home/.distcc"
		dist=distcc ;;
	icecream)
		command -v icecc >/dev/null 2>&1 || die "--distribute=icecream, but there is no icecc here (install icecc)"
		for v in $(passenv ICECC_); do eval "warg --set \"$v=\${$v-}\""; done
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
		warg --prepend-path "$masq"
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
			warg --set CCACHE_PREFIX="$dist"
		elif [ -n "$dist" ]; then
			warg --set CMAKE_C_COMPILER_LAUNCHER="$dist" --set CMAKE_CXX_COMPILER_LAUNCHER="$dist"
		fi
		warg --prepend-path "$masq"
	fi
}

step_wheel_backend () {
	# the build its release uses: BUILD (setup, build or pip) when the pin names one, else
	# what the tree declares (kiln-stage backend): setup.py bdist_wheel, or a PEP 517
	# backend run by `python -m build --wheel --no-isolation` (scikit-build-core: torch
	# from 2.14, issue 29), whose requirements the deps stage installed. scikit-build-core
	# honours .gitignore: a file the prepared tree holds that git ignores inside the
	# package (one a patch or hipify wrote, like TheRock's torch/_rocm_init.py) would be
	# dropped from the wheel, so each is force-included (-Cwheel.force-include.SRC=DST).
	# scikit-build-core reads MAX_JOBS as CMAKE_BUILD_PARALLEL_LEVEL.
	build=$BUILD backend=
	if [ -z "$build" ]; then
		how=$(kiln-stage backend "$dir" 2>"$work.home/backend.err") ||
			die "$(sed 's/^kiln-stage: //' "$work.home/backend.err")"
		build=${how%% *}
		[ "$build" = "$how" ] || backend=${how#* }
	fi
	: >"$work.home/force-include"
	if [ "$build" = build ]; then
		warg --set CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
		pkg=${IMPORT%%.*}
		if [ -n "$pkg" ] && [ -d "$dir/$pkg" ]; then
			(cd "$dir" && GIT_CEILING_DIRECTORIES=$wroot git ls-files --others --ignored --exclude-standard -- "$pkg") |
				LC_ALL=C sort >"$work.home/force-include" || die "git cannot list the ignored files of $dir/$pkg"
		fi
	fi
	say "build: $build${backend:+ ($backend)}$([ -s "$work.home/force-include" ] && printf ', force-including %s' "$(tr '\n' ' ' <"$work.home/force-include")")"
}

step_wheel_requirements () {
	# the target Python must import what this build compiles against, and nothing else:
	# asked in the environment the build gets, from the tree it runs in (the source, of
	# which the build folder is an exact copy). A component that builds against nothing
	# (torch) has nothing to check; without --module the check would look for torch,
	# which torch's own source folder holds. Its build requirements are the deps stage's.
	mods=
	for m in $MODULES; do mods="$mods --module=$m"; done
	if [ -n "$mods" ]; then
		clean "$@" -- envclean --check --python="$PY" --cwd="$src${SUBDIR:+/$SUBDIR}" $mods ||
			die "envclean --check found problems with $PY in $src${SUBDIR:+/$SUBDIR} (above); fix them, then run ninja again"
	fi
}

# innerlog TREE: the inner build's .ninja_log (the largest in TREE: torch's CMake build
# leaves one in build/) copied to $KILN_STAGE_NINJALOG, from which kiln-stage run puts
# the inner build's steps into build/trace.json
innerlog () {
	[ -n "${KILN_STAGE_NINJALOG:-}" ] || return 0
	innerf=$(find "$1" -name .ninja_log -type f -printf '%s %p\n' 2>/dev/null | sort -rn | sed -n '1s/^[0-9]* //p')
	[ -z "$innerf" ] || cp "$innerf" "$KILN_STAGE_NINJALOG" 2>/dev/null || :
}

# step_wheel_run ENVCLEAN-OPTION...: the build, with the compiler cache's counters
step_wheel_run () {
	cd "$dir" || die "no $dir"
	[ "$CACHE" = ccache ] && ccstats "$@" >"$work.home/ccache.before"
	[ "$CACHE" = sccache ] && scstart "$@"
	rc=0
	case "$build" in
	setup) clean "$@" -- "$PY" setup.py bdist_wheel -d "$out" || rc=$? ;;
	build) step_wheel_pep517 "$@" || rc=$? ;;
	pip) clean "$@" -- "$PY" -m pip wheel --no-deps --no-build-isolation --no-index -w "$out" . || rc=$? ;;
	*) [ "$CACHE" = sccache ] && scstop "$@"; die "${c}_BUILD=$build: use setup, build or pip" ;;
	esac
	innerlog "$work"
	if [ "$rc" != 0 ]; then
		[ "$CACHE" = sccache ] && scstop "$@"
		die "the build failed (its tree is kept in $work)"
	fi
	if [ "$CACHE" = ccache ]; then
		ccstats "$@" >"$work.home/ccache.after"
		hitrate "$work.home/ccache.before" "$work.home/ccache.after"
	fi
	if [ "$CACHE" = sccache ]; then
		clean "$@" -- sccache --show-stats --stats-format=json >"$work.home/sccache.json" 2>/dev/null || :
		scstop "$@"
		schitrate "$work.home/sccache.json"
	fi
}

# step_wheel_pep517 ENVCLEAN-OPTION...: python -m build --wheel --no-isolation, with the
# force-included files
step_wheel_pep517 () {
	set -- "$@" -- "$PY" -m build --wheel --no-isolation --outdir "$out"
	while IFS= read -r f; do set -- "$@" "-Cwheel.force-include.$f=$f"; done <"$work.home/force-include"
	clean "$@" .
}

# step_wheel_offline: the build's settings that make a network attempt fail the stage
# (netguard_start: the proxies, PIP_NO_INDEX)
step_wheel_offline () {
	netguard_start
	[ -z "$ngargs" ] || warg $ngargs
	step_wheel_inputs
}

# step_wheel_inputs: each pinned input (C_INPUTS' NAME=URL#sha256=HEX, unpacked by
# C.inputs into $B/inputs/SHA256) as the variable NAME of the build; an archive with one
# top folder (llvm-HASH-ubuntu-x64/) is that folder
step_wheel_inputs () {
	for w in ${INPUTS:-}; do
		n=${w%%=*} h=${w##*#sha256=}
		d=$B/inputs/$h
		[ -d "$d" ] || die "$n: $d is missing (C.inputs unpacks it there): run ninja $c.inputs"
		set +f
		set -- "$d"/*
		set -f
		[ $# = 1 ] && [ -d "$1" ] && d=$1
		warg --set "$n=$d"
		say "$n=$d (a pinned input, sha256 $h)"
	done
}

# step_wheel_aotriton: torch's attention kernels as configure planned them
# (tools/kiln-stage/aotriton.c): USE_FLASH_ATTENTION comes from step_wheel_settings,
# USE_MEM_EFF_ATTENTION from here; with aotriton built, torch's
# cmake/External/aotriton.cmake installs the prefix AOTRITON_INSTALLED_PREFIX names
# instead of downloading AOTriton's runtime and image packs
step_wheel_aotriton () {
	[ "$BACKEND" = gfx ] || return 0
	warg --set USE_MEM_EFF_ATTENTION="${MEM_EFF:-0}"
	[ -n "${AOTRITON_PREFIX:-}" ] || return 0
	[ -f "$AOTRITON_PREFIX/lib/libaotriton_v2.so" ] ||
		die "no lib/libaotriton_v2.so in $AOTRITON_PREFIX (aotriton.install puts it there): run ninja aotriton.install"
	warg --set AOTRITON_INSTALLED_PREFIX="$AOTRITON_PREFIX"
	say "AOTriton from $AOTRITON_PREFIX (AOTRITON_INSTALLED_PREFIX)"
}

# step_wheel_triton: triton's offline build, as its setup.py documents it
# (triton-lang/triton setup.py, is_offline_build): TRITON_OFFLINE_BUILD=1, so it downloads
# nothing and takes LLVM, JSON and pybind11 from LLVM_SYSPATH, JSON_SYSPATH and
# PYBIND11_SYSPATH (triton_ENV, or triton_INPUTS' pinned archives) or stops early; and
# for ROCm no proton, whose build wants CUDA's CUPTI headers
step_wheel_triton () {
	[ "$c" = triton ] || return 0
	warg --set TRITON_OFFLINE_BUILD=1
	[ "$BACKEND" != gfx ] || warg --set TRITON_BUILD_PROTON=OFF
}
