#!/bin/sh
# rocm-fedora: a system ROCm in Fedora's layout, made under $T/fedora/usr from real clang-19
# artifacts. The layout is Fedora's packaging (major/fedora-rpm-specs at 35a24d1,
# specs/rocm-compilersupport.spec: hipcc in %{_bindir}, the device libraries in
# %{_libdir}/rocm/llvm/lib/clang/%{llvm_maj_ver}/lib/amdgcn; specs/rocrand.spec: the
# libraries in %{_libdir} = /usr/lib64, their CMake configs in lib64/cmake; rocBLAS's
# Tensile folder lib64/rocblas/library). configure recognises it and says where each part
# is; rocm.check judges it with gpucheck cover's rules: a bundle for the family's generic
# target (gfx11-generic, code object v6, as Fedora's rocm_gpu_list_generic builds) covers
# gfx1151 and gfx1100; an xnack+ bundle does not cover gfx90a with XNACK off; the Tensile
# folder is covered when one of its code objects runs.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"
need cc clang-19 clang++-19
U=$T/fedora/usr
DL=$U/lib64/rocm/llvm/lib/clang/22/lib/amdgcn/bitcode
mkdir -p "$U/bin" "$U/lib64/cmake/hip" "$U/lib64/rocblas/library" "$DL" "$U/include/hip" || exit 2
printf '#!/bin/sh\necho "HIP version: 7.2.0"\n' >"$U/bin/hipcc" && chmod 755 "$U/bin/hipcc" || exit 2
printf 'int hipInit(unsigned f) { return (int)f; }\n' >"$T/hip.c"
cc -shared -fPIC -Wl,-soname,libamdhip64.so.7 -o "$U/lib64/libamdhip64.so.7.2.0" "$T/hip.c" &&
	ln -s libamdhip64.so.7.2.0 "$U/lib64/libamdhip64.so.7" || exit 2
printf 'set(PACKAGE_VERSION "7.2.0")\n' >"$U/lib64/cmake/hip/hip-config-version.cmake" &&
	printf 'include(${CMAKE_CURRENT_LIST_DIR}/hip-config-version.cmake)\n' >"$U/lib64/cmake/hip/hip-config.cmake" || exit 2
printf 'int ockl_toy;\n' >"$T/ockl.c"
clang-19 -target amdgcn-amd-amdhsa -mcpu=gfx1100 -nogpulib -c -emit-llvm -o "$DL/ockl.bc" "$T/ockl.c" || exit 2
hip () { clang++-19 -x hip -nogpulib -nogpuinc -fPIC -mcode-object-version=6 "$@" 2>"$T/cc.err" || { cat "$T/cc.err"; notok "clang++-19 $*"; exit 1; }; }
hip --offload-arch=gfx11-generic --offload-arch=gfx90a:xnack+ -c "$KILN_SRC/tests/regress/rocm-blas.hip" -o "$T/blas.o"
clang-19 -shared -fuse-ld=lld -Wl,-soname,librocblas.so.5 -o "$U/lib64/librocblas.so.5.0" "$T/blas.o" &&
	ln -s librocblas.so.5.0 "$U/lib64/librocblas.so.5" || exit 2
# Tensile's code objects, one per arch, named as rocBLAS names them
for a in gfx1100 gfx1151 gfx90a:xnack+; do
	n=$(printf '%s' "$a" | tr : -)
	hip --offload-arch=$a --cuda-device-only --no-gpu-bundle-output -c "$KILN_SRC/tests/regress/rocm-blas.hip" \
		-o "$U/lib64/rocblas/library/TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_$n.co"
done

toy_venv "$T/venv"
mkdir -p "$T/b" && cd "$T/b" || exit 2
conf () {
	"$KSRC/configure" --python="$T/venv/bin/python" --mirror="$T/mirror" --pins="$T/pins.env" --jobs=1 \
		--rocm-path="$U" KILN_BIN="$KILN_BIN" "$@"
}
check "configure --rocm-path=Fedora's /usr --arch=gfx1151" conf --arch=gfx1151
has "Fedora's layout said, each part where Fedora puts it" "$T/.out" "checking for ROCm at $U... yes (ROCm 7.2.0, Fedora's layout (lib64): hipcc $U/bin/hipcc, HIP runtime in $U/lib64, HIP CMake config $U/lib64/cmake/hip, device libraries $DL)"
has "the stages get that ROCm" "$T/b/build/stack.env" "ROCM_PATH=\"$U\""
check "ninja rocm.check: gfx1151 passes" ninja rocm.check
has "gfx1151: rocBLAS's bundles through the family's generic target" "$T/b/build/logs/rocm.check.log" "gfx1151: lib64/librocblas.so.5.0: covered (code-object bundles, through gfx11-generic)"
has "gfx1151: its Tensile folder in lib64" "$T/b/build/logs/rocm.check.log" "gfx1151: lib64/rocblas/library: covered (kernel library)"
check "configure --arch=gfx1100" conf --arch=gfx1100
check "ninja rocm.check: gfx1100 passes" ninja rocm.check
check "configure --arch=gfx90a" conf --arch=gfx90a
exits "ninja rocm.check: gfx90a with XNACK off fails" 1 ninja rocm.check
has "gfx90a: the bundles named with what they have" "$T/.out" "rocm.check: rocBLAS (lib64/librocblas.so.5.0) has no code for gfx90a in its code-object bundles (lib64/librocblas.so.5.0 has gfx11-generic, gfx90a:xnack+; gpucheck: rebuild with PYTORCH_ROCM_ARCH=gfx90a)"
has "gfx90a: and the Tensile folder" "$T/.out" "its Tensile kernels (lib64/rocblas/library has gfx1100, gfx1151, gfx90a:xnack+)"
check "configure --arch=gfx1030" conf --arch=gfx1030
exits "ninja rocm.check: gfx1030 fails" 1 ninja rocm.check
has "gfx1030: rocBLAS named" "$T/.out" "rocm.check: rocBLAS (lib64/librocblas.so.5.0) has no code for gfx1030"
# the wheel stages' HIP_DEVICE_LIB_PATH: ninja/steps/lib/rocm.sh's rocmdevlib, run as written
devlib () {
	ROCM_PATH=$U sh -c 'set -f; . "$1"; rocmdevlib' sh "$KILN_SRC/ninja/steps/lib/rocm.sh"
}
same "the steps' rocmdevlib finds Fedora's device libraries" "$DL" "$(devlib)"
# the older Fedora layout (ROCm 6.0 to 6.2): the device libraries in clang's resource folder
mv "$U/lib64/rocm" "$T/rocm-llvm" && mkdir -p "$U/lib/clang/17/amdgcn" && mv "$T/rocm-llvm/llvm/lib/clang/22/lib/amdgcn/bitcode" "$U/lib/clang/17/amdgcn/" || exit 2
check "configure: the device libraries in lib/clang/N" conf --arch=gfx1151
has "the older device-library folder found" "$T/.out" "device libraries $U/lib/clang/17/amdgcn/bitcode)"
same "the steps' rocmdevlib finds the older folder too" "$U/lib/clang/17/amdgcn/bitcode" "$(devlib)"
