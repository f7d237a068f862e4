#!/bin/sh
# bench/srcpin.sh [SRCPIN]: srcpin side by side with git, in one run, on trees of three
# sizes, each made into a git repository with v1 = the files and v2 = 20 files changed,
# one added, one removed:
#   small  Debian's python3-torch package files (~2,300 files), or BENCH_SRC=DIR
#   large  /usr/include (~18,600 files), or BENCH_LARGE=DIR
#   torch  the PyTorch 1.13.1 source (Debian's pytorch_1.13.1+dfsg.orig.tar.xz, ~11,000
#          files) when BENCH_TARBALL (default /work/cache/pytorch_1.13.1+dfsg.orig.tar.xz)
#          exists; skipped otherwise
# Measured with hyperfine (median of BENCH_RUNS runs, default 20):
#   bump    v1 -> v2 on a warm mirror: srcpin checkout NAME URL v2 (fetch and checkout in
#           one run, as the stage step runs it) vs git fetch && git checkout -f && git clean -ffdx
#   no-op   the same commit on a pristine tree: srcpin checkout
#           vs git checkout -f && git clean -ffdx; and srcpin state vs git status --ignored
#   patch   the same patch series again (srcpin patch, a no-op)
# Prints one table: each cell is "wall/cpu" ms, the median wall time and the mean CPU time
# (user + system) of the runs. Needs hyperfine, git, tar, xz.
set -eu
srcpin=${1:-$(command -v srcpin || echo build/bin/srcpin)}
srcpin=$(cd "$(dirname "$srcpin")" && pwd)/$(basename "$srcpin")
[ -x "$srcpin" ] || { echo "bench/srcpin.sh: no srcpin at $srcpin (run ninja first)"; exit 2; }
command -v hyperfine >/dev/null || { echo "bench/srcpin.sh: needs hyperfine"; exit 2; }
runs=${BENCH_RUNS:-20}
W=$(mktemp -d "${TMPDIR:-/tmp}/srcpin-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
export HOME=$W/home GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.org \
	GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.org
mkdir -p "$HOME"
git config --global advice.detachedHead false
git config --global init.defaultBranch main

# median ms of a hyperfine run: med NAME CMD [--prepare CMD]
med () {
	n=$1; shift
	hyperfine -N --style none --warmup 2 --runs "$runs" --export-json "$W/$n.json" "$@" >/dev/null 2>&1 ||
		{ echo "bench/srcpin.sh: $n failed: $*" >&2; echo FAIL; return; }
	# wall median / CPU (user + system, means): under load the CPU time is the fairer figure
	awk -F: '/"median"/ && !m { gsub(/[ ,]/, "", $2); m = $2 } /"user"/ && !u { gsub(/[ ,]/, "", $2); u = $2 }
		/"system"/ && !s { gsub(/[ ,]/, "", $2); s = $2 }
		END { printf "%.0f/%.0f", m * 1000, (u + s) * 1000 }' "$W/$n.json"
}

# one tree: bench LABEL DIR (the files of DIR under 200 KiB become the repository)
bench () {
	label=$1 src=$2 d=$W/$1
	mkdir -p "$d/up"
	(cd "$src" && find . -type f -size -200k ! -path '*/.git/*' -print0 | tar --null -T - -cf -) | tar -xf - -C "$d/up"
	(cd "$d/up" && git init -q && git add -A && git commit -qm v1 && git tag v1 &&
		git ls-files | head -20 | while IFS= read -r f; do echo "// bump" >>"$f"; done &&
		echo new >added.txt && git rm -q "$(git ls-files | tail -1)" && git add -A && git commit -qm v2 && git tag v2)
	files=$(git -C "$d/up" ls-files | wc -l)
	mkdir -p "$d/p"
	(cd "$d/up" && f=$(git ls-files | sed -n 100p) && echo '// kiln patch' >>"$f" &&
		git diff >"$d/p/0001-x.patch" && git checkout -q -- .)
	printf '0001-x.patch\n' >"$d/p/series"
	# warm mirrors: srcpin's cache and a git clone, both at v1 and holding v2's objects
	"$srcpin" fetch b "file://$d/up" v1 --cache="$d/c" -q >/dev/null
	"$srcpin" fetch b "file://$d/up" v2 --cache="$d/c" -q >/dev/null
	"$srcpin" checkout b --commit v1 --into "$d/s" --cache="$d/c" -q
	git clone -q "$d/up" "$d/g" && git -C "$d/g" checkout -q v1
	sb=$(med "$label-sb" --prepare "$srcpin checkout b --commit v1 --into $d/s --cache=$d/c -q" \
		"sh -c '$srcpin checkout b file://$d/up v2 --into $d/s --cache=$d/c -q >/dev/null'")
	gb=$(med "$label-gb" --prepare "sh -c 'git -C $d/g checkout -q -f v1 && git -C $d/g clean -qffdx'" \
		"sh -c 'git -C $d/g fetch -q origin && git -C $d/g checkout -q -f v2 && git -C $d/g clean -qffdx'")
	"$srcpin" checkout b --commit v2 --into "$d/s" --cache="$d/c" -q
	git -C "$d/g" checkout -q -f v2
	sn=$(med "$label-sn" "$srcpin checkout b --commit v2 --into $d/s --cache=$d/c -q")
	gn=$(med "$label-gn" "sh -c 'git -C $d/g checkout -q -f v2 && git -C $d/g clean -qffdx'")
	ss=$(med "$label-ss" "$srcpin state $d/s")
	gs=$(med "$label-gs" "git -C $d/g status --porcelain --ignored")
	"$srcpin" patch "$d/s" "$d/p/series"
	sp=$(med "$label-sp" "$srcpin patch $d/s $d/p/series")
	printf '%-6s %6s | %9s %9s | %9s %9s | %9s %9s | %9s\n' "$label" "$files" "$sb" "$gb" "$sn" "$gn" "$ss" "$gs" "$sp"
	rm -rf "$d"
}

echo "srcpin: $srcpin; git: $(git --version); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ms, wall median / CPU (user+system) mean, of $runs runs each"
printf '%-6s %6s | %9s %9s | %9s %9s | %9s %9s | %9s\n' tree files "bump" "" "no-op" "" "state" "" "patch"
printf '%-6s %6s | %9s %9s | %9s %9s | %9s %9s | %9s\n' "" "" srcpin git srcpin git srcpin "git st" srcpin
small=${BENCH_SRC:-/usr/lib/python3/dist-packages/torch}
large=${BENCH_LARGE:-/usr/include}
tarball=${BENCH_TARBALL:-/work/cache/pytorch_1.13.1+dfsg.orig.tar.xz}
[ -d "$small" ] && bench small "$small" || echo "small: no $small (BENCH_SRC=DIR)"
[ -d "$large" ] && bench large "$large" || echo "large: no $large (BENCH_LARGE=DIR)"
if [ -f "$tarball" ]; then
	mkdir -p "$W/torchsrc" && tar -xf "$tarball" -C "$W/torchsrc"
	bench torch "$(find "$W/torchsrc" -mindepth 1 -maxdepth 1 -type d | head -1)"
	rm -rf "$W/torchsrc"
else
	echo "torch: no $tarball (apt-get source --download-only pytorch, or BENCH_TARBALL=FILE)"
fi
