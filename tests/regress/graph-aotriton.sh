#!/bin/sh
# graph-aotriton: AOTriton as a stage (tests/regress/toy-aotriton.inc): with
# --with=aotriton the toy AOTriton (a CMake project shaped like ROCm/aotriton) is built at
# the commit the toy torch's cmake/External/aotriton.cmake pins, for the --arch targets it
# has, into build/prefix/aotriton; torch.wheel comes after it and gets the prefix as
# AOTRITON_INSTALLED_PREFIX (its library ends up in torch's wheel, no download); gfx803
# turns flash and memory-efficient attention off in one line; a pinned AOTriton that does
# not list an --arch stops configure, and a tree that does not stops aotriton.build,
# before compiling, one line each.
. "$KILN_SRC/tests/lib.sh"
need cmake clang-19
. "$KILN_SRC/tests/regress/graph-toy.inc"
. "$KILN_SRC/tests/regress/toy-aotriton.inc"


# gfx1151 and gfx803 with AOTriton: built for gfx1151 only
check "configure --arch=gfx1151,gfx803 --with=aotriton" conf --arch=gfx1151,gfx803 --with=aotriton
has "configure says what AOTriton is built for" "$T/.out" "AOTriton is built for gfx1151 (aotriton.build); torch.wheel gets it as AOTRITON_INSTALLED_PREFIX"
has "and what gfx803 gets instead, in one line" "$T/.out" "AOTriton has no kernels for gfx803: there torch's SDPA uses the math kernel"
stagesin "$b/build/stack.ninja" aotriton.src aotriton.patch aotriton.build aotriton.install aotriton.smoke
after "$b/build/stack.ninja" torch.wheel aotriton.install
has "torch.wheel's key: the prefix" "$b/build/keys/torch.wheel" "AOTRITON_PREFIX=\"$(cd "$b/build" && pwd -P)/prefix/aotriton\""
has "torch.wheel's key: memory-efficient attention on" "$b/build/keys/torch.wheel" 'MEM_EFF="1"'
has "aotriton.build's key: AOTriton's own arch variable, its targets only" "$b/build/keys/aotriton.build" "-DAOTRITON_TARGET_ARCH=gfx1151\""
has "aotriton.smoke covers AOTriton's targets only" "$b/build/keys/aotriton.smoke" 'ARCH="gfx1151"'
nb first torch.install
same "torch with AOTriton builds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/first.log"
has "aotriton's commit came from torch's aotriton.cmake" "$b/build/logs/aotriton.src.log" "aotriton_REF=@torch: $AOT_COMMIT (torch's cmake/External/aotriton.cmake)"
has "aotriton.build checked the tree's list before compiling" "$b/build/logs/aotriton.build.log" "AOTriton builds gfx1151 (its list: gfx90a,gfx942,gfx950,gfx1100,gfx1101,gfx1150,gfx1151)"
has "and said that gfx1151 is experimental in it" "$b/build/logs/aotriton.build.log" "gfx1151: experimental in this AOTriton: torch uses its kernels only with TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1"
P=$b/build/prefix/aotriton
check "the prefix has libaotriton_v2.so" test -f "$P/lib/libaotriton_v2.so"
check "its GPU code covers gfx1151" gpucheck cover --target=gfx1151 "$P/lib/libaotriton_v2.so"
exits "and not gfx1100 (not asked for)" 1 gpucheck cover --target=gfx1100 "$P/lib/libaotriton_v2.so"
has "torch's build used the prefix" "$b/build/logs/torch.wheel.log" "Using Preinstalled AOTriton at $(cd "$b/build" && pwd -P)/prefix/aotriton"
lacks "and downloaded nothing" "$b/build/logs/torch.wheel.log" "pre-compiled binary"
tsite=$("$T/venv/bin/python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)
check "the installed torch carries AOTriton's library" test -f "$tsite/lib/libaotriton_v2.so"
check "and its gfx1151 image" test -f "$tsite/lib/aotriton.images/gfx1151.aks2"
nb smoke aotriton.smoke
same "aotriton.smoke passes (gpucheck cover for gfx1151)" 0 "$brc"

nb noop torch.install aotriton.smoke
same "a second run: no work to do" "ninja: no work to do." "$(cat "$T/noop.log")"

# gfx803 alone: AOTriton has nothing for it; without --with the profile turns both off
check "configure --arch=gfx803" conf --arch=gfx803
has "one line: flash and memory-efficient attention off" "$T/.out" \
	"AOTriton has no kernels for gfx803: flash and memory-efficient attention will be off (USE_FLASH_ATTENTION=0 USE_MEM_EFF_ATTENTION=0)"
has "torch.wheel's key: flash off" "$b/build/keys/torch.wheel" 'FLASH="0"'
has "torch.wheel's key: memory-efficient attention off" "$b/build/keys/torch.wheel" 'MEM_EFF="0"'
lacks "no AOTriton stages" "$b/build/stack.ninja" "aotriton."
exits "--with=aotriton for gfx803 alone: 2" 2 conf --arch=gfx803 --with=aotriton
has "says AOTriton has no kernels for it" "$T/.err" "--with=aotriton: AOTriton has no kernels for --arch=gfx803"

# gfx1151 without --with: torch's build would download AOTriton, so the kernels are off
check "configure --arch=gfx1151 (no --with=aotriton)" conf --arch=gfx1151
has "one line: they need AOTriton, which would be downloaded" "$T/.out" \
	"flash and memory-efficient attention for gfx1151 need AOTriton, which torch's build would download: off (USE_FLASH_ATTENTION=0 USE_MEM_EFF_ATTENTION=0); --with=aotriton builds it as a stage"
has "torch.wheel's key: memory-efficient attention off" "$b/build/keys/torch.wheel" 'MEM_EFF="0"'

# a pinned AOTriton that does not list an --arch: configure stops
exits "--arch=gfx1152 --with=aotriton, not in aotriton_ARCHES: 2" 2 conf --arch=gfx1152 --with=aotriton
has "one line naming the pin and the list" "$T/.err" \
	"the pinned AOTriton (aotriton_REF=@torch) builds gfx90a;gfx942;gfx950;gfx1100;gfx1101;gfx1150;gfx1151 (aotriton_ARCHES, its AOTRITON_TARGET_ARCH), not --arch=gfx1152"
exits "--with=aotriton for --arch=cpu: 2" 2 conf --arch=cpu --with=aotriton
has "says AOTriton is AMD's" "$T/.err" "--with=aotriton: AOTriton is AMD's"

# aotriton_ARCHES says gfx1152, the tree does not: aotriton.build stops before compiling
sed -i 's/^aotriton_ARCHES=.*/aotriton_ARCHES="gfx1151;gfx1152"/' "$T/pins-aot.env"
check "configure --arch=gfx1152 with an aotriton_ARCHES that claims it" conf --arch=gfx1152 --with=aotriton
nb tree aotriton.build
same "aotriton.build fails" 1 "$brc"
has "one line: the tree's own list" "$T/tree.log" "kiln: aotriton.build: the pinned AOTriton (commit $AOT_COMMIT) builds gfx90a,gfx942,gfx950,gfx1100,gfx1101,gfx1150,gfx1151 (AOTRITON_TARGET_ARCH of its CMakeLists.txt), not gfx1152"
lacks "before configuring" "$b/build/logs/aotriton.build.log" "Configuring done"
