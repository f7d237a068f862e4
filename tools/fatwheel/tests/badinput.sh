#!/bin/sh
# fatwheel on bad input: each a clear error, exit 2 (input) or 1 (output), and no
# partial output left behind.
. "$KILN_SRC/tests/lib.sh"
need unzip
PY=/usr/bin/python3
[ -x $PY ] || skip_all "needs Debian's /usr/bin/python3"
$PY -c 'import setuptools, wheel' 2>/dev/null || skip_all "needs python3-setuptools python3-wheel"

# a real pure wheel with a 256 KiB data file, built by pip
mkdir -p "$T/src/pure" "$T/dist" "$T/out"
echo 'x = 1' >"$T/src/pure/__init__.py"
head -c 262144 /dev/urandom >"$T/src/pure/blob.bin"
cat >"$T/src/setup.py" <<'EOF'
from setuptools import setup
setup(name="pure", version="1.0", packages=["pure"], package_data={"pure": ["blob.bin"]})
EOF
(cd "$T/src" && $PY -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$T/dist" .) >"$T/pip.log" 2>&1 ||
	{ sed 's/^/# /' "$T/pip.log" | tail -20; notok "pip builds the test wheel"; exit 1; }
W=$T/dist/pure-1.0-py3-none-any.whl
[ -f "$W" ] && ok "pip built ${W##*/}" || { notok "pip built pure-1.0-py3-none-any.whl"; exit 1; }
check "the good wheel passes" fatwheel "$W" -w "$T/out"
rm -f "$T/out"/*

# rewrite W into $2 through python: $1 is a body run with zin, zout, names
mutate () {
	$PY - "$W" "$T/$2" <<EOF
import sys, zipfile
zin = zipfile.ZipFile(sys.argv[1]); zout = zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED)
$1
zout.close()
EOF
}
mkdir -p "$T/bad"
copyall='
for i in zin.infolist(): zout.writestr(i, zin.read(i))'

# --- broken archives ------------------------------------------------------------------
size=$(wc -c <"$W")
head -c $((size - 30)) "$W" >"$T/bad/pure-1.0-py3-none-any.whl"
exits "a truncated wheel is refused" 2 fatwheel "$T/bad/pure-1.0-py3-none-any.whl" -w "$T/out"
has "... naming the file and saying truncated" "$T/.err" "fatwheel: $T/bad/pure-1.0-py3-none-any.whl: not a zip archive or truncated"
head -c $((size / 2)) "$W" >"$T/bad/pure-1.0-py3-none-any.whl"
exits "a wheel cut in half is refused" 2 fatwheel "$T/bad/pure-1.0-py3-none-any.whl" -w "$T/out"
$PY - "$W" "$T/bad/pure-1.0-py3-none-any.whl" <<'EOF'
import sys, zipfile
b = bytearray(open(sys.argv[1], "rb").read())
i = zipfile.ZipFile(sys.argv[1]).getinfo("pure/blob.bin")
b[i.header_offset + 30 + len(i.filename) + 100] ^= 0xff
open(sys.argv[2], "wb").write(b)
EOF
exits "a corrupt member is refused" 2 fatwheel "$T/bad/pure-1.0-py3-none-any.whl" -w "$T/out"
has "... naming the member" "$T/.err" "pure/blob.bin"
printf 'hello\n' >"$T/bad/pure-1.0-py3-none-any.whl"
exits "a text file is not a zip" 2 fatwheel "$T/bad/pure-1.0-py3-none-any.whl" -w "$T/out"

# --- unsafe paths ---------------------------------------------------------------------
mutate "$copyall
zout.writestr('../evil.py', 'x')" pure-1.0-py3-none-any.whl.dotdot
mv "$T/pure-1.0-py3-none-any.whl.dotdot" "$T/bad/pure-1.0-py3-none-any.whl"
exits "a '..' member is refused" 2 fatwheel "$T/bad/pure-1.0-py3-none-any.whl" -w "$T/out"
has "... as unsafe" "$T/.err" "unsafe member path '../evil.py'"
mutate "$copyall
zi = zipfile.ZipInfo('/tmp/evil.py'); zout.writestr(zi, 'x')" abs.whl
mv "$T/abs.whl" "$T/bad/pure-1.0-py3-none-any.whl"
exits "an absolute member path is refused" 2 fatwheel "$T/bad/pure-1.0-py3-none-any.whl" -w "$T/out"
has "... as unsafe" "$T/.err" "unsafe member path '/tmp/evil.py'"

# --- lying or incomplete RECORD ----------------------------------------------------------
mutate '
for i in zin.infolist():
    zout.writestr(i, b"x = 2\n" if i.filename == "pure/__init__.py" else zin.read(i))' lie.whl
mv "$T/lie.whl" "$T/bad/pure-1.0-py3-none-any.whl"
exits "a RECORD that lies is refused" 2 fatwheel "$T/bad/pure-1.0-py3-none-any.whl" -w "$T/out"
has "... naming the member and both hashes" "$T/.err" "RECORD lies about 'pure/__init__.py'"
mutate "$copyall
zout.writestr('pure/extra.py', 'y = 1')" extra.whl
mv "$T/extra.whl" "$T/bad/pure-1.0-py3-none-any.whl"
exits "a member missing from RECORD is refused" 2 fatwheel "$T/bad/pure-1.0-py3-none-any.whl" -w "$T/out"
has "... naming it" "$T/.err" "member 'pure/extra.py' is not listed in RECORD"
mutate '
for i in zin.infolist():
    if i.filename != "pure/blob.bin": zout.writestr(i, zin.read(i))' gone.whl
mv "$T/gone.whl" "$T/bad/pure-1.0-py3-none-any.whl"
exits "a RECORD listing a missing member is refused" 2 fatwheel "$T/bad/pure-1.0-py3-none-any.whl" -w "$T/out"
has "... naming it" "$T/.err" "RECORD lists 'pure/blob.bin', which is not in the wheel"

# --- not a wheel ----------------------------------------------------------------------
mutate '
for i in zin.infolist():
    if ".dist-info/" not in i.filename: zout.writestr(i, zin.read(i))' nodist.whl
mv "$T/nodist.whl" "$T/bad/pure-1.0-py3-none-any.whl"
exits "a zip without .dist-info is not a wheel" 2 fatwheel "$T/bad/pure-1.0-py3-none-any.whl" -w "$T/out"
has "... said so" "$T/.err" "not a wheel: no NAME.dist-info/RECORD"
# badname DESC FILE REASON: the pip-built wheel copied as FILE is refused for its name,
# the message naming the file and the reason (lib/wheelname: pip's own parse)
badname () { cp "$W" "$T/bad/$2" && exits "$1" 2 fatwheel "$T/bad/$2" -w "$T/out"
	has "... naming the file and why" "$T/.err" "$2: not a wheel file name: $3"; }
badname "a file not named like a wheel is refused" pure.zip "the extension is not .whl"
badname "a version pip cannot parse is refused" pure-1.0.x-py3-none-any.whl "the version is not a valid PEP 440 version"
badname "a build tag that is not a number first is refused" pure-1.0-x1-py3-none-any.whl "the build tag does not start with a digit"
exits "a missing input is refused" 2 fatwheel "$T/nothere-1.0-py3-none-any.whl" -w "$T/out"
exits "an output folder that cannot be created is refused" 1 fatwheel "$W" -w /proc/nothere
exits "writing over the input is refused" 2 fatwheel "$W" -w "$T/dist"
same "nothing was written into out/ by any of the above" "" "$(ls -A "$T/out")"

# --- output that cannot be written ----------------------------------------------------
mkdir -p "$T/ro" "$T/full"
if unshare -m true 2>/dev/null; then
	run unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec fatwheel "$2" -w "$1"' sh "$T/ro" "$W"
	same "a read-only output folder exits 1" 1 "$rc"
	has "... naming the folder" "$T/.err" "$T/ro: cannot create the output wheel: Read-only file system"
	run unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1" && fatwheel "$2" -w "$1"; r=$?; ls -A "$1"; exit $r' sh "$T/full" "$W"
	same "a disk that fills up exits 1" 1 "$rc"
	has "... saying so" "$T/.err" "No space left on device"
	same "and leaves no partial output behind" "" "$(cat "$T/.out")"
else
	chmod 555 "$T/ro"
	if [ -w "$T/ro" ]; then
		echo "skip optional tier privileged: read-only and full-disk output need unshare -m (root) or a non-root user"
	else
		exits "a read-only output folder exits 1" 1 fatwheel "$W" -w "$T/ro"
		echo "skip optional tier privileged: full-disk output needs unshare -m"
	fi
fi
