# srcpin patch against git itself, commit by commit: for each commit C of a history,
# "git format-patch --binary -1 C" applied by srcpin to a pristine checkout of C^ must give
# exactly C's tree (the tree id srcpin records equals git's, and every file, mode and link
# target on disk equals git archive's). Histories: one made here that holds every shape a
# patch can take (added, deleted and empty files, symlinks, modes, renames, copies, binary
# literal and delta, no final newline, CRLF, file <-> folder, quoted and spaced names, a
# moved, added and removed submodule), the last SRCPIN_OWN_COMMITS (60; 0: all) commits of
# the checkout's own git history (optional tier: a source tarball has none; all 665 of them
# took 350 CPU seconds, a tenth of the suite, and grow each day), and the last
# SRCPIN_GLOO_COMMITS (30) commits of gloo when the
# workspace holds a snapshot of it (optional tier). Then git apply's failure cases, each one
# line naming patch, file and hunk.
. "$KILN_SRC/tests/lib.sh"
need git tar
. "$KILN_SRC/tools/srcpin/tests/srcpin.inc"
git config --global protocol.file.allow always
git config --global init.defaultBranch main
git config --global advice.detachedHead false
c=$T/cache

# every file's type, executable bit, link target or content digest below a folder, except
# the folders named in $prune (submodules: compared through their state instead)
# (one find: the digests come from its -exec, in an order the sort makes no matter)
listing () { (cd "$1" && eval "find . -path ./.git -prune -o $prune -type d -printf 'd %p\n' -o -type l -printf 'l %p -> %l\n' \
		-o -type f -perm -u+x -printf 'x %p\n' -exec sha256sum {} + -o -type f -printf 'f %p\n' -exec sha256sum {} +" |
	LC_ALL=C sort); }

# walk REPO NAME FULL [SUBS [LAST]]: apply every non-merge commit of REPO's main (the last
# LAST ones when given) to a checkout of its parent (with --submodules unless SUBS=0);
# FULL=1 also compares the files on disk and the pristine state. Prints one ok line per
# history, and one not ok line per commit that differs.
walk () {
	repo=$1 name=$2 full=$3 subs=${4:-1} last=${5:-0} n=0 bad=0
	sm=--submodules
	[ "$subs" = 1 ] || sm=
	w=$T/w.$name p=$T/p.$name
	mkdir -p "$p"
	srcpin fetch "$name" "file://$repo" main --cache="$c" >/dev/null 2>"$T/.err" || { notok "$name: fetch"; _show; return; }
	# each commit with its parents and its tree (the tree srcpin must make)
	git -C "$repo" log --reverse --no-merges --format='%H %T %P' main >"$p/list"
	skip=0 lastn=
	[ "$last" -gt 0 ] && skip=$(($(lines "$p/list") - last)) lastn=-$last
	# the patches made in one go (one format-patch per commit costs more than srcpin), only
	# the last LAST commits' when given
	git -C "$repo" format-patch -q --binary --no-merges --root -o "$p/all" $lastn main >/dev/null
	# which patch is which commit's: format-patch leaves out commits without changes, so
	# the files are matched by their "From SHA" line, not by number; one line per commit
	# walked: C TREE PARENT PATCH ("-" when it has none)
	for f in "$p"/all/*.patch; do [ -f "$f" ] && printf '%s\0' "$f"; done |
		xargs -0 -r awk 'FNR == 1 { n = split(FILENAME, a, "/"); print $2, a[n]; nextfile }' >"$p/map"
	awk -v skip="$skip" 'NR == FNR { f[$1] = $2; next }
		FNR > skip && $3 != "" { print $1, $2, $3, (($1 in f) ? f[$1] : "-") }' "$p/map" "$p/list" >"$p/walk"
	while read -r C TR P f; do
		if [ "$f" = - ]; then
			# an empty commit has no patch: it must be one that changes nothing
			git -C "$repo" diff-tree --quiet "$P" "$C" || { notok "$name: no patch of $C"; bad=$((bad + 1)); }
			continue
		fi
		n=$((n + 1))
		# the one-patch series beside the patch (the patch's subject names it in messages)
		IFS= read -r first <"$p/all/$f"
		case $first in "From $C "*) ;; *) notok "$name: the patch of $C"; bad=$((bad + 1)); continue ;; esac
		printf '%s\n' "$f" >"$p/all/series"
		if ! srcpin checkout "$name" --commit "$P" --into "$w" $sm --cache="$c" >/dev/null 2>"$T/.err"; then
			notok "$name: check out the parent of '$(subj "$p/all/$f")'"; _show; bad=$((bad + 1)); continue
		fi
		if ! srcpin patch "$w" "$p/all/series" >/dev/null 2>"$T/.err"; then
			notok "$name: '$(subj "$p/all/$f")' applies"; _show; bad=$((bad + 1)); continue
		fi
		got=
		while IFS= read -r l; do case $l in TREE=*) got=${l#TREE=}; got=${got#[\"\']}; got=${got%[\"\']} ;; esac; done <"$w/.git/srcpin"
		if [ "$got" != "$TR" ]; then
			notok "$name: '$(subj "$p/all/$f")': the tree srcpin made is C's tree"; bad=$((bad + 1)); continue
		fi
		[ "$full" = 1 ] || continue
		# one srcpin state --check --json: the tree pristine after the patch, and the
		# commit each submodule is at (its own state)
		srcpin state --check --json "$w" >"$T/st.json" 2>&1 || { notok "$name: '$(subj "$p/all/$f")': pristine after the patch"; bad=$((bad + 1)); }
		IFS= read -r js <"$T/st.json"
		prune=
		git -C "$repo" ls-tree -r "$C" | awk '$1 == "160000" { print $3, $4 }' >"$T/links"
		while read -r sc s; do
			prune="$prune -path ./$s -prune -o"
			case $js in *"{\"path\":\"$s\",\"commit\":\"$sc\""*) ;;
			*) notok "$name: '$(subj "$p/all/$f")': submodule $s is at C's commit"; bad=$((bad + 1)) ;; esac
		done <"$T/links"
		rm -rf "$T/arch" && mkdir "$T/arch" && git -C "$repo" archive "$C" | tar -x -C "$T/arch"
		listing "$T/arch" >"$T/l.git"
		listing "$w" >"$T/l.srcpin"
		if ! cmp -s "$T/l.git" "$T/l.srcpin"; then
			notok "$name: '$(subj "$p/all/$f")': files, modes and links on disk are git's"
			diff "$T/l.git" "$T/l.srcpin" | sed -n '1,10s/^/#   /p'; bad=$((bad + 1))
		fi
	done <"$p/walk"
	[ "$bad" = 0 ] && ok "$name: all $n commits applied by srcpin give git's tree"
	return 0
}
# subj PATCH: its subject, for messages
subj () { sed -n 's/^Subject: \[PATCH[^]]*\] //p' "$1" | head -1; }

# --- a history with every shape ---------------------------------------------------------------
u=$T/up
mkdir -p "$u"
git init -q "$u/subup" && (cd "$u/subup" && echo s1 >s.txt && git add . && git commit -qm s1 &&
	echo s2 >s.txt && git commit -qam s2 && echo s3 >>s.txt && git commit -qam s3)
git init -q "$u/sub2" && (cd "$u/sub2" && echo t1 >t.txt && git add . && git commit -qm t1)
git init -q "$u/gen"
(
	set -e
	cd "$u/gen"
	c () { git add -A && git commit -qm "$1"; }
	printf 'a\nb\nc\n' >a.txt
	head -c 3000 /dev/urandom >bin.dat
	printf 'one\r\ntwo\r\n' >crlf.txt
	printf 'no newline' >noeol.txt
	printf '#!/bin/sh\necho hi\n' >exec.sh && chmod +x exec.sh
	ln -s a.txt link
	mkdir dir && echo f >dir/f.txt && echo g >dir/g.txt
	echo space >'sp ace.txt'
	echo accent >"$(printf 'caf\303\251.txt')"
	seq 1 200 >long.txt
	: >empty.txt
	echo x >x
	git submodule -q add ../subup sub
	git -C sub checkout -q HEAD~2
	c init
	echo new >new.txt; c "add a file"
	git rm -q new.txt; c "delete a file"
	: >empty2.txt; c "add an empty file"
	echo now >empty2.txt; c "an empty file gets content"
	printf 'a\nb\nc\n' >a2.txt; git rm -q empty2.txt; c "delete a file with content"
	git rm -q empty.txt; c "delete an empty file"
	ln -s dir/f.txt link2; c "add a symlink"
	ln -sfn dir/g.txt link2; c "retarget a symlink"
	rm 'sp ace.txt' && ln -s a.txt 'sp ace.txt'; c "a file becomes a symlink"
	rm link && echo notalink >link; c "a symlink becomes a file"
	chmod +x a2.txt; c "mode +x"
	chmod -x exec.sh; c "mode -x"
	chmod -x a2.txt && echo more >>a2.txt; c "content and mode"
	git mv dir/g.txt dir/h.txt; c "pure rename"
	seq 1 200 >r.txt; c "add r"
	git mv r.txt r2.txt && sed -i 's/^100$/hundred/' r2.txt; c "rename with an edit"
	git mv r2.txt r3.txt && chmod +x r3.txt; c "rename with a mode change"
	cp long.txt copy.txt && echo tail >>long.txt; c "copy"
	head -c 40000 /dev/urandom >big.bin; c "add a big binary"
	printf 'X' | dd of=big.bin bs=1 seek=20000 conv=notrunc 2>/dev/null; c "binary delta"
	head -c 3000 /dev/urandom >bin.dat; c "binary literal change"
	git rm -q big.bin; c "delete a binary"
	printf 'no newline, longer' >noeol.txt; c "no final newline either side"
	printf 'now\nwith newline\n' >noeol.txt; c "final newline added"
	printf 'a\nb\nc' >a.txt; c "final newline removed"
	printf 'three\r\nfour\r\n' >crlf2.txt; c "add a CRLF file"
	printf 'one\r\nTWO\r\nthree\r\n' >crlf.txt; c "change CRLF lines"
	printf 'one\nTWO\nthree\n' >crlf.txt; c "CRLF to LF"
	rm x && mkdir x && echo inside >x/y; c "a file becomes a folder"
	rm -r x && echo back >x; c "a folder becomes a file"
	sed -i 's/^50$/fifty/; s/^150$/one-fifty/' long.txt; c "two hunks"
	git -C sub checkout -q main; c "submodule moved"
	echo edited >"$(printf 'caf\303\251.txt')"; c "non-ASCII name"
	git mv "$(printf 'caf\303\251.txt')" "$(printf 'th\303\251.txt')"; c "rename a non-ASCII name"
	echo edit >>dir/f.txt; git mv dir/f.txt 'dir/with space.txt'; c "rename to a name with a space"
	printf 'tab\n' >"$(printf 'with\ttab.txt')"; c "a name with a tab"
	printf 'bin\0ary' >bt.dat; c "add a small binary"
	printf 'now text\n' >bt.dat; c "binary becomes text"
	git rm -q link2; c "delete a symlink"
	git submodule -q add ../sub2 third/sub2; c "add a submodule"
	echo more >>a2.txt && git -C sub checkout -q HEAD~1; c "a file and a submodule in one patch"
	git rm -q third/sub2; c "remove a submodule"
) || notok "make the history with every shape"
walk "$u/gen" gen 1
# copies are found only when asked (format-patch -C): the copy commit again, with -C
C=$(git -C "$u/gen" log --format=%H --grep='^copy$' main)
mkdir -p "$T/pc" && git -C "$u/gen" format-patch -q --binary -C -1 "$C" -o "$T/pc" && (cd "$T/pc" && ls -- *.patch) >"$T/pc/series"
has "format-patch -C writes a copy" "$(ls "$T"/pc/*.patch)" "copy from long.txt"
check "check out the parent of the copy" srcpin checkout gen --commit "$(git -C "$u/gen" rev-parse "$C^")" --into "$T/wc" --submodules --cache="$c"
check "a copy patch applies" srcpin patch "$T/wc" "$T/pc/series"
same "the copy gives C's tree" "$(git -C "$u/gen" rev-parse "$C^{tree}")" "$(sed -n "s/^TREE=[\"']\{0,1\}\([0-9a-f]*\).*/\1/p" "$T/wc/.git/srcpin")"
# the moved submodule: its own state records the new commit
C=$(git -C "$u/gen" log --format=%H --grep='^submodule moved$' main)
mkdir -p "$T/pm" && git -C "$u/gen" format-patch -q --binary -1 "$C" -o "$T/pm" && (cd "$T/pm" && ls -- *.patch) >"$T/pm/series"
check "check out the parent of the submodule move" srcpin checkout gen --commit "$(git -C "$u/gen" rev-parse "$C^")" --into "$T/wm" --submodules --cache="$c"
check "a gitlink hunk applies" srcpin patch "$T/wm" "$T/pm/series"
check "the submodule's state" srcpin state "$T/wm/sub"
has "the submodule's state records the new commit" "$T/.out" "COMMIT=$(git -C "$u/subup" rev-parse main)"
same "the submodule's files are the new commit's" "s2 s3" "$(cat "$T/wm/sub/s.txt" | tr '\n' ' ' | sed 's/ $//')"
check "state --json lists the submodule" srcpin state --json "$T/wm"
has "state --json: the submodule at its new commit" "$T/.out" "{\"path\":\"sub\",\"commit\":\"$(git -C "$u/subup" rev-parse main)\""
# the same move as plain "git diff" in the superproject (no mail headers)
git -C "$u/gen" diff "$C^" "$C" >"$T/pm/0001-submodule-moved.patch"
has "git diff writes a Subproject commit hunk" "$T/pm/0001-submodule-moved.patch" "+Subproject commit"
check "check out the parent again" srcpin checkout gen --commit "$(git -C "$u/gen" rev-parse "$C^")" --into "$T/wm" --submodules --cache="$c"
check "a git diff gitlink hunk applies" srcpin patch "$T/wm" "$T/pm/series"
check "the tree is pristine with the submodule moved" srcpin state --check "$T/wm"
same "its tree is C's" "$(git -C "$u/gen" rev-parse "$C^{tree}")" "$(sed -n "s/^TREE=[\"']\{0,1\}\([0-9a-f]*\).*/\1/p" "$T/wm/.git/srcpin")"
check "checkout puts it back" srcpin checkout gen --commit "$(git -C "$u/gen" rev-parse "$C^")" --into "$T/wm" --submodules --cache="$c"
same "back at the pinned commit's submodule" "s1" "$(cat "$T/wm/sub/s.txt")"
# srcpin lock records the moves a pin's series makes: GEN_PATCHES (relative to the pins
# file) or --patches=DIR (DIR/NAME/series)
mkdir -p "$T/lk/p/gen" && cp "$T/pm/series" "$T/pm/0001-submodule-moved.patch" "$T/lk/p/gen/"
printf 'GEN_URL=file://%s\nGEN_REF=%s\nGEN_PATCHES=p/gen\n' "$u/gen" "$(git -C "$u/gen" rev-parse "$C^")" >"$T/lk/pins.env"
check "lock a pin whose series moves a submodule" srcpin lock --pins "$T/lk/pins.env" --out "$T/lk/lock" --cache="$c"
has "the lock names the series" "$T/lk/lock" "# gen: the series $T/lk/p/gen/series (digest "
has "the lock records the submodule's new commit" "$T/lk/lock" "#   $(git -C "$u/subup" rev-parse main) sub"
has "the lock still holds the pin's own commit" "$T/lk/lock" "GEN_COMMIT=$(git -C "$u/gen" rev-parse "$C^")"
printf 'GEN_URL=file://%s\nGEN_REF=%s\n' "$u/gen" "$(git -C "$u/gen" rev-parse "$C^")" >"$T/lk/pins2.env"
check "lock with --patches=DIR" srcpin lock --pins "$T/lk/pins2.env" --out "$T/lk/lock2" --patches="$T/lk/p" --cache="$c"
has "--patches=DIR finds DIR/gen/series" "$T/lk/lock2" "#   $(git -C "$u/gen" rev-parse "$C:sub") sub"
check "lock without patches" srcpin lock --pins "$T/lk/pins2.env" --out "$T/lk/lock3" --cache="$c"
lacks "no series: no submodule lines" "$T/lk/lock3" "moves submodules"
check "the lock is still a pins file" srcpin lock --pins "$T/lk/lock" --out "$T/lk/lock4" --cache="$c"
# the removal and the addition of a submodule, and the last of two moves of one path
R=$(git -C "$u/gen" log --format=%H --grep='^remove a submodule$' main)
A=$(git -C "$u/gen" log --format=%H --grep='^add a submodule$' main)
mkdir -p "$T/lk/p2/gen" && git -C "$u/gen" format-patch -q --binary -o "$T/lk/p2/gen" "$A^..$R" &&
	(cd "$T/lk/p2/gen" && ls -- *.patch) >"$T/lk/p2/gen/series"
printf 'GEN_URL=file://%s\nGEN_REF=%s\n' "$u/gen" "$(git -C "$u/gen" rev-parse "$A^")" >"$T/lk/pins3.env"
check "lock a series that adds, moves and removes submodules" srcpin lock --pins "$T/lk/pins3.env" --out "$T/lk/lock5" --patches="$T/lk/p2" --cache="$c"
has "a removed submodule is recorded as removed" "$T/lk/lock5" "#   removed third/sub2"
has "the last move of sub wins" "$T/lk/lock5" "#   $(git -C "$u/gen" rev-parse "$R:sub") sub"
same "each path is listed once" 1 "$(grep -c ' sub$' "$T/lk/lock5")"
printf 'not a patch\n' >"$T/lk/p2/gen/0001-bad.patch" && echo 0001-bad.patch >"$T/lk/p2/gen/series" && rm -f "$T/lk/p2/gen/0002-"*
printf 'GEN_URL=file://%s\nGEN_REF=main\nGEN_PATCHES=p2/gen\n' "$u/gen" >"$T/lk/pins4.env"
echo missing.patch >>"$T/lk/p2/gen/series"
exits "a series naming a missing patch stops the lock" 2 srcpin lock --pins "$T/lk/pins4.env" --out "$T/lk/lock6" --cache="$c"
has "naming the series line" "$T/.err" "series:2"

# --- the checkout's own history (optional: a tarball of kiln has none) ------------------------
if git -C "$KILN_SRC" rev-parse -q --verify HEAD >/dev/null 2>&1; then
	git clone -q --bare --no-local "$KILN_SRC" "$T/own.git" 2>/dev/null &&
		git -C "$T/own.git" update-ref refs/heads/main "$(git -C "$KILN_SRC" rev-parse HEAD)"
	walk "$T/own.git" own "${SRCPIN_FULL:-0}" 1 "${SRCPIN_OWN_COMMITS:-60}"
else
	optional_case own-history "$KILN_SRC is not a git checkout"
fi

# --- a real upstream's history (optional: the workspace's snapshot of gloo) ------------------
gloo=${SRCPIN_UPSTREAM:-/work/.mirror}/facebookincubator+gloo/repo
if [ -d "$gloo" ]; then
	git clone -q --bare "$gloo" "$T/gloo.git" 2>/dev/null &&
		git -C "$T/gloo.git" update-ref refs/heads/main "$(git -C "$gloo" rev-parse HEAD)"
	walk "$T/gloo.git" gloo 0 0 "${SRCPIN_GLOO_COMMITS:-30}"
else
	optional_case gloo-history "no snapshot of gloo at $gloo"
fi

# --- git apply's failure cases: exit 1, one line naming patch, file and hunk ------------------
w=$T/w.gen
top=$(git -C "$u/gen" rev-parse main)
srcpin checkout gen --commit "$top" --into "$w" --submodules --cache="$c" >/dev/null 2>&1
mkdir -p "$T/bad"
# fail NAME DESCRIPTION WANT: the patch $T/bad/NAME.patch must fail with exit 1 and WANT
fail () {
	printf '%s.patch\n' "$1" >"$T/bad/$1"
	before=$(listing "$w" | sha256sum)
	exits "$2: refused" 1 srcpin patch "$w" "$T/bad/$1"
	has "$2: one line naming patch, file and hunk" "$T/.err" "srcpin: $T/bad/$1.patch: $3"
	same "$2: one line" 1 "$(lines "$T/.err")"
	same "$2: nothing written" "$before" "$(listing "$w" | sha256sum)"
}
hdr () { printf 'diff --git a/%s b/%s\n' "$1" "$1"; }
{ hdr a.txt; printf -- '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a\n-x\n+y\n c\n'; } >"$T/bad/context.patch"
fail context "context that is not there" "a.txt: hunk 1 (@@ -1,3 +1,3 @@) does not apply to $top"
{ hdr nothere.txt; printf -- '--- a/nothere.txt\n+++ b/nothere.txt\n@@ -1 +1 @@\n-a\n+b\n'; } >"$T/bad/missing.patch"
fail missing "a file that is not there" "nothere.txt: does not apply to $top"
{ hdr a.txt; printf 'new file mode 100644\n--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+again\n'; } >"$T/bad/exists.patch"
fail exists "a new file that exists" "a.txt: already exists in $top; the patch adds it"
{ hdr long.txt; printf 'deleted file mode 100644\n--- a/long.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-1\n-2\n'; } >"$T/bad/delete.patch"
fail delete "deleting a file with other content" "long.txt: hunk 1 deletes other content than the file has in $top"
# a binary patch made against other bytes
(cd "$T" && rm -rf binrepo && git init -q binrepo && cd binrepo && head -c 3000 /dev/urandom >bin.dat &&
	git add . && git commit -qm x && head -c 3000 /dev/urandom >bin.dat && git diff --binary >"$T/bad/binary.patch")
fail binary "a binary patch for other bytes" "bin.dat: does not apply to $top"
{ printf 'diff --git a/%s b/%s\n' "$(printf 'th\303\251.txt')" "$(printf 'th\303\251.txt')" | sed 's/.*/&/';
	printf -- '--- "a/th\\303\\251.txt"\n+++ "b/th\\303\\251.txt"\n@@ -1 +1 @@\n-nope\n+yes\n'; } >"$T/bad/bytes.patch"
fail bytes "a quoted name in the message" "$(printf 'th\303\251.txt'): hunk 1 (@@ -1 +1 @@) does not apply"
{ hdr sub; printf 'index 1111111..2222222 160000\n--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n-Subproject commit %s\n+Subproject commit %s\n' \
	"$(git -C "$u/subup" rev-parse HEAD~2)" "$(git -C "$u/subup" rev-parse HEAD~1)"; } >"$T/bad/gitlink.patch"
fail gitlink "a submodule hunk from another commit" "sub: submodule hunk (Subproject commit $(git -C "$u/subup" rev-parse HEAD~2 | cut -c1-12) -> $(git -C "$u/subup" rev-parse HEAD~1 | cut -c1-12)) does not apply to $top (it is at another commit)"
{ hdr sub; printf -- '--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n-x\n+y\n'; } >"$T/bad/subfile.patch"
fail subfile "a file change aimed at a submodule" "sub: is a submodule in $top; the patch changes it as a file"
# the garbled-path bug of 0.x (libgit2 frees a pointer it never set): run it under valgrind
if command -v valgrind >/dev/null 2>&1 && [ -x "$KILN_BUILD/bin/srcpin" ]; then
	valgrind -q --error-exitcode=99 "$KILN_BUILD/bin/srcpin" patch "$w" "$T/bad/subfile" >/dev/null 2>"$T/vg"
	same "valgrind: a patch aimed at a submodule fails cleanly" 1 "$?"
	lacks "valgrind: no invalid read" "$T/vg" "Invalid"
else
	optional_case valgrind "no valgrind or no release build at $KILN_BUILD/bin"
fi
