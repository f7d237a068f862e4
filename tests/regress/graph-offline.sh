#!/bin/sh
# graph-offline: nothing downloads inside a build stage. The wheel and CMake stages run
# their builds with http_proxy, https_proxy and ALL_PROXY pointing at kiln-stage netguard
# (a loopback proxy that refuses and records every request) and PIP_NO_INDEX=1: the toy
# torch (tests/regress/toy-aotriton.inc) that downloads AOTriton's runtime the way torch's
# cmake/External/aotriton.cmake does fails its stage in one line naming the URL (https:
# from the build's log; http: the request itself), also when the build went on without
# it; with AOTriton's prefix given (--with=aotriton) it builds; the toy AOTriton whose
# CMake configure downloads an image pack fails aotriton.build the same way; and
# configure --allow-network is a setting, not a key.
. "$KILN_SRC/tests/lib.sh"
need cmake clang-19
. "$KILN_SRC/tests/regress/graph-toy.inc"
. "$KILN_SRC/tests/regress/toy-aotriton.inc"

# guards: the netguard processes of this build folder still running
guards () { for p in /proc/[0-9]*; do { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q "netguard $b/" && echo "${p#/proc/}"; done; return 0; }
URL=https://github.com/ROCm/aotriton/releases/download/0.12b/aotriton-0.12b-manylinux_2_28_x86_64-rocm7.0-shared.tar.gz

# torch's build downloads AOTriton when memory-efficient attention is on without a prefix
printf 'torch_ENV="USE_MEM_EFF_ATTENTION=1"\n' >>"$T/pins-aot.env"
check "configure --arch=gfx1151, memory-efficient attention forced on (torch_ENV)" conf --arch=gfx1151
has "stack.env: the guard is on" "$b/build/stack.env" 'NETWORK="guard"'
nb dl torch.wheel
same "the torch build that downloads fails" 1 "$brc"
has "one line naming the URL it tried" "$T/dl.log" \
	"kiln: torch.wheel: the build tried to download $URL (1 request(s) refused by kiln-stage netguard): nothing downloads inside a build stage; give it as a pinned input, or configure --allow-network"
has "the build's own log has the refused request" "$b/build/logs/torch.wheel.log" "Tunnel connection failed: 403"
has "the log says the build had no network" "$b/build/logs/torch.wheel.log" "no network for this build: its proxy is kiln-stage netguard on 127.0.0.1:"
check "no stamp" test ! -e "$b/build/stamp/torch.wheel"
same "the guard ended with the stage" "" "$(guards)"

# a build that tries, fails to download and goes on: still a failing stage
printf 'torch_ENV="USE_MEM_EFF_ATTENTION=1 AOTOY_OPTIONAL=1"\n' >>"$T/pins-aot.env"
check "configure: the toy goes on without the download" conf --arch=gfx1151
nb dlon torch.wheel
same "a build that went on after its download failed still fails the stage" 1 "$brc"
has "the build itself went on" "$b/build/logs/torch.wheel.log" "going on without it"
has "one line naming the URL" "$T/dlon.log" "kiln: torch.wheel: the build tried to download $URL (1 request(s)"

# plain http: the request names the URL itself
printf 'torch_ENV="USE_MEM_EFF_ATTENTION=1 AOTOY_URL=http://example.invalid/aotriton/runtime.tar.gz"\n' >>"$T/pins-aot.env"
check "configure: an http URL" conf --arch=gfx1151
nb http torch.wheel
same "an http download fails the stage" 1 "$brc"
has "one line naming the http URL" "$T/http.log" "kiln: torch.wheel: the build tried to download http://example.invalid/aotriton/runtime.tar.gz (1 request(s)"

# with AOTriton's prefix given, the same torch builds without the network
check "configure --with=aotriton" conf --arch=gfx1151 --with=aotriton
nb prefix torch.install
same "with the prefix given, torch builds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/prefix.log"
has "from the prefix" "$b/build/logs/torch.wheel.log" "Using Preinstalled AOTriton at"
same "no guard left running" "" "$(guards)"

# a CMake stage: the toy AOTriton's configure downloads an image pack
printf 'aotriton_CMAKE_ARGS="-DAOTOY_FETCH=ON"\n' >>"$T/pins-aot.env"
check "configure: AOTriton's configure downloads" conf --arch=gfx1151 --with=aotriton
nb cmk aotriton.build
same "aotriton.build fails" 1 "$brc"
has "one line naming the image pack's URL" "$T/cmk.log" \
	"kiln: aotriton.build: the build tried to download https://github.com/ROCm/aotriton/releases/download/0.12b/aotriton-0.12b-images-amd-gfx115x.tar.gz (1 request(s) refused"
sed -i '/^aotriton_CMAKE_ARGS=/d' "$T/pins-aot.env"

# --allow-network: a setting (stack.env), not a key: nothing rebuilds
check "configure back" conf --arch=gfx1151 --with=aotriton
nb again torch.install
same "back to a good pin: builds" 0 "$brc"
check "configure --allow-network" conf --arch=gfx1151 --with=aotriton --allow-network
has "stack.env says allow" "$b/build/stack.env" 'NETWORK="allow"'
nb allow torch.install
same "--allow-network reruns nothing" "ninja: no work to do." "$(cat "$T/allow.log")"
exits "configure --allow-networks (a typo): 2" 2 conf --allow-networks
has "did you mean --allow-network" "$T/.err" "did you mean --allow-network?"
