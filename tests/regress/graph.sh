#!/bin/sh
# graph: the stack's build graph end to end on a toy stack (tests/regress/graph-toy.inc):
# a first build installs everything, a second does nothing, each kind of change reruns
# exactly the stages it must, a killed build resumes, a failing stage leaves no stamp and
# shows its log, and a second build folder restores every wheel from the stage cache.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"

toy_folder
conf () {
	"$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--rocm-path="$T/rocm" --stage-cache="$T/stagecache" --jobs=2 KILN_BIN="$KILN_BIN" "$@"
}
# build NAME: run ninja, keep its output in $T/NAME.log, the rebuilt stages in $got
build () { ninja >"$T/$1.log" 2>&1; brc=$?; got=$(rebuilt "$T/$1.log"); }
imp () { "$T/venv/bin/python" -c "$1" 2>&1; }

check "configure --arch=gfx1100 with the toy pins" conf --arch=gfx1100
has "the graph names the stages" "$b/build/stack.ninja" "build vision.wheel: phony"
has "an AMD arch: vision has a hipify stage" "$b/build/stack.ninja" "build vision.hipify: phony"
build first
same "first ninja succeeds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,80s/^/#   /p' "$T/first.log"
all="audio.deps audio.install audio.patch audio.pick audio.src audio.wheel stack.smoke torch.deps torch.install torch.patch torch.pick torch.src torch.wheel vision.deps vision.hipify vision.install vision.patch vision.pick vision.src vision.wheel"
same "first ninja runs every stage once" "$all" "$got"
same "the stack imports: vision's C extension calls torch's library (patched: +100, hipified: +1000)" "30 1110 33 gfx1100" \
	"$(imp 'import torch, torchvision, torchaudio; print(torch.scale(3), torchvision.op(1), torchaudio.op(3), torch.ARCH)')"
has "a finished stage says rebuilt and its time" "$T/first.log" "torch.wheel: rebuilt in "
# the extension setuptools compiled with Python's own CFLAGS (-g) carries no DWARF: the
# wheel step's -g0 comes last
ext=$(ls "$T"/venv/lib/python3*/site-packages/torch/_C*.so 2>/dev/null | head -n 1)
check "torch._C is installed" test -n "$ext"
run readelf -S "$ext"
lacks "and has no debug sections (-g0 after Python's -g)" "$T/.out" ".debug_info"
check "the stage log is kept" test -s "$b/build/logs/torch.wheel.log"
has "build-info.json records vision's commit" "$b/build/build-info.json" "\"commit\":\"$(git -C "$T/mirror/vision" rev-parse v1)\""
has "build-info.json records the patch series digest" "$b/build/build-info.json" "\"series_digest\":\""
# the digest KILN_EXPLAIN shows (the key's SERIES) is the one build-info records
sd=$(sed -n 's/^SERIES="\(.*\)"$/\1/p' "$b/build/keys/vision.patch")
has "the key's SERIES is build-info's series_digest" "$b/build/build-info.json" "\"series_digest\":\"$sd\""
check "labels for podman/docker" kiln-stage labels "$b/build/info"
has "OCI revision label is torch's commit" "$T/.out" "--label=org.opencontainers.image.revision=$(git -C "$T/mirror/torch" rev-parse v1)"

build second
same "second ninja: no work to do" "ninja: no work to do." "$(cat "$T/second.log")"

# bump vision: exactly vision's stages (and the stack's smoke test)
toy_commit vision v2 5
check "configure --pin vision=v2" conf --arch=gfx1100 --pin vision=v2
export KILN_EXPLAIN=1
build bump-vision
unset KILN_EXPLAIN
has "KILN_EXPLAIN: vision.src says which input changed" "$T/bump-vision.log" "kiln: vision.src: running: input REF changed: v1 -> v2"
has "KILN_EXPLAIN: vision.patch says its release changed" "$T/bump-vision.log" "kiln: vision.patch: running: input RELEASE changed: 1 -> 2"
same "bump vision: only vision's stages rerun" \
	"stack.smoke vision.deps vision.hipify vision.install vision.patch vision.pick vision.src vision.wheel" "$got"
same "bump vision: the new vision is installed (patched and hipified)" 1115 "$(imp 'import torchvision; print(torchvision.op(1))')"

# bump torch: torch and everything built against it; not vision's or audio's sources
toy_commit torch v2 20
check "configure --pin torch=v2" conf --arch=gfx1100 --pin vision=v2 --pin torch=v2
build bump-torch
same "bump torch: torch and its dependents rerun" \
	"audio.install audio.pick audio.wheel stack.smoke torch.deps torch.install torch.patch torch.pick torch.src torch.wheel vision.install vision.pick vision.wheel" "$got"
same "bump torch: dependents use the new torch" "60 1125 63" \
	"$(imp 'import torch, torchvision, torchaudio; print(torch.scale(3), torchvision.op(1), torchaudio.op(3))')"

# edit a patch in place: its component from patch on
sed -i 's/^+#define ADD 100/+#define ADD 200/' "$T/patches/vision/0001-add.patch"
build edit-patch
same "edited patch: vision reruns from patch (build.ninja regenerated)" \
	"stack.smoke vision.deps vision.hipify vision.install vision.patch vision.pick vision.wheel" "$got"
same "edited patch: the new patch is in the installed vision" 1225 "$(imp 'import torchvision; print(torchvision.op(1))')"

# change --arch: the stages whose environment holds the arch
check "configure --arch=gfx1151" conf --arch=gfx1151 --pin vision=v2 --pin torch=v2
build arch
same "arch change: the wheel stages and what follows them rerun" \
	"audio.install audio.pick audio.wheel stack.smoke torch.install torch.pick torch.wheel vision.install vision.pick vision.wheel" "$got"
same "arch change: torch was built for the new arch" gfx1151 "$(imp 'import torch; print(torch.ARCH)')"
has "arch change: the smoke stage ran gpucheck cover" "$b/build/logs/stack.smoke.log" "gfx1151: covered natively"
tsite=$("$T/venv/bin/python" -c 'import torch, os; print(os.path.dirname(torch.__file__))')
check "arch change: torch's GPU code covers gfx1151" gpucheck cover --target=gfx1151 "$tsite"
exits "arch change: and no longer gfx1100" 1 gpucheck cover --target=gfx1100 "$tsite"

# the same configure arguments again: nothing reruns
check "configure again with the same arguments" conf --arch=gfx1151 --pin vision=v2 --pin torch=v2
build same-args
same "same configure arguments: no work to do" "ninja: no work to do." "$(cat "$T/same-args.log")"
check "the stamps agree with the keys" kiln-stage run -n --key="$b/build/keys/torch.wheel" \
	--stamp="$b/build/stamp/torch.wheel" --parent="$b/build/stamp/torch.patch" --parent="$b/build/stamp/torch.deps" torch.wheel

# SIGKILL in the middle of torch.wheel: the next ninja resumes at torch.wheel
toy_commit torch v3 30
check "configure --pin torch=v3" conf --arch=gfx1151 --pin vision=v2 --pin torch=v3
: >"$T/slow"
setsid ninja >"$T/killed.log" 2>&1 &
npid=$!
waitalive "$npid" test -f "$T/started"
check "torch.wheel started" test -f "$T/started"
# the whole build dies at once (ninja, kiln-stage and the compiler: its session)
pkill -KILL -s "$npid"
wait "$npid" 2>/dev/null
rm -f "$T/slow"
check "killed: torch.src finished and kept its stamp" test -f "$b/build/stamp/torch.src"
exits "killed: no stamp for torch.wheel" 1 test -f "$b/build/stamp/torch.wheel"
build resume
same "resume: from torch.wheel on, torch's sources not fetched again" \
	"audio.install audio.pick audio.wheel stack.smoke torch.install torch.pick torch.wheel vision.install vision.pick vision.wheel" "$got"
same "resume: the stack works" "90 1235" "$(imp 'import torch, torchvision; print(torch.scale(3), torchvision.op(1))')"

# a failing stage: no stamp, the log's tail and its path
(cd "$T/mirror/audio" && printf 'this is not C\n' >>csrc/ops.c && git commit -qam broken && git tag broken) || exit 2
check "configure --pin audio=broken" conf --arch=gfx1151 --pin vision=v2 --pin torch=v3 --pin audio=broken
build fail
same "failing stage: ninja fails" 1 "$brc"
has "failing stage: named with its exit" "$T/fail.log" "kiln: audio.wheel failed (exit 1) after"
has "failing stage: the log tail shows the compiler's error" "$T/fail.log" "this is not C"
has "failing stage: the log's path" "$T/fail.log" "full log: $b/build/logs/audio.wheel.log"
exits "failing stage: no stamp" 1 test -f "$b/build/stamp/audio.wheel"
build fail-again
same "failing stage: still failing, nothing else reran" "" "$got"
has "failing stage: it ran again (no stamp)" "$T/fail-again.log" "audio.wheel failed"
check "back to the good audio" conf --arch=gfx1151 --pin vision=v2 --pin torch=v3
build fixed
same "fixed: audio's sources again; its wheel comes back from the cache, so nothing after it reruns" \
	"audio.deps audio.patch audio.src audio.wheel" "$got"
has "fixed: audio.wheel restored" "$T/fixed.log" "audio.wheel: restored from the stage cache"

# a second build folder with the same pins: every wheel stage restored from the cache
toy_venv "$T/venv2"
mkdir -p "$T/b2" && cd "$T/b2" || exit 2
check "configure a second build folder" "$KSRC/configure" --python="$T/venv2/bin/python" \
	--pins="$T/pins.env" --mirror="$T/mirror" --rocm-path="$T/rocm" --stage-cache="$T/stagecache" \
	KILN_BIN="$KILN_BIN" --arch=gfx1151 --pin vision=v2 --pin torch=v3
build b2
same "second folder succeeds" 0 "$brc"
for c in torch vision audio; do
	has "second folder: $c.wheel restored" "$T/b2.log" "$c.wheel: restored from the stage cache"
done
lacks "second folder: no wheel was built" "$T/b2.log" ".wheel: rebuilt"
same "second folder: the restored stack works in its own venv" "90 1235 93" \
	"$("$T/venv2/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.scale(3), torchvision.op(1), torchaudio.op(3))' 2>&1)"

# a prebuilt torch wheel replaces torch's build; vision and audio build against it
tw=$(ls "$T"/b/build/wheels/torch/*.whl)
toy_venv "$T/venv3"
mkdir -p "$T/b3" && cd "$T/b3" || exit 2
check "configure --pin torch=wheel:..." "$KSRC/configure" --python="$T/venv3/bin/python" \
	--pins="$T/pins.env" --mirror="$T/mirror" --rocm-path="$T/rocm" KILN_BIN="$KILN_BIN" \
	--arch=gfx1151 --pin vision=v2 --pin "torch=wheel:$tw"
lacks "wheel pin: no torch.src stage" "$T/b3/build/stack.ninja" "build torch.src:"
lacks "wheel pin: no torch.wheel stage" "$T/b3/build/stack.ninja" "build torch.wheel:"
build b3
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/b3.log"
same "wheel pin: torch is picked and installed, the rest is built against it" \
	"audio.deps audio.install audio.patch audio.pick audio.src audio.wheel stack.smoke torch.install torch.pick vision.deps vision.hipify vision.install vision.patch vision.pick vision.src vision.wheel" "$got"
same "wheel pin: the stack works" "90 1235 93" \
	"$("$T/venv3/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.scale(3), torchvision.op(1), torchaudio.op(3))' 2>&1)"
has "wheel pin: build-info names the wheel" "$T/b3/build/build-info.json" "\"wheel\":\"${tw##*/}\""
