# cmake.sh: C.build for C_BUILD=cmake: configure, build and install a CMake project,
# packed as one tarball.
# sources: lib/base.sh lib/build.sh lib/cache.sh lib/netguard.sh lib/rocm.sh
. "$steps/lib/base.sh"
. "$steps/lib/build.sh"
. "$steps/lib/cache.sh"
. "$steps/lib/netguard.sh"
. "$steps/lib/rocm.sh"
# C_BUILD=cmake's C.build (C.install and C.smoke are the cmakeinstall and cmakesmoke
# steps). Its pieces (cmk_*, step_cmake_*) are defined in this file, so they are part of
# C.build's key and of no other stage's.

# step_cmake: configure, build and install a CMake project into a staging prefix, packed
# as one tarball in $KILN_STAGE_OUT (the stage's output: the stage cache stores it,
# verify compares it). As for a wheel (lib/build.sh): a fresh copy of the prepared tree
# ($B/work/C, or WORK_DIR/C), SOURCE_DATE_EPOCH (the pinned commit's time), the prefix
# maps in CFLAGS/CXXFLAGS/HIPFLAGS, the compiler cache (CMake's compiler launchers), a
# relocatable prefix (/kiln/prefix/C inside the files, $ORIGIN RPATHs)
step_cmake () {
	cmk_work
	cmk_precheck
	cmk_settings
	cacheargs
	buildend step_cmake_offline cmk_run
}

# cmk_run ENVCLEAN-OPTION...: configure, build and pack (buildend hands the options
# over), the network guard stopped after the build, the compiler cache's hit rate said
cmk_run () {
	[ "$CACHE" = ccache ] && ccstats "$@" >"$work.home/ccache.before"
	cmk_configure "$@"
	cmk_build "$@"
	netguard_stop
	if [ "$CACHE" = ccache ]; then
		ccstats "$@" >"$work.home/ccache.after"
		hitrate "$work.home/ccache.before" "$work.home/ccache.after"
	fi
	cmk_pack
}

# cmk_settings: the build's environment (warg): its own HOME, the date, the maps, the
# jobs, the SDK, configure's CC
cmk_settings () {
	warg --set HOME="$work.home" --set SOURCE_DATE_EPOCH="$sde" \
		--set CMAKE_POLICY_VERSION_MINIMUM=3.5 --set GIT_CEILING_DIRECTORIES="$wroot" \
		--set CFLAGS="$maps" --set CXXFLAGS="$maps" --set HIPFLAGS="$maps${devlib:+ $devlib}" \
		--set CUDAFLAGS="$cuda" --set CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
	case "$BACKEND" in
	gfx) warg --set ROCM_PATH="$ROCM_PATH" --set HIP_PATH="$ROCM_PATH" ;;
	cuda) warg --keep CUDA_HOME --keep CUDA_PATH --keep CUDACXX ;;
	esac
	[ -z "${CC_CMD:-}" ] || warg --set CC="$CC_CMD"
}

# cmk_work: the fresh copy of the prepared tree (work, wroot, dir), the commit, its
# time (sde) and the prefix maps (maps, cuda); the build folder is $work/_kiln_build
cmk_work () {
	worktree
	mkdir -p "$work.home/prefix" || die "cannot create $work.home/prefix"
	bd=$work/_kiln_build
	pinsde
	prefixmaps "$B=/kiln/build" "$work=/kiln/src/$c"
}

# cmk_precheck: what is knowable before compiling, one line each: an AMD --arch the
# HIP compiler does not know (clang -print-supported-cpus), and Vulkan turned on
# without glslc (ggml's src/ggml-vulkan/CMakeLists.txt: find_package(Vulkan
# COMPONENTS glslc REQUIRED)); devlib: the HIP compiler's device-library option
cmk_precheck () {
	hc= glslc= vk= devlib=
	for a in $CMAKE_ARGS $ARCH_ARGS; do
		case "$a" in
		-DCMAKE_HIP_COMPILER=*|-DCMAKE_HIP_COMPILER:*=*) hc=${a#*=} ;;
		-DVulkan_GLSLC_EXECUTABLE=*|-DVulkan_GLSLC_EXECUTABLE:*=*) glslc=${a#*=} ;;
		-D*VULKAN=ON|-D*VULKAN:BOOL=ON) vk=${a#-D} ;;
		esac
	done
	if [ -n "$vk" ]; then
		[ -n "$glslc" ] || glslc=$(clean -- sh -c 'command -v glslc') ||
			die "$vk needs glslc, the Vulkan shader compiler, which is not on PATH (Debian: apt-get install glslc; or -DVulkan_GLSLC_EXECUTABLE=PATH in ${c}_CMAKE_ARGS)"
		[ -x "$glslc" ] || die "$vk: -DVulkan_GLSLC_EXECUTABLE=$glslc is not a program"
	fi
	[ "$BACKEND" = gfx ] || return 0
	if [ -z "$hc" ]; then
		for x in "$ROCM_PATH/llvm/bin/clang" "$ROCM_PATH/lib/llvm/bin/clang"; do
			[ -x "$x" ] && { hc=$x; break; }
		done
	fi
	[ -n "$hc" ] || die "no HIP compiler in $ROCM_PATH (llvm/bin/clang); name it with -DCMAKE_HIP_COMPILER=PATH in ${c}_CMAKE_ARGS"
	known=$(clean -- "$hc" --target=amdgcn-amd-amdhsa -nogpulib -print-supported-cpus 2>&1 | sed -n 's/^[[:space:]]*\(gfx[0-9a-z]*\)$/\1/p' | tr '\n' ' ')
	[ -n "$known" ] || die "the HIP compiler $hc lists no AMD GPU targets (clang --target=amdgcn-amd-amdhsa -print-supported-cpus)"
	cmk_devlib "$hc"
	for a in $ARCH; do
		case " $known" in
		*" $a "*) ;;
		*) die "--arch=$a: the HIP compiler $hc does not know it (it knows $(printf '%s' "$known" | tr ' ' '\n' | grep -c .) gfx targets, e.g. $(printf '%s' "$known" | tr ' ' '\n' | tail -n 3 | tr '\n' ' ')); use a newer ROCm or another --arch" ;;
		esac
	done
}

# cmk_devlib CLANG: devlib, the --rocm-device-lib-path CLANG needs. With ROCM_PATH set,
# clang looks for the device libraries (ockl.bc ...) in $ROCM_PATH/amdgcn/bitcode only;
# a distribution's clang keeps them in its resource folder (Debian:
# /usr/lib/llvm-21/lib/clang/21/amdgcn/bitcode), where clang finds them only with no
# ROCM_PATH: "cannot find ROCm device library" at CMake's first HIP test compile. Where
# they are is the one ROCm probe's answer for CLANG (lib/rocm.sh)
cmk_devlib () {
	d=$(rocmdevlib "$1") || return 0
	[ "$d" = "$ROCM_PATH/amdgcn/bitcode" ] || devlib=--rocm-device-lib-path=$d
}

# cmk_configure ENVCLEAN-OPTION...: cmake's configure; a failure is the first "CMake
# Error" line and the message under it, in one line
cmk_configure () {
	set -- "$@" -- cmake -S "$dir" -B "$bd" -G Ninja -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX="/kiln/prefix/$c" -DCMAKE_INSTALL_LIBDIR=lib \
		-DCMAKE_INSTALL_RPATH='$ORIGIN/../lib' -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON
	case "$CACHE" in
	ccache|sccache) for l in C CXX HIP CUDA; do set -- "$@" "-DCMAKE_${l}_COMPILER_LAUNCHER=$CACHE"; done ;;
	esac
	pp=
	for d in $DEPS; do pp="$pp${pp:+;}$B/prefix/${d%.*}"; done
	[ -z "$pp" ] || set -- "$@" "-DCMAKE_PREFIX_PATH=$pp"
	set -- "$@" $ARCH_ARGS $CMAKE_ARGS
	if ! clean "$@" >"$work.home/configure.log" 2>&1; then
		cat "$work.home/configure.log"
		e=$(sed -n '/^CMake Error/{N;s/\n[[:space:]]*/ /;p;q;}' "$work.home/configure.log" | sed "s|$work/||g")
		die "cmake could not configure $c: ${e:-$(tail -n 1 "$work.home/configure.log")}"
	fi
	cat "$work.home/configure.log"
}

# cmk_build ENVCLEAN-OPTION...: build, then install into the staging prefix; the
# program C_CHECK names is copied into its bin/ when the project does not install it
cmk_build () {
	clean "$@" -- cmake --build "$bd" -j "$JOBS" || die "the build failed (its tree is kept in $work)"
	stage=$work.home/prefix
	clean "$@" -- cmake --install "$bd" --prefix "$stage" || die "cmake --install failed (its tree is kept in $work)"
	[ -n "$CHECK_PROG" ] || return 0
	[ -e "$stage/bin/$CHECK_PROG" ] && return 0
	cp_=$(find "$bd" -name "$CHECK_PROG" -type f -perm -u+x | sort | head -n 1)
	[ -n "$cp_" ] || die "${c}_CHECK: the build made no program $CHECK_PROG"
	mkdir -p "$stage/bin" && cp "$cp_" "$stage/bin/$CHECK_PROG" || die "cannot copy $cp_"
}

# cmk_pack: the staging prefix as one tarball, the same bytes for the same key:
# names sorted, times SOURCE_DATE_EPOCH, owner 0, gzip without a name or time
cmk_pack () {
	pinlabel
	tb=$c-${rel:-$(printf '%.12s' "$commit")}+$label.tar.gz
	tar --format=gnu --sort=name --mtime="@$sde" --owner=0 --group=0 --numeric-owner \
		-C "$stage" -cf - . | gzip -9n >"$out/$tb.tmp" && mv -f "$out/$tb.tmp" "$out/$tb" ||
		die "cannot pack $stage into $out/$tb"
	echo "packed $tb: $(tar -tzf "$out/$tb" | grep -c -v '/$') files"
}

# step_cmake_offline: the guard of the CMake build (its settings, with warg), and for aotriton the tree's own target list, checked before compiling
step_cmake_offline () {
	netguard_start
	[ -z "$ngargs" ] || warg $ngargs
	[ -z "${AOTRITON_ARCH:-}" ] || step_cmake_aotriton
}

# step_cmake_aotriton: AOTRITON_TARGET_ARCH of the pinned AOTriton's CMakeLists.txt (a
# cache string since 0.10b; ROCm/aotriton) lists every target aotriton.build builds
step_cmake_aotriton () {
	l=$(sed -n 's/^[[:space:]]*set(AOTRITON_TARGET_ARCH "\([^"]*\)".*/\1/p' "$dir/CMakeLists.txt" 2>/dev/null | head -n 1)
	[ -n "$l" ] || die "$src/CMakeLists.txt sets no AOTRITON_TARGET_ARCH list (AOTriton 0.9b and older name trade names in TARGET_GPUS): pin AOTriton 0.10b or later"
	ll=$(printf '%s' "$l" | tr ';' ,)   # upstream's CMake list, for people
	for a in $AOTRITON_ARCH; do
		case ";$l;" in
		*";$a;"*) ;;
		*) die "the pinned AOTriton (commit $commit) builds $ll (AOTRITON_TARGET_ARCH of its CMakeLists.txt), not $a: pin an AOTriton that lists it (and say so in aotriton_ARCHES), or drop $a from --arch" ;;
		esac
	done
	say "AOTriton builds $AOTRITON_ARCH (its list: $ll)"
	# the targets this AOTriton calls experimental (isArchExperimentallySupported in its
	# v3src/util.cc: gfx1151 in 0.10b-0.11, not from 0.12b): torch uses its kernels there
	# only with TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1 where it runs (read at run time)
	x=$(sed -n '/isArchExperimentallySupported(/,/^}/p' "$dir/v3src/util.cc" 2>/dev/null | grep -o '0x[0-9a-fA-F]*' | sed 's/^0x/gfx/' | tr 'A-F\n' 'a-f ')
	for a in $AOTRITON_ARCH; do
		case " $x" in
		*" $a "*) say "$a: experimental in this AOTriton: torch uses its kernels only with TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1 in the environment it runs in (env/arch/$a.env gives it to stack.smoke)" ;;
		esac
	done
}

