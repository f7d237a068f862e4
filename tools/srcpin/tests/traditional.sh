# srcpin patch with traditional unified diffs (no "diff --git" line), made here by the real
# tools: GNU diff -Nru between two trees (timestamps after the names, the epoch's timestamp
# for created and deleted files, a name with a space), quilt (Index: lines, pkg.orig/ and
# pkg/ prefixes) with a Debian DEP-3 header as debian/patches holds them, and diff -u of
# two plain file names (-p0 by git's guess). Each applied by srcpin to a checkout and by
# git apply to a clone of the same commit: the trees must be the same, file by file.
. "$KILN_SRC/tests/lib.sh"
need git diff quilt
. "$KILN_SRC/tools/srcpin/tests/srcpin.inc"
git config --global init.defaultBranch main
git config --global advice.detachedHead false
c=$T/cache u=$T/up
# every file's type, executable bit and content digest below a folder (no .git, no .pc)
listing () { (cd "$1" && find . \( -name .git -o -name .pc \) -prune -o -type f -print | LC_ALL=C sort |
	while IFS= read -r f; do [ -x "$f" ] && m=x || m=f; printf '%s %s %s\n' "$m" "$(sha256sum <"$f" | cut -c1-64)" "$f"; done); }

git init -q "$u" && (cd "$u" && mkdir -p src && seq 1 30 >a.txt && printf 'int x;\nint y;\n' >src/x.c &&
	printf '#!/bin/sh\necho run\n' >run.sh && chmod 755 run.sh && echo gone >delete-me.txt &&
	printf 'one\ntwo\n' >"sp ace.txt" && git add . && git commit -qm base && git tag base)
base=$(git -C "$u" rev-parse base)
check "fetch" srcpin fetch tr "file://$u" base --cache="$c"

# pkg.orig and pkg: two trees, as a packager has them; diff -Nru between them
mkdir -p "$T/d/pkg.orig" && git -C "$u" archive base | tar -x -C "$T/d/pkg.orig" && cp -a "$T/d/pkg.orig" "$T/d/pkg"
(cd "$T/d/pkg" && sed -i 's/^5$/five/; s/^25$/twenty-five/' a.txt && echo 'int z;' >>src/x.c &&
	printf '#!/bin/sh\necho run fast\n' >run.sh && rm delete-me.txt && mkdir -p new &&
	echo created >new/n.txt && printf 'one\n2\n' >"sp ace.txt")
(cd "$T/d" && diff -Nru pkg.orig pkg >"$T/01-diffu.patch"); [ $? = 1 ] || notok "diff -Nru made no patch"
grep -q '^diff --git' "$T/01-diffu.patch" && notok "diff -u wrote a git header" || ok "diff -Nru: no 'diff --git' line"
grep -q '^--- pkg.orig/new/n.txt	1970-01-01' "$T/01-diffu.patch" && ok "diff -Nru: the epoch's timestamp for a created file" ||
	{ notok "diff -Nru: the epoch's timestamp for a created file"; sed -n '1,12s/^/#   /p' "$T/01-diffu.patch"; }

# quilt in a copy of the changed tree: a patch of its own on top, with a DEP-3 header
cp -a "$T/d/pkg" "$T/q" && (cd "$T/q" && export QUILT_PATCHES=debian/patches &&
	quilt --quiltrc=/dev/null new 02-quilt.patch >/dev/null && quilt --quiltrc=/dev/null add a.txt src/x.c >/dev/null &&
	sed -i 's/^15$/fifteen/' a.txt && echo 'int w;' >>src/x.c &&
	printf 'Description: fifteen, and w\nAuthor: t <t@example.org>\nForwarded: not-needed\nLast-Update: 2026-01-01\n---\n' |
		quilt --quiltrc=/dev/null header -r >/dev/null && quilt --quiltrc=/dev/null refresh >/dev/null) ||
	notok "quilt could not make its patch"
cp "$T/q/debian/patches/02-quilt.patch" "$T/02-quilt.patch"
has "quilt: Index: lines" "$T/02-quilt.patch" "Index: q/a.txt"
has "quilt: the DEP-3 header" "$T/02-quilt.patch" "Description: fifteen, and w"
# diff -u of two plain names (no '/': git guesses -p0); the old name extends the new one
cp "$T/q/a.txt" "$T/a.txt.orig" && cp "$T/q/a.txt" "$T/a.txt" && sed -i 's/^30$/thirty/' "$T/a.txt"
(cd "$T" && diff -u a.txt.orig a.txt >"$T/03-plain.patch")
has "plain diff -u: names without a folder" "$T/03-plain.patch" "+++ a.txt	"

mkdir -p "$T/s" && cp "$T"/0*.patch "$T/s/" && printf '01-diffu.patch\n02-quilt.patch\n03-plain.patch\n' >"$T/s/series"
check "checkout" srcpin checkout tr --commit "$base" --into "$T/w" --cache="$c"
check "srcpin patch: a series of traditional diffs" srcpin patch "$T/w" "$T/s/series"
git clone -q "$u" "$T/g" && git -C "$T/g" checkout -q "$base"
for p in 01-diffu 02-quilt 03-plain; do
	check "git apply $p.patch" git -C "$T/g" apply "$T/s/$p.patch"
done
same "srcpin's tree is git apply's, file by file (modes too)" "$(listing "$T/g")" "$(listing "$T/w")"
same "and the packager's changed tree (with 03 on top)" "$(cp "$T/a.txt" "$T/q/a.txt" && rm -rf "$T/q/debian" && listing "$T/q")" "$(listing "$T/w")"
has "the created file" "$T/w/new/n.txt" "created"
[ ! -e "$T/w/delete-me.txt" ] && ok "the deleted file is gone" || notok "the deleted file is gone"
[ -x "$T/w/run.sh" ] && ok "a changed script keeps its mode" || notok "a changed script keeps its mode"
check "the patched tree is pristine (commit + series)" srcpin state --check "$T/w"
# git apply --index writes the same tree id srcpin records
git -C "$T/g" add -A && gt=$(git -C "$T/g" write-tree)
same "the tree id is git's" "$gt" "$(srcpin state --json "$T/w" | sed -n 's/.*"tree": *"\([0-9a-f]*\)".*/\1/p')"

# the series one patch longer each time, against git apply on a fresh clone
: >"$T/s/part"
for p in 01-diffu 02-quilt; do
	printf '%s.patch\n' "$p" >>"$T/s/part"
	check "up to $p" srcpin patch "$T/w" "$T/s/part"
	[ "$p" = 01-diffu ] && { rm -rf "$T/g1" && git clone -q "$u" "$T/g1" && git -C "$T/g1" checkout -q "$base"; }
	git -C "$T/g1" apply "$T/s/$p.patch"
	same "up to $p: git apply's tree" "$(listing "$T/g1")" "$(listing "$T/w")"
done

# what git apply refuses, srcpin refuses: a hunk that does not apply, a name that escapes
sed 's/^-5$/-FIVE/' "$T/s/01-diffu.patch" >"$T/s/bad.patch" && printf 'bad.patch\n' >"$T/s/bad"
exits "git apply refuses a hunk that does not apply" 1 git -C "$T/g1" apply --check "$T/s/bad.patch"
before=$(listing "$T/w")
exits "a traditional hunk that does not apply: exit 1" 1 srcpin patch "$T/w" "$T/s/bad"
has "it names the patch, the file and the hunk" "$T/.err" "bad.patch: a.txt: hunk 1 (@@ -2,7 +2,7 @@) does not apply"
same "and leaves the tree as it was" "$before" "$(listing "$T/w")"
printf -- '--- a/../evil.txt\n+++ b/../evil.txt\n@@ -0,0 +1 @@\n+owned\n' >"$T/s/evil.patch" && printf 'evil.patch\n' >"$T/s/evil"
exits "a traditional header whose name escapes the tree: exit 2" 2 srcpin patch "$T/w" "$T/s/evil"
has "said in one line" "$T/.err" "../evil.txt: path escapes the source tree; refused"
[ ! -e "$T/evil.txt" ] && ok "nothing written outside" || notok "nothing written outside"
printf 'Subject: words only\n\n--- not a header\n' >"$T/s/none.patch" && printf 'none.patch\n' >"$T/s/none"
exits "a file with no diff at all: exit 2" 2 srcpin patch "$T/w" "$T/s/none"
has "said: neither header" "$T/.err" "no diff in it: neither a 'diff --git' section nor a '--- '/'+++ '/'@@ -' header"
