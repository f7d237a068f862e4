#!/bin/sh
# fuzz-kpackref.seed.sh DIR: .rocm_kpack_ref sections as rocm-kpack writes them
set -e
k=$(cd "$(dirname "$0")/../tests" && pwd)/kpackify.py
/usr/bin/python3 "$k" ref "$1/ref1" '{"kpack_search_paths":["../.kpack/torch_@GFXARCH@.kpack"],"kernel_name":"lib/libtorch_hip.so"}'
/usr/bin/python3 "$k" ref "$1/ref2" '{"kernel_name":"bin/hipcc","kpack_search_paths":["../.kpack/rocm-gfx1100.kpack","../.kpack/rocm-gfx1200.kpack"]}'
