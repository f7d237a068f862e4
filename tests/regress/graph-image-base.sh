#!/bin/sh
# graph-image-base: the optional tier imagebase (KILN_IMAGE_BASE=1): --image= on the toy
# stack (tests/regress/graph-toy.inc) over a real base: Debian 12 (bookworm, minbase plus
# python3) made here with mmdebstrap from the Debian mirror, imported into podman and
# pinned by its ID in image_BASE. The tarball is cached (KILN_IMAGE_BASE_CACHE, default
# ~/.cache/kiln/image-base), so only the first run downloads it. The image holds the
# base's files and dpkg database, kiln's packages, the lock and build-info, and carries
# build-info's labels; podman run does not work in this sandbox, so the image's own
# Python is run on its mounted filesystem with chroot, and imports the stack.
. "$KILN_SRC/tests/lib.sh"
[ "${KILN_IMAGE_BASE:-0}" = 1 ] ||
	optional imagebase "a Debian 12 base made with mmdebstrap from the Debian mirror (KILN_IMAGE_BASE=1; under 2 minutes the first time: mmdebstrap about 50 s and a 210 MB tarball, cached; then about 1 minute)"
need podman mmdebstrap chroot
# the user's cache (graph-toy.inc gives this file a scratch HOME)
rh=$(getent passwd "$(id -u)" | cut -d: -f6)
cache=${KILN_IMAGE_BASE_CACHE:-${XDG_CACHE_HOME:-$rh/.cache}/kiln/image-base}
mirror=${KILN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
. "$KILN_SRC/tests/regress/graph-toy.inc"

. "$KILN_SRC/tests/regress/podman-storage.inc"

# the base: made once with mmdebstrap (file times set to SOURCE_DATE_EPOCH), then read
# from the cache
arch=$(dpkg --print-architecture) || exit 2
tarball=$cache/debian-12-minbase-python3-$arch.tar
mkdir -p "$cache" || exit 2
t0=$(date +%s)
if [ -f "$tarball" ]; then
	echo "# base: $tarball (cached)"
else
	SOURCE_DATE_EPOCH=1700000000 mmdebstrap --quiet --variant=minbase --include=python3 --format=tar \
		bookworm "$tarball.tmp" "$mirror" >"$T/mmdebstrap.log" 2>&1
	rc=$?
	same "mmdebstrap makes a Debian 12 base from $mirror" 0 "$rc"
	[ "$rc" = 0 ] || { sed -n '1,30s/^/#   /p' "$T/mmdebstrap.log"; rm -f "$tarball.tmp"; exit 1; }
	mv -f "$tarball.tmp" "$tarball" || exit 2
	echo "# base: made with mmdebstrap in $(($(date +%s) - t0)) s: $tarball ($(du -m "$tarball" | cut -f1) MB)"
fi
check "the base tarball holds Debian 12" sh -c 'tar -xOf "$1" ./etc/debian_version | grep -q "^12\."' sh "$tarball"
t0=$(date +%s)
baseid=$(podman import -q "$tarball" localhost/kiln-debian:12) || { echo "not ok podman import $tarball"; exit 1; }
echo "# podman import: $(($(date +%s) - t0)) s"
printf 'image_BASE=%s\n' "$baseid" >>"$T/pins.env"

toy_venv "$T/venv"
b=$T/b
mkdir -p "$b"
cd "$b" || exit 2
img=localhost/kiln-toy-debian:1
check "configure --image=$img --image-base=localhost/kiln-debian:12" "$KSRC/configure" \
	--python="$T/venv/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" --jobs=2 --arch=cpu \
	--image=$img --image-base=localhost/kiln-debian:12 KILN_BIN="$KILN_BIN"
t0=$(date +%s)
ninja >"$T/first.log" 2>&1
rc=$?
same "ninja builds the stack and its image on the Debian base" 0 "$rc"
[ "$rc" = 0 ] || sed -n '1,40s/^/#   /p' "$T/first.log" "$b/build/logs/stack.image.log"
echo "# first ninja (the toy stack and the image): $(($(date +%s) - t0)) s; $(grep '^stack.image: rebuilt' "$T/first.log")"
has "the Containerfile starts from the pinned base" "$b/build/Containerfile" "FROM ${baseid#sha256:}"
has "the stamp's ID is the image's" "$b/build/stamp/stack.image" \
	"ID=\"sha256:$(podman image inspect --format '{{.Id}}' $img)\""

# labels: build-info's, and the base's
podman image inspect --format '{{range $k, $v := .Labels}}{{$k}}={{$v}}{{"\n"}}{{end}}' $img | sed '/^$/d' | sort >"$T/got.labels"
kiln-stage labels --format=file "$b/build/info" | sort >"$T/want.labels"
same "every build-info label is on the image" "" "$(comm -23 "$T/want.labels" "$T/got.labels")"
has "the base's name" "$T/got.labels" "org.opencontainers.image.base.name=localhost/kiln-debian:12"
has "the torch commit" "$T/got.labels" "kiln.torch.commit=$(git -C "$T/mirror/torch" rev-parse v1)"
has "the lock's digest" "$T/got.labels" "kiln.requirements_lock=sha256:$(sha256sum "$b/build/requirements.lock" | cut -c1-64)"

# the filesystem: Debian's and kiln's
m=$(podman image mount $img) && [ -n "$m" ] || m=$T/not-mounted
check "podman image mount" test -d "$m"
check "the image holds Debian 12 (/etc/debian_version)" grep -q '^12\.' "$m/etc/debian_version"
check "the image holds dpkg's database with the base's packages" grep -q '^Package: base-files$' "$m/var/lib/dpkg/status"
check "the image holds the base's python3" test -x "$m/usr/bin/python3"
check "the image holds the venv's torch library" sh -c 'ls "$1"/lib/python3*/site-packages/torch/lib/libtorch_toy.so' sh "$m$T/venv"
check "the image holds vision's C extension" sh -c 'ls "$1"/lib/python3*/site-packages/torchvision/_C*.so' sh "$m$T/venv"
check "the image holds the wheels" test -f "$m/opt/kiln/wheels/$(basename "$(cat "$b/build/wheels/torch.picked")")"
check "the image holds the lock" cmp "$m/opt/kiln/requirements.lock" "$b/build/requirements.lock"
check "the image holds build-info.json" cmp "$m/opt/kiln/build-info.json" "$b/build/build-info.json"
# the image's own Python (the base's, through the venv's link) imports the stack
chroot "$m" "$T/venv/bin/python" -c 'import torch, torchvision, torchaudio; print("imports", torch.__version__, torch.scale(3), torchvision.op(2))' >"$T/imp.out" 2>&1
rc=$?
same "in the image's filesystem (chroot), its Python imports torch, torchvision and torchaudio" 0 "$rc"
[ "$rc" = 0 ] || sed -n '1,20s/^/#   /p' "$T/imp.out"
has "(and runs torch's C code)" "$T/imp.out" "imports "
podman image unmount $img >/dev/null 2>&1

t0=$(date +%s%N)
ninja >"$T/second.log" 2>&1
echo "# second ninja: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
same "second ninja: no work to do" "ninja: no work to do." "$(cat "$T/second.log")"
