#!/bin/sh
# team-ccache: --cache=ccache --cache-remote=redis://... on the toy stack, against a real
# redis-server on loopback (issue 20): build folder A fills the remote storage; folder B,
# with an empty local ccache and no stage cache, compiles every file from the remote
# storage, and each wheel stage's summary line shows its hit rate.
. "$KILN_SRC/tests/lib.sh"
need redis-server redis-cli ccache
. "$KILN_SRC/tests/regress/graph-toy.inc"
# redis on a free port: ready when redis-server itself listens there (lib.sh's startserver),
# then its own answer to PING
redis () { redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no --dir "$T" >"$T/redis.log" 2>&1 & SERVER_PID=$!; }
rpid=
at_exit 'kill $rpid 2>/dev/null; wait $rpid 2>/dev/null'
startserver 5 redis || { sed 's/^/#   /' "$T/redis.log"; notok "redis-server did not start"; exit 1; }
port=$SERVER_PORT rpid=$SERVER_PID
check "redis-server answers PING" redis-cli -p "$port" ping

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
