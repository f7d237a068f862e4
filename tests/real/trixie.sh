#!/bin/sh
# tests/real/trixie.sh: the real tier's Debian 13 part (run by tests/real/run.sh, or alone).
# A Debian 13 (trixie) root made with mmdebstrap (minbase plus kiln's build packages,
# python3-torch 2.6.0, libtorch-dev, cmake, clang-19: the list below), cached in
# KILN_REAL_ROOT_CACHE (default ~/.cache/kiln/real-root, about 2.5 GB, made once: about
# 10 minutes; a new package list makes a new one); in it, as root in a mount namespace of
# its own, tests/real/trixie-in.sh builds kiln from this checkout and runs the trixie track
# (env/tracks/trixie.env): the output is its ok / not ok lines and figures. The checkout is
# mounted read-only at /kiln/src; the work folder $KILN_REAL_DIR/trixie (kept between runs,
# resumable, KILN_REAL_FRESH=1 starts over) at /kiln/real; the tarball cache at /kiln/cache;
# nothing is written into the cached root but the three mount points. Needs root,
# mmdebstrap, unshare and the Debian mirror (KILN_DEBIAN_MIRROR, default deb.debian.org).
set -u
KILN_SRC=$(cd "${KILN_SRC:-$(dirname "$0")/../..}" && pwd) || exit 2
KILN_BUILD=${KILN_BUILD:-$KILN_SRC/build}
W=${KILN_REAL_DIR:-$KILN_BUILD/real}/trixie
CACHE=${KILN_DEBSRC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln/debsrc}
RC=${KILN_REAL_ROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln/real-root}
mirror=${KILN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
notok () { echo "not ok trixie: $*"; exit 1; }

[ "$(id -u)" = 0 ] || notok "needs root (mmdebstrap, mounts and chroot); run ninja check-real as root, or KILN_REAL_TRIXIE=0 to leave this part out"
for c in mmdebstrap unshare chroot dpkg; do
	command -v "$c" >/dev/null 2>&1 || notok "needs $c (apt-get install mmdebstrap)"
done

# what the root holds: kiln's build packages (env/deps/debian-build.txt), Debian's torch and
# what building vision and audio against it needs (Debian's own Build-Depends of
# pytorch-vision 0.21.0-3 and pytorch-audio 2.6.0-1, less the image, video and sox
# libraries the track turns off), clang-19 for the hipify stages' stand-in ROCm root, and
# time for the figures
pkgs=$(sed 's/#.*//' "$KILN_SRC/env/deps/debian-build.txt" | tr -s ' \t\n' ',,,' | sed 's/^,//; s/,$//')
pkgs=$pkgs,g++,git,ca-certificates,python3,python3-dev,python3-venv,python3-pip,python3-setuptools
pkgs=$pkgs,python3-wheel,python3-torch,libtorch-dev,pybind11-dev,cmake,xz-utils,clang-19,time
# torchvision imports PIL when it is imported (torchvision/datasets); Debian's
# python3-torchvision depends on python3-pil
pkgs=$pkgs,python3-pil
# vision 0.21.0's pyproject.toml asks for setuptools and wheel (vision.deps): Debian's own
# wheels of them (/usr/share/python-wheels) are the track's wheelhouse, no PyPI
pkgs=$pkgs,python3-setuptools-whl,python3-wheel-whl
arch=$(dpkg --print-architecture) || exit 2
id=$(printf '%s %s %s\n' "$pkgs" "$mirror" "$arch" | sha256sum | cut -c1-12)
R=$RC/debian-13-$arch-$id
mkdir -p "$RC" "$W" "$CACHE" || exit 2
# absolute, for the mounts (ninja check-real passes a relative KILN_BUILD)
W=$(cd "$W" && pwd) CACHE=$(cd "$CACHE" && pwd) || exit 2
if [ -d "$R" ]; then
	echo "# trixie: root $R (cached)"
else
	t0=$(date +%s)
	rm -rf "$R.tmp"
	if ! SOURCE_DATE_EPOCH=1700000000 mmdebstrap --quiet --variant=minbase --components=main \
		--include="$pkgs" trixie "$R.tmp" "deb $mirror trixie main" >"$W/mmdebstrap.log" 2>&1; then
		sed -n '1,30s/^/#   /p' "$W/mmdebstrap.log"
		rm -rf "$R.tmp"
		notok "mmdebstrap could not make Debian 13 from $mirror (log above)"
	fi
	mkdir -p "$R.tmp/kiln/src" "$R.tmp/kiln/real" "$R.tmp/kiln/cache" && mv "$R.tmp" "$R" || exit 2
	echo "# trixie: root made with mmdebstrap in $(($(date +%s) - t0)) s: $R ($(du -sm "$R" | cut -f1) MB)"
	printf 'trixie root: mmdebstrap (s)\t%s\n' "$(($(date +%s) - t0))" >>"$W/host-figures"
fi
grep -q '^13\.' "$R/etc/debian_version" || notok "$R is not Debian 13 ($(cat "$R/etc/debian_version"))"
[ "${KILN_REAL_FRESH:-0}" = 1 ] && { rm -rf "$W" && mkdir -p "$W" || exit 2; }

# the root's / is a mount point of its own, with /proc, /dev, a fresh /run and /tmp, the
# host's resolv.conf (the mirror downloads), and the three kiln folders; all of it goes
# with the namespace
unshare -m sh -s "$R" "$KILN_SRC" "$W" "$CACHE" <<'EOF'
r=$1
mount --make-rprivate / && mount --bind "$r" "$r" && mount -t proc proc "$r/proc" &&
	mount --rbind /dev "$r/dev" && mount -t tmpfs tmpfs "$r/run" && mount -t tmpfs tmpfs "$r/tmp" &&
	mount --bind "$2" "$r/kiln/src" && mount -o remount,bind,ro "$r/kiln/src" &&
	mount --bind "$3" "$r/kiln/real" && mount --bind "$4" "$r/kiln/cache" &&
	mount --bind /etc/resolv.conf "$r/etc/resolv.conf" || { echo "not ok trixie: cannot mount the root's folders"; exit 1; }
exec chroot "$r" /usr/bin/env -i HOME=/kiln/real/home LANG=C.UTF-8 TERM=dumb \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	KILN_REAL_FRESH=0 KILN_DEBIAN_MIRROR="${KILN_DEBIAN_MIRROR:-}" KILN_REAL_STEPS="${KILN_REAL_STEPS:-}" \
	sh /kiln/src/tests/real/trixie-in.sh
EOF
