#!/bin/sh
# graph-vllm: the pinned vLLM checked before it compiles, on a toy tree in the shape of
# vllm-project/vllm's (read with the search tool; no upstream code): CMakeLists.txt with
# set(HIP_SUPPORTED_ARCHS "...") and one set(CUDA_SUPPORTED_ARCHS "...") per CUDA release,
# the Rust frontend of vLLM >= 0.22 (tools/build_rust.py through setuptools-rust,
# rust-toolchain.toml naming a nightly, rust/proto/build.rs running protoc) and
# requirements/build/rocm.txt asking for cmake>=3.26.1,<4. Proves: configure reads the
# tree from the mirror at the pinned tag and refuses an --arch its CMake would drop,
# naming the supported list (HIP and CUDA, the loose CUDA match); says in one line which
# tools the build needs and PATH lacks (rustc, cargo, protoc, a nightly rustc); refuses
# a tree without a recognisable list; a tree not fetched yet is checked by the vllm.check
# stage after vllm.src, before vllm.deps, with the same line.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"

# a PATH without rustc, cargo, rustup and protoc: their folders replaced by links to the
# other programs there
mkdir -p "$T/sysbin" "$T/fake"
np=
IFS=: ; for d in $PATH; do
	IFS=' '
	if [ -x "$d/rustc" ] || [ -x "$d/cargo" ] || [ -x "$d/rustup" ] || [ -x "$d/protoc" ]; then
		for f in "$d"/*; do
			case "${f##*/}" in rustc|cargo|rustup|protoc|rustc-*|cargo-*) ;; *) [ -e "$T/sysbin/${f##*/}" ] || ln -s "$f" "$T/sysbin/" ;; esac
		done
	else
		np=$np${np:+:}$d
	fi
done
IFS=' '
NORUST=$np:$T/sysbin
# fake tools: fk NAME OUTPUT
fk () { printf '#!/bin/sh\necho "%s"\n' "$2" >"$T/fake/$1" && chmod 755 "$T/fake/$1"; }
fk rustc "rustc 1.96.0-nightly (0123456789 2026-03-10)"
fk cargo "cargo 1.96.0-nightly (0123456789 2026-03-10)"
fk protoc "libprotoc 29.3"

mk_vllm () {
	d=$T/mirror/vllm
	mkdir -p "$d/vllm" "$d/tools" "$d/rust/proto" "$d/requirements/build"
	cat >"$d/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.26)
project(toy_vllm_extensions LANGUAGES CXX)

# the targets the toy keeps (kiln reads these lists; the toy is never compiled)
set(HIP_SUPPORTED_ARCHS "gfx906;gfx908;gfx90a;gfx942;gfx950;gfx1030;gfx1100;gfx1101;gfx1102;gfx1103;gfx1150;gfx1151;gfx1152;gfx1153;gfx1200;gfx1201")

if(DEFINED CMAKE_CUDA_COMPILER_VERSION AND
   CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 13.0)
  set(CUDA_SUPPORTED_ARCHS "7.5;8.0;8.6;8.7;8.9;9.0;10.0;11.0;12.0")
elseif(DEFINED CMAKE_CUDA_COMPILER_VERSION AND
   CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.8)
  set(CUDA_SUPPORTED_ARCHS "7.5;8.0;8.6;8.7;8.9;9.0;10.0;10.1;10.3;12.0;12.1")
else()
  set(CUDA_SUPPORTED_ARCHS "7.0;7.5;8.0;8.6;8.7;8.9;9.0")
endif()
EOF
	printf 'from setuptools import setup\nfrom setuptools_rust.build import build_rust\nsetup(name="vllm")\n' >"$d/setup.py"
	printf '# the toy frontend: a RustBin and a RustExtension through setuptools-rust\n' >"$d/tools/build_rust.py"
	printf '[toolchain]\nchannel = "nightly-2026-03-10"\n' >"$d/rust-toolchain.toml"
	printf 'fn main() { /* compiles ../proto/*.proto with protoc */ }\n' >"$d/rust/proto/build.rs"
	printf -- '-r ../common.txt\ncmake>=3.26.1,<4\npackaging>=24.2\nsetuptools-rust>=1.9.0\nwheel\n' >"$d/requirements/build/rocm.txt"
	printf 'packaging\n' >"$d/requirements/common.txt"
	printf '__version__ = "0.33.0"\n' >"$d/vllm/__init__.py"
	(cd "$d" && git init -q -b main . && git add . && git commit -qm "toy vLLM" && git tag v0.33.0) || exit 2
}
mk_vllm
cat >>"$T/pins.env" <<'EOF'
stack_WITHOUT=vision,audio
vllm_URL=https://example.invalid/toy/vllm
vllm_REF=v0.33.0
EOF
"$PY3" -m venv --without-pip "$T/venv" || exit 2

# conf DIR PATH [ARG]...: the toy stack with vLLM, PATH as given
conf () {
	cdir=$1 cpath=$2
	shift 2
	mkdir -p "$cdir" && cd "$cdir" || exit 2
	PATH=$cpath "$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/pins.env" \
		--rocm-path="$T/rocm" --with=vllm --allow-mismatch --git-cache="$T/gitcache" \
		KILN_BIN="$KILN_BIN" "$@"
}
WITH=$T/fake:$NORUST

check "configure --arch=gfx1151, the tools there" conf "$T/b" "$WITH" --mirror="$T/mirror" --arch=gfx1151
has "configure read the tree from the mirror and says what it keeps and needs" "$T/.out" \
	"checking vLLM v0.33.0's tree... keeps gfx1151 ($T/mirror/vllm/.git); needs rustc and cargo (toolchain nightly-2026-03-10, rust-toolchain.toml) (setuptools-rust builds its Rust frontend, tools/build_rust.py), protoc (rust/proto/build.rs), a cmake below 4 (requirements/build/rocm.txt: cmake>=3.26.1,<4; vllm.deps installs it)"
grep '^build \$bdir/stamp/vllm.deps:' build/stack.ninja | grep -q 'stamp/vllm.check' &&
	ok "vllm.deps comes after vllm.check" || notok "vllm.deps comes after vllm.check"
has "vllm.check's key holds the targets" build/keys/vllm.check 'ARCH="gfx1151"'

exits "--arch=gfx803 is refused" 2 conf "$T/b" "$WITH" --mirror="$T/mirror" --arch=gfx803
same "in one line naming the arch and the supported list" \
	"configure: vLLM v0.33.0's CMakeLists.txt drops gfx803: HIP_SUPPORTED_ARCHS is gfx906 gfx908 gfx90a gfx942 gfx950 gfx1030 gfx1100 gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1152 gfx1153 gfx1200 gfx1201, so its wheel would hold no gfx803 kernels; drop gfx803 from --arch or build without vllm (--without=vllm)" \
	"$(cat "$T/.err")"
exits "a generic target is refused too (the list names processors)" 2 conf "$T/b" "$WITH" --mirror="$T/mirror" --arch=gfx1100,gfx11-generic
has "naming it" "$T/.err" "drops gfx11-generic:"

exits "sm_61 is refused (no 6.x in any CUDA list)" 2 conf "$T/b" "$WITH" --mirror="$T/mirror" --arch=sm_61
has "naming every CUDA release's list" "$T/.err" "drops sm_61: CUDA_SUPPORTED_ARCHS is 7.5 8.0 8.6 8.7 8.9 9.0 10.0 11.0 12.0 10.1 10.3 12.1 7.0 (every CUDA release's list)"
check "sm_89 and sm_121 are kept (8.9; 12.0 of the same major, cuda_archs_loose_intersection)" \
	conf "$T/b" "$WITH" --mirror="$T/mirror" --arch=sm_89,sm_121
has "configure says so" "$T/.out" "keeps sm_89,sm_121"

exits "no rustc, cargo, protoc: refused" 2 conf "$T/b" "$NORUST" --mirror="$T/mirror" --arch=gfx1151
same "in one line" 1 "$(grep -c . "$T/.err")"
has "naming what PATH lacks" "$T/.err" "PATH lacks rustc, cargo, protoc (without them its build skips the Rust frontend and still succeeds)"
fk rustc "rustc 1.89.0 (29483883e 2025-08-04)"
exits "a stable rustc for a nightly toolchain: refused" 2 conf "$T/b" "$WITH" --mirror="$T/mirror" --arch=gfx1151
has "naming the channel and the rustc found" "$T/.err" "PATH lacks a nightly-2026-03-10 rustc ($T/fake/rustc is rustc 1.89.0 (29483883e 2025-08-04))"
fk rustc "rustc 1.96.0-nightly (0123456789 2026-03-10)"

# a tree whose CMakeLists.txt has no list kiln recognises: one line
(cd "$T/mirror/vllm" && sed -i 's/^set(HIP_SUPPORTED_ARCHS .*/list(APPEND VLLM_HIP_TARGETS gfx1151)/' CMakeLists.txt &&
	git commit -qam "no list" && git tag v0.33.1) || exit 2
exits "a tree without a HIP list is refused" 2 conf "$T/b" "$WITH" --mirror="$T/mirror" --arch=gfx1151 --pin vllm=v0.33.1
same "in one line" "configure: vLLM v0.33.1: CMakeLists.txt has no set(HIP_SUPPORTED_ARCHS \"...\") list kiln recognises, so it cannot tell which --arch targets the build keeps (vLLM's CMake drops the others without a word); pin a vLLM whose tree has one" "$(cat "$T/.err")"

# not fetched yet (no mirror, an empty git cache; the URL a local clone): the vllm.check
# stage checks the prepared tree, before vllm.deps
git clone -q --bare "$T/mirror/vllm" "$T/up-vllm.git" || exit 2
sed -i "s|^vllm_URL=.*|vllm_URL=$T/up-vllm.git|" "$T/pins.env"
check "configure with the tree not fetched" conf "$T/b2" "$WITH" --arch=gfx803
has "configure says vllm.check will check it" "$T/.out" \
	"checking vLLM v0.33.0's tree... not fetched yet: vllm.check checks --arch and the tools after vllm.src, before its build"
exits "ninja vllm.check fails" 1 env PATH="$WITH" ninja vllm.check
n=$(grep '^kiln: vllm.check: ' "$T/.out" | grep -vc ': last [0-9]* lines of \|error recognised in the log\|: first error (')
same "in one kiln line" 1 "$n"
has "naming the arch and the list" "$T/.out" \
	"kiln: vllm.check: vLLM v0.33.0's CMakeLists.txt drops gfx803: HIP_SUPPORTED_ARCHS is gfx906"
check "no stamp for vllm.check" test ! -f build/stamp/vllm.check
check "nothing of vLLM's build ran" test ! -f build/stamp/vllm.deps
check "the same folder for gfx1151" conf "$T/b2" "$WITH" --arch=gfx1151
has "configure now reads the tree from the git cache" "$T/.out" "keeps gfx1151 ($T/gitcache/vllm.git)"
check "ninja vllm.check passes" env PATH="$WITH" ninja vllm.check
has "its log says what the build needs" build/logs/vllm.check.log "vLLM v0.33.0 keeps every --arch target (gfx1151); its build needs rustc and cargo"
rm -f build/stamp/vllm.check
exits "without the tools vllm.check fails" 1 env PATH="$NORUST" ninja vllm.check
has "naming them" "$T/.out" "PATH lacks rustc, cargo, protoc"

# kiln-stage vllm-check alone: usage and a missing tree
exits "vllm-check without a tree: usage" 2 kiln-stage vllm-check --arch=gfx1151
exits "vllm-check on a missing folder" 2 kiln-stage vllm-check "$T/nowhere"
has "naming it" "$T/.err" "$T/nowhere: not a folder"
