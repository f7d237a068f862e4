#!/bin/sh
# graph-cmake: a CMake component (C_BUILD=cmake) through the graph, on a toy CMake
# project in the ggml row (a shared library, a tool it installs, a check program it
# does not, a pkg-config file, and for AMD targets a HIP kernel compiled by clang-19 for
# each GPU_TARGETS entry): the stages and their keys, the prefix and its relocatable
# files, the project's own check in ggml.smoke, a no-op, a bump and a C_CMAKE_ARGS change
# rerunning only ggml's stages, verify (the same tarball bytes), the --arch mapping
# (GPU_TARGETS/AMDGPU_TARGETS, CMAKE_CUDA_ARCHITECTURES) and gpucheck cover of the
# prefix, and the bad inputs (a configure error, an arch the HIP compiler does not know,
# Vulkan without glslc), one line each.
. "$KILN_SRC/tests/lib.sh"
need ninja git cc cmake clang-19 pkg-config srcpin envclean kiln-stage gpucheck
PY3=/usr/bin/python3

ksrc_copy
mkdir -p "$T/mirror/ggml" "$T/rocm/llvm/bin"
ln -s "$(command -v clang-19)" "$T/rocm/llvm/bin/clang"
# the target Python configure asks (the CMake stack itself runs none)
"$PY3" -m venv --without-pip "$T/venv" || exit 2

TOY=$T/mirror/ggml
cat >"$TOY/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(toy C)
option(TOY_FAIL "fail at configure" OFF)
if (TOY_FAIL)
    message(FATAL_ERROR "toy: TOY_FAIL is on")
endif()
message(STATUS "toy: HIPFLAGS=[$ENV{HIPFLAGS}]")
set(TOY_SCALE 2 CACHE STRING "the factor")
add_library(toy SHARED toy.c)
target_compile_definitions(toy PRIVATE TOY_SCALE=${TOY_SCALE})
set_target_properties(toy PROPERTIES VERSION 1.0 SOVERSION 1 PUBLIC_HEADER toy.h)
if (GPU_TARGETS)
    # GPU code for each target, as a HIP build would carry it (clang-19, no HIP runtime)
    set(offl)
    foreach(a ${GPU_TARGETS})
        list(APPEND offl --offload-arch=${a})
    endforeach()
    add_custom_command(OUTPUT kernel.o
        COMMAND $ENV{ROCM_PATH}/llvm/bin/clang -x hip -nogpulib -nogpuinc -fPIC
                -c ${CMAKE_CURRENT_SOURCE_DIR}/kernel.hip -o kernel.o ${offl}
        DEPENDS kernel.hip)
    target_sources(toy PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/kernel.o hipstub.c)
endif()
add_executable(toy-tool tool.c)
target_link_libraries(toy-tool toy)
add_executable(toy-check check.c)
target_link_libraries(toy-check toy)
configure_file(toy.pc.in toy.pc @ONLY)
install(TARGETS toy toy-tool LIBRARY DESTINATION lib RUNTIME DESTINATION bin PUBLIC_HEADER DESTINATION include)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/toy.pc DESTINATION lib/pkgconfig)
EOF
printf 'int toy_scale(int x);\nconst char *toy_file(void);\n' >"$TOY/toy.h"
cat >"$TOY/toy.pc.in" <<'EOF'
prefix=@CMAKE_INSTALL_PREFIX@
libdir=${prefix}/lib
Name: toy
Version: 1.0
Description: the toy
Libs: -L${libdir} -ltoy
EOF
cat >"$TOY/tool.c" <<'EOF'
#include <stdio.h>
#include "toy.h"
int main(void) { printf("%d %s\n", toy_scale(1), toy_file()); return 0; }
EOF
cat >"$TOY/check.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include "toy.h"
int main(int argc, char **argv)
{
	int want = argc > 1 ? atoi(argv[1]) : 0, got = toy_scale(1);
	printf("toy-check: toy_scale(1) = %d, want %d: %s\n", got, want, got == want ? "OK" : "FAIL");
	return got != want;
}
EOF
cat >"$TOY/kernel.hip" <<'EOF'
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void *f, dim3_ g, dim3_ b, void **a, unsigned long s, void *st);
__attribute__((global)) void toy_kernel(float *p) { p[0] = 1.0f; }
EOF
cat >"$TOY/hipstub.c" <<'EOF'
void **__hipRegisterFatBinary(const void *d) { (void)d; return 0; }
void __hipRegisterFunction(void) {}
void __hipUnregisterFatBinary(void **h) { (void)h; }
int __hipPopCallConfiguration(void *a, void *b, void *c, void *d) { (void)a; (void)b; (void)c; (void)d; return 0; }
int hipLaunchKernel(void) { return 0; }
EOF
(cd "$TOY" && git init -q -b main .) || exit 2
# toy_commit TAG REV: toy_scale(x) = x * TOY_SCALE + REV, committed and tagged
toy_commit () {
	printf '#include "toy.h"\nint toy_scale(int x) { return x * TOY_SCALE + %s; }\nconst char *toy_file(void) { return __FILE__; }\n' "$2" >"$TOY/toy.c"
	(cd "$TOY" && git add -A && git commit -qm "toy $1" && git tag "$1") || exit 2
}
toy_commit v1 0

# the pins: ggml alone (no torch), through --mirror; the check wants toy_scale(1) = 3
pins () {
	cat >"$T/pins.env" <<EOF
stack_WITHOUT=torch,vision,audio
stack_WITH=ggml
ggml_URL=https://example.invalid/toy/ggml
ggml_REF=v1
ggml_CMAKE_ARGS="-DTOY_SCALE=3 $1"
ggml_CHECK="toy-check ${2:-3}"
EOF
}
pins ""
b=$T/b
mkdir -p "$b"
cd "$b" || exit 2
conf () {
	"$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--rocm-path="$T/rocm" --jobs=2 KILN_BIN="$KILN_BIN" "$@"
}
rebuilt () { sed -n 's/^\([a-z_]*\.[a-z]*\): \(rebuilt\|restored from the stage cache\) in .*/\1/p' "$1" | sort | tr '\n' ' ' | sed 's/ $//'; }
build () { ninja "$@" >"$T/$1.log" 2>&1; brc=$?; got=$(rebuilt "$T/$1.log"); }
nb () { n=$1; shift; ninja "$@" >"$T/$n.log" 2>&1; brc=$?; got=$(rebuilt "$T/$n.log"); }

check "configure --arch=cpu, ggml alone (C_BUILD=cmake by default)" conf --arch=cpu
stagesin "$b/build/stack.ninja" ggml.src ggml.patch ggml.build ggml.install ggml.smoke
lacks "no torch stages" "$b/build/stack.ninja" "torch."
has "ggml.build's output is a folder the stage cache and verify know" "$b/build/stack.ninja" "build ggml.build.verify: verify"
has "key: C_CMAKE_ARGS" "$b/build/keys/ggml.build" 'CMAKE_ARGS="-DTOY_SCALE=3 "'
has "key: cmake's version" "$b/build/keys/ggml.build" "CMAKE=\"cmake version"
has "key: no arch variable for cpu" "$b/build/keys/ggml.build" 'ARCH_ARGS=""'
has "key: the check" "$b/build/keys/ggml.smoke" 'CHECK="toy-check 3"'
nb first
same "first ninja succeeds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/first.log"
same "first ninja runs every stage once" "ggml.build ggml.install ggml.patch ggml.smoke ggml.src stack.smoke" "$got"
P=$b/build/prefix/ggml
check "the prefix has the library" test -f "$P/lib/libtoy.so.1.0"
check "the prefix has the header" test -f "$P/include/toy.h"
same "an installed tool runs from the prefix (RUNPATH \$ORIGIN/../lib): 3, prefix-mapped __FILE__" \
	"3 /kiln/src/ggml/toy.c" "$("$P/bin/toy-tool" 2>&1)"
check "the check program the project does not install is carried in bin/" test -x "$P/bin/toy-check"
has "the .pc names the relocatable prefix, not a build folder" "$P/lib/pkgconfig/toy.pc" "prefix=/kiln/prefix/ggml"
has "pkg-config --define-prefix finds the real prefix" /dev/stdin "-L$P/lib" <<EOF
$(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --define-prefix --libs toy 2>&1)
EOF
has "ggml.smoke ran the project's check" "$b/build/logs/ggml.smoke.log" "toy-check: toy_scale(1) = 3, want 3: OK"
set -- "$b"/build/cmake/ggml/*.tar.gz
same "ggml.build's output: one tarball named with the tag and the key" \
	"ggml-1+kiln.cpu.g$(sed -n 's/^KEY="\(.\{10\}\).*/\1/p' "$b/build/stamp/ggml.build").tar.gz" "${1##*/}"
tb1=$(sha256sum "$1" | cut -c1-64)
has "build-info.json records ggml's commit" "$b/build/build-info.json" "\"commit\":\"$(git -C "$TOY" rev-parse v1)\""
has "build-info.json records the tarball" "$b/build/build-info.json" "ggml-1+kiln.cpu.g"
has "the work tree is removed after the build" /dev/stdin "gone" <<EOF
$([ -e "$b/build/work/ggml" ] && echo there || echo gone)
EOF

nb noop
same "second ninja: no work to do" "ninja: no work to do." "$(cat "$T/noop.log")"

check "ninja ggml.build.verify: a rebuild beside it gives the same tarball" ninja ggml.build.verify
has "verify says identical" "$T/.out" "identical"

# an upstream bump: ggml's stages, and the stack's smoke test, nothing else
toy_commit v2 1
check "configure --pin ggml=v2" conf --arch=cpu --pin ggml=v2
KILN_EXPLAIN=1 nb bump
same "bump: ggml's stages rerun (ggml.smoke fails)" "ggml.build ggml.install ggml.patch ggml.src" "$got"
has "bump: KILN_EXPLAIN names the REF" "$T/bump.log" "kiln: ggml.src: running: input REF changed: v1 -> v2"
same "bump: ggml.smoke failed: the new toy_scale(1) is 4, the check wants 3" 1 "$brc"
has "bump: the check's failure is one line" "$T/bump.log" "kiln: ggml.smoke: ggml_CHECK failed: toy-check 3 (above)"
pins "" 4
check "configure: the check wants 4" conf --arch=cpu --pin ggml=v2
nb bump2
same "new C_CHECK arguments rerun ggml.smoke alone (and stack.smoke)" "ggml.smoke stack.smoke" "$got"
same "bump: ggml.smoke passes" 0 "$brc"

# a C_CMAKE_ARGS change: the build and what follows, not the source
pins "-DTOY_SCALE=5" 6
check "configure with another C_CMAKE_ARGS" conf --arch=cpu --pin ggml=v2
nb args
same "C_CMAKE_ARGS: ggml.build and what follows rerun" "ggml.build ggml.install ggml.smoke stack.smoke" "$got"
same "C_CMAKE_ARGS: the later -D wins (5)" "6 /kiln/src/ggml/toy.c" "$("$P/bin/toy-tool" 2>&1)"

# a second build folder gives the same tarball (prefix maps, SOURCE_DATE_EPOCH, sorted tar)
pins "" 3
mkdir -p "$T/b2" && cd "$T/b2" || exit 2
check "configure a second build folder" conf --arch=cpu
nb second-folder
same "second folder builds" 0 "$brc"
set -- "$T/b2"/build/cmake/ggml/*.tar.gz
same "the same key in another folder gives the same tarball, byte for byte" "$tb1" "$(sha256sum "$1" | cut -c1-64)"
cd "$b" || exit 2

# --arch for AMD targets: GPU_TARGETS and AMDGPU_TARGETS; gpucheck cover of the prefix
check "configure --arch=gfx1151,gfx803" conf --arch=gfx1151,gfx803
has "key: the HIP arch variables" "$b/build/keys/ggml.build" 'ARCH_ARGS="-DGPU_TARGETS=gfx1151;gfx803 -DAMDGPU_TARGETS=gfx1151;gfx803"'
nb gfx
same "gfx build succeeds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/gfx.log"
check "gpucheck targets on the prefix's library" gpucheck targets "$P/lib/libtoy.so.1.0"
has "the library carries gfx1151" "$T/.out" "gfx1151"
has "the library carries gfx803" "$T/.out" "gfx803"
has "ggml.smoke covered gfx1151 with gpucheck" "$b/build/logs/ggml.smoke.log" "gfx1151: covered"
exits "gpucheck cover fails for gfx90a" 1 gpucheck cover --target=gfx90a "$P/lib"
lacks "clang-19's resource folder has no device libraries: no --rocm-device-lib-path" "$b/build/logs/ggml.build.log" "--rocm-device-lib-path"
# a distribution's clang keeps the device libraries in its resource folder (Debian:
# /usr/lib/llvm-21/lib/clang/21/amdgcn/bitcode), not in $ROCM_PATH/amdgcn/bitcode: the
# build's HIPFLAGS name it (a clang that reports such a folder, with ockl.bc in it)
mkdir -p "$T/rocmd/llvm/bin" "$T/res/amdgcn/bitcode" && : >"$T/res/amdgcn/bitcode/ockl.bc" || exit 2
printf '#!/bin/sh\n[ "$1" = -print-resource-dir ] && { echo %s; exit 0; }\nexec %s "$@"\n' \
	"$(shq "$T/res")" "$(shq "$(command -v clang-19)")" >"$T/rocmd/llvm/bin/clang" && chmod +x "$T/rocmd/llvm/bin/clang"
check "configure --arch=gfx803 with that clang" conf --arch=gfx803 --rocm-path="$T/rocmd"
nb devlib ggml.build
same "the build succeeds" 0 "$brc"
has "HIPFLAGS name the resource folder's device libraries" "$b/build/logs/ggml.build.log" "--rocm-device-lib-path=$T/res/amdgcn/bitcode]"

# --arch for CUDA: CMAKE_CUDA_ARCHITECTURES (not built here: no CUDA)
check "configure --arch=sm_90,sm_90a" conf --arch=sm_90,sm_90a
has "key: CMAKE_CUDA_ARCHITECTURES" "$b/build/keys/ggml.build" 'ARCH_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90;90a"'

# bad input, one line each, before compiling
check "configure --arch=gfx950 (clang-19 does not know it)" conf --arch=gfx950
nb badarch ggml.build
same "an arch the HIP compiler does not know: the build fails" 1 "$brc"
has "and says so in one line" "$T/badarch.log" "kiln: ggml.build: --arch=gfx950: the HIP compiler $T/rocm/llvm/bin/clang does not know it"
lacks "before configuring" "$b/build/logs/ggml.build.log" "Configuring done"

pins "-DTOY_FAIL=ON"
check "configure with a C_CMAKE_ARGS that fails cmake's configure" conf --arch=cpu
nb badconf ggml.build
same "configure error: the build fails" 1 "$brc"
has "the first CMake Error line and its message, in one line" "$T/badconf.log" \
	"kiln: ggml.build: cmake could not configure ggml: CMake Error at CMakeLists.txt:5 (message): toy: TOY_FAIL is on"
check "no stamp after a failed build" test ! -e "$b/build/stamp/ggml.build"

pins "-DGGML_VULKAN=ON -DVulkan_GLSLC_EXECUTABLE=$T/none/glslc"
check "configure with Vulkan on and a glslc that is not there" conf --arch=cpu
nb badvk ggml.build
same "missing glslc: the build fails" 1 "$brc"
has "missing glslc: one line" "$T/badvk.log" "kiln: ggml.build: GGML_VULKAN=ON: -DVulkan_GLSLC_EXECUTABLE=$T/none/glslc is not a program"

# bad pins: configure refuses them with file:line
pins "-S /elsewhere"
exits "C_CMAKE_ARGS naming the source folder: 2" 2 conf --arch=cpu
has "says which word and why" "$T/.err" "ggml_CMAKE_ARGS="
printf 'ggml_BUILD=make\n' >"$T/bad.env"
exits "ggml_BUILD=make: 2" 2 "$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/bad.env" --arch=cpu KILN_BIN="$KILN_BIN"
has "names the kinds" "$T/.err" "use setup, build, pip or cmake"
printf 'stack_WITHOUT=torch\n' >"$T/bad.env"
exits "dropping torch with vision still on: 2" 2 "$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/bad.env" --arch=cpu KILN_BIN="$KILN_BIN"
has "says vision is built on it" "$T/.err" "(vision is built against it)"
