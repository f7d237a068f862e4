#!/bin/sh
# bench/distcc-vision.sh [KILN_BIN]: --distribute=distcc on a real C++ extension,
# torchvision 0.14.1 (Debian's orig tarball, the debian track env/tracks/debian.env) against
# Debian's python3-torch 1.13.1, over two distccd on loopback ports (2 slots each): the
# wall time of ninja vision.wheel and how many of torchvision's compiles each distccd log
# shows. Work folder: KILN_BENCH_DIR [build/bench-distcc-vision], made afresh. About as
# long as one vision build (5 minutes on an idle 2-core machine: the hosts are this one).
set -u
NAME=distcc-vision NEEDS="distcc distccd"
. "$(dirname "$0")/debian-vision.inc"
freeport () { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
p1=$(freeport) p2=$(freeport)
pids=
for p in $p1 $p2; do
	distccd --no-detach --daemon --listen 127.0.0.1 --port "$p" --allow 127.0.0.1 --enable-tcp-insecure \
		--log-stderr --log-level info --jobs 2 2>"$W/distccd.$p.log" &
	pids="$pids $!"
done
trap 'for p in $pids; do kill $p 2>/dev/null; done' EXIT INT TERM
mkdir -p "$W/b" && (cd "$W/b" && "$KILN_SRC/configure" --arch=cpu --pins="$KILN_SRC/env/tracks/debian.env" \
	--pin torch=system --without=audio --python="$W/venv/bin/python" --mirror="$W/mirror" \
	--git-cache="$W/git" --distribute=distcc --distribute-hosts="127.0.0.1:$p1/2 127.0.0.1:$p2/2" \
	KILN_BIN="$KB") >"$W/conf.log" 2>&1 || { cat "$W/conf.log"; exit 1; }
t0=$(now)
ninja -C "$W/b" vision.wheel >"$W/b.log" 2>&1 || { tail -n 40 "$W/b.log"; exit 1; }
t1=$(now)
n () { grep -c 'COMPILE_OK' "$W/distccd.$1.log"; }
cpp () { grep 'COMPILE_OK' "$W/distccd.$1.log" | grep -c 'torchvision/csrc/.*\.cpp'; }
{
	printf 'torchvision 0.14.1 against python3-torch 1.13.1, --distribute=distcc over two distccd on loopback:\n'
	printf '  ninja vision.wheel: %.1f s   %s\n' "$(echo "$t1 - $t0" | bc)" "$(grep '^vision\.wheel: rebuilt in' "$W/b.log")"
	printf '  %s\n' "$(grep -m 1 'distcc:' "$W/b/build/logs/vision.wheel.log")"
	printf '  distccd 127.0.0.1:%s: %s compiles OK (%s of torchvision/csrc/*.cpp)\n' "$p1" "$(n "$p1")" "$(cpp "$p1")"
	printf '  distccd 127.0.0.1:%s: %s compiles OK (%s of torchvision/csrc/*.cpp)\n' "$p2" "$(n "$p2")" "$(cpp "$p2")"
	printf '  host: %s CPUs, load average at the start: %s\n' "$(nproc)" "$load"
} | tee "$W/figures"
