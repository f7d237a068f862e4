#!/bin/sh
# bench/srcpin.sh [SRCPIN]: srcpin side by side with git on a repository the size of
# pytorch/vision or larger (default: a git repository made of the source files of
# Debian's python3-torch, ~2300 files; BENCH_SRC=DIR to use another folder's files).
#  1. pin bump on a warm mirror: v1 -> v2 (20 files changed)
#     srcpin fetch + srcpin checkout   vs   git fetch && git checkout -f && git clean -ffdx
#  2. no-op: same commit on a pristine tree
#     srcpin checkout, srcpin state    vs   git checkout -f && git clean -ffdx, git status
#  3. patch series again on a patched tree (no-op)
# Needs hyperfine and git. Prints hyperfine's tables.
set -eu
srcpin=${1:-$(command -v srcpin || echo build/bin/srcpin)}
srcpin=$(cd "$(dirname "$srcpin")" && pwd)/$(basename "$srcpin")
[ -x "$srcpin" ] || { echo "bench/srcpin.sh: no srcpin at $srcpin (run ninja first)"; exit 2; }
command -v hyperfine >/dev/null || { echo "bench/srcpin.sh: needs hyperfine"; exit 2; }
src=${BENCH_SRC:-/usr/lib/python3/dist-packages/torch}
[ -d "$src" ] || { echo "bench/srcpin.sh: no $src; set BENCH_SRC=DIR (a source tree)"; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/srcpin-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
export HOME=$W/home GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.org \
	GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.org
mkdir -p "$HOME"
git config --global advice.detachedHead false
git config --global init.defaultBranch main

# the upstream: v1 = the files, v2 = 20 of them changed, one added, one removed
mkdir -p "$W/up"
(cd "$src" && find . -type f -size -200k -print0 | tar --null -T - -cf -) | tar -xf - -C "$W/up"
cd "$W/up"
git init -q && git add -A && git commit -qm v1 && git tag v1
git ls-files | head -20 | while IFS= read -r f; do echo "// bump" >>"$f"; done
echo new >added.txt && git rm -q "$(git ls-files | tail -1)" && git add -A && git commit -qm v2 && git tag v2
files=$(git ls-files | wc -l)
cd "$W"
echo "repository: $files files, $(du -sh "$W/up/.git" | cut -f1) of git objects (from $src)"
mkdir -p "$W/p"
(cd "$W/up" && git checkout -q v2 && f=$(git ls-files | sed -n 100p) && echo '// kiln patch' >>"$f" &&
	git diff >"$W/p/0001-x.patch" && git checkout -q -- . && git checkout -q main)
printf '0001-x.patch\n' >"$W/p/series"

# warm mirrors: srcpin's cache and a git clone, both at v1 and holding v2's objects
"$srcpin" fetch b "file://$W/up" v1 --cache="$W/c" -q >/dev/null
"$srcpin" fetch b "file://$W/up" v2 --cache="$W/c" -q >/dev/null
"$srcpin" checkout b --commit v1 --into "$W/s" --cache="$W/c" -q
git clone -q "$W/up" "$W/g" && git -C "$W/g" checkout -q v1

echo
echo "== 1. pin bump v1 -> v2 on a warm mirror"
hyperfine -N --warmup 1 --runs 10 \
	--prepare "$srcpin checkout b --commit v1 --into $W/s --cache=$W/c -q" \
	-n "srcpin fetch + checkout" \
	"sh -c '$srcpin fetch b file://$W/up v2 --cache=$W/c -q >/dev/null && $srcpin checkout b --commit v2 --into $W/s --cache=$W/c -q'" \
	--prepare "sh -c 'git -C $W/g checkout -q -f v1 && git -C $W/g clean -qffdx'" \
	-n "git fetch + checkout -f + clean -ffdx" \
	"sh -c 'git -C $W/g fetch -q origin && git -C $W/g checkout -q -f v2 && git -C $W/g clean -qffdx'"

echo
echo "== 2. no-op: the same commit on a pristine tree"
"$srcpin" checkout b --commit v2 --into "$W/s" --cache="$W/c" -q
git -C "$W/g" checkout -q -f v2
hyperfine -N --warmup 3 --runs 30 \
	-n "srcpin checkout (no-op)" "$srcpin checkout b --commit v2 --into $W/s --cache=$W/c -q" \
	-n "srcpin state" "$srcpin state $W/s" \
	-n "git checkout -f + clean -ffdx" "sh -c 'git -C $W/g checkout -q -f v2 && git -C $W/g clean -qffdx'" \
	-n "git status --ignored" "git -C $W/g status --porcelain --ignored"

echo
echo "== 3. the same patch series again (no-op)"
"$srcpin" patch "$W/s" "$W/p/series"
hyperfine -N --warmup 3 --runs 30 -n "srcpin patch (no-op)" "$srcpin patch $W/s $W/p/series"
