#!/bin/sh
# bench/cache.sh [KILN_BIN]: team caches on the toy stack of tests/regress/graph-toy.inc
# (real git repos, real pip-built C-extension wheels), against real servers on loopback:
#   - ninja in an empty build folder that builds every stage and stores the wheels in an
#     HTTP stage cache (nginx WebDAV), vs ninja in a second folder that restores them
#   - the ccache hit rate of a second build in a fresh folder with the compiler cache's
#     remote storage on redis (when redis-server is installed)
# KILN_BIN: folder with release builds of kiln-stage, srcpin, envclean, wheelpick
# [build/bin of the current folder].
KILN_SRC=$(cd "$(dirname "$0")/.." && pwd)
KILN_BIN=${1:-${KILN_BIN:-$(pwd)/build/bin}}
KILN_BIN=$(cd "$KILN_BIN" && pwd) || exit 2
export KILN_SRC KILN_BIN
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"
. "$KILN_SRC/tests/nginx-dav.inc"
dav_start
now () { date +%s.%N; }
# timed NAME CONFIGURE-ARGS...: configure and ninja in $T/NAME, prints the ninja seconds
timed () {
	n=$1
	shift
	rm -rf "$T/v"
	toy_venv "$T/v"
	mkdir -p "$T/$n" && cd "$T/$n" || exit 2
	"$KSRC/configure" --python="$T/v/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--arch=cpu --jobs=2 --git-cache="$T/git.$n" KILN_BIN="$KILN_BIN" "$@" >/dev/null || exit 1
	t0=$(now)
	ninja >"$T/$n.log" 2>&1 || { echo "ninja failed:"; tail -40 "$T/$n.log"; exit 1; }
	t1=$(now)
	echo "$t1 - $t0" | bc
}
wheels () { grep -c "\.wheel: $1" "$T/$2.log"; }

local=$(timed local)
store=$(timed store --stage-cache="$DAV_URL")
# the uploads run in the background after each stamp: wait for them (STAMP.upload locks)
for f in "$T"/store/build/stamp/*.upload; do flock "$f" true; done
stored=$(grep -c '# kiln-stage [a-z]*\.wheel: stored in the remote stage cache' "$T"/store/build/logs/*.wheel.log | grep -c ':1$')
restore=$(timed restore --stage-cache="$DAV_URL")
printf 'toy stack, ninja in an empty build folder (stages src..smoke, 3 wheels):\n'
printf '  %-46s %6.2f s\n' "no stage cache (build everything)" "$local"
printf '  %-46s %6.2f s  (%s wheels stored)\n' "HTTP stage cache, empty (build, upload behind)" "$store" "$stored"
printf '  %-46s %6.2f s  (%s wheels restored, %s rebuilt)\n' "HTTP stage cache, full (restore)" "$restore" "$(wheels restored restore)" "$(wheels rebuilt restore)"
printf '  wheel stages alone: build %s, restore %s\n' \
	"$(sed -n 's/^\([a-z]*\.wheel\): rebuilt in \([0-9.]*\)s.*/\2/p' "$T/store.log" | tr '\n' ' ')" \
	"$(sed -n 's/^\([a-z]*\.wheel\): restored from the stage cache in \([0-9.]*\)s.*/\2/p' "$T/restore.log" | tr '\n' ' ')"
dav_stop

if command -v redis-server >/dev/null 2>&1 && command -v ccache >/dev/null 2>&1; then
	port=$(dav_port)
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$T" >"$T/redis.log" 2>&1 &
	rpid=$!
	sleep 0.5
	export CCACHE_DIR=$T/cc1
	c1=$(timed cc1 --cache=ccache --cache-remote="redis://127.0.0.1:$port")
	export CCACHE_DIR=$T/cc2
	c2=$(timed cc2 --cache=ccache --cache-remote="redis://127.0.0.1:$port")
	kill "$rpid"
	printf 'ccache with redis remote storage, second build in a fresh folder and local cache:\n'
	printf '  %-46s %6.2f s  %s\n' "first build" "$c1" "$(sed -n 's/^\([a-z]*\.wheel\): rebuilt in .*(\(ccache .*\))$/\1 \2;/p' "$T/cc1.log" | tr '\n' ' ')"
	printf '  %-46s %6.2f s  %s\n' "second build" "$c2" "$(sed -n 's/^\([a-z]*\.wheel\): rebuilt in .*(\(ccache .*\))$/\1 \2;/p' "$T/cc2.log" | tr '\n' ' ')"
fi
