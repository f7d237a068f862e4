#!/bin/sh
# team-sccache: --cache=sccache on the toy stack, vision made a C++ extension (a .cpp beside
# its ops.c), with Debian's sccache (issue 20). Folder A builds with sccache's local disk
# storage; folder B, fresh (at A's paths), with the same SCCACHE_DIR (the folder a team
# shares over NFS), compiles nothing: every compile a hit, the rate in each wheel stage's
# summary line from the stage's own sccache server (--show-stats); a Python-only patch
# rebuilds vision's wheel with both compiles hits. The keys are those of --cache=none.
# Remote storage: with a real redis-server and nginx WebDAV on loopback, an sccache built
# with Redis/WebDAV must take its hits from there; one without (Debian 12's 0.4.0~~pre6 has
# no remote storage at all, `sccache --help`) must stop the stage in one line, never build
# with local disk and report it as remote.
. "$KILN_SRC/tests/lib.sh"
need sccache redis-server redis-cli
. "$KILN_SRC/tests/regress/graph-toy.inc"
. "$KILN_SRC/tests/nginx-dav.inc"
startredis
dav_start

# vision, a C++ extension: a .cpp (templates and <algorithm>) in its sources, libstdc++ linked
(
	cd "$T/mirror/vision" &&
	cat >csrc/sorted.cpp <<'EOF' &&
#include <algorithm>
#include <array>
#include <numeric>
template <typename T, std::size_t N> static T median(std::array<T, N> a)
{
	std::sort(a.begin(), a.end());
	return a[N / 2];
}
extern "C" int vision_median(int x)
{
	std::array<int, 5> a{{x, 3, 9, 1, 7}};
	return median(a) + std::accumulate(a.begin(), a.end(), 0) * 0;
}
EOF
	sed -i 's|\["csrc/ops.c"\]|["csrc/ops.c", "csrc/sorted.cpp"]|; s|libraries=\["torch_toy"\]|libraries=["torch_toy", "stdc++"]|' setup.py &&
	grep -q sorted.cpp setup.py && git add -A && git commit -qm "vision: a C++ source" && git tag -f v1 >/dev/null
) || exit 2

conf () {
	v=$1
	shift
	"$KSRC/configure" --python="$v/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--arch=cpu --jobs=2 KILN_BIN="$KILN_BIN" "$@"
}
# rate LOG STAGE: the stage's summary line
rate () { grep "^$2: rebuilt in" "$1" || echo "(no summary line for $2)"; }
imp () { "$1/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.scale(3), torchvision.op(1), torchaudio.op(3))' 2>&1; }

toy_venv "$T/va"
mkdir -p "$T/n" && cd "$T/n" || exit 2
check "none: configure --cache=none" conf "$T/va"
mkdir -p "$T/a" && cd "$T/a" || exit 2
check "a: configure --cache=sccache" conf "$T/va" --cache=sccache
check "a: the keys are those of --cache=none (sccache changes no output)" diff -r "$T/n/build/keys" "$T/a/build/keys"
SCCACHE_DIR=$T/scc ninja >"$T/a.log" 2>&1
same "a: ninja succeeds" 0 "$?"
[ -s "$T/a/build/logs/vision.wheel.log" ] || sed -n '1,40s/^/#   /p' "$T/a.log"
has "a: the stage's own sccache server, local disk" "$T/a/build/logs/vision.wheel.log" "storage: Local disk: \"$T/scc\""
has "a: the stage's server is ready when it listens itself (no startup timeout)" "$T/a/build/logs/vision.wheel.log" \
	"(ready: it listens there itself), storage: Local disk"
has "a: sccache compiled vision's C++ source" "$T/a/build/logs/vision.wheel.log" "sorted.cpp"
line=$(rate "$T/a.log" vision.wheel)
case "$line" in
*"(sccache 0/2 hits (0%), local disk)") ok "a: vision.wheel: 2 compiles, all misses ($line)" ;;
*) notok "a: vision.wheel: 2 compiles, all misses ($line)" ;;
esac
same "a: the stack imports" "30 110 33" "$(imp "$T/va")"
n=$(find "$T/scc" -type f 2>/dev/null | wc -l)
same "a: the disk storage holds objects" yes "$([ "$n" -ge 4 ] && echo yes || echo no)"

# folder B: a fresh build folder and a fresh venv, at A's paths (sccache 0.4 hashes the
# absolute paths of the arguments, -ffile-prefix-map's included: hits cross machines whose
# build folder and Python are at the same paths), the same sccache folder, no stage cache
cd "$T" && rm -rf "$T/va" "$T/a"
toy_venv "$T/va"
mkdir -p "$T/a" && cd "$T/a" || exit 2
check "b: configure --cache=sccache" conf "$T/va" --cache=sccache
SCCACHE_DIR=$T/scc ninja >"$T/b.log" 2>&1
same "b: ninja succeeds" 0 "$?"
for c in torch vision audio; do
	line=$(rate "$T/b.log" $c.wheel)
	case "$line" in
	*"hits (100%), local disk)") ok "b: $c.wheel: every compile a hit ($line)" ;;
	*) notok "b: $c.wheel: every compile a hit ($line)" ;;
	esac
done
same "b: the stack imports" "30 110 33" "$(imp "$T/va")"

# the same folder, a patch that changes only vision's Python: vision's key changes, its
# wheel is built again, and both of its compiles are hits
(
	cd "$T/mirror/vision" && printf '# patched\n' >>torchvision/__init__.py &&
	git diff >"$T/patches/vision/0002-py.patch" && git checkout -q torchvision/__init__.py
) || exit 2
printf '0002-py.patch\n' >>"$T/patches/vision/series"
SCCACHE_DIR=$T/scc ninja >"$T/c.log" 2>&1
same "c: ninja after a Python-only patch succeeds" 0 "$?"
same "c: only vision's stages after the patch ran" "stack.smoke vision.deps vision.install vision.patch vision.pick vision.wheel" "$(rebuilt "$T/c.log")"
line=$(rate "$T/c.log" vision.wheel)
case "$line" in
*"(sccache 2/2 hits (100%), local disk)") ok "c: vision.wheel: both compiles hits ($line)" ;;
*) notok "c: vision.wheel: both compiles hits ($line)" ;;
esac

# remote storage: redis, then WebDAV (the --cache=none folder configured again for the
# series that has the second patch now)
(cd "$T/n" && conf "$T/va" >/dev/null) || exit 2
feat () { sccache --help 2>/dev/null | grep -q "^ *$1: *true"; }
for kind in redis webdav; do
	case $kind in
	redis) url=redis://127.0.0.1:$port has=no; feat Redis && has=yes ;;
	webdav) url=$DAV_URL has=no; grep -aq SCCACHE_WEBDAV_ENDPOINT "$(command -v sccache)" && has=yes ;;
	esac
	rm -rf "$T/va"
	toy_venv "$T/va"
	mkdir -p "$T/$kind" && cd "$T/$kind" || exit 2
	check "$kind: configure --cache=sccache --cache-remote=$url" conf "$T/va" --cache=sccache --cache-remote="$url"
	check "$kind: the keys are those of --cache=none" diff -r "$T/n/build/keys" "$T/$kind/build/keys"
	# first a build that fills the remote storage, then one in a fresh folder and an
	# empty SCCACHE_DIR; an sccache without that storage must refuse the first
	SCCACHE_DIR=$T/scc.$kind ninja >"$T/$kind.log" 2>&1
	rc=$?
	if [ $has = yes ]; then
		same "$kind: ninja succeeds" 0 "$rc"
		rm -rf "$T/va" "$T/$kind.2"
		toy_venv "$T/va"
		mkdir -p "$T/$kind.2" && cd "$T/$kind.2" && conf "$T/va" --cache=sccache --cache-remote="$url" >/dev/null
		SCCACHE_DIR=$T/scc.$kind.2 ninja >"$T/$kind.2.log" 2>&1
		same "$kind: a second folder's ninja succeeds" 0 "$?"
		line=$(rate "$T/$kind.2.log" vision.wheel)
		case "$line" in
		*"(sccache 2/2 hits (100%), local disk)") notok "$kind: vision.wheel: hits from $kind ($line)" ;;
		*"(sccache 2/2 hits (100%), "*) ok "$kind: vision.wheel: hits from $kind ($line)" ;;
		*) notok "$kind: vision.wheel: hits from $kind ($line)" ;;
		esac
	else
		same "$kind: this sccache has no $kind storage: ninja fails" 1 "$rc"
		has "$kind: torch.wheel says why in one line" "$T/$kind.log" "--cache-remote=$url"
		lacks "$kind: no wheel was built with local disk instead" "$T/$kind.log" "local disk)"
		lacks "$kind: no stage went on to vision" "$T/$kind.log" "vision.wheel: rebuilt"
		grep -m 1 "kiln: torch.wheel:" "$T/$kind.log" | sed 's/^/# /'
	fi
done
