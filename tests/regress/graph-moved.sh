#!/bin/sh
# graph-moved: a tag that upstream moves (nightly tags, re-tagged releases) is followed by
# the next plain `ninja`: vision.src says so in one line, checks out the new commit, and
# the stages under it rerun on its new identity; anything else upstream does (a new
# commit on a branch, another tag, packing its refs) leaves a no-op a no-op. The toy's
# vision comes from a repository on this machine through --mirror (graph-toy.inc).
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"

toy_folder
up=$T/mirror/vision
build () { ninja "$@" >"$T/ninja.log" 2>&1; brc=$?; got=$(rebuilt "$T/ninja.log"); }
imp () { "$T/venv/bin/python" -c "$1" 2>&1; }
op () { imp 'import torchvision; print(torchvision.op(1))'; }
# retag VALUE: a new upstream commit of vision (rev() = VALUE) and the tag v1 moved to it
retag () {
	ops_c 1 "$1" >"$up/csrc/ops.c"
	(cd "$up" && git commit -qam "vision $1" && git tag -f v1 >/dev/null) || exit 2
	git -C "$up" rev-parse HEAD
}
noop () {
	build vision.install
	same "$1: ninja succeeds" 0 "$brc"
	has "$1: a no-op" "$T/ninja.log" "ninja: no work to do."
	lacks "$1: nothing said of a moved tag" "$T/ninja.log" "moved upstream"
}

check "configure --arch=cpu with the toy pins" \
	"$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
	--jobs=2 KILN_BIN="$KILN_BIN" --arch=cpu
build vision.install
same "first build of vision succeeds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/ninja.log"
same "v1: patched (+100), rev 0" 110 "$(op)"
old=$(git -C "$up" rev-parse v1)

noop "nothing moved"
# upstream goes on without touching the tag: a commit on its branch, a new tag
(cd "$up" && git commit -q --allow-empty -m "more work" && git tag v9) || exit 2
noop "a new commit and a new tag upstream, v1 where it was"

new=$(retag 7)
build vision.install
same "v1 moved: ninja succeeds" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/ninja.log"
same "v1 moved: said in one line" 1 "$(grep -c "tag 'v1' moved upstream: $old -> $new" "$T/ninja.log")"
has "v1 moved: the line is vision.src's summary note" "$T/ninja.log" \
	"vision.src: rebuilt in "
same "v1 moved: vision.src, and the stages under it rerun; torch's do not" \
	"vision.deps vision.install vision.patch vision.pick vision.src vision.wheel" "$got"
same "v1 moved: the new commit is checked out" "$new" "$(git -C "$b/build/src/vision" rev-parse HEAD)"
has "v1 moved: the stamp's identity names it" "$b/build/stamp/vision.src" "$new"
same "v1 moved: the installed vision is the new commit, patched (+100, rev 7)" 117 "$(op)"
noop "after the move"
# the key touched (docs/pins-and-tracks.md: how to ask a remote upstream now): the edge
# asks upstream again, finds v1 where it is, and rebuilds nothing
touch "$b/build/keys/vision.src"
build vision.install
same "the key touched: ninja succeeds" 0 "$brc"
same "the key touched: nothing rebuilt" "" "$got"
noop "the key touched, then nothing"

# refs packed upstream (git gc): the loose tag file ninja watched is gone; the edge runs
# once more, finds v1 where it was and rebuilds nothing
git -C "$up" pack-refs --all || exit 2
build vision.install
same "refs packed: ninja succeeds" 0 "$brc"
same "refs packed: nothing rebuilt" "" "$got"
lacks "refs packed: nothing said of a moved tag" "$T/ninja.log" "moved upstream"
noop "refs packed, then nothing"
# a packed tag moved: git writes it loose into refs/tags/, which ninja watches now
old=$new
new=$(retag 9)
build vision.install
same "packed v1 moved: said in one line" 1 "$(grep -c "tag 'v1' moved upstream: $old -> $new" "$T/ninja.log")"
same "packed v1 moved: the same stages rerun" \
	"vision.deps vision.install vision.patch vision.pick vision.src vision.wheel" "$got"
same "packed v1 moved: the installed vision follows (+100, rev 9)" 119 "$(op)"
noop "after the second move"

# a pin fixed by its commit (vision_SHA) does not follow the tag: its key names the commit
printf 'vision_SHA=%s\n' "$new" >>"$T/pins.env"
check "configure with vision_SHA" \
	"$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
	--jobs=2 KILN_BIN="$KILN_BIN" --arch=cpu
build vision.install
same "vision_SHA: builds" 0 "$brc"
retag 11 >/dev/null
build vision.install
same "vision_SHA, v1 moved again: ninja succeeds" 0 "$brc"
lacks "vision_SHA: no moved tag followed" "$T/ninja.log" "moved upstream"
same "vision_SHA: nothing rebuilt" "" "$got"
same "vision_SHA: the pinned commit stays" "$new" "$(git -C "$b/build/src/vision" rev-parse HEAD)"
