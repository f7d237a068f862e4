# lib/rocm.sh: the ROCm at $ROCM_PATH: where its device libraries are (rocmdevlib).
# Sourced by the wheel step.
# needs: lib/base.sh

# rocmdevlib: the folder of the device libraries (ockl.bc ...) of the ROCm at $ROCM_PATH, in
# the layouts configure knows (its rocm_devlibs, the same list): /opt/rocm's amdgcn/bitcode,
# TheRock's llvm/..., Debian's and Ubuntu's lib/llvm-N/lib/clang/N/amdgcn/bitcode, Fedora's
# lib64/rocm/llvm/lib/clang/N/lib/amdgcn/bitcode (and its older clang/N/amdgcn/bitcode and
# lib64/amdgcn/bitcode); fails when none holds them
rocmdevlib () {
	set +f
	for d in "$ROCM_PATH/amdgcn/bitcode" "$ROCM_PATH/llvm/amdgcn/bitcode" "$ROCM_PATH"/lib/llvm-*/lib/clang/*/amdgcn/bitcode \
		"$ROCM_PATH"/llvm/lib/clang/*/lib/amdgcn/bitcode "$ROCM_PATH"/lib64/rocm/llvm/lib/clang/*/lib/amdgcn/bitcode \
		"$ROCM_PATH"/lib64/clang/*/amdgcn/bitcode "$ROCM_PATH"/lib/clang/*/amdgcn/bitcode "$ROCM_PATH/lib64/amdgcn/bitcode"; do
		[ -f "$d/ockl.bc" ] && { set -f; printf '%s\n' "$d"; return 0; }
	done
	set -f
	return 1
}

