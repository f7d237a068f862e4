#!/bin/sh
# graph-image: --image= on the toy stack (tests/regress/graph-toy.inc). stack.image builds
# an OCI image with podman from a COPY-only Containerfile on a base made here (podman
# import of a small tarball, pinned by its ID): its labels are build-info's, its
# filesystem holds the installed packages, the lock installs with --require-hashes, a
# second ninja is a no-op, an image removed from the storage (podman rmi) or whose name
# moved is built again (and only it), a pin bump rebuilds the image, a base that does not
# match image_BASE (an ID or a digest) fails with one line, and buildah builds it where
# podman does not run. podman run does not work in this sandbox: the image is read with
# podman image inspect and podman image mount.
. "$KILN_SRC/tests/lib.sh"
need podman
. "$KILN_SRC/tests/regress/graph-toy.inc"

. "$KILN_SRC/tests/regress/podman-storage.inc"

# the base: a tiny image made here (no network)
mkdir -p "$T/base/etc" "$T/base2/etc"
echo 'toy base 1' >"$T/base/etc/kiln-base"
echo 'toy base 2' >"$T/base2/etc/kiln-base"
tar -C "$T/base" -cf "$T/base.tar" . && tar -C "$T/base2" -cf "$T/base2.tar" . || exit 2
baseid=$(podman import -q "$T/base.tar" localhost/kiln-toy-base:1) || { echo "not ok podman import"; exit 1; }
base2=$(podman import -q "$T/base2.tar" localhost/kiln-toy-base:2) || exit 1
printf 'image_BASE=%s\n' "$baseid" >>"$T/pins.env"

toy_venv "$T/venv"
b=$T/b
mkdir -p "$b"
cd "$b" || exit 2
img=localhost/kiln-toy:1
conf () {
	"$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--jobs=2 --arch=cpu --image=$img --image-base=localhost/kiln-toy-base:1 KILN_BIN="$KILN_BIN" "$@"
}
# build NAME [RC]: ninja, its output in $T/NAME.log; an exit other than RC (default 0)
# shows the log's kiln lines and end (only then: the runner keeps the tail of this
# file's output, where a failed check's name must stay)
build () {
	ninja >"$T/$1.log" 2>&1; brc=$?; got=$(rebuilt "$T/$1.log")
	[ "$brc" = "${2:-0}" ] || { echo "# ninja ($1) exited $brc:"; { grep '^kiln: ' "$T/$1.log"; tail -n 15 "$T/$1.log"
		tail -n 15 "$b/build/logs/stack.image.log" 2>/dev/null; } | sed 's/^/#   /'; }
}
# labels IMAGE: its labels as KEY=VALUE lines, sorted
labels () { podman image inspect --format '{{range $k, $v := .Labels}}{{$k}}={{$v}}{{"\n"}}{{end}}' "$1" | sed '/^$/d' | sort; }

exits "--image-base without image_BASE in the pins: configure says so" 2 \
	"$KSRC/configure" --python="$T/venv/bin/python" --pins="$KILN_SRC/env/versions.env" --arch=cpu \
	--image=$img --image-base=localhost/kiln-toy-base:1 KILN_BIN="$KILN_BIN"
has "the message names image_BASE" "$T/.err" "is not pinned; add image_BASE="
exits "a bad image name is refused" 2 conf --image='Bad Name'

check "configure --image=$img --image-base" conf
has "the graph has stack.image" "$b/build/stack.ninja" "build stack.image: phony"
has "stack.image comes after stack.smoke" "$b/build/stack.ninja" "build \$bdir/stamp/stack.image: image \$bdir/stamp/stack.smoke"
build first
same "first ninja succeeds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/first.log" "$b/build/logs/stack.image.log"
case " $got " in *" stack.image "*) ok "first ninja builds stack.image" ;; *) notok "first ninja builds stack.image ($got)" ;; esac
check "the image exists" podman image inspect $img
ninja -t deps build/stamp/stack.image >"$T/deps.txt" 2>&1
has "the image edge depends on the storage's image list (its depfile)" "$T/deps.txt" "$T/containers/storage/vfs-images/images.json"
cf=$b/build/Containerfile
has "the Containerfile starts from the pinned base ID" "$cf" "FROM ${baseid#sha256:}"
lacks "the Containerfile is COPY-only (no RUN)" "$cf" "RUN "
has "the Containerfile copies one tree (one layer)" "$cf" 'COPY ["root/", "/"]'
same "one COPY" 1 "$(grep -c '^COPY' "$cf")"
has "the profile's environment is ENV" "$cf" '"USE_ROCM"="0"'
same "one ENV, one LABEL: four steps (each step of a build copies the base on vfs)" "1 1 4" \
	"$(grep -c '^ENV ' "$cf") $(grep -c '^LABEL ' "$cf") $(grep -c '^[A-Z]' "$cf")"

# labels: every build-info label is on the image, with its value
kiln-stage labels --format=file "$b/build/info" | sort >"$T/want.labels"
labels $img >"$T/got.labels"
comm -23 "$T/want.labels" "$T/got.labels" >"$T/missing.labels"
same "every build-info label is on the image" "" "$(cat "$T/missing.labels")"
has "the torch commit label" "$T/got.labels" "kiln.torch.commit=$(git -C "$T/mirror/torch" rev-parse v1)"
has "the OCI revision label" "$T/got.labels" "org.opencontainers.image.revision=$(git -C "$T/mirror/torch" rev-parse v1)"
has "the series digest label" "$T/got.labels" "kiln.vision.series_digest="
sd=$(srcpin state "$b/build/src/vision" | sed -n 's/^SERIES_DIGEST=//p' | tr -d "\"'")
check "vision's tree has a series digest" test -n "$sd"
has "the series digest label is srcpin's" "$T/got.labels" "kiln.vision.series_digest=$sd"
has "the version label" "$T/got.labels" "kiln.vision.version=$(sed -n "s/^VERSION=//p" "$b/build/info/vision.info" | tr -d "'\"")"
has "the OCI version label (torch's)" "$T/got.labels" "org.opencontainers.image.version=$(sed -n "s/^VERSION=//p" "$b/build/info/torch.info" | tr -d "'\"")"
has "the OCI source label (torch's URL)" "$T/got.labels" "org.opencontainers.image.source="
has "the wheel hash label" "$T/got.labels" "kiln.torch.wheel_sha256=$(sha256sum "$(cat "$b/build/wheels/torch.picked")" | cut -c1-64)"
has "the arch label" "$T/got.labels" "kiln.arch=cpu"
has "the stage keys" "$T/got.labels" "kiln.stage.vision.wheel=$(sed -n 's/^KEY=//p' "$b/build/stamp/vision.wheel" | tr -d '"')"
has "the lock's digest" "$T/got.labels" "kiln.requirements_lock=sha256:$(sha256sum "$b/build/requirements.lock" | cut -c1-64)"
has "the base label" "$T/got.labels" "org.opencontainers.image.base.name=localhost/kiln-toy-base:1"

# the lock: every wheel kiln installed, hashed; pip installs from it with --require-hashes
lk=$b/build/requirements.lock
tw=$(cat "$b/build/wheels/torch.picked")
has "the lock pins torch by its wheel's hash" "$lk" "--hash=sha256:$(sha256sum "$tw" | cut -c1-64)"
vv=$(sed -n "s/^VERSION=//p" "$b/build/info/vision.info" | tr -d "'\"")
has "the lock has torchvision at its built version" "$lk" "torchvision==$vv --hash=sha256:"
has "the lock lists the venv's other packages" "$lk" "# pip=="
has "build-info.json holds the lock's digest" "$b/build/build-info.json" "\"requirements_lock\":\"sha256:$(sha256sum "$lk" | cut -c1-64)\""
toy_venv "$T/v2"
check "pip install --require-hashes -r requirements.lock (a fresh venv)" \
	"$T/v2/bin/python" -m pip install --no-index --require-hashes --no-deps --disable-pip-version-check \
	--find-links="$b/build/wheels/torch" --find-links="$b/build/wheels/vision" \
	--find-links="$b/build/wheels/audio" -r "$lk"
sed 's/--hash=sha256:\(.\)/--hash=sha256:0/' "$lk" >"$T/bad.lock"
exits "a wrong hash in the lock: pip refuses" 1 \
	"$T/v2/bin/python" -m pip install --no-index --require-hashes --no-deps --force-reinstall --disable-pip-version-check \
	--find-links="$b/build/wheels/torch" --find-links="$b/build/wheels/vision" \
	--find-links="$b/build/wheels/audio" -r "$T/bad.lock"

# the filesystem: mount the image and look
m=$(podman image mount $img) && [ -n "$m" ] || m=$T/not-mounted
check "podman image mount" test -d "$m"
check "the image holds the base's file" test -f "$m/etc/kiln-base"
check "the image holds vision's C extension" sh -c 'ls "$1"/lib/python3*/site-packages/torchvision/_C*.so' sh "$m$T/venv"
check "the image holds torch's library" sh -c 'ls "$1"/lib/python3*/site-packages/torch/lib/libtorch_toy.so' sh "$m$T/venv"
check "the image holds the wheels" test -f "$m/opt/kiln/wheels/${tw##*/}"
check "the image holds the lock" cmp "$m/opt/kiln/requirements.lock" "$lk"
check "the image holds build-info.json" cmp "$m/opt/kiln/build-info.json" "$b/build/build-info.json"
podman image unmount $img >/dev/null 2>&1
id1=$(podman image inspect --format '{{.Id}}' $img)

t0=$(date +%s%N)
build second
echo "# second ninja (a no-op, the image in the storage): $(( ($(date +%s%N) - t0) / 1000000 )) ms"
same "second ninja: no work to do" "ninja: no work to do." "$(cat "$T/second.log")"
same "the image is the same" "$id1" "$(podman image inspect --format '{{.Id}}' $img)"
has "the stamp's ID is the image's" "$b/build/stamp/stack.image" "ID=\"sha256:$id1\""

# the image removed from the storage (podman rmi): the next ninja notices (the edge's
# depfile names the storage's image list), finds the stamp's image gone and builds it
# again; nothing else reruns
check "podman rmi the image" podman rmi $img
KILN_EXPLAIN=1
export KILN_EXPLAIN
build rmi
unset KILN_EXPLAIN
same "after podman rmi: ninja succeeds" 0 "$brc"
same "after podman rmi: ninja builds the image again, and only it" "stack.image" "$got"
has "KILN_EXPLAIN says why" "$T/rmi.log" "kiln: stack.image: running: input image missing: $img (sha256:$id1) is not in podman's storage"
lacks "... and only that reason" "$T/rmi.log" "no stamp yet"
check "... which does not stay behind (STAMP.why)" test ! -e "$b/build/stamp/stack.image.why"
has "so does the summary line" "$T/rmi.log" "stack.image: rebuilt in"
grep '^stack.image: rebuilt in' "$T/rmi.log" >"$T/rmi.sum"
has "(its note)" "$T/rmi.sum" "(input image missing: $img (sha256:$id1)"
check "the image is back" podman image exists $img
id1=$(podman image inspect --format '{{.Id}}' $img)
has "the stamp has the new image's ID" "$b/build/stamp/stack.image" "ID=\"sha256:$id1\""
build rmi2
same "then ninja: no work to do" "ninja: no work to do." "$(cat "$T/rmi2.log")"

# another image changes the storage: ninja looks at the image stage, finds its image and
# rebuilds nothing; after that look, no work again
check "podman tag another image" podman tag "$baseid" localhost/kiln-other:1
t0=$(date +%s%N)
build other
echo "# ninja after the storage changed (the image stage looks, rebuilds nothing): $(( ($(date +%s%N) - t0) / 1000000 )) ms"
same "another image in the storage: ninja succeeds" 0 "$brc"
same "another image in the storage: nothing is rebuilt" "" "$got"
same "(the image is the same)" "$id1" "$(podman image inspect --format '{{.Id}}' $img)"
build other2
same "then ninja: no work to do" "ninja: no work to do." "$(cat "$T/other2.log")"

# the image's name moved to another image: built again under its name
check "podman tag the base as the image's name" podman tag "$baseid" $img
KILN_EXPLAIN=1
export KILN_EXPLAIN
build moved
unset KILN_EXPLAIN
same "the name on another image: the image is built again" "stack.image" "$got"
has "KILN_EXPLAIN says why" "$T/moved.log" "kiln: stack.image: running: input image changed: $img is now $baseid, not sha256:$id1"
check "the name is the image again (not the base)" test "$(podman image inspect --format '{{.Id}}' $img)" != "${baseid#sha256:}"
id1=$(podman image inspect --format '{{.Id}}' $img)

# a pin bump rebuilds the image, with the new commit in its labels
toy_commit vision v2 5
check "configure --pin vision=v2" conf --pin vision=v2
build bump
same "bump vision: ninja succeeds" 0 "$brc"
same "bump vision: vision's stages, the smoke test and the image rerun" \
	"stack.image stack.smoke vision.deps vision.install vision.patch vision.pick vision.src vision.wheel" "$got"
id2=$(podman image inspect --format '{{.Id}}' $img)
check "bump vision: a new image" test "$id1" != "$id2"
labels $img >"$T/got2.labels"
has "bump vision: the image's label has vision's new commit" "$T/got2.labels" \
	"kiln.vision.commit=$(git -C "$T/mirror/vision" rev-parse v2)"
has "bump vision: the lock has the new vision wheel's hash" "$lk" \
	"--hash=sha256:$(sha256sum "$(cat "$b/build/wheels/vision.picked")" | cut -c1-64)"
has "bump vision: the image's lock label is the new lock's" "$T/got2.labels" \
	"kiln.requirements_lock=sha256:$(sha256sum "$lk" | cut -c1-64)"
kiln-stage labels --format=file "$b/build/info" | sort >"$T/want2.labels"
same "bump vision: every build-info label is on the new image" "" "$(comm -23 "$T/want2.labels" "$T/got2.labels")"

# a base that does not match its pin: one line, and no image
sed -i "s/^image_BASE=.*/image_BASE=$base2/" "$T/pins.env"
build badbase 1
same "a base that does not match image_BASE: ninja fails" 1 "$brc"
grep '^kiln: stack.image: image base' "$T/badbase.log" >"$T/badbase.lines"
same "one line says so" 1 "$(lines "$T/badbase.lines")"
has "it names the pinned and the actual ID" "$T/badbase.lines" "image base localhost/kiln-toy-base:1 is $baseid, but the pins say image_BASE=$base2"
build badbase2 1
same "and again: a failed image is never a no-op" 1 "$brc"
# pinned right again: the image builds on the other base
check "configure --image-base=localhost/kiln-toy-base:2" conf --pin vision=v2 --image-base=localhost/kiln-toy-base:2
build base2
same "the image builds on the re-pinned base" 0 "$brc"
has "FROM the new base" "$cf" "FROM ${base2#sha256:}"

# the base pinned by its digest instead of its ID
dg=$(podman image inspect --format '{{.Digest}}' localhost/kiln-toy-base:2)
sed -i "s/^image_BASE=.*/image_BASE=$dg/" "$T/pins.env"
build digest
same "image_BASE=DIGEST: the image builds" 0 "$brc"
same "image_BASE=DIGEST: only the image is built again" "stack.image" "$got"
has "FROM the base's ID" "$cf" "FROM ${base2#sha256:}"
labels $img >"$T/got4.labels"
has "the base's digest label" "$T/got4.labels" "org.opencontainers.image.base.digest=$dg"
sed -i "s/^image_BASE=.*/image_BASE=sha256:$(printf '%064d' 1)/" "$T/pins.env"
build baddigest 1
same "a digest or ID that matches nothing: ninja fails" 1 "$brc"
has "with the one line" "$T/baddigest.log" "kiln: stack.image: image base localhost/kiln-toy-base:2 is $base2, but the pins say image_BASE=sha256:$(printf '%064d' 1)"
sed -i "s/^image_BASE=.*/image_BASE=$dg/" "$T/pins.env"
build digest2
same "pinned right again: the image builds" 0 "$brc"

# buildah, where podman does not run (a podman first on PATH that fails): the image
# removed, then built again by buildah into the same storage
mkdir -p "$T/nopodman" && printf '#!/bin/sh\nexit 127\n' >"$T/nopodman/podman" && chmod +x "$T/nopodman/podman"
check "podman rmi the image" podman rmi $img
PATH=$T/nopodman:$PATH KILN_EXPLAIN=1 ninja >"$T/buildah.log" 2>&1
same "buildah: ninja succeeds" 0 "$?"
same "buildah: the image is built again" "stack.image" "$(rebuilt "$T/buildah.log")"
has "buildah: its check looked in buildah's storage" "$T/buildah.log" "kiln: stack.image: running: input image missing: $img (sha256:"
has "(in buildah's words)" "$T/buildah.log" "is not in buildah's storage"
check "buildah: the image is there" podman image exists $img
labels $img >"$T/got3.labels"
kiln-stage labels --format=file "$b/build/info" | sort >"$T/want3.labels"
same "buildah: every build-info label is on the image" "" "$(comm -23 "$T/want3.labels" "$T/got3.labels")"
has "buildah: the stamp has its ID" "$b/build/stamp/stack.image" "ID=\"sha256:$(podman image inspect --format '{{.Id}}' $img)\""
build afterbuildah
same "then (podman again) ninja: no work to do" "ninja: no work to do." "$(cat "$T/afterbuildah.log")"
