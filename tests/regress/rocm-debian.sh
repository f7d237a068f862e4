#!/bin/sh
# rocm-debian: the optional tier rocmdebian (KILN_ROCM_DEBIAN=1): Debian's real ROCm for
# gfx803 (env/tracks/gfx803-debian.env). A Debian sid root made with mmdebstrap holding
# hipcc, libamdhip64-dev, librocblas-dev and what kiln's build needs (cached in
# KILN_ROCM_DEBIAN_CACHE, default ~/.cache/kiln/rocm-debian: 2026-11-25, 183 packages,
# 510 MB downloaded, a 5.0 GB root, 122 s; 5.7 GB with MIOpen); kiln is built inside it
# with sid's gcc (the tier takes about 4 minutes with the root cached);
# `./configure --arch=gfx803 --rocm-path=/usr` and `ninja rocm.check` pass, and
# --arch=gfx1151 fails naming rocBLAS; sid's MIOpen (libmiopen-dev, added when the root
# lacks it) has no kernel database, said in one line. Needs root (chroot, mounts of /proc
# and /dev).
. "$KILN_SRC/tests/lib.sh"
[ "${KILN_ROCM_DEBIAN:-0}" = 1 ] ||
	optional rocmdebian "Debian sid's ROCm in an mmdebstrap root (KILN_ROCM_DEBIAN=1; about 510 MB downloaded and a 5 GB root the first time, cached)"
need mmdebstrap chroot git
[ "$(id -u)" = 0 ] || missing "root (chroot and mounts for the Debian sid root)"
rh=$(getent passwd "$(id -u)" | cut -d: -f6)
R=${KILN_ROCM_DEBIAN_CACHE:-${XDG_CACHE_HOME:-$rh/.cache}/kiln/rocm-debian}/root
mirror=${KILN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ ! -x "$R/usr/bin/hipcc" ]; then
	t0=$(date +%s)
	rm -rf "$R" && mkdir -p "${R%/*}" || exit 2
	mmdebstrap --quiet --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
		--include=hipcc,libamdhip64-dev,librocblas-dev,libmiopen-dev,libmsgpack-c-dev,gcc,pkg-config,ninja-build,libgit2-dev,libarchive-dev,zlib1g-dev,libssl-dev,libzstd-dev,libdeflate-dev,libcurl4-openssl-dev,python3,python3-venv,ca-certificates \
		sid "$R" "$mirror" >"$T/mmdebstrap.log" 2>&1
	rc=$?
	same "mmdebstrap makes a Debian sid root with its ROCm" 0 "$rc"
	[ "$rc" = 0 ] || { sed -n '1,30s/^/#   /p' "$T/mmdebstrap.log"; rm -rf "$R"; exit 1; }
	echo "# root: made in $(($(date +%s) - t0)) s, $(du -sm "$R" | cut -f1) MB"
fi
mount -t proc proc "$R/proc" && mount --bind /dev "$R/dev" || exit 2
trap 'umount "$R/dev" "$R/proc" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
rm -rf "$R/root/kiln" "$R/root/b" && mkdir -p "$R/root/kiln" || exit 2
(cd "$KILN_SRC" && git ls-files -z | xargs -0 tar -cf - 2>/dev/null) | tar -C "$R/root/kiln" -xf - || exit 2
inroot () { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root sh -c "$1"; }
# a root cached before these were on the list gets them: msgpack-c (gpucheck reads kpack
# archives) and MIOpen (sid's libmiopen1 ships libMIOpen.so.1 alone: no share/miopen/db, no
# kernel database for any arch)
add=
for p in libmsgpack-c-dev libmiopen-dev; do inroot "dpkg -s $p >/dev/null 2>&1" || add="$add $p"; done
[ -z "$add" ] || check "the cached root gets$add" inroot "apt-get update -qq -o Acquire::Check-Valid-Until=false && DEBIAN_FRONTEND=noninteractive apt-get install -qq -y$add"
check "kiln's configure in the sid root" inroot 'cd /root/kiln && ./configure'
check "sid's gcc builds kiln-stage and gpucheck" inroot 'cd /root/kiln && ninja build/bin/kiln-stage build/bin/gpucheck build/bin/envclean'
grep 'warning:' "$T/.out" | sed 's/^/# sid gcc: /'
check "a venv in the root" inroot 'python3 -m venv /root/venv'
check "configure --arch=gfx803 --rocm-path=/usr" inroot 'mkdir -p /root/b && cd /root/b && /root/kiln/configure --arch=gfx803 --rocm-path=/usr --python=/root/venv/bin/python'
has "ROCm found at /usr, Debian's layout" "$T/.out" "checking for ROCm at /usr... yes (a distribution's ROCm under /usr 6.4."
has "the HIP runtime and CMake config in the multiarch folder" "$T/.out" "HIP runtime in /usr/lib/x86_64-linux-gnu, HIP CMake config /usr/lib/x86_64-linux-gnu/cmake/hip"
has "the device libraries under lib/llvm-N" "$T/.out" "device libraries /usr/lib/llvm-"
has "Debian's layout named" "$T/.out" "Debian's and Ubuntu's layout (lib/x86_64-linux-gnu)"
# MIOpen without a kernel database (*.kdb) for any arch: rocm.check says so, does not fail
check "ninja rocm.check: gfx803 passes" inroot 'cd /root/b && ninja rocm.check'
has "MIOpen checked" "$R/root/b/build/logs/rocm.check.log" "gfx803: lib/x86_64-linux-gnu/libMIOpen.so.1.0: no code-object bundles (host code)"
has "MIOpen: no kernel database in sid's package, said" "$R/root/b/build/logs/rocm.check.log" "gfx803: share/miopen/db: no MIOpen kernel database (*.kdb) for any arch: MIOpen compiles its kernels when first used"
has "rocBLAS's bundles carry gfx803" "$R/root/b/build/logs/rocm.check.log" "gfx803: lib/x86_64-linux-gnu/librocblas.so.4.4: covered (code-object bundles)"
has "rocBLAS's Tensile folder carries gfx803" "$R/root/b/build/logs/rocm.check.log" "gfx803: lib/x86_64-linux-gnu/rocblas/4.4.1/library: covered"
check "configure --arch=gfx1151 --rocm-path=/usr" inroot 'cd /root/b && /root/kiln/configure --arch=gfx1151 --rocm-path=/usr --python=/root/venv/bin/python'
exits "ninja rocm.check: gfx1151 fails" 1 inroot 'cd /root/b && ninja rocm.check'
has "gfx1151: rocBLAS named with both parts" "$T/.out" "rocm.check: rocBLAS (lib/x86_64-linux-gnu/librocblas.so.4.4) has no code for gfx1151 in its code-object bundles"
has "gfx1151: the Tensile folder named in the same line" "$R/root/b/build/logs/rocm.check.log" "; its Tensile kernels (lib/x86_64-linux-gnu/rocblas/4.4.1/library has gfx1010, gfx1030, gfx1100, gfx1101, gfx1102, gfx803, gfx900, gfx906, gfx908, gfx90a:xnack+, gfx90a:xnack-, gfx90a)"
same "gfx1151: one line for rocBLAS, none for MIOpen" 1 "$(grep -c 'has no code for gfx1151' "$R/root/b/build/logs/rocm.check.log")"
