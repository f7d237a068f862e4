# srcpin on real git repositories made here: a superproject with nested submodules, tags,
# a moved branch, patch series, mirrors, damaged and interrupted fetches, bad input.
. "$KILN_SRC/tests/lib.sh"
need git
# Debian's libgit2 1.5.1 leaks pcre2 match data when it reads url.*.insteadOf (not ours)
. "$KILN_SRC/tools/srcpin/tests/srcpin.inc"
git config --global protocol.file.allow always
git config --global init.defaultBranch main
git config --global advice.detachedHead false
u=$T/up      # upstream repositories
c=$T/cache   # srcpin's cache
mkdir -p "$u"
# digest of a work tree's files (no .git), for "untouched" and "identical" checks
treesum () { (cd "$1" && find . -path '*/.git' -prune -o -type f -print | LC_ALL=C sort | xargs -d '\n' sha256sum | sha256sum | cut -c1-64); }
# digest of what git archive gives for a commit of a repository (no submodules)
archsum () { rm -rf "$T/arch" && mkdir "$T/arch" && git -C "$1" archive "$2" | tar -x -C "$T/arch" && treesum "$T/arch"; }

git init -q "$u/leaf" && (cd "$u/leaf" && echo leaf1 >l.txt && git add . && git commit -qm l1)
git init -q "$u/mid" && (cd "$u/mid" && echo mid >m.txt && git add m.txt &&
	git submodule -q add ../leaf deep/leaf && git commit -qm m1)
git init -q "$u/top" && (cd "$u/top" && printf 'a\nb\nc\n' >a.txt && printf 'build/\n*.o\n' >.gitignore &&
	printf '__global__ void k() {}\n' >k.cu && git add . && git commit -qm t1 &&
	git submodule -q add ../mid third_party/mid && git commit -qm t2 && git tag v1 &&
	git tag -a -m annotated v1.0-ann && git branch dev)
v1=$(git -C "$u/top" rev-parse v1)

# --- fetch: first fetch, tags, short sha, no contact when present -------------------------
check "fetch by tag" srcpin fetch top "file://$u/top" v1 --cache="$c"
same "fetch prints the tag's commit" "$v1" "$(cat "$T/.out")"
check "the mirror is a bare repository" git --git-dir="$c/top.git" rev-parse --is-bare-repository
check "annotated tag resolves" srcpin fetch top "file://$u/top" v1.0-ann --cache="$c"
same "annotated tag peels to the commit" "$v1" "$(cat "$T/.out")"
check "short sha" srcpin fetch top "file://$u/top" "$(echo "$v1" | cut -c1-8)" --cache="$c"
same "short sha resolves to the full commit" "$v1" "$(cat "$T/.out")"
mv "$u/top" "$u/top.away"
check "a tag already in the mirror needs no contact" srcpin fetch top "file://$u/top" v1 --cache="$c"
same "offline tag resolves" "$v1" "$(cat "$T/.out")"
has "an upstream that cannot be reached to check the tag is said in one line" "$T/.err" \
	"top: file://$u/top: cannot reach it to check whether tag 'v1' moved"
same "one line" 1 "$(lines "$T/.err")"
check "--offline: the mirror's tag, without a word" srcpin fetch top "file://$u/top" v1 --cache="$c" --offline
same "--offline: the mirror's commit" "$v1" "$(cat "$T/.out")"
same "--offline: nothing on stderr" "" "$(cat "$T/.err")"
exits "a branch must be fetched: unreachable upstream is an error" 2 srcpin fetch top "file://$u/top" dev --cache="$c"
has "the error names the repository and URL" "$T/.err" "top: file://$u/top"
check "--offline uses the mirror's branch" srcpin fetch top "file://$u/top" dev --cache="$c" --offline
mv "$u/top.away" "$u/top"

# --- bump: only new objects are fetched ---------------------------------------------------
inpack () { git --git-dir="$1" count-objects -v | awk '/^in-pack:/ {print $2}'; }
before=$(inpack "$c/top.git")
(cd "$u/top" && echo d >d.txt && git add d.txt && git commit -qm t3 && git tag v2)
v2=$(git -C "$u/top" rev-parse v2)
new=$(git -C "$u/top" rev-list --objects v1..v2 | wc -l)
check "bump to a new tag" srcpin fetch top "file://$u/top" v2 --cache="$c"
same "new tag resolves" "$v2" "$(cat "$T/.out")"
same "only the new objects were fetched" "$((before + new))" "$(inpack "$c/top.git")"

# --- moved branch, expected sha -------------------------------------------------------------
check "branch" srcpin fetch top "file://$u/top" dev --cache="$c"
same "branch resolves" "$v1" "$(cat "$T/.out")"
git -C "$u/top" branch -f dev v2
check "moved branch" srcpin fetch top "file://$u/top" dev --cache="$c"
same "a moved branch is followed" "$v2" "$(cat "$T/.out")"
exits "expected sha mismatch is a verification failure" 1 srcpin fetch top "file://$u/top" v1 --cache="$c" --expect="$v2"
has "mismatch names ref and both commits" "$T/.err" "ref 'v1' resolves to $v1, not the expected $v2"
check "expected sha that matches" srcpin fetch top "file://$u/top" v1 --cache="$c" --expect="$v1"
check "expected sha as a 7-digit prefix" srcpin fetch top "file://$u/top" v1 --cache="$c" --expect="$(echo "$v1" | cut -c1-7)"
exits "a too short expected sha is a usage error" 2 srcpin fetch top "file://$u/top" v1 --cache="$c" --expect=abc

# --- a tag moved upstream (nightly tags, re-tagged releases): followed and said --------
git init -q "$u/mv" && (cd "$u/mv" && echo 1 >n && git add n && git commit -qm n1 && git tag nightly &&
	git tag -a -m rel rel-1.0)
n1=$(git -C "$u/mv" rev-parse nightly)
check "fetch a tag" srcpin fetch mv "file://$u/mv" nightly --cache="$c"
same "it resolves" "$n1" "$(cat "$T/.out")"
check "fetch it again, unmoved" srcpin fetch mv "file://$u/mv" nightly --cache="$c"
same "unmoved: the same commit" "$n1" "$(cat "$T/.out")"
same "unmoved: nothing said" "" "$(cat "$T/.err")"
(cd "$u/mv" && echo 2 >n && git commit -qam n2 && git tag -f nightly >/dev/null && git tag -f -a -m rel2 rel-1.0 >/dev/null)
n2=$(git -C "$u/mv" rev-parse nightly)
check "fetch the moved tag" srcpin fetch mv "file://$u/mv" nightly --cache="$c"
same "the moved tag's new commit" "$n2" "$(cat "$T/.out")"
has "the move is said: old -> new" "$T/.err" "mv: file://$u/mv: tag 'nightly' moved upstream: $n1 -> $n2; following it"
has "so is the move of another tag the same fetch follows (an annotated one)" "$T/.err" \
	"mv: file://$u/mv: tag 'rel-1.0' moved upstream: $n1 -> $n2; following it"
same "one line each" 2 "$(lines "$T/.err")"
check "the re-tagged annotated tag" srcpin fetch mv "file://$u/mv" rel-1.0 --cache="$c"
same "is followed to its new commit" "$n2" "$(cat "$T/.out")"
same "said once, by the fetch that saw it move" "" "$(cat "$T/.err")"
exits "a moved tag against the expected commit: a verification failure" 1 \
	srcpin checkout mv "file://$u/mv" nightly --expect="$n1" --into "$T/wmv" --cache="$c"
has "in one line naming both commits" "$T/.err" "ref 'nightly' resolves to $n2, not the expected $n1"
[ ! -e "$T/wmv/n" ] && ok "and nothing is checked out" || notok "and nothing is checked out"
# through a second repository, the --mirror copy of upstream, re-tagged by a fetch
git clone -q --bare "$u/mv" "$T/mvm/mv.git"
check "fetch through --mirror" srcpin fetch mv https://example.invalid/mv.git nightly --cache="$T/mvc" --mirror="$T/mvm"
same "through --mirror: the tag" "$n2" "$(cat "$T/.out")"
(cd "$u/mv" && echo 3 >n && git commit -qam n3 && git tag -f nightly >/dev/null)
n3=$(git -C "$u/mv" rev-parse nightly)
git -C "$T/mvm/mv.git" fetch -q --force "$u/mv" 'refs/tags/*:refs/tags/*' 'refs/heads/*:refs/heads/*'
check "the --mirror copy moved the tag too" srcpin fetch mv https://example.invalid/mv.git nightly --cache="$T/mvc" --mirror="$T/mvm"
same "through --mirror: the new commit" "$n3" "$(cat "$T/.out")"
has "through --mirror: said" "$T/.err" "tag 'nightly' moved upstream: $n2 -> $n3"
# srcpin lock follows too: the lock file's commit (a stage key) changes
printf 'MV_URL=file://%s/mv\nMV_REF=nightly\n' "$u" >"$T/mv.env"
check "lock of the moved tag" srcpin lock --pins "$T/mv.env" --out "$T/mv.lock" --cache="$c"
has "the lock holds the new commit" "$T/mv.lock" "MV_COMMIT=$n3"
has "and says the tag moved" "$T/.err" "tag 'nightly' moved upstream: $n2 -> $n3"
git -C "$u/mv" tag -d nightly >/dev/null
exits "a tag deleted upstream is refused" 2 srcpin fetch mv "file://$u/mv" nightly --cache="$c"
has "in one line naming the commit the mirror had" "$T/.err" "mv: file://$u/mv: tag 'nightly' is gone upstream (the mirror had it at $n3)"
same "one line" 1 "$(lines "$T/.err")"

# --- bad refs and URLs ----------------------------------------------------------------------
exits "missing ref" 2 srcpin fetch top "file://$u/top" v3 --cache="$c"
has "missing ref lists close matches" "$T/.err" "ref 'v3' not found; close matches: v1, v2"
exits "unreachable URL" 2 srcpin fetch gone "file://$u/nowhere" v1 --cache="$c"
has "unreachable URL: one line naming it" "$T/.err" "gone: file://$u/nowhere: cannot fetch"
same "no partial mirror is left" "" "$(ls -d "$c"/gone.git* 2>/dev/null | grep -v '\.lock$')"
exits "usage error" 2 srcpin fetch top
exits "bad NAME" 2 srcpin fetch ../x "file://$u/top" v1 --cache="$c"

# --- checkout with nested submodules --------------------------------------------------------
w=$T/w
check "checkout with submodules" srcpin checkout top --commit "$v1" --into "$w" --submodules --cache="$c"
has "submodule file" "$w/third_party/mid/m.txt" "mid"
has "nested submodule file" "$w/third_party/mid/deep/leaf/l.txt" "leaf1"
check "state" srcpin state "$w"
has "state NAME" "$T/.out" "NAME=top"
has "state URL" "$T/.out" "URL=file://$u/top"
has "state COMMIT" "$T/.out" "COMMIT=$v1"
has "state PRISTINE" "$T/.out" "PRISTINE=yes"
has "state SERIES_DIGEST empty" "$T/.out" "SERIES_DIGEST="
same "state prints exactly the contract's keys" "NAME URL COMMIT SERIES_DIGEST PRISTINE" "$(cut -d= -f1 "$T/.out" | tr '\n' ' ' | sed 's/ $//')"
# compare every file with git's own recursive clone at the same commit
git clone -q --recurse-submodules "$u/top" "$T/gitclone" 2>/dev/null && git -C "$T/gitclone" checkout -q --recurse-submodules "$v1" 2>/dev/null
same "identical to git clone --recurse-submodules" "$(treesum "$T/gitclone")" "$(treesum "$w")"
check "checkout again: no-op" srcpin checkout top --commit "$v1" --into "$w" --submodules --cache="$c"
exits "state of a folder that is not a checkout" 2 srcpin state "$T"
check "checkout without --submodules" srcpin checkout top --commit v2 --into "$T/w2" --cache="$c"
same "submodule folder left empty" "" "$(ls -A "$T/w2/third_party/mid")"
# the same folder for another repository: started afresh from the other mirror
check "fetch another repository" srcpin fetch leaf "file://$u/leaf" main --cache="$c"
check "check it out into a checkout of top" srcpin checkout leaf --commit main --into "$T/w2" --cache="$c"
same "the folder is exactly the other repository" "$(archsum "$u/leaf" main)" "$(treesum "$T/w2")"
srcpin state "$T/w2" | grep -qx 'NAME=leaf' && ok "state names the new repository" || notok "state names the new repository"

# --- a dirty, hipified tree is made pristine again ------------------------------------------
mkdir -p "$w/build" && echo obj >"$w/build/x.o" && echo o >"$w/k.o"
mv "$w/k.cu" "$w/k.hip" && echo changed >>"$w/a.txt" && echo dirty >>"$w/third_party/mid/deep/leaf/l.txt"
check "state of a dirty tree" srcpin state "$w"
has "dirty tree is not pristine" "$T/.out" "PRISTINE=no"
exits "state --check fails on a dirty tree" 1 srcpin state --check "$w"
check "checkout makes it pristine" srcpin checkout top --commit "$v1" --into "$w" --submodules --cache="$c"
same "pristine again: identical to git's clone" "$(treesum "$T/gitclone")" "$(treesum "$w")"
check "state after reset" srcpin state --check "$w"
# checkout remembers its cache when --cache is not given (hipify-wrap --reset relies on it)
echo dirty >>"$w/a.txt"
check "checkout finds the cache of an existing checkout" sh -c "cd '$T' && srcpin checkout top --commit '$v1' --into '$w' --submodules"
same "and resets it" "$(treesum "$T/gitclone")" "$(treesum "$w")"
# fetch and checkout in one run (checkout NAME URL REF)
check "checkout NAME URL REF fetches and checks out in one run" srcpin checkout top "file://$u/top" v2 --into "$T/w3" --cache="$c"
same "it prints the commit" "$v2" "$(cat "$T/.out")"
same "the folder is that commit" "$(archsum "$u/top" v2)" "$(treesum "$T/w3")"
srcpin state "$T/w3" | grep -qx "URL=file://$u/top" && ok "its state records the URL" || notok "its state records the URL"
exits "--expect of another commit fails" 1 srcpin checkout top "file://$u/top" v1 --expect="$v2" --into "$T/w3" --cache="$c"
same "and leaves the folder as it was" "$(archsum "$u/top" v2)" "$(treesum "$T/w3")"
(cd "$u/top" && echo e >e.txt && git add e.txt && git commit -qm t4 && git branch -f moved)
check "a branch is fetched again" srcpin checkout top "file://$u/top" moved --into "$T/w3" --cache="$c"
same "and checked out at its new commit" "$(archsum "$u/top" moved)" "$(treesum "$T/w3")"
exits "--commit with URL REF is a usage error" 2 srcpin checkout top "file://$u/top" v1 --commit v1 --into "$T/w3" --cache="$c"
exits "URL without REF is a usage error" 2 srcpin checkout top "file://$u/top" --into "$T/w3" --cache="$c"
# a pristine tree moves to another commit by writing only what differs, and its own index:
# binary files whole (libgit2's blob filter gave nothing for them), additions in new
# folders, deletions that empty a folder, a file that becomes a folder; git reads the index
git init -q "$u/bin" && (cd "$u/bin" && printf 'a\0b\0' >b.bin && echo t >t.txt && mkdir -p gone sub &&
	echo g >gone/g.txt && echo f >sub/f && echo x >was.file && git add . && git commit -qm b1 && git tag b1 &&
	printf 'a\0b\0c\0' >b.bin && git rm -rq gone was.file && mkdir -p new/deep was.file &&
	echo n >new/deep/n.txt && echo w >was.file/inside && echo t2 >>t.txt && git add . && git commit -qm b2 && git tag b2)
check "checkout b1" srcpin checkout bin "file://$u/bin" b1 --into "$T/wbin" --cache="$c"
check "move to b2" srcpin checkout bin "file://$u/bin" b2 --into "$T/wbin" --cache="$c"
same "the moved tree is exactly b2" "$(archsum "$u/bin" b2)" "$(treesum "$T/wbin")"
same "git finds it clean" "" "$(git -C "$T/wbin" status --porcelain --ignored 2>&1)"
same "the index srcpin wrote is b2's tree" "$(git -C "$u/bin" ls-tree -r b2 | awk '{print $1, $3, $4}')" \
	"$(git -C "$T/wbin" ls-files -s | awk '{print $1, $2, $4}')"
check "state of the moved tree" srcpin state --check "$T/wbin"
check "and back to b1" srcpin checkout bin "file://$u/bin" b1 --into "$T/wbin" --cache="$c"
same "the tree is exactly b1 again" "$(archsum "$u/bin" b1)" "$(treesum "$T/wbin")"
same "git finds it clean again" "" "$(git -C "$T/wbin" status --porcelain --ignored 2>&1)"
# the checkout filters of an unchanged .gitattributes apply to the files a move writes, as
# git's own checkout applies them: eol=crlf, ident
git init -q "$u/attr" && (cd "$u/attr" && printf '*.txt eol=crlf\n*.c ident\n' >.gitattributes &&
	printf 'one\n' >a.txt && printf '/* $Id$ */\n' >k.c && echo keep >same.txt && git add . && git commit -qm a1 && git tag a1 &&
	printf 'one\ntwo\n' >a.txt && printf '/* $Id$ */\nint k;\n' >k.c && git add . && git commit -qm a2 && git tag a2)
git clone -q "$u/attr" "$T/attrgit" && git -C "$T/attrgit" checkout -q a2
check "checkout a1 (attributes)" srcpin checkout attr "file://$u/attr" a1 --into "$T/wattr" --cache="$c"
check "move to a2" srcpin checkout attr "file://$u/attr" a2 --into "$T/wattr" --cache="$c"
same "the written files went through the filters as git's checkout" "$(treesum "$T/attrgit")" "$(treesum "$T/wattr")"
has "a.txt has CRLF line ends" "$T/wattr/a.txt" "$(printf 'two\r')"
lacks "k.c has its id expanded" "$T/wattr/k.c" '$Id$ */'
same "git finds the moved tree clean" "" "$(git -C "$T/wattr" status --porcelain --ignored 2>&1)"
echo dirty >>"$T/wbin/t.txt"
exits "a file changed after the move is seen" 1 srcpin state --check "$T/wbin"

# --- refusing folders that are not srcpin's -------------------------------------------------
git init -q "$T/killed"
check "a folder with only a fresh empty .git (a killed first checkout) is taken" srcpin checkout top --commit "$v1" --into "$T/killed" --cache="$c"
(cd "$T/mine0" 2>/dev/null || mkdir -p "$T/mine0") && git init -q "$T/mine0" && (cd "$T/mine0" && echo x >x && git add x && git commit -qm x && rm x)
exits "a .git with history is not taken" 2 srcpin checkout top --commit "$v1" --into "$T/mine0" --cache="$c"
mkdir -p "$T/mine" && echo precious >"$T/mine/notes.txt"
exits "refuses a folder srcpin did not make" 2 srcpin checkout top --commit "$v1" --into "$T/mine" --cache="$c"
has "its file is untouched" "$T/mine/notes.txt" "precious"
check "--force replaces it" srcpin checkout top --commit "$v1" --into "$T/mine" --cache="$c"  --force
same "forced checkout is exact" "$(archsum "$u/top" v1)" "$(treesum "$T/mine")"

# --- patch series -------------------------------------------------------------------------
# real format-patch files: one on the top repository, one inside the nested submodule
git clone -q --recurse-submodules "$u/top" "$T/dev" 2>/dev/null
(cd "$T/dev" && git checkout -q "$v1" && git submodule -q update --init --recursive &&
	sed -i 's/^b$/B/' a.txt && git commit -qam 'a: b is B' &&
	git format-patch -q -1 -o "$T/p" --start-number 1 &&
	cd third_party/mid/deep/leaf && echo leaf-patched >l.txt && git commit -qam 'leaf: patched' &&
	git format-patch -q -1 --stdout --src-prefix=a/third_party/mid/deep/leaf/ \
		--dst-prefix=b/third_party/mid/deep/leaf/ >"$T/p/0002-leaf.patch")
mkdir -p "$T/series"
cp "$T/p/0001-"*.patch "$T/series/0001-a.patch"
cp "$T/p/0002-leaf.patch" "$T/series/"
printf '# our fixes\n0001-a.patch\n0002-leaf.patch  # inside a nested submodule\n' >"$T/series/series"
check "apply a series" srcpin patch "$w" "$T/series/series"
has "top file patched" "$w/a.txt" "B"
has "nested submodule file patched" "$w/third_party/mid/deep/leaf/l.txt" "leaf-patched"
srcpin state "$w" >"$T/st"
has "patched tree is pristine (commit + series)" "$T/st" "PRISTINE=yes"
grep -q '^SERIES_DIGEST=[0-9a-f]' "$T/st" && ok "series digest recorded" || notok "series digest recorded"
d1=$(sed -n 's/^SERIES_DIGEST=//p' "$T/st")
same "digest is sha256 hex" 64 "${#d1}"
t0=$(stat -c %y.%i "$w/a.txt")
check "same series again" env SRCPIN_FAULT_AFTER=list srcpin patch "$w" "$T/series/series"
same "same series again is a no-op (no step: nothing written)" "" "$(cat "$T/.err")"
same "same series again is a no-op (file not rewritten)" "$t0" "$(stat -c %y.%i "$w/a.txt")"
# a patch edited in place is noticed: the tree is reset and the new series applied once
sed -i 's/^+B$/+BB/' "$T/series/0001-a.patch"
check "edited patch" srcpin patch "$w" "$T/series/series"
same "edited patch applied to a fresh tree, not on top" "a BB c" "$(cat "$w/a.txt" | tr '\n' ' ' | sed 's/ $//')"
d2=$(srcpin state "$w" | sed -n 's/^SERIES_DIGEST=//p')
[ "$d1" != "$d2" ] && ok "edited patch changes the digest" || notok "edited patch changes the digest"
# a patch that does not apply: nothing is written
cat >"$T/series/0003-bad.patch" <<'EOF'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: t <t@example.org>
Subject: [PATCH] does not apply

---
diff --git a/k.cu b/k.cu
--- a/k.cu
+++ b/k.cu
@@ -1 +1,2 @@
 __global__ void k() {}
+// fine
diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 x
-y
+z
 c
EOF
printf '0001-a.patch\n0002-leaf.patch\n0003-bad.patch\n' >"$T/series/bad"
before=$(treesum "$w")
exits "a patch that does not apply" 1 srcpin patch "$w" "$T/series/bad"
has "error names the patch" "$T/.err" "0003-bad.patch"
has "error names the file and hunk" "$T/.err" "a.txt: hunk 1 (@@ -1,3 +1,3 @@) does not apply"
same "tree untouched after a failed series" "$before" "$(treesum "$w")"
same "state untouched after a failed series" "$d2" "$(srcpin state "$w" | sed -n 's/^SERIES_DIGEST=//p')"
# escaping paths and missing files
cat >"$T/series/0004-evil.patch" <<'EOF'
diff --git a/../evil.txt b/../evil.txt
new file mode 100644
--- /dev/null
+++ b/../evil.txt
@@ -0,0 +1 @@
+owned
EOF
printf '0004-evil.patch\n' >"$T/series/evil"
exits "a patch path escaping the tree" 2 srcpin patch "$w" "$T/series/evil"
has "escape refused with the path" "$T/.err" "../evil.txt: path escapes the source tree"
[ ! -e "$T/evil.txt" ] && ok "nothing written outside" || notok "nothing written outside"
printf '0001-a.patch\n0009-missing.patch\n' >"$T/series/missing"
exits "series naming a missing file" 2 srcpin patch "$w" "$T/series/missing"
has "missing file: series and line named" "$T/.err" "series/missing:2:"
printf '../x.patch\n' >"$T/series/outside"
exits "series naming a file outside its folder" 2 srcpin patch "$w" "$T/series/outside"
exits "patch on a folder that is not a checkout" 2 srcpin patch "$T/series" "$T/series/series"
# checkout after patch: back to the commit, digest empty
check "checkout drops the series" srcpin checkout top --commit "$v1" --into "$w" --submodules --cache="$c"
same "unpatched again" "$(treesum "$T/gitclone")" "$(treesum "$w")"
srcpin state "$w" | grep -qx 'SERIES_DIGEST=' && ok "state shows no series" || notok "state shows no series"

# --- offline: --mirror and --rewrite --------------------------------------------------------
m=$T/mirrors
mkdir -p "$m/org"
for r in top mid leaf; do git clone -q --bare "$u/$r" "$m/org/$r.git"; done
c2=$T/cache2
check "fetch through --mirror" srcpin fetch top https://example.invalid/org/top.git v2 --cache="$c2" --mirror="$m"
same "mirror fetch resolves" "$v2" "$(cat "$T/.out")"
check "checkout through --mirror (relative submodule URLs)" srcpin checkout top --commit v1 --into "$T/w3" --submodules --cache="$c2" --mirror="$m"
same "mirror checkout identical" "$(treesum "$T/gitclone")" "$(treesum "$T/w3")"
check "fetch through --rewrite" srcpin fetch top2 https://example.invalid/org/top.git v1 --cache="$c2" --rewrite="https://example.invalid/org/=file://$m/org/"
same "rewrite fetch resolves" "$v1" "$(cat "$T/.out")"
exits "--mirror without a copy" 2 srcpin fetch other https://example.invalid/org/other.git v1 --cache="$c2" --mirror="$m"
has "names the places looked at" "$T/.err" "no mirror in $m (looked for $m/other.git, $m/other, $m/example.invalid/org/other.git"
# a mirror named for the pin (DIR/NAME.git) wins over the URL's name
git clone -q --bare "$u/leaf" "$m/named.git"
check "fetch through --mirror by the pin's name" srcpin fetch named https://example.invalid/org/unrelated.git main --cache="$c2" --mirror="$m"
same "the pin's name picks DIR/NAME.git" "$(git -C "$u/leaf" rev-parse main)" "$(cat "$T/.out")"

# --- damaged and interrupted fetches --------------------------------------------------------
# damage the mirror: loose objects lost, packs truncated (new files: the upstream's hard
# links stay intact). (A truncated loose object makes libgit2 1.5.1 spin in inflate.)
find "$c/top.git/objects" -type f -path '*/objects/??/*' -exec rm -f {} +
for p in "$c/top.git"/objects/pack/*.pack; do head -c 100 "$p" >"$p.tmp" && mv -f "$p.tmp" "$p"; done
check "a corrupt mirror is detected and fetched again" srcpin fetch top "file://$u/top" v1 --cache="$c"
same "after repair the tag resolves" "$v1" "$(cat "$T/.out")"
has "the repair is reported" "$T/.err" "damaged"
check "checkout from the repaired mirror" srcpin checkout top --commit "$v1" --into "$w" --submodules --cache="$c"
same "repaired checkout exact" "$(treesum "$T/gitclone")" "$(treesum "$w")"
# a bigger upstream (the progress test below fetches it)
git init -q "$u/big" && (cd "$u/big" && i=0 && while [ $i -lt 40 ]; do
	head -c 100000 /dev/urandom >"f$i" && i=$((i + 1)); done && git add . && git commit -qm big && git tag b1)
b1=$(git -C "$u/big" rev-parse b1)
# two fetches of one mirror at once: the cache lock serialises them, both succeed
srcpin fetch big "file://$u/big" b1 --cache="$c" >"$T/p1" 2>&1 &
pid=$!
srcpin fetch big "file://$u/big" b1 --cache="$c" >"$T/p2" 2>&1
wait $pid; r1=$?
same "concurrent fetches both succeed" "0 $b1 $b1" "$r1 $(cat "$T/p1") $(cat "$T/p2")"

# --- killed at every step: the next run finishes the job ----------------------------------
# SRCPIN_FAULT_AFTER=N (srcpin(1), for tests) makes srcpin kill itself (SIGKILL) right after
# the N-th step it passes; =list names the steps. Each case: SETUP, count the steps of CMD,
# then for every step N: SETUP, CMD killed after step N, and the check AFTER (a function
# given N and the step's name) on what the next run makes of it.
git init -q "$u/kb" && (cd "$u/kb" && mkdir -p d/e && for f in k1 k2 d/k3 d/e/k4; do
	echo "$f" >"$f"; done && git add . && git commit -qm k1 && git tag k1)
k1=$(git -C "$u/kb" rev-parse k1)
# what git archive gives for k1, taken once for every step below
k1sum=$(archsum "$u/kb" k1)
killsteps () {
	_setup=$1 _after=$2 _what=$3
	shift 3
	"$_setup"
	SRCPIN_FAULT_AFTER=list "$@" >/dev/null 2>"$T/steps.err"
	sed -n 's/^srcpin: fault point [0-9]*: //p' "$T/steps.err" >"$T/steps"
	_n=$(lines "$T/steps")
	[ "$_n" -gt 2 ] && ok "$_what: $_n steps to kill it at" || { notok "$_what: $_n steps to kill it at"; cat "$T/steps.err"; }
	_i=1
	while [ "$_i" -le "$_n" ]; do
		_step=$(sed -n "${_i}p" "$T/steps")
		"$_setup"
		SRCPIN_FAULT_AFTER=$_i "$@" >/dev/null 2>"$T/kill.err"
		_rc=$?
		[ "$_rc" = 137 ] || { notok "$_what: killed after step $_i ($_step) (exit $_rc, want 137)"; cat "$T/kill.err"; }
		"$_after" "$_i" "$_step"
		_i=$((_i + 1))
	done
}
# a first fetch into an empty cache, and a fetch into a mirror that has another
# repository's refs (objects packed, refs set one by one, the rest pruned)
kfetch_new () { rm -rf "$c/kb.git" "$c/kb.git".*; }
kfetch_other () { kfetch_new; srcpin fetch kb "file://$u/leaf" main --cache="$c" >/dev/null 2>&1; }
kfetch_after () {
	check "a fetch after a kill after step $1 ($2)" srcpin fetch kb "file://$u/kb" k1 --cache="$c"
	same "it resolves the tag after a kill after step $1" "$k1" "$(cat "$T/.out")"
	check "the mirror is whole after a kill after step $1" git --git-dir="$c/kb.git" fsck --no-dangling --connectivity-only
}
killsteps kfetch_new kfetch_after "a first fetch" srcpin fetch kb "file://$u/kb" k1 --cache="$c"
killsteps kfetch_other kfetch_after "a fetch over another repository's mirror" srcpin fetch kb "file://$u/kb" k1 --cache="$c"
same "no temporary mirrors left" "" "$(ls -d "$c"/*.tmp-* "$c"/*.old-* 2>/dev/null)"
# a first checkout into a new folder
kco_new () { rm -rf "$T/wk"; }
kco_after () {
	check "a checkout after a kill after step $1 ($2)" srcpin checkout kb --commit "$k1" --into "$T/wk" --cache="$c"
	same "the tree is exact after a kill after step $1" "$k1sum" "$(treesum "$T/wk")"
	check "and pristine after a kill after step $1" srcpin state --check "$T/wk"
}
killsteps kco_new kco_after "a first checkout" srcpin checkout kb --commit "$k1" --into "$T/wk" --cache="$c"
# a checkout that replaces another repository's checkout (issue 27: killed while it
# cleared the folder, the next checkout refused it as a stranger's): the folder is marked
# as being replaced before anything is removed, and the next checkout finishes it
# (the other checkout is made once and copied for each step, all file data kept)
srcpin checkout bin "file://$u/bin" b2 --into "$T/wk.bin" --cache="$c" >/dev/null 2>&1
kco_other () { rm -rf "$T/wk"; cp -a "$T/wk.bin" "$T/wk"; }
killsteps kco_other kco_after "a checkout replacing another repository's" srcpin checkout kb --commit "$k1" --into "$T/wk" --cache="$c"
# a stranger's folder given with --force, killed while it is cleared: the next checkout
# finishes what --force began (the folder is half gone), without --force
kco_forced () { rm -rf "$T/wk"; mkdir -p "$T/wk/x/y" && echo a >"$T/wk/a" && echo b >"$T/wk/x/y/b" && git init -q "$T/wk/x"; }
kco_forced_after () {
	if [ -e "$T/wk/.git/srcpin-replacing" ] || [ -e "$T/wk/.git/srcpin" ]; then
		kco_after "$@"
	else
		exits "killed after step $1 ($2) before the folder was marked: still refused without --force" 2 \
			srcpin checkout kb --commit "$k1" --into "$T/wk" --cache="$c"
	fi
}
killsteps kco_forced kco_forced_after "a --force checkout over a stranger's folder" srcpin checkout kb --commit "$k1" --into "$T/wk" --cache="$c" --force
# a pristine checkout moved to another commit (only what differs is written)
git -C "$u/kb" rm -q k2 && echo k5 >"$u/kb/d/k5" && echo changed >>"$u/kb/k1" && git -C "$u/kb" add -A &&
	git -C "$u/kb" commit -qm k2 && git -C "$u/kb" tag k2
srcpin fetch kb "file://$u/kb" k2 --cache="$c" >/dev/null 2>&1
k2=$(git -C "$u/kb" rev-parse k2)
k2sum=$(archsum "$u/kb" k2)
kco_move () { rm -rf "$T/wk"; srcpin checkout kb --commit "$k1" --into "$T/wk" --cache="$c" >/dev/null 2>&1; }
kco_move_after () {
	check "a move after a kill after step $1 ($2)" srcpin checkout kb --commit "$k2" --into "$T/wk" --cache="$c"
	same "the tree is exactly the new commit after a kill after step $1" "$k2sum" "$(treesum "$T/wk")"
}
killsteps kco_move kco_move_after "a checkout moving to another commit" srcpin checkout kb --commit "$k2" --into "$T/wk" --cache="$c"
# git's lock files a killed checkout left (HEAD.lock, index.lock) are removed by the next
# one, which holds srcpin's own lock on the checkout while it works
srcpin checkout big --commit "$b1" --into "$T/wl" --cache="$c" >/dev/null 2>&1
: >"$T/wl/.git/HEAD.lock" && : >"$T/wl/.git/index.lock" && echo dirty >>"$T/wl/f1"
check "a checkout after a kill that left git's lock files" srcpin checkout big --commit "$b1" --into "$T/wl" --cache="$c"
has "it says what it removed" "$T/.err" "$T/wl/.git/HEAD.lock: removed (left by a killed checkout)"
same "the tree is exact" "$(archsum "$u/big" b1)" "$(treesum "$T/wl")"
same "no lock file is left" "" "$(ls "$T/wl/.git/"*.lock 2>/dev/null | grep -v srcpin.lock)"
# two checkouts of one folder at once: the second waits for the first, both succeed
srcpin checkout bin "file://$u/bin" b1 --into "$T/wl" --cache="$c" >"$T/c1" 2>&1 &
pid=$!
srcpin checkout bin "file://$u/bin" b2 --into "$T/wl" --cache="$c" >"$T/c2" 2>&1; r2=$?
wait $pid; r1=$?
same "concurrent checkouts of one folder both succeed" "0 0" "$r1 $r2"; cat "$T/c1" "$T/c2"
check "and leave a pristine tree" srcpin state --check "$T/wl"
exits "SRCPIN_FAULT_AFTER beyond the last step changes nothing" 0 env SRCPIN_FAULT_AFTER=100000 srcpin checkout kb --commit "$k1" --into "$T/wk" --cache="$c"

# --- lock -----------------------------------------------------------------------------------
cat >"$T/pins.env" <<EOF
# pins
TOP_URL=file://$u/top
TOP_REF=v1
TOP_SHA=$v1
leaf_URL=file://$u/leaf
leaf_REF=main
AUDIO_URL=wheel:/nowhere/audio.whl
vision_URL=https://example.invalid/vision
vision_REF=v1
vision_KIND=system
EOF
check "lock" srcpin lock --pins "$T/pins.env" --out "$T/versions.lock" --cache="$c"
has "lock holds the commit" "$T/versions.lock" "TOP_COMMIT=$v1"
has "lock holds the branch's commit" "$T/versions.lock" "leaf_COMMIT=$(git -C "$u/leaf" rev-parse main)"
lacks "a wheel pin is not fetched" "$T/versions.lock" "AUDIO"
lacks "a system pin is not fetched" "$T/versions.lock" "vision"
check "the lock file is itself a pins file" srcpin lock --pins "$T/versions.lock" --out "$T/again.lock" --cache="$c"
sed -i "s/^TOP_SHA=.*/TOP_SHA=$v2/" "$T/pins.env"
rm -f "$T/versions.lock"
exits "lock with a wrong expected sha" 1 srcpin lock --pins "$T/pins.env" --out "$T/versions.lock" --cache="$c"
has "lock mismatch named" "$T/.err" "top: file://$u/top: ref 'v1' resolves to $v1, not the expected $v2"
[ ! -e "$T/versions.lock" ] && ok "no lock written on mismatch" || notok "no lock written on mismatch"
check "--help" srcpin --help
exits "unknown verb" 2 srcpin frobnicate

# --- progress on a terminal only --------------------------------------------------------------
if command -v script >/dev/null 2>&1; then
	# a mirror that has refs already gets a built pack (a new one is seeded from files)
	srcpin fetch big2 "file://$u/leaf" main --cache="$c" >/dev/null 2>&1
	script -qec "srcpin fetch big2 file://$u/big b1 --cache=$c" /dev/null >"$T/tty.out" 2>&1
	has "progress on a terminal" "$T/tty.out" "objects"
	srcpin fetch big3 "file://$u/leaf" main --cache="$c" >/dev/null 2>&1
	srcpin fetch big3 "file://$u/big" b1 --cache="$c" >"$T/notty.out" 2>&1
	has "a mirror follows a changed URL" "$T/notty.out" "$b1"
	lacks "quiet when not a terminal" "$T/notty.out" "objects"
else
	echo "skip progress: no script(1)"
fi
