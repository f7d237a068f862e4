#!/bin/sh
# tests/real/debsrc-test.sh: ninja/debsrc.sh on a source package made here (an orig
# tarball and a .dsc with its SHA-256, found through KILN_DEBSRC_PATH, so apt is never
# asked): the commit is the same from two runs and two machines' worth of extraction, the
# tag is vVERSION without +dfsg, files a .gitignore names are kept, modes are kept, a
# second run leaves the mirror alone, and a bad tarball, a foreign GITDIR and a pin file
# whose SHA differs are refused. Run by tests/real/run.sh; needs git and tar only.
: "${KILN_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${KILN_BIN:=$KILN_SRC/build/bin}"
. "$KILN_SRC/tests/lib.sh"
D=$KILN_SRC/ninja/debsrc.sh

# a release tree with an executable, a file its .gitignore names, and a nested folder
mkdir -p "$T/pkg/demo-2.1/src" "$T/debs"
printf 'print("demo")\n' >"$T/pkg/demo-2.1/setup.py"
printf '#!/bin/sh\necho hi\n' >"$T/pkg/demo-2.1/run.sh"
chmod 755 "$T/pkg/demo-2.1/run.sh"
printf 'version.py\n' >"$T/pkg/demo-2.1/.gitignore"
printf '__version__ = "2.1"\n' >"$T/pkg/demo-2.1/version.py"
printf 'int x;\n' >"$T/pkg/demo-2.1/src/x.c"
touch -d '2024-05-06 07:08:09 UTC' "$T/pkg/demo-2.1/src/x.c"
touch -d '2024-01-01 00:00:00 UTC' "$T/pkg/demo-2.1/setup.py" "$T/pkg/demo-2.1/run.sh" \
	"$T/pkg/demo-2.1/.gitignore" "$T/pkg/demo-2.1/version.py"
(cd "$T/pkg" && tar -czf "$T/debs/demo_2.1+dfsg.orig.tar.gz" demo-2.1)
dsc () {
	{
		echo "Format: 3.0 (quilt)"
		echo "Source: demo"
		echo "Version: 2.1+dfsg-1"
		echo "Checksums-Sha256:"
		echo " $(sha256sum "$T/debs/demo_2.1+dfsg.orig.tar.gz" | cut -c1-64) $(stat -c %s "$T/debs/demo_2.1+dfsg.orig.tar.gz") demo_2.1+dfsg.orig.tar.gz"
		echo " $(sha256sum "$T/debs/demo_2.1+dfsg-1.debian.tar.xz" | cut -c1-64) $(stat -c %s "$T/debs/demo_2.1+dfsg-1.debian.tar.xz") demo_2.1+dfsg-1.debian.tar.xz"
	} >"$T/debs/demo_2.1+dfsg-1.dsc"
}
# the Debian part: debian/ with a quilt series
mkdir -p "$T/deb/debian/patches"
printf '0001-x.patch\n' >"$T/deb/debian/patches/series"
printf -- '--- a/src/x.c\n+++ b/src/x.c\n@@ -1 +1 @@\n-int x;\n+int x = 1;\n' >"$T/deb/debian/patches/0001-x.patch"
touch -d '2024-01-01 00:00:00 UTC' "$T/deb/debian/patches/series" "$T/deb/debian/patches/0001-x.patch"
(cd "$T/deb" && tar -cJf "$T/debs/demo_2.1+dfsg-1.debian.tar.xz" debian)
dsc
export KILN_DEBSRC_PATH=$T/debs

check "a mirror from the orig tarball" sh "$D" --cache="$T/cache" demo 2.1+dfsg "$T/m1/demo.git"
c1=$(cat "$T/.out")
check "a second mirror elsewhere" sh "$D" --cache="$T/cache" demo 2.1+dfsg "$T/m2/demo.git"
same "the same tarball gives the same commit" "$c1" "$(cat "$T/.out")"
same "tagged v2.1 (Debian's +dfsg dropped)" "$c1" "$(git --git-dir="$T/m1/demo.git" rev-parse 'v2.1^{commit}' 2>&1)"
git --git-dir="$T/m1/demo.git" ls-tree -r HEAD >"$T/tree"
has "the file .gitignore names is in the commit" "$T/tree" "version.py"
has "the executable keeps its mode" "$T/tree" "100755 blob"
has "nested folders are kept" "$T/tree" "src/x.c"
same "the commit's date is the newest file's" "1714979289" "$(git --git-dir="$T/m1/demo.git" log -1 --format=%at)"
same "author is fixed" "kiln-debsrc <kiln-debsrc@invalid>" "$(git --git-dir="$T/m1/demo.git" log -1 --format='%an <%ae>')"
check "a second run on a made mirror" sh "$D" --cache="$T/cache" demo 2.1+dfsg "$T/m1/demo.git"
same "a second run prints the same commit" "$c1" "$(cat "$T/.out")"

# srcpin reads it as --mirror=DIR's NAME.git, under any URL
check "srcpin fetches the tag from the mirror" srcpin fetch demo debsrc:demo/2.1+dfsg v2.1 --cache="$T/git" --mirror="$T/m1"
same "srcpin resolves v2.1 to the commit" "$c1" "$(cat "$T/.out")"

# the pin-file form, with the SHA checked
printf 'demo_URL=debsrc:demo/2.1+dfsg\ndemo_REF=v2.1\ndemo_SHA=%s\n' "$c1" >"$T/pins.env"
check "--pins makes DIR/C.git for each debsrc: pin" sh "$D" --cache="$T/cache" --pins="$T/pins.env" "$T/m3"
has "--pins names component, commit and mirror" "$T/.out" "demo $c1 $T/m3/demo.git"
printf 'demo_URL="debsrc:demo/2.1+dfsg"\ndemo_SHA=1111111111111111111111111111111111111111\n' >"$T/bad.env"
exits "a pin whose SHA differs is refused" 1 sh "$D" --cache="$T/cache" --pins="$T/bad.env" "$T/m4"
has "... saying both commits" "$T/.err" "demo_SHA=1111111111111111111111111111111111111111, but demo 2.1+dfsg makes commit $c1"
printf 'torch_URL=https://github.com/pytorch/pytorch\n' >"$T/none.env"
exits "a pin file without debsrc: pins is an error" 1 sh "$D" --pins="$T/none.env" "$T/m5"

# a full Debian version: the tree holds debian/ too (patches unapplied), tag v2.1
check "a full Debian version makes a mirror" sh "$D" --cache="$T/cache" demo 2.1+dfsg-1 "$T/md/demo.git"
cd1=$(cat "$T/.out")
git --git-dir="$T/md/demo.git" ls-tree -r --name-only v2.1 >"$T/dtree"
has "... with debian/patches/series in the tree" "$T/dtree" "debian/patches/series"
same "... the orig tarball's files unpatched" "int x;" "$(git --git-dir="$T/md/demo.git" show v2.1:src/x.c)"
[ "$cd1" != "$c1" ] && ok "... another commit than the orig tarball's alone" || notok "... the same commit as the orig tarball's alone"
git --git-dir="$T/md/demo.git" log -1 --format=%B >"$T/dmsg"
has "... the commit names the Debian part" "$T/dmsg" "demo_2.1+dfsg-1.debian.tar.xz SHA-256"
cp "$T/debs/demo_2.1+dfsg-1.debian.tar.xz" "$T/debian.good"
printf 'x' >>"$T/debs/demo_2.1+dfsg-1.debian.tar.xz"
exits "a Debian part that is not the .dsc's is refused" 1 sh "$D" --cache="$T/cache" demo 2.1+dfsg-1 "$T/md2/demo.git"
has "... naming the file" "$T/.err" "demo_2.1+dfsg-1.debian.tar.xz: its SHA-256 is not the one"
cp "$T/debian.good" "$T/debs/demo_2.1+dfsg-1.debian.tar.xz"

# refusals
git init -q --bare "$T/other.git"
exits "a GITDIR debsrc.sh did not make is refused" 1 sh "$D" --cache="$T/cache" demo 2.1+dfsg "$T/other.git"
has "... saying what to do" "$T/.err" "has no tag v2.1"
printf 'tampered' >>"$T/debs/demo_2.1+dfsg.orig.tar.gz"
exits "a tarball that is not the .dsc's is refused" 1 sh "$D" --cache="$T/cache" demo 2.1+dfsg "$T/m6/demo.git"
has "... naming both digests" "$T/.err" "but $T/debs/demo_2.1+dfsg-1.dsc says"
[ -e "$T/m6/demo.git" ] && notok "a refused tarball leaves no mirror" || ok "a refused tarball leaves no mirror"
exits "usage errors exit 2" 2 sh "$D" demo
