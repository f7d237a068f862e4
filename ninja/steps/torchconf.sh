# torchconf.sh: torch.configure (torch_SUBSET, issue 42): torch's own CMake configure,
# ROCm on for the --arch targets, on a fresh copy of the prepared tree (pristine + series +
# hipify) in $B/work/torch; what it found (every ROCm library and its version) in the
# log, in $B/torch/configure.id (the stage's ID) and in build-info. torch.subset
# (torchsubset.sh) builds in the tree it leaves.
# sources: lib/base.sh lib/build.sh lib/cache.sh lib/rocm.sh
. "$steps/lib/base.sh"
. "$steps/lib/build.sh"
. "$steps/lib/cache.sh"
. "$steps/lib/rocm.sh"

# torchenv: the environment of torch's configure and of its build, as envclean options
# (warg): both steps read the one file, so the build sees what the configure saw.
# PYTORCH_ROCM_ARCH is how torch's cmake/public/LoadHIP.cmake takes the targets
# (torch_hip_get_arch_list); HIP_CLANG_PATH tells hipcc, which FindHIP runs for every
# .hip source, where clang is when ROCM_PATH has no llvm/bin (Debian: /usr/lib/llvm-N/bin,
# the LLVM whose resource folder holds the device libraries); CMake 4 needs
# CMAKE_POLICY_VERSION_MINIMUM for torch 2.6's older third-party CMake files
torchenv () {
	prefixmaps "$B=/kiln/build" "$work=/kiln/src/$c"
	warg --set HOME="$work.home" --set SOURCE_DATE_EPOCH="$sde" --set CMAKE_POLICY_VERSION_MINIMUM=3.5 \
		--set CFLAGS="$maps" --set CXXFLAGS="$maps" --set MAX_JOBS="$JOBS" \
		--set CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
	if [ "$BACKEND" = gfx ]; then
		warg --set ROCM_PATH="$ROCM_PATH" --set HIP_PATH="$ROCM_PATH" \
			--set PYTORCH_ROCM_ARCH="$ARCH_CMAKE"
		if [ ! -x "$ROCM_PATH/llvm/bin/clang++" ]; then
			dl=$(rocmdevlib) || die "no ROCm device libraries (ockl.bc) under $ROCM_PATH"
			hcp=${dl%/lib/clang/*}/bin
			[ -x "$hcp/clang++" ] || die "no clang++ beside the device libraries in $dl ($hcp)"
			warg --set HIP_CLANG_PATH="$hcp" --set HIP_DEVICE_LIB_PATH="$dl"
		fi
	fi
	cacheargs
	for e in $ENV; do warg --set "$e"; done
}

# torchmodules: -DCMAKE_MODULE_PATH for a ROCm whose FindHIP.cmake is not where
# LoadHIP.cmake adds it ($ROCM_PATH/lib/cmake/hip): Debian's lib/x86_64-linux-gnu/cmake/hip
torchmodules () {
	[ "$BACKEND" = gfx ] && [ ! -f "$ROCM_PATH/lib/cmake/hip/FindHIP.cmake" ] || return 0
	set +f
	for f in "$ROCM_PATH"/lib/*/cmake/hip/FindHIP.cmake "$ROCM_PATH"/lib64/cmake/hip/FindHIP.cmake; do
		[ -f "$f" ] && { set -f; printf '%s\n' "-DCMAKE_MODULE_PATH=${f%/*}"; return 0; }
	done
	set -f
	die "no FindHIP.cmake under $ROCM_PATH/lib (Debian: apt-get install libamdhip64-dev)"
}

step_torchconf () {
	worktree
	mkdir -p "$B/torch" "$B/info" || die "cannot create $B/torch"
	rm -f "$B/torch/configure.id"
	pinsde
	torchenv
	bd=$work/build
	set --
	while IFS= read -r a; do set -- "$@" "$a"; done <"$wargs"
	set -- "$@" -- cmake -S "$work" -B "$bd" -G Ninja -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX=/kiln/prefix/torch -DPython_EXECUTABLE="$PY" $(torchmodules)
	case "$CACHE" in
	ccache|sccache) set -- "$@" -DCMAKE_C_COMPILER_LAUNCHER="$CACHE" -DCMAKE_CXX_COMPILER_LAUNCHER="$CACHE" ;;
	esac
	[ "$BACKEND" = gfx ] && set -- "$@" -DUSE_ROCM=ON
	set -- "$@" $CMAKE_ARGS
	say "configure: $(printf '%s ' "$@" | sed 's/.* -- //')"
	t0=$(date +%s)
	if ! clean "$@" >"$work.home/configure.log" 2>&1; then
		cat "$work.home/configure.log"
		e=$(sed -n '/^CMake Error/{N;s/\n[[:space:]]*/ /;p;q;}' "$work.home/configure.log" | sed "s|$work/||g")
		die "torch's cmake could not configure: ${e:-$(tail -n 1 "$work.home/configure.log")}"
	fi
	cat "$work.home/configure.log"
	torchfound "$work.home/configure.log" $(($(date +%s) - t0))
}

# torchfound LOG SECONDS: what torch's configure found, one KEY=VALUE a line (the first
# of each name: LoadHIP.cmake runs twice), into $B/torch/configure.found and
# $B/info/torch.info (build-info.json): the targets, the ROCm version LoadHIP read, each
# library find_package_and_print_version printed ("rocblas VERSION: 4.4.1"; empty: not
# found), the USE_ switches of torch's summary. The stage's ID ($B/torch/configure.id)
# is that record's digest
torchfound () {
	n=$(grep -c '^build ' "$bd/build.ninja") || n=0
	f=$B/torch/configure.found
	{
		echo "COMPONENT=$c"
		clean -- srcpin state "$src" 2>/dev/null | grep -E '^(URL|COMMIT|SERIES_DIGEST)='
		echo "ARCH=$ARCH_ARG"
		echo "CONFIGURE_SECONDS=$2"
		echo "NINJA_EDGES=$n"
		sed -n 's/^Building PyTorch for GPU arch: \(.*\)/ROCM_ARCH=\1/p; s/^ROCM_VERSION_DEV: \(.*\)/ROCM_VERSION=\1/p' "$1"
		sed -n 's/^HIP_VERSION_\(MAJOR\|MINOR\): \(.*\)/HIP_VERSION_\1=\2/p' "$1"
		sed -n 's/^\([A-Za-z][A-Za-z0-9_-]*\) VERSION: *\(.*\)$/\1 \2/p' "$1" | while read -r l v; do
			printf 'ROCM_LIB_%s=%s\n' "$(printf '%s' "$l" | tr -c 'A-Za-z0-9\n' _)" "${v:-not found}"
		done
		sed -n 's/^--   \(USE_[A-Z0-9_]*\)[[:space:]]*: \(.*\)$/\1=\2/p' "$1" | sort -u -t= -k1,1
	} | awk -F= '!seen[$1]++' >"$f.tmp" && mv -f "$f.tmp" "$f" || die "cannot write $f"
	say "torch's configure found ($2 s, $n ninja edges):"
	grep -E '^(ROCM|HIP)' "$f" | sed 's/^/kiln:   /' >&2
	kiln-stage kv -o "$B/info/torch.info" <"$f" || die "cannot write $B/info/torch.info"
	kiln-stage info -o "$B/build-info.json" "$B/info" || die "cannot write $B/build-info.json"
	grep -v '^CONFIGURE_SECONDS=' "$f" | sha256sum | cut -c1-64 >"$B/torch/configure.id.tmp" &&
		mv -f "$B/torch/configure.id.tmp" "$B/torch/configure.id" || die "cannot write $B/torch/configure.id"
}
