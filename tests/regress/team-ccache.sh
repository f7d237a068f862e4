#!/bin/sh
# team-ccache: --cache=ccache --cache-remote=redis://... on the toy stack, against a real
# redis-server on loopback (issue 20): build folder A fills the remote storage; folder B,
# with an empty local ccache and no stage cache, compiles every file from the remote
# storage, and each wheel stage's summary line shows its hit rate.
. "$KILN_SRC/tests/lib.sh"
need redis-server redis-cli ccache
. "$KILN_SRC/tests/regress/graph-toy.inc"
startredis

# both folders build in one --work-dir: ccache (without a base_dir, which would hand the
# compiler relative paths and change __FILE__) hashes the sources' absolute paths
conf () {
	"$KSRC/configure" --python="$1/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--arch=cpu --jobs=2 --cache=ccache --cache-remote="redis://127.0.0.1:$port" --work-dir="$T/wd" \
		KILN_BIN="$KILN_BIN"
}
toy_venv "$T/va"
mkdir -p "$T/a" && cd "$T/a" || exit 2
check "a: configure --cache=ccache --cache-remote=redis://" conf "$T/va"
has "a: the remote storage is a stage setting" "$T/a/build/stack.env" "CACHE_REMOTE=\"redis://127.0.0.1:$port\""
lacks "a: not a key input" "$T/a/build/keys/torch.wheel" "redis://"
CCACHE_DIR=$T/cca ninja >"$T/a.log" 2>&1
same "a: ninja succeeds" 0 "$?"
has "a: torch.wheel's summary shows the hit rate" "$T/a.log" "torch.wheel: rebuilt in"
has "a: first build: every compile a miss" "$T/a.log" "hits (0%), 0 remote)"
n=$(redis-cli -p "$port" dbsize)
same "a: the remote storage holds objects" yes "$([ "${n:-0}" -gt 0 ] && echo yes || echo no)"

# another build folder and a fresh venv at the same path (ccache hashes the include paths
# it is given, so a team shares hits where the target Python and --work-dir are at the
# same places)
rm -rf "$T/va"
toy_venv "$T/va"
mkdir -p "$T/b" && cd "$T/b" || exit 2
check "b: configure with the same remote storage" conf "$T/va"
CCACHE_DIR=$T/ccb ninja >"$T/b.log" 2>&1
same "b: ninja succeeds" 0 "$?"
for c in torch vision audio; do
	line=$(grep "^$c.wheel: rebuilt in" "$T/b.log")
	case "$line" in
	*"hits (100%), "*" remote)") ok "b: $c.wheel: every compile a hit from the remote storage ($line)" ;;
	*) notok "b: $c.wheel: every compile a hit from the remote storage ($line)" ;;
	esac
done
lacks "b: no remote storage hit counted zero" "$T/b.log" "(100%), 0 remote)"
