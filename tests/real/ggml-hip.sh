#!/bin/sh
# tests/real/ggml-hip.sh: the HIP tier of ninja check-real (opt-in: KILN_GGML_HIP=1, or the
# part "ggmlhip" of KILN_REAL_TRACKS). kiln's first real AMD GPU code: ggml (ggml-org/ggml at
# the commit env/tracks/ggml-hip.env pins) built by the stack graph with GGML_HIP=ON against
# Debian sid's ROCm (hipcc 7.0, HIP 6.4, hipBLAS 6.4, rocBLAS 6.4, LLVM 21), inside a sid
# root made by mmdebstrap: the root tests/regress/rocm-debian.sh caches
# (KILN_ROCM_DEBIAN_CACHE, default ~/.cache/kiln/rocm-debian), made here with the packages
# below or extended with those it lacks (apt-get in the root). This tier works in the root's
# /root/ggml-hip only (rocm-debian.sh uses /root/kiln and /root/b, and may run beside it).
# Steps:
#   1. the root: 278 packages, 595 MB downloaded, a 5.4 GB root, 261 s (2026-11-25, load ~30);
#   2. kiln built in the root by sid's gcc 16 (from this checkout's git files), with no
#      warning;
#   3. for each arch of KILN_GGML_HIP_ARCHS (default "gfx803 gfx1151"), one at a time, in
#      /root/ggml-hip/bNNN of the root: configure --arch=A --rocm-path=/usr --cache=ccache, then
#      ninja stack. Where rocm.check passes (gfx803: Debian's rocBLAS carries it), the graph
#      builds ggml (ggml.build, .install, .smoke: gpucheck cover), then gpucheck targets
#      lists A in libggml-hip.so, gpucheck cover passes for A and fails for gfx90a, and a
#      second ninja has no work to do. Where Debian's rocBLAS lacks A (gfx1151: its bundles
#      and Tensile folder stop at gfx1102), the graph must stop at rocm.check, before any
#      compile, with the line naming rocBLAS.
#   4. for each arch built, a pin bump as in the Vulkan tier: a second patch in ggml's series
#      (tests/real/bump/ggml-0002-*.patch, a new docs file; its line names the arch and the
#      time, so a rerun's bump is new to the stage cache too) reruns ggml.patch, ggml.build,
#      ggml.install, ggml.smoke and stack.smoke, nothing else; ggml.build's compiler-cache
#      hits are a figure, and gpucheck targets still lists A in the rebuilt library.
# To cut the compile on 2 cores the track's options get ggml's own switches (its
# CMakeLists.txt options): -DGGML_CUDA_FA=OFF (src/ggml-hip/CMakeLists.txt then defines
# GGML_CUDA_NO_FA: the flash-attention template instances compile to empty kernels),
# -DGGML_CPU=OFF (no CPU backend) and -DGGML_BUILD_TESTS=OFF (no test programs: there is
# no AMD GPU here to run test-backend-ops on); the HIP compiler is the root's LLVM clang++.
# Needs root (chroot, mounts of /proc and /dev), mmdebstrap and git; ggml's repository:
# KILN_GGML_GIT (a git folder or URL holding the pinned commit, default
# https://github.com/ggml-org/ggml). Resumable ($W/done); KILN_REAL_FRESH=1 starts over.
# Figures in $W/figures.
set -u
KILN_SRC=$(cd "${KILN_SRC:-$(dirname "$0")/../..}" && pwd) || exit 2
KILN_BUILD=${KILN_BUILD:-$KILN_SRC/build}
[ "${KILN_GGML_HIP:-0}" = 1 ] || {
	echo "skip ggml-hip: optional tier ggmlhip: ggml with GGML_HIP=ON in a Debian sid root (KILN_GGML_HIP=1; about 600 MB downloaded and a 5.4 GB root the first time, cached; an hour or more of compiling on 2 cores)"
	exit 0
}
ROCM=${KILN_GGML_HIP_ROCM:-sid}
W=${KILN_REAL_DIR:-$KILN_BUILD/real}/ggml-hip
[ "$ROCM" = sid ] || W=$W-$ROCM
[ "${KILN_REAL_FRESH:-0}" = 1 ] && rm -rf "$W"
mkdir -p "$W/done" && W=$(cd "$W" && pwd) || exit 2
. "$KILN_SRC/tests/real/real.inc"
GIT=${KILN_GGML_GIT:-https://github.com/ggml-org/ggml}
ARCHS=${KILN_GGML_HIP_ARCHS:-gfx803 gfx1151}
TRACK=$KILN_SRC/env/tracks/ggml-hip.env
rh=$(getent passwd "$(id -u)" | cut -d: -f6)
R=${KILN_ROCM_DEBIAN_CACHE:-${XDG_CACHE_HOME:-$rh/.cache}/kiln/rocm-debian}/root
# KILN_GGML_HIP_ROCM=experimental: Debian experimental's ROCm 7.2.4 (hipcc on LLVM 22,
# rocBLAS 7.2.4, whose Tensile library carries gfx1151 as well as gfx803: `dpkg-deb -c
# librocblas5_7.2.4-1~exp1_amd64.deb`, 2026-11-25) in a root of its own: a copy of the sid
# root, then apt-get -t experimental (sid's rocBLAS 6.4.4 stops at gfx1102)
case "$ROCM" in
sid) ;;
experimental) SIDR=$R R=${R%/*}-exp/root ;;
*) echo "not ok ggml-hip: KILN_GGML_HIP_ROCM is sid or experimental, not '$ROCM'"; exit 1 ;;
esac
mirror=${KILN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
G=/root/ggml-hip
# the root's packages: sid's ROCm for ggml's HIP backend, CMake, kiln's own build packages
pkgs="hipcc libamdhip64-dev libhipblas-dev librocblas-dev cmake g++ git ccache ca-certificates python3 python3-venv"
pkgs="$pkgs $(sed 's/#.*//' "$KILN_SRC/env/deps/debian-build.txt" | tr -s ' \t\n' '   ')"

[ "$(id -u)" = 0 ] || { notok "ggml-hip: needs root (chroot and mounts for the Debian sid root)"; exit 1; }
for c in mmdebstrap chroot git; do
	command -v "$c" >/dev/null 2>&1 || { notok "ggml-hip: needs $c"; exit 1; }
done
inroot () { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 sh -c "$1"; }
# downloaded: the size of the root's packages, from the index apt kept (MB)
downloaded () {
	chroot "$R" dpkg-query -W -f '${Package} ${Version}\n' >"$W/installed" &&
		awk 'NR == FNR { v[$1] = $2; next } /^Package: / { p = $2 } /^Version: / { ver = $2 }
			/^Size: / { if (p in v && v[p] == ver) s += $2 } END { printf "%.0f", s / 1e6 }' \
			"$W/installed" "$R"/var/lib/apt/lists/*_Packages
}

# --- 1. the root: made, or extended with the packages it lacks ----------------------------
mkroot () {
	t0=$(now)
	rm -rf "$R" && mkdir -p "${R%/*}" || exit 2
	if ! nice -n 10 mmdebstrap --quiet --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
		--include="$(echo $pkgs | tr ' ' ,)" sid "$R" "$mirror" >"$W/mmdebstrap.log" 2>&1; then
		notok "ggml-hip: mmdebstrap could not make Debian sid from $mirror"
		sed -n '1,30s/^/#   /p' "$W/mmdebstrap.log"; rm -rf "$R"; exit 1
	fi
	fig "root: mmdebstrap (s)" "$(since "$t0")"
	fig "root: packages" "$(chroot "$R" dpkg-query -W -f '.\n' | wc -l)"
	fig "root: downloaded (MB)" "$(downloaded)"
	fig "root: size (MB)" "$(du -xsm "$R" | cut -f1)"
}
extend () {
	# installed, or provided by one installed (sid's libmsgpack-c-dev provides libmsgpack-dev)
	have=" $(chroot "$R" dpkg-query -W -f '${Package} ${Provides}\n' | sed 's/([^)]*)//g' | tr ',\n' '  ' | tr -s ' ') "
	lack=
	for p in $pkgs; do case "$have" in *" $p "*) ;; *) lack="$lack $p" ;; esac; done
	[ -n "$lack" ] || return 0
	t0=$(now)
	cp /etc/resolv.conf "$R/etc/resolv.conf" &&
		inroot "apt-get -o Acquire::Check-Valid-Until=false update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q$lack" >"$W/extend.log" 2>&1 ||
		{ notok "ggml-hip: apt-get in the root could not install$lack"; tail -n 20 "$W/extend.log" | sed 's/^/#   /'; exit 1; }
	fig "root: extended with$lack (s)" "$(since "$t0")"
}
# exproot: the experimental root: the sid root copied (made first when missing), then
# experimental's ROCm over sid's
exproot () {
	[ -x "$SIDR/usr/bin/hipcc" ] || { R=$SIDR; mkroot; R=${SIDR%/*}-exp/root; }
	t0=$(now)
	rm -rf "$R" "$R.tmp" && mkdir -p "${R%/*}" && cp -ax "$SIDR" "$R.tmp" && mv "$R.tmp" "$R" || exit 2
	fig "root: the sid root copied (s)" "$(since "$t0")"
	t0=$(now)
	printf 'deb %s experimental main\n' "$mirror" >"$R/etc/apt/sources.list.d/experimental.list" &&
		cp /etc/resolv.conf "$R/etc/resolv.conf" &&
		inroot "apt-get -o Acquire::Check-Valid-Until=false update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q -t experimental hipcc libamdhip64-dev libhipblas-dev librocblas-dev" >"$W/experimental.log" 2>&1 ||
		{ notok "ggml-hip: apt-get -t experimental could not install ROCm in the root"; tail -n 20 "$W/experimental.log" | sed 's/^/#   /'; rm -rf "$R"; exit 1; }
	fig "root: experimental's ROCm installed (s)" "$(since "$t0")"
}
# exprune: sid's ROCm 6 libraries that experimental's 7.2 replaces under new sonames (and
# MIOpen 6.4, which needs them) leave the experimental root: rocm.check reads every GPU
# library under ROCM_PATH, and sid's rocBLAS 6.4.4 lacks gfx1151
exprune () {
	old=
	for p in librocblas4 libhipblas2 libamdhip64-6 libmiopen1 libmiopen-dev; do
		chroot "$R" dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' && old="$old $p"
	done
	[ -n "$old" ] || return 0
	inroot "DEBIAN_FRONTEND=noninteractive apt-get purge -y -q$old" >"$W/prune.log" 2>&1 ||
		{ notok "ggml-hip: apt-get purge$old failed in the experimental root"; tail -n 20 "$W/prune.log" | sed 's/^/#   /'; exit 1; }
}
if [ -x "$R/usr/bin/hipcc" ]; then extend
elif [ "$ROCM" = experimental ]; then exproot
else mkroot; fi
[ "$ROCM" = experimental ] && exprune
fig "root: rocBLAS" "$(chroot "$R" dpkg-query -W -f '${Package} ${Version}\n' 'librocblas[0-9]*' | tr '\n' ' ')"
ok "ggml-hip: the $ROCM root holds hipcc, hipBLAS, rocBLAS and CMake ($R)"
mount -t proc proc "$R/proc" && mount --bind /dev "$R/dev" || exit 2
trap 'umount "$R/dev" "$R/proc" 2>/dev/null' EXIT
trap 'exit 1' INT TERM HUP

# --- 2. kiln, built by sid's gcc -------------------------------------------------------------
# synckiln: the checkout's git files over the last run's copy in $G/kiln: an unchanged file
# is left as it is (it does not rebuild), a changed or new one is copied with the time of the
# copy (its own mtime may be older than the objects the last run built: ninja would keep
# them, and the graph's scripts would meet older tools)
synckiln () {
	n=$R$G/kiln.new
	rm -rf "$n" && mkdir -p "$n" "$R$G/kiln" || exit 2
	# a copy that an older run extracted with the files' own mtimes: every file gets the
	# time of now once, so that its tools and every build folder's rebuild
	[ -f "$R$G/kiln.synced" ] || { find "$R$G/kiln" -path "$R$G/kiln/build" -prune -o -type f -exec touch {} + && : >"$R$G/kiln.synced"; } || exit 2
	(cd "$KILN_SRC" && git ls-files -z | xargs -0 tar -cf - 2>/dev/null) | tar -C "$n" -xf - || exit 2
	(cd "$n" && find . -type f) | while IFS= read -r f; do
		cmp -s "$n/$f" "$R$G/kiln/$f" && continue
		mkdir -p "$(dirname "$R$G/kiln/$f")" && cp -p "$n/$f" "$R$G/kiln/$f" && touch "$R$G/kiln/$f" || exit 2
	done || exit 2
	rm -rf "$n"
}
synckiln
t0=$(now)
if inroot "cd $G/kiln && ./configure && nice -n 10 ninja" >"$W/kiln.out" 2>&1; then
	fig "kiln: configure and ninja in the root (s)" "$(since "$t0")"
	n=$(grep -c 'warning:' "$W/kiln.out")
	[ "$n" = 0 ] && ok "ggml-hip: sid's $(inroot 'gcc --version' | head -n 1) builds kiln with no warning" ||
		{ notok "ggml-hip: sid's gcc warns $n times"; grep 'warning:' "$W/kiln.out" | sed 's/^/#   /'; }
else
	notok "ggml-hip: kiln does not build in the sid root"; showfail "$W/kiln.out"; exit 1
fi
KB=$G/kiln/build/bin

# --- ggml's mirror, a venv, the pins --------------------------------------------------------
. "$KILN_SRC/tests/real/ggml.inc"
ggmlmirror "$R$G/mirror" ggmlhip
[ -x "$R$G/venv/bin/python" ] || inroot "python3 -m venv --without-pip $G/venv" ||
	{ notok "ggml-hip: python3 -m venv failed in the root"; exit 1; }
# the root's newest LLVM clang++ as the HIP compiler (Debian's hipcc wraps the same one)
hc=$(cd "$R" && ls -d usr/lib/llvm-*/bin/clang++ 2>/dev/null | sort -V | tail -n 1)
[ -n "$hc" ] || { notok "ggml-hip: no usr/lib/llvm-*/bin/clang++ in the root"; exit 1; }
sed -e "s|^ggml_CMAKE_ARGS=\"\(.*\)\"|ggml_CMAKE_ARGS=\"\1 -DGGML_CUDA_FA=OFF -DGGML_CPU=OFF -DGGML_BUILD_TESTS=OFF -DCMAKE_HIP_COMPILER=/$hc\"|" "$TRACK" >"$W/pins.env"
echo "ggml_PATCHES=$G/kiln/patches/ggml" >>"$W/pins.env"
# written only when changed: an unchanged pin file regenerates nothing
cmp -s "$W/pins.env" "$R$G/pins.env" || cp "$W/pins.env" "$R$G/pins.env" || exit 2

# --- 3. ggml for each arch --------------------------------------------------------------------
# rnin B OUT TARGET: ninja in the root's folder B, output appended to OUT, its time in $took
rnin () {
	t0=$(now)
	inroot "cd $1 && nice -n 10 ninja $3" >>"$2" 2>&1
	rc=$?
	took=$(since "$t0")
	return $rc
}
# blocked A OUT: the graph stopped at rocm.check for A, naming a library, with no ggml
# stage run after ggml.patch
blocked () {
	l=$(grep -m 1 "rocm.check: .* has no code for $1" "$2") || return 1
	ok "$1: the graph stops at rocm.check before compiling: ${l#kiln: }"
	if grep -q '^ggml\.\(build\|install\|smoke\): rebuilt' "$2"; then notok "$1: a ggml stage ran after rocm.check failed"
	else ok "$1: no ggml stage after rocm.check ran"; fi
}
# built A B: what the prefix holds, gpucheck targets and cover, a no-op
built () {
	so=$B/build/prefix/ggml/lib/libggml-hip.so
	[ -f "$R$so" ] && ok "$1: the prefix holds libggml-hip.so" || { notok "$1: no $so"; return; }
	inroot "$KB/gpucheck targets $so" >"$W/$1-targets" 2>&1
	grep -q "^ *$1 " "$W/$1-targets" && ok "$1: gpucheck targets lists $1 in libggml-hip.so: $(sed -n "s/^ *\($1 .*\)/\1/p" "$W/$1-targets" | tr -s ' ')" ||
		{ notok "$1: gpucheck targets does not list $1"; sed 's/^/#   /' "$W/$1-targets"; }
	t0=$(now)
	inroot "$KB/gpucheck cover --target=$1 $B/build/prefix/ggml/lib" >"$W/$1-cover" 2>&1 &&
		ok "$1: gpucheck cover passes: $(head -n 1 "$W/$1-cover")" || { notok "$1: gpucheck cover fails"; sed 's/^/#   /' "$W/$1-cover"; }
	fig "$1: gpucheck cover of the prefix (s)" "$(since "$t0")"
	inroot "$KB/gpucheck cover --target=gfx90a $B/build/prefix/ggml/lib" >"$W/$1-cover90a" 2>&1
	rc=$?
	[ "$rc" = 1 ] && ok "$1: gpucheck cover --target=gfx90a fails (exit 1): $(grep -m 1 gfx90a "$W/$1-cover90a")" ||
		{ notok "$1: gpucheck cover --target=gfx90a exits $rc, want 1"; sed 's/^/#   /' "$W/$1-cover90a"; }
	# a run resumed after its first build (kiln may have changed since): one ninja first,
	# whose work is not counted, then the no-op
	if [ "$firstnow" = 0 ]; then
		# with the base pins: an interrupted bump may have left its pins configured
		done_ "bump-$1" || rconf "$1" "$B" "$G/pins.env" >"$W/$1-configure.out" 2>&1 ||
			{ notok "$1: configure failed"; showfail "$W/$1-configure.out"; return; }
		: >"$W/$1-settle.out"
		rnin "$B" "$W/$1-settle.out" stack || { notok "$1: ninja stack in the resumed run failed"; showfail "$W/$1-settle.out"; return; }
		fig "$1: resumed run: the first ninja stack (s)" "$took"
	fi
	: >"$W/$1-noop.out"
	rnin "$B" "$W/$1-noop.out" stack
	grep -q 'no work to do' "$W/$1-noop.out" && ok "$1: a second ninja stack has no work to do" ||
		{ notok "$1: a second ninja stack did work"; showfail "$W/$1-noop.out"; }
	fig "$1: no-op ninja stack (s)" "$took"
}
# rconf A B PINS: kiln's configure in the root's folder B for arch A with the pin file PINS
rconf () {
	inroot "mkdir -p $2 && cd $2 && $G/kiln/configure --arch=$1 --rocm-path=/usr --python=$G/venv/bin/python --pins=$3 --mirror=$G/mirror --cache=ccache"
}
# bumppins A: $G/bump.env, the pins with ggml's series in $G/patches-bump/ggml: kiln's series
# and the second patch of tests/real/bump (the one the Vulkan tier adds), its one added line
# naming A and the time, so that the bump is new to the stage cache (a rerun rebuilds,
# with the compiler cache, rather than restoring the last run's stages)
bumppins () {
	P=$G/patches-bump/ggml
	rm -rf "$R$P" && mkdir -p "$R$P" && cp "$KILN_SRC"/patches/ggml/* "$R$P/" &&
		for f in "$KILN_SRC"/tests/real/bump/ggml-0002-*.patch; do
			sed "s|^+Added by .*|+Added by kiln's tests/real/ggml-hip.sh for $1 at $(date -u +%FT%TZ).|" "$f" >"$R$P/${f##*/}"
		done &&
		(cd "$R$P" && ls ggml-0002-*.patch >>series) &&
		sed "s|^ggml_PATCHES=.*|ggml_PATCHES=$P|" "$W/pins.env" >"$R$G/bump.env"
}
# bump A: step 4 for arch A (once: resumable); the folder keeps the bumped pins, so a rerun's
# no-op in built() still has nothing to do
bump () {
	done_ "bump-$1" && return 0
	f0=$fails
	bumppins "$1" || { notok "$1: bump: cannot write $G/bump.env and its series"; return; }
	rconf "$1" "$B" "$G/bump.env" >"$W/$1-bump-configure.out" 2>&1 ||
		{ notok "$1: bump: configure failed"; showfail "$W/$1-bump-configure.out"; return; }
	: >"$W/$1-bump.out"
	rnin "$B" "$W/$1-bump.out" stack || { notok "$1: bump: ninja stack failed"; showfail "$W/$1-bump.out"; return; }
	fig "$1: ninja stack after the bump (s)" "$took"
	stagefigs "$1: bump:" "$W/$1-bump.out"
	got=$(stages "$W/$1-bump.out" | cut -d' ' -f1 | sort | tr '\n' ' ')
	[ "$got" = "ggml.build ggml.install ggml.patch ggml.smoke stack.smoke " ] &&
		ok "$1: bump: only ggml's stages after its series reran ($got)" || notok "$1: bump: the stages that ran: $got"
	inroot "$KB/gpucheck targets $B/build/prefix/ggml/lib/libggml-hip.so" >"$W/$1-bump-targets" 2>&1
	grep -q "^ *$1 " "$W/$1-bump-targets" && ok "$1: bump: gpucheck targets lists $1 in the rebuilt libggml-hip.so" ||
		{ notok "$1: bump: gpucheck targets does not list $1"; sed 's/^/#   /' "$W/$1-bump-targets"; }
	[ "$fails" = "$f0" ] && mark "bump-$1"
}
for a in $ARCHS; do
	B=$G/b${a#gfx}
	if ! done_ "conf-$a"; then
		t0=$(now)
		rconf "$a" "$B" "$G/pins.env" >"$W/$a-configure.out" 2>&1 ||
			{ notok "$a: configure failed"; showfail "$W/$a-configure.out"; continue; }
		fig "$a: configure (s)" "$(since "$t0")"
		mark "conf-$a"
	fi
	firstnow=0
	if ! done_ "first-$a"; then
		firstnow=1
		if rnin "$B" "$W/$a-first.out" stack; then
			fig "$a: first ninja stack (s)" "$took"
			mark "first-$a"
		else
			fig "$a: first ninja stack, stopped (s)" "$took"
			stagefigs "$a:" "$W/$a-first.out"
			if [ "$ROCM" = experimental ]; then
				# experimental's rocBLAS carries gfx803 and gfx1151: a stop is a failure
				notok "$a: ninja stack failed"; showfail "$W/$a-first.out"
			else
				blocked "$a" "$W/$a-first.out" || { notok "$a: ninja stack failed"; showfail "$W/$a-first.out"; }
			fi
			continue
		fi
	fi
	stagefigs "$a:" "$W/$a-first.out"
	built "$a"
	bump "$a"
done
echo "# figures (also in $W/figures):"
sed 's/^/#   /' "$W/figures"
[ "$fails" = 0 ] && echo "# ggml-hip: all checks passed" || echo "# ggml-hip: $fails checks failed"
[ "$fails" = 0 ]
