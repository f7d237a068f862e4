#!/bin/sh
# fuzz-kpack.seed.sh DIR: kpack archives as ROCm's rocm-kpack writes them (zstd-per-kernel
# and none), made by tools/gpucheck/tests/kpackify.py from small code-object stand-ins
set -e
d=$1
here=$(cd "$(dirname "$0")" && pwd)
printf '\177ELF\002\001\001\100\002' >"$d/k0.bin"
head -c 300 /dev/zero >>"$d/k0.bin"
printf '\177ELF\002\001\001\100\003' >"$d/k1.bin"
/usr/bin/python3 "$here/../tests/kpackify.py" archive "$d/zstd.kpack" zstd-per-kernel gfx90a,gfx1100 \
	"lib/libk.so#0=gfx90a=$d/k0.bin" "lib/libk.so#1=gfx1100=$d/k1.bin"
/usr/bin/python3 "$here/../tests/kpackify.py" archive "$d/none.kpack" none 'gfx90a:xnack-' \
	"lib/libk.so#0=gfx90a:xnack-=$d/k0.bin"
rm -f "$d/k0.bin" "$d/k1.bin"
