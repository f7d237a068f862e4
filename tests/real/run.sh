#!/bin/sh
# tests/real/run.sh: the real-upstream tier (ninja check-real; opt-in). Two parts, each
# Debian's own sources and torch, no GPU, no GitHub, no PyPI:
#   debian  tests/real/bookworm.sh, on this machine (Debian 12): the debian track (torch
#           1.13.1, vision 0.14.1), hipify on torch 1.13.1's tree; about 10 minutes idle,
#           30 to 40 on a shared 2-core machine;
#   trixie  tests/real/trixie.sh, in a Debian 13 root made with mmdebstrap and cached: kiln
#           built there, the trixie track (torch 2.6.0, vision 0.21.0, audio 2.6.0, Python
#           3.13), hipify on torch 2.6.0's tree for gfx803 and gfx1151; needs root; about
#           10 minutes to make the root once, then 1 to 2 hours on a shared 2-core machine.
#   ggml    tests/real/ggml-vulkan.sh: ggml built by the graph's CMake kind with
#           GGML_VULKAN=ON, test-backend-ops on Mesa's lavapipe.
#   flash   tests/real/flash-aiter.sh (only when KILN_REAL_TRACKS names it): AITER's
#           pure-Python package and flash-attention's Triton AMD wheel through the graph,
#           offline (unshare -n), from mirrors of the pinned commits.
#   ggmlhip tests/real/ggml-hip.sh (opt-in: KILN_GGML_HIP=1 adds it to the default list):
#           ggml with GGML_HIP=ON against Debian sid's ROCm, in a sid root; needs root;
#           about 600 MB downloaded once, then an hour or more of compiling on 2 cores.
#   torchrocm tests/real/torch-rocm-configure.sh, then tests/real/torch-rocm-subset.sh
#           (opt-in: KILN_TORCH_ROCM=1 adds it to the default list): torch 2.6.0 from
#           Debian's source, configured against sid's ROCm for gfx803, gfx1151 and both,
#           a subset compiled, killed and resumed; needs root; about 1.5 GB downloaded
#           once, then about an hour on 2 cores (issue 42, docs/torch-rocm.md).
# KILN_REAL_TRACKS (default "debian trixie ggml") picks the parts. Each prints ok / not ok lines
# and its figures (in $KILN_REAL_DIR/figures and $KILN_REAL_DIR/trixie/figures); both are
# resumable (KILN_REAL_FRESH=1 starts over). Exit 0 when every part passed.
set -u
here=$(cd "$(dirname "$0")" && pwd) || exit 2
rc=0
dflt="debian trixie ggml"
[ "${KILN_GGML_HIP:-0}" = 1 ] && dflt="$dflt ggmlhip"
[ "${KILN_TORCH_ROCM:-0}" = 1 ] && dflt="$dflt torchrocm"
for p in ${KILN_REAL_TRACKS:-$dflt}; do
	case "$p" in
	debian) echo "# real: debian (Debian 12, this machine)"; sh "$here/bookworm.sh" || rc=1 ;;
	trixie) echo "# real: trixie (Debian 13, a root made with mmdebstrap)"; sh "$here/trixie.sh" || rc=1 ;;
	ggml) echo "# real: ggml (CMake, GGML_VULKAN=ON, test-backend-ops on lavapipe)"; sh "$here/ggml-vulkan.sh" || rc=1 ;;
	flash) echo "# real: flash (AITER and flash-attention's Triton AMD wheel, offline)"; sh "$here/flash-aiter.sh" || rc=1 ;;
	ggmlhip) echo "# real: ggmlhip (CMake, GGML_HIP=ON, Debian sid's ROCm in a root made with mmdebstrap)"
		KILN_GGML_HIP=1 sh "$here/ggml-hip.sh" || rc=1 ;;
	torchrocm) echo "# real: torchrocm (torch 2.6.0 from Debian's source, sid's ROCm, gfx803 and gfx1151)"
		KILN_TORCH_ROCM=1 sh "$here/torch-rocm-configure.sh" || rc=1
		KILN_TORCH_ROCM=1 sh "$here/torch-rocm-subset.sh" || rc=1 ;;
	*) echo "not ok real: KILN_REAL_TRACKS names '$p' (debian, trixie, ggml, flash, ggmlhip, torchrocm)"; rc=1 ;;
	esac
done
exit $rc
