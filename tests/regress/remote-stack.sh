#!/bin/sh
# remote-stack: the toy stack through configure and ninja with --stage-cache=http://...
# against a real nginx WebDAV server on loopback (issue 20): build folder A builds and
# stores every wheel; build folder B (another venv) restores every wheel and compiles
# nothing; the server stopped in the middle of folder C's build changes nothing but speed.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"
. "$KILN_SRC/tests/nginx-dav.inc"
dav_start

conf () {
	"$KSRC/configure" --python="$1/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--arch=cpu --stage-cache="$DAV_URL" --jobs=2 KILN_BIN="$KILN_BIN"
}
build () { ninja >"$T/$1.log" 2>&1; brc=$?; [ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/$1.log"; }
wheel () { ls "$1"/build/wheels/"$2"/*.whl 2>/dev/null | head -n 1; }
imp () { "$1/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.scale(3), torchvision.op(1), torchaudio.op(3))' 2>&1; }

toy_venv "$T/va"
mkdir -p "$T/a" && cd "$T/a" || exit 2
check "a: configure --stage-cache=http://..." conf "$T/va"
has "a: the URL reaches the graph as a URL" "$T/a/build/stack.ninja" "--stage-cache=http\$://127.0.0.1\$:$DAV_PORT/kiln/"
exits "a: no relative folder named http:" 1 test -e "$T/a/http:"
build a
same "a: ninja succeeds" 0 "$brc"
# uploads run in the background after each stamp; each holds STAMP.upload until done
for f in "$T"/a/build/stamp/*.upload; do flock "$f" true; done
for c in torch vision audio; do
	has "a: $c.wheel rebuilt" "$T/a.log" "$c.wheel: rebuilt in"
	has "a: $c.wheel uploads in the background" "$T/a.log" "$c.wheel: storing in the remote stage cache in the background"
	has "a: $c.wheel stored on the server (its log says)" "$T/a/build/logs/$c.wheel.log" "# kiln-stage $c.wheel: stored in the remote stage cache"
done
stackwant=$(imp "$T/va")
same "a: the stack imports (vision patched: +100)" "30 110 33" "$stackwant"

# the git mirrors: one per repository in the per-user cache, shared by every build folder
check "a: the mirrors are in the per-user git cache" test -d "$HOME/.cache/kiln/git/torch.git"
exits "a: not in the build folder" 1 test -e "$T/a/build/git"
has "a: the git cache is a setting" "$T/a/build/stack.env" "GIT_CACHE=\"$HOME/.cache/kiln/git\""

# configure refuses what cannot work, in one line
mkdir -p "$T/bad"
cfg () { (cd "$T/bad" && "$KSRC/configure" KILN_BIN="$KILN_BIN" "$@"); }
exits "configure: credentials in --stage-cache: 2" 2 cfg --stage-cache="http://u:pw@127.0.0.1:1/x/"
has "configure: credentials: said" "$T/.err" "put them in ~/.netrc (or \$NETRC), KILN_CACHE_TOKEN or KILN_FETCH_TOKEN"
lacks "configure: credentials: not repeated" "$T/.err" "pw@"
exits "configure: an unknown scheme: 2" 2 cfg --stage-cache="ftp://127.0.0.1/x/"
exits "configure: --cache-remote without --cache: 2" 2 cfg --cache-remote="redis://127.0.0.1:1"
has "configure: --cache-remote without --cache: said" "$T/.err" "needs --cache=ccache or --cache=sccache"
exits "configure: --cache-remote with a bad scheme: 2" 2 cfg --cache=ccache --cache-remote="ftp://x/"
exits "configure: an unknown --distribute: 2" 2 cfg --distribute=pigeon
exits "configure: --cache=sccache with --distribute: 2" 2 cfg --cache=sccache --distribute=icecream
has "configure: sccache with a distributor: said" "$T/.err" "use --cache=ccache with --distribute"
check "configure: file:// is a folder" cfg --stage-cache="file://$T/sc"
check "configure: file:// reaches the build as the folder" grep -q "^KILN_STAGE_CACHE *= *$T/sc\$" "$T/bad/config.mk"

toy_venv "$T/vb"
mkdir -p "$T/b" && cd "$T/b" || exit 2
check "b: configure with the same server" conf "$T/vb"
build b
same "b: ninja succeeds" 0 "$brc"
for c in torch vision audio; do
	has "b: $c.wheel restored" "$T/b.log" "$c.wheel: restored from the stage cache in"
	check "b: the same $c wheel as a" cmp "$(wheel "$T/a" $c)" "$(wheel "$T/b" $c)"
	has "b: $c.wheel's log is a's build log" "$T/b/build/logs/$c.wheel.log" "restored from the stage cache"
done
lacks "b: no wheel stage compiled" "$T/b.log" ".wheel: rebuilt in"
same "b: no compiler ran in any wheel stage" "" "$(grep -l 'building .* extension\|gcc\|cc -' "$T"/b/build/logs/*.wheel.log 2>/dev/null | xargs -r grep -L 'restored from the stage cache' | tr '\n' ' ')"
same "b: the stack imports" "$stackwant" "$(imp "$T/vb")"

# c: the server goes away after the first restore: the rest builds here, the same wheels.
# The stop comes at a point of the build, not of the clock: ninja builds torch.wheel
# (restored), the server stops, ninja goes on with the rest
toy_venv "$T/vc"
mkdir -p "$T/c" && cd "$T/c" || exit 2
check "c: configure with the same server" conf "$T/vc"
ninja torch.wheel >"$T/c.log" 2>&1
same "c: ninja torch.wheel succeeds" 0 "$?"
dav_stop
ninja >>"$T/c.log" 2>&1
brc=$?
same "c: ninja succeeds with the server stopped mid-build" 0 "$brc"
[ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/c.log"
has "c: a stage was restored before the stop" "$T/c.log" "restored from the stage cache in"
has "c: a stage after the stop built here" "$T/c.log" ".wheel: rebuilt in"
has "c: the down server is a warning" "$T/c.log" "did not answer"
for c in torch vision audio; do
	check "c: the same $c wheel as a" cmp "$(wheel "$T/a" $c)" "$(wheel "$T/c" $c)"
done
same "c: the stack imports" "$stackwant" "$(imp "$T/vc")"
