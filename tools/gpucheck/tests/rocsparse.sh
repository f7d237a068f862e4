#!/bin/sh
# gpucheck on Debian's librocsparse0 (1.3 GB, 111 bundles of real ROCm code objects):
# every bundle walked, where clang-offload-bundler-19 --list reports none.
. "$KILN_SRC/tests/lib.sh"
rs=/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1
[ -f "$rs" ] || skip_all "needs librocsparse0 (apt-get install librocsparse0)"
check "targets on librocsparse" gpucheck targets "$rs"
has "111 bundles, 777 entries" "$T/.out" "librocsparse.so.0.1: 111 bundles, 777 entries"
for t in "gfx803 " "gfx900:xnack- " "gfx906:xnack- " "gfx908:xnack- " "gfx90a:xnack+ " "gfx90a:xnack- " "gfx1030 "; do
	has "librocsparse carries $t in every bundle (code object v4)" "$T/.out" "$(printf '  %-24s code-object v4   111 bundles' "$t")"
done
exits "cover gfx1030: covered" 0 gpucheck cover --target=gfx1030 "$rs"
exits "cover gfx1031: not covered" 1 gpucheck cover --target=gfx1031 "$rs"
has "gfx1031: the override to gfx1030" "$T/.out" "HSA_OVERRIDE_GFX_VERSION=10.3.0"
exits "cover gfx1151: not covered" 1 gpucheck cover --target=gfx1151 "$rs"
has "gfx1151: rebuild only" "$T/.out" "fix: rebuild with PYTORCH_ROCM_ARCH=gfx1151"
lacks "gfx1151: no override from another family" "$T/.out" "HSA_OVERRIDE"
exits "cover gfx90a with HSA_XNACK=1" 0 env HSA_XNACK=1 gpucheck cover --target=gfx90a "$rs"

# a cold page cache (issue #18): only the headers are read in, not the 1.3 GB (each page
# fault used to bring in read_ahead_kb around it). This file alone is evicted, with
# POSIX_FADV_DONTNEED; the pages gpucheck brings back in are counted with fincore.
need fincore python3
resident () { fincore -nb -o RES "$rs" | tr -d ' '; }
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$rs"
r0=$(resident)
check "targets on librocsparse from a cold page cache" gpucheck targets "$rs"
r1=$(resident)
[ $((r1 - r0)) -lt $((64 << 20)) ] && ok "cold: it reads $(( (r1 - r0) >> 10 )) KiB of the 1.3 GB (< 64 MiB)" ||
	notok "cold: it reads $(( (r1 - r0) >> 10 )) KiB of the 1.3 GB (want < 64 MiB)"
