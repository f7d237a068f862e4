#!/bin/sh
# team-distcc: --distribute=distcc on the toy stack against two real distccd on loopback
# ports (issue 20). Folder A lists host 1 first, folder B host 2 first and adds ccache
# (ccache first, misses handed to distcc through CCACHE_PREFIX): the C extensions'
# compiles are seen in both distccd logs, MAX_JOBS is the hosts' slots, and the stack
# built that way imports and works. With KILN_SLOW=1 (optional tier slow), torchvision
# 0.14.1 of the debian track is built through the same two distccd too: a real C++
# extension's compiles in both logs.
. "$KILN_SRC/tests/lib.sh"
need distcc distccd ccache
. "$KILN_SRC/tests/regress/graph-toy.inc"
# two distccd on free ports: each ready when it listens there itself (lib.sh's startserver)
distccd1 () {
	distccd --no-detach --daemon --listen 127.0.0.1 --port "$1" --allow 127.0.0.1 --enable-tcp-insecure \
		--log-stderr --log-level info --jobs 2 2>"$T/distccd.$1.log" &
	SERVER_PID=$!
}
# the servers this file started (and has not reaped: their ids are still theirs)
pids=
at_exit 'for p in $pids; do kill $p 2>/dev/null; done; wait'
startserver 5 distccd1 || { notok "distccd did not start"; sed 's/^/#   /' "$T"/distccd.*.log; exit 1; }
p1=$SERVER_PORT pids=$SERVER_PID
startserver 5 distccd1 || { notok "distccd did not start"; sed 's/^/#   /' "$T"/distccd.*.log; exit 1; }
p2=$SERVER_PORT pids="$pids $SERVER_PID"

conf () {
	v=$1 hosts=$2
	shift 2
	"$KSRC/configure" --python="$v/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--arch=cpu --jobs=1 --distribute=distcc --distribute-hosts="$hosts" KILN_BIN="$KILN_BIN" "$@"
}
imp () { "$1/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.scale(3), torchvision.op(1), torchaudio.op(3))' 2>&1; }
oks () { grep -c "COMPILE_OK" "$1" 2>/dev/null || echo 0; }

toy_venv "$T/va"
mkdir -p "$T/a" && cd "$T/a" || exit 2
check "a: configure --distribute=distcc" conf "$T/va" "127.0.0.1:$p1/2 127.0.0.1:$p2/2"
exits "--distribute=distcc without hosts: 2" 2 env -u DISTCC_HOSTS "$KSRC/configure" --builddir="$T/nohosts" --distribute=distcc KILN_BIN="$KILN_BIN"
has "without hosts: said" "$T/.err" "needs hosts"
ninja >"$T/a.log" 2>&1
same "a: ninja succeeds" 0 "$?"
[ -s "$T/a/build/logs/vision.wheel.log" ] || sed -n '1,40s/^/#   /p' "$T/a.log"
has "a: MAX_JOBS raised to the hosts' slots" "$T/a/build/logs/vision.wheel.log" "(4 slots)"
n1=$(oks "$T/distccd.$p1.log")
same "a: host 1 (listed first) compiled the extensions" yes "$([ "$n1" -ge 3 ] && echo yes || echo no)"
has "a: host 1 compiled vision's C extension" "$T/distccd.$p1.log" "ops.c"
same "a: the stack imports" "30 110 33" "$(imp "$T/va")"

rm -rf "$T/va"
toy_venv "$T/va"
mkdir -p "$T/b" && cd "$T/b" || exit 2
check "b: configure --distribute=distcc --cache=ccache, host 2 first" conf "$T/va" "127.0.0.1:$p2/2 127.0.0.1:$p1/2" --cache=ccache
CCACHE_DIR=$T/ccb ninja >"$T/b.log" 2>&1
same "b: ninja succeeds" 0 "$?"
n2=$(oks "$T/distccd.$p2.log")
same "b: host 2 compiled ccache's misses" yes "$([ "$n2" -ge 3 ] && echo yes || echo no)"
has "b: host 2 compiled torch's C extension" "$T/distccd.$p2.log" "module.c"
has "b: the hit rate is in the summary" "$T/b.log" "torch.wheel: rebuilt in"
has "b: ccache ran first (misses counted)" "$T/b.log" "hits (0%)"
same "b: the stack imports" "30 110 33" "$(imp "$T/va")"

# a real C++ extension (optional tier slow, KILN_SLOW=1: one torchvision build, 4 to 10
# minutes): torchvision 0.14.1 of the debian track (Debian's orig tarball, against Debian's
# python3-torch 1.13.1) built with --distribute=distcc over the same two distccd; its
# compiles are seen in both logs
if [ "${KILN_SLOW:-0}" != 1 ]; then
	optional_case slow "torchvision 0.14.1 through distcc (KILN_SLOW=1; 4 to 10 minutes)"
	exit 0
fi
# the user's tarball cache (this file's HOME is a scratch one)
rh=$(getent passwd "$(id -u)" | cut -d: -f6)
dc=${KILN_DEBSRC_CACHE:-${XDG_CACHE_HOME:-$rh/.cache}/kiln/debsrc}
"$PY3" -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("1.13") else 1)' 2>/dev/null ||
	missing "needs Debian's python3-torch 1.13"
"$PY3" -m venv --system-site-packages "$T/vr" >"$T/vr.log" 2>&1 || missing "cannot make a venv with $PY3"
check "real: Debian's sources as mirrors (debsrc.sh)" sh "$KILN_SRC/ninja/debsrc.sh" --cache="$dc" \
	--pins="$KILN_SRC/env/tracks/debian.env" "$T/rmirror"
mkdir -p "$T/r" && cd "$T/r" || exit 2
check "real: configure the debian track with --distribute=distcc" "$KILN_SRC/configure" --arch=cpu \
	--pins="$KILN_SRC/env/tracks/debian.env" --pin torch=system --without=audio --python="$T/vr/bin/python" \
	--mirror="$T/rmirror" --jobs=1 --distribute=distcc --distribute-hosts="127.0.0.1:$p1/2 127.0.0.1:$p2/2" \
	KILN_BIN="$KILN_BIN"
ninja vision.wheel >"$T/r.log" 2>&1
rc=$?
same "real: ninja vision.wheel succeeds" 0 "$rc"
[ "$rc" = 0 ] || tail -n 20 "$T/r.log" | sed 's/^/#   /'
for p in $p1 $p2; do
	n=$(grep 'COMPILE_OK' "$T/distccd.$p.log" | grep -c 'torchvision/csrc/.*\.cpp')
	same "real: distccd 127.0.0.1:$p compiled torchvision's C++ sources ($n)" yes "$([ "$n" -ge 5 ] && echo yes || echo no)"
done
