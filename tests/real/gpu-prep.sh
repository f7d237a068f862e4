#!/bin/sh
# tests/real/gpu-prep.sh DEV [EXTENSION_GIT [AUDITWHEEL_GIT]]: assemble on a Debian 12 machine the folder
# tests/real/gpu.sh needs on a CUDA machine that has no libgit2, libarchive, libdeflate,
# patchelf or network (about 23 MB):
#   DEV/kiln         this checkout's HEAD (git archive)
#   DEV/debs         the .debs tests/real/gpu-debs.txt lists (apt-get download)
#   DEV/mirror/vision.git  a bare mirror of pytorch/extension-cpp (EXTENSION_GIT: a URL or
#                    a local git folder, default https://github.com/pytorch/extension-cpp;
#                    "-" for none: the steps "tools cover" need no mirror)
#   DEV/aw/src       with AUDITWHEEL_GIT (a git folder of pypa/auditwheel): its 6.7.0
#                    source and Debian's pyelftools and packaging, so gpu.sh times the
#                    peer beside fatwheel (nothing of it is committed to kiln)
# Then copy DEV to the GPU machine and run: sh DEV/kiln/tests/real/gpu.sh DEV OUT
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
dev=${1:?usage: gpu-prep.sh DEV [EXTENSION_GIT]}
ext=${2:-https://github.com/pytorch/extension-cpp}
mkdir -p "$dev/kiln" "$dev/debs" "$dev/mirror"
rm -rf "$dev/kiln" && mkdir -p "$dev/kiln"
git -C "$src" archive HEAD | tar -x -C "$dev/kiln"
(cd "$dev/debs" && apt-get download $(grep -v '^#' "$src/tests/real/gpu-debs.txt"))
rm -rf "$dev/mirror/vision.git"
# EXTENSION_GIT "-": no mirror (enough for KILN_GPU_STEPS="tools cover")
[ "$ext" = - ] || git clone -q --bare "$ext" "$dev/mirror/vision.git"
if [ -n "${3:-}" ]; then
	rm -rf "$dev/aw" && mkdir -p "$dev/aw"
	git --git-dir="$3" archive 6.7.0 src | tar -x -C "$dev/aw"
	cp -r /usr/lib/python3/dist-packages/elftools /usr/lib/python3/dist-packages/packaging "$dev/aw/src/"
	# auditwheel asks importlib.metadata for its own version
	mkdir -p "$dev/aw/src/auditwheel-6.7.0.dist-info"
	printf 'Metadata-Version: 2.1\nName: auditwheel\nVersion: 6.7.0\n' >"$dev/aw/src/auditwheel-6.7.0.dist-info/METADATA"
fi
du -sh "$dev"
