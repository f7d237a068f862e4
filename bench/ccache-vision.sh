#!/bin/sh
# bench/ccache-vision.sh [KILN_BIN]: ccache on a real C++ extension, torchvision 0.14.1
# (Debian's orig tarball, the debian track env/tracks/debian.env) built against Debian's
# python3-torch 1.13.1 by the stage graph with --cache=ccache:
#   1. vision.wheel in an empty build folder with an empty CCACHE_DIR: wall time, hit rate
#   2. vision.wheel in a second, fresh build folder sharing that CCACHE_DIR (no stage
#      cache: the wheel is compiled again): wall time, hit rate. Both build in one
#      --work-dir: ccache, without a base_dir, hits where the sources are at one path
# The hit rates are the wheel stage's own summary line (ccache's counters before and
# after the stage). Work folder: KILN_BENCH_DIR [build/bench-ccache-vision], removed and
# made afresh; the tarballs come from ~/.cache/kiln/debsrc (ninja/debsrc.sh fetches them
# with apt-get source when they are not there). About 2 x 5 minutes on an idle 2-core
# machine. Prints the figures, also kept in $W/figures.
set -u
NAME=ccache-vision NEEDS="ccache"
. "$(dirname "$0")/debian-vision.inc"
export CCACHE_DIR="$W/ccache"
mkdir -p "$CCACHE_DIR"
ccache -z >/dev/null
# build NAME: configure a fresh build folder $W/NAME and ninja vision.wheel there; prints
# the wall seconds and the stage's summary line
build () {
	mkdir -p "$W/$1" && (cd "$W/$1" && "$KILN_SRC/configure" --arch=cpu --pins="$KILN_SRC/env/tracks/debian.env" \
		--pin torch=system --without=audio --python="$W/venv/bin/python" --mirror="$W/mirror" \
		--git-cache="$W/git" --cache=ccache --work-dir="$W/work" KILN_BIN="$KB") >"$W/$1.conf.log" 2>&1 ||
		{ cat "$W/$1.conf.log" >&2; exit 1; }
	t0=$(now)
	ninja -C "$W/$1" vision.wheel >"$W/$1.log" 2>&1 || { tail -n 40 "$W/$1.log" >&2; exit 1; }
	t1=$(now)
	line=$(grep '^vision\.wheel: rebuilt in' "$W/$1.log")
	printf '%s\t%s\n' "$(echo "$t1 - $t0" | bc)" "$line"
}
first=$(build first)
second=$(build second)
{
	printf 'torchvision 0.14.1 (Debian orig tarball) against python3-torch 1.13.1, --cache=ccache, ninja vision.wheel:\n'
	printf '  %-58s %8.1f s   %s\n' "1. empty build folder, empty CCACHE_DIR" "${first%%	*}" "${first#*	}"
	printf '  %-58s %8.1f s   %s\n' "2. second fresh build folder, the same CCACHE_DIR" "${second%%	*}" "${second#*	}"
	printf '  ccache -s after both:\n'
	ccache -s | sed 's/^/    /'
	printf '  host: %s CPUs, load average at the start: %s\n' "$(nproc)" "$load"
} | tee "$W/figures"
