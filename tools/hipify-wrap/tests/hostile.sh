#!/bin/sh
# hipify-wrap with symlinks planted in its state folder (issue #15): a symlinked
# .kiln-hipify, .git/kiln-hipify, hipify.log, lock, stash or journal must never be
# written through; each is exit 2 naming the path, and nothing outside the tree changes.
. "$KILN_SRC/tests/lib.sh"
cd "$T" || exit 2
TO="timeout 60"
HIP='for f in $(find . -name "*.cu" ! -path "./.kiln-hipify/*"); do cp "$f" "${f%.cu}.hip"; done; echo hipified'

mktree () { rm -rf "$1"; mkdir -p "$1/src"; printf '__global__ void k() {}\n' >"$1/src/k.cu"; }
mkdir out
printf 'precious\n' >out/victim
unchanged () { same "$1: the file outside the tree is untouched" precious "$(cat out/victim)"; }

# the state folder itself a symlink to a folder outside the tree
mktree t1
ln -s ../out t1/.kiln-hipify
exits "symlinked .kiln-hipify: exit 2" 2 $TO hipify-wrap t1 -- sh -c "$HIP"
has "names the state folder" "$T/.err" "t1/.kiln-hipify: is a symbolic link"
same "nothing was written into the folder it points to" "victim" "$(ls out)"
[ -e t1/src/k.hip ] && notok "the command did not run" || ok "the command did not run"

# .git/kiln-hipify a symlink (a git work tree)
mktree t2
mkdir -p t2/.git && ln -s ../../out t2/.git/kiln-hipify
exits "symlinked .git/kiln-hipify: exit 2" 2 $TO hipify-wrap t2 -- sh -c "$HIP"
has "names it" "$T/.err" ".git/kiln-hipify: is a symbolic link"
same "nothing was written outside" "victim" "$(ls out)"

# a symlinked .git folder is not taken as the git state folder's parent
mktree t3
mkdir g3 && ln -s ../g3 t3/.git
check "symlinked .git: the state goes to SRCDIR/.kiln-hipify" $TO hipify-wrap t3 -- sh -c "$HIP"
[ -d t3/.kiln-hipify ] && [ -z "$(ls g3)" ] && ok "and nothing into the folder .git points to" ||
	notok "and nothing into the folder .git points to"

# files in the state folder
for f in hipify.log lock; do
	mktree "t-$f"
	mkdir "t-$f/.kiln-hipify"
	ln -s ../../out/victim "t-$f/.kiln-hipify/$f"
	exits "symlinked .kiln-hipify/$f: exit 2" 2 $TO hipify-wrap "t-$f" -- sh -c "$HIP"
	has "names $f" "$T/.err" "t-$f/.kiln-hipify/$f: is a symbolic link"
	unchanged "$f"
done
mktree th
mkdir th/.kiln-hipify
ln out/victim th/.kiln-hipify/hipify.log 2>/dev/null && {
	exits "a hard link as hipify.log: exit 2" 2 $TO hipify-wrap th -- sh -c "$HIP"
	has "says it has hard links" "$T/.err" "hipify.log: has 2 hard links"
	unchanged "hard link"
}
mktree tf
mkdir tf/.kiln-hipify && mkfifo tf/.kiln-hipify/hipify.log
exits "a FIFO as hipify.log: exit 2, no hang" 2 $TO hipify-wrap tf -- sh -c "$HIP"
has "says it is a FIFO" "$T/.err" "hipify.log: is a FIFO, not a regular file"
mkfifo fifolog
exits "--log naming a FIFO: exit 2, no hang" 2 $TO hipify-wrap --log=fifolog tf -- sh -c "$HIP"
ln -s out/victim linklog
exits "--log naming a symlink: exit 2" 2 $TO hipify-wrap --log=linklog tf -- sh -c "$HIP"
unchanged "--log"

# the journal and the stash: a hipified tree, then symlinks where they are made
mktree t4
check "a clean first run" $TO hipify-wrap t4 -- sh -c "$HIP"
printf '__global__ void k2() {}\n' >t4/src/k.cu
ln -s ../../out t4/.kiln-hipify/stash
exits "symlinked stash on a re-run: exit 2" 2 $TO hipify-wrap t4 -- sh -c "$HIP"
has "names the stash" "$T/.err" "t4/.kiln-hipify/stash: is a symbolic link"
same "nothing moved into the folder it points to" "victim" "$(ls out)"
rm t4/.kiln-hipify/stash
ln -s ../../out t4/.kiln-hipify/orig.new
run $TO hipify-wrap t4 -- sh -c "$HIP"
same "a planted orig.new link is removed, not followed" "victim" "$(ls out)"
[ -L t4/.kiln-hipify/orig.new ] && notok "orig.new link gone" || ok "orig.new link gone"

# FIFOs where hipify-wrap reads: a --script, a file in the tree, its own manifest
mktree t5
mkfifo t5/src/pipe fifo.py
exits "--script naming a FIFO: exit 2, no hang" 2 $TO hipify-wrap --script=fifo.py t5 -- sh -c "$HIP"
has "names it and says what it is" "$T/.err" "--script=fifo.py: is a FIFO, not a regular file"
check "a FIFO in the source tree: hipify runs, no hang" $TO hipify-wrap t5 -- sh -c "$HIP"
[ -p t5/src/pipe ] && ok "the FIFO is left as it was" || notok "the FIFO is left as it was"
rm t5/.kiln-hipify/manifest && mkfifo t5/.kiln-hipify/manifest
run $TO hipify-wrap t5 -- sh -c "$HIP"
[ "$rc" != 0 ] && [ "$rc" != 124 ] && ok "a FIFO planted as the manifest: refused, no hang (exit $rc)" ||
	notok "a FIFO planted as the manifest: refused, no hang (exit $rc)"
has "names the manifest" "$T/.err" ".kiln-hipify/manifest: is a FIFO, not a regular file"

# a manifest whose number fields are not whole numbers (size, times, inode, mode): a
# one-line error naming the file and line, never a half-read manifest
for bad in 'size:12x' 'size:-5' 'mode:99999' 'msec:' 'ino:0x10'; do
	mktree t6
	check "t6 hipifies ($bad)" $TO hipify-wrap t6 -- sh -c "$HIP"
	field=${bad%%:*} val=${bad#*:}
	case $field in size) n=5 ;; msec) n=6 ;; ino) n=8 ;; mode) n=9 ;; esac
	awk -F '\t' -v OFS='\t' -v n="$n" -v v="$val" 'NR == 2 { $n = v } { print }' t6/.kiln-hipify/manifest >m.new &&
		cat m.new >t6/.kiln-hipify/manifest
	exits "a manifest with $field '$val' is refused" 1 $TO hipify-wrap t6 -- sh -c "$HIP"
	has "it names the manifest line ($bad)" "$T/.err" ".kiln-hipify/manifest:2: not a hipify-wrap manifest line"
	rm -rf t6
done
