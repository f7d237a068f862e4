# lib/rocm.sh: the ROCm at $ROCM_PATH as the one probe sees it (kiln-stage rocm-probe,
# tools/kiln-stage/rocmprobe.c: the same as configure's and the generator's). Sourced by
# the wheel, torchconf, cmake and sdk steps.
# needs: lib/base.sh

# rocmdevlib [CLANG]: the folder of the device libraries (ockl.bc ...) of the ROCm at
# $ROCM_PATH (/opt/rocm's amdgcn/bitcode, TheRock's llvm/..., Debian's lib/llvm-N/...,
# Fedora's lib64/rocm/llvm/...); with CLANG, the folder that HIP compiler compiles against
# ($ROCM_PATH/amdgcn/bitcode, else its resource folder's: a distribution's clang); fails
# when none holds them
rocmdevlib () { kiln-stage rocm-probe ${1:+"--clang=$1"} --get=devlib "$ROCM_PATH"; }

# rocmversion: the version of the ROCm at $ROCM_PATH (.info/version, TheRock's manifest,
# HIP's CMake version); fails when none says it
rocmversion () { kiln-stage rocm-probe --get=version "$ROCM_PATH"; }
