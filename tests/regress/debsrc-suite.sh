#!/bin/sh
# debsrc-suite: ninja/debsrc.sh --suite against a Debian archive on loopback
# (tests/regress/archive-server.py: byte ranges, a port from binding 0, a fault file that
# cuts downloads short). The archive is laid out as Debian's: dists/SUITE/Release (with
# the SHA-256 of the Sources index), dists/SUITE/main/source/Sources, the orig tarball in
# pool/main/d/demo/; no .dsc and no debian.tar (mirrors serve only the orig tarball at
# times; the index is what a tarball is checked against). Unsigned: --keyring=none.
# Checked: the mirror made from it (the same commit as the .dsc form of debsrc-test.sh's
# kind of tree), the SUITE PACKAGE/VERSION form the src stage uses, a pin file with
# debsrc:SUITE/..., and the bad input, one line each with nothing half made in the cache
# or the mirror: an unsigned archive without --keyring=none, a suite without the package, a version the suite lacks, a suite the
# archive does not have, a tarball whose SHA-256 is not the index's (served so, and found
# so in the cache), an interrupted download (resumed by the next run from where it
# stopped).
. "$KILN_SRC/tests/lib.sh"
need apt-get apt-cache python3 git tar sha256sum
[ -x /usr/lib/apt/apt-helper ] || missing "needs /usr/lib/apt/apt-helper (apt)"
D=$KILN_SRC/ninja/debsrc.sh
A=$T/archive

# a release tree, its orig tarball (incompressible, so a cut is mid-file), and a second
# package whose served tarball is not the one its index entry names
mkdir -p "$T/pkg/demo-2.1/src" "$A/pool/main/d/demo" "$A/pool/main/b/bad" "$A/dists/fake/main/source"
printf 'print("demo")\n' >"$T/pkg/demo-2.1/setup.py"
python3 -c 'import os, sys; sys.stdout.buffer.write(os.urandom(200000))' >"$T/pkg/demo-2.1/src/blob.bin"
touch -d '2024-05-06 07:08:09 UTC' "$T/pkg/demo-2.1/setup.py" "$T/pkg/demo-2.1/src/blob.bin"
(cd "$T/pkg" && tar -cf - demo-2.1 | gzip -n >"$A/pool/main/d/demo/demo_2.1.orig.tar.gz")
cp "$A/pool/main/d/demo/demo_2.1.orig.tar.gz" "$A/pool/main/b/bad/bad_1.0.orig.tar.gz"
size=$(wc -c <"$A/pool/main/d/demo/demo_2.1.orig.tar.gz" | tr -d ' ')
sum=$(sha256sum "$A/pool/main/d/demo/demo_2.1.orig.tar.gz" | cut -c1-64)
md5=$(md5sum "$A/pool/main/d/demo/demo_2.1.orig.tar.gz" | cut -c1-32)
# stanza PACKAGE VERSION ORIG SHA256: a Sources record as Debian writes it
stanza () {
	printf 'Package: %s\nBinary: python3-%s\nVersion: %s\nMaintainer: kiln <kiln@invalid>\n' "$1" "$1" "$2"
	printf 'Architecture: any\nFormat: 3.0 (quilt)\nDirectory: pool/main/%s/%s\n' "$(printf %.1s "$1")" "$1"
	printf 'Files:\n %s %s %s\nChecksums-Sha256:\n %s %s %s\n\n' "$md5" "$size" "$3" "$4" "$size" "$3"
}
{
	stanza demo 2.1-1 demo_2.1.orig.tar.gz "$sum"
	stanza bad 1.0-1 bad_1.0.orig.tar.gz "$(printf '%064d' 0)"
} >"$A/dists/fake/main/source/Sources"
{
	printf 'Origin: kiln\nLabel: kiln\nSuite: fake\nCodename: fake\nComponents: main\nArchitectures: amd64 source\n'
	printf 'Date: Wed, 25 Nov 2026 12:00:00 UTC\nSHA256:\n'
	printf ' %s %s main/source/Sources\n' "$(sha256sum "$A/dists/fake/main/source/Sources" | cut -c1-64)" \
		"$(wc -c <"$A/dists/fake/main/source/Sources" | tr -d ' ')"
} >"$A/dists/fake/Release"

python3 "$KILN_SRC/tests/regress/archive-server.py" "$A" "$T/port" "$T/requests" 2>"$T/server.err" &
pid=$!
at_exit 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null'
# it writes its port once it listens (bound to port 0: no race for the port)
waitalive "$pid" test -s "$T/port" || { cat "$T/server.err"; notok "the archive server did not start"; exit 1; }
URL=http://127.0.0.1:$(cat "$T/port")
ds () { sh "$D" --cache="$T/cache" --archive="$URL" --keyring=none "$@"; }
# oneline: stderr is one line (besides the progress line of a download)
oneline () { same "$1: one line" 1 "$(grep -vc '^debsrc.sh: fake: downloading' "$T/.err")"; }

check "a mirror from the suite's orig tarball" ds --suite=fake demo 2.1 "$T/m1/demo.git"
c1=$(cat "$T/.out")
same "tagged v2.1" "$c1" "$(git --git-dir="$T/m1/demo.git" rev-parse 'v2.1^{commit}' 2>&1)"
check "the tarball is in the cache, checked" test -f "$T/cache/demo_2.1.orig.tar.gz"
same "nothing is left in the download folder" "" "$(ls "$T/cache/.partial")"
check "SUITE PACKAGE/VERSION GITDIR (the src stage's form)" ds fake demo/2.1 "$T/m2/demo.git"
same "... the same commit" "$c1" "$(cat "$T/.out")"
printf 'demo_URL=debsrc:fake/demo/2.1\ndemo_REF=v2.1\ndemo_SHA=%s\n' "$c1" >"$T/pins.env"
check "--pins with debsrc:SUITE/PACKAGE/VERSION" ds --pins="$T/pins.env" "$T/m3"
has "... names component, commit and mirror" "$T/.out" "demo $c1 $T/m3/demo.git"
# the commit is the tarball's alone: the .dsc form (KILN_DEBSRC_PATH, no suite) agrees
mkdir -p "$T/debs" && cp "$T/cache/demo_2.1.orig.tar.gz" "$T/debs/" &&
	printf 'Checksums-Sha256:\n %s %s demo_2.1.orig.tar.gz\n' "$sum" "$size" >"$T/debs/demo_2.1-1.dsc"
check "the .dsc form (no suite) on the same tarball" env KILN_DEBSRC_PATH="$T/debs" sh "$D" --cache="$T/c2" demo 2.1 "$T/m4/demo.git"
same "... the same commit" "$c1" "$(cat "$T/.out")"

# bad input
exits "a suite without the package" 1 ds --suite=fake nosuch 1.0 "$T/b1/x.git"
has "... says so" "$T/.err" "nosuch: fake ($URL) has no source package nosuch"
oneline "a suite without the package"
exits "a version the suite lacks" 1 ds --suite=fake demo 9.9 "$T/b2/x.git"
has "... names the versions it has" "$T/.err" "demo: fake has no source version 9.9 (it has 2.1-1)"
oneline "a version the suite lacks"
exits "a suite the archive lacks" 1 ds --suite=nosuite demo 2.1 "$T/b3/x.git"
has "... names the suite and the archive" "$T/.err" "nosuite ($URL): apt-get update"
oneline "a suite the archive lacks"
exits "an unsigned archive without --keyring=none" 1 sh "$D" --cache="$T/c3" --archive="$URL" --suite=fake demo 2.1 "$T/b8/x.git"
has "... is refused, apt saying why" "$T/.err" "fake ($URL): apt-get update: "
has "... (not signed)" "$T/.err" "not signed"
oneline "an unsigned archive"
check "... and makes no mirror" test ! -e "$T/b8"
exits "a served tarball that is not the index's" 1 ds --suite=fake bad 1.0 "$T/b4/bad.git"
has "... says so" "$T/.err" "$URL/pool/main/b/bad/bad_1.0.orig.tar.gz is not the tarball fake's Sources index names (its SHA-256 is not $(printf '%064d' 0))"
oneline "a served tarball that is not the index's"
same "... and keeps nothing of it" "" "$(ls "$T/cache/.partial")"
check "... leaves no tarball in the cache" test ! -e "$T/cache/bad_1.0.orig.tar.gz"
check "... and no mirror" test ! -e "$T/b4"
cp "$T/cache/demo_2.1.orig.tar.gz" "$T/keep.tgz"
printf 'x' >>"$T/cache/demo_2.1.orig.tar.gz"
exits "a cached tarball that is not the index's" 1 ds --suite=fake demo 2.1 "$T/b5/demo.git"
has "... names both digests and the fix" "$T/.err" "demo_2.1.orig.tar.gz: SHA-256 $(sha256sum "$T/cache/demo_2.1.orig.tar.gz" | cut -c1-64), but fake's Sources index ($URL) says $sum (remove it to download again)"
oneline "a cached tarball that is not the index's"
check "... and makes no mirror" test ! -e "$T/b5"
rm -f "$T/cache/demo_2.1.orig.tar.gz"

# an interrupted download: every response under pool/ stops after 40000 bytes (apt
# retries, each from where the last stopped, and gives up), then the network comes back
echo 40000 >"$A/.cut"
: >"$T/requests"
exits "an interrupted download fails" 1 ds --suite=fake demo 2.1 "$T/m5/demo.git"
has "... saying to run again" "$T/.err" "failed"
has "... to resume it" "$T/.err" "run again to resume it"
oneline "an interrupted download"
part=$(wc -c <"$T/cache/.partial/demo_2.1.orig.tar.gz" 2>/dev/null | tr -d ' ')
check "... keeps the part it got in the download folder" test "${part:-0}" -gt 0 -a "${part:-0}" -lt "$size"
check "... and nothing in the cache" test ! -e "$T/cache/demo_2.1.orig.tar.gz"
check "... and no mirror" test ! -e "$T/m5"
rm -f "$A/.cut"
: >"$T/requests"
check "the next run resumes it" ds --suite=fake demo 2.1 "$T/m5/demo.git"
same "... the same commit" "$c1" "$(cat "$T/.out")"
has "... saying it resumes" "$T/.err" "resuming demo_2.1.orig.tar.gz ($part bytes there)"
has "... asking the archive for the rest only" "$T/requests" "GET /pool/main/d/demo/demo_2.1.orig.tar.gz bytes=$part-"
check "... and the tarball is whole in the cache" cmp "$T/keep.tgz" "$T/cache/demo_2.1.orig.tar.gz"
# an interrupted run's half-made mirror folder (its process gone) is removed by the next
dead=$(sh -c 'echo $$')
mkdir -p "$T/m6/demo.git.tmp.$dead/tree"
check "a run after an interrupted one" ds --suite=fake demo 2.1 "$T/m6/demo.git"
same "... leaves only the mirror" "demo.git" "$(ls "$T/m6")"
exits "a bad --suite name is a usage error" 1 ds --suite='a b' demo 2.1 "$T/b6/x.git"
oneline "a bad --suite name"
exits "usage errors exit 2" 2 ds fake demo/2.1/x "$T/b7/x.git"
