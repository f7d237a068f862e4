#!/bin/sh
# fatwheel on hostile input (issue 15): nothing is written outside NAME.libs, no two
# output members install to one path, no link survives, and nothing makes it wait. The
# wheels are a pip-built one with one change forged by tests/forgewheel.py; the
# libraries are real ones from gcc, their DT_NEEDED strings set with patchelf.
. "$KILN_SRC/tests/lib.sh"
need patchelf gcc timeout mkfifo readelf
PY=/usr/bin/python3
[ -x $PY ] || { notok "needs Debian's /usr/bin/python3 (apt-get install python3)"; exit 1; }
$PY -c 'import setuptools, wheel, pip' 2>/dev/null ||
	{ notok "needs python3-setuptools python3-wheel python3-pip"; exit 1; }
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 XDG_CACHE_HOME=$T/cache
# forgewheel.py as a function: $KILN_SRC may hold spaces
forgewheel () { $PY "$KILN_SRC/tests/forgewheel.py" "$@"; }

# a pure wheel by pip; the ELF member is added to it (so its DT_NEEDED can be anything)
mkdir -p "$T/src/demo" "$T/dist" "$T/lib" "$T/numpy" "$T/out"
echo 'x = 1' >"$T/src/demo/__init__.py"
printf 'from setuptools import setup\nsetup(name="demo", version="1.0", packages=["demo"])\n' >"$T/src/setup.py"
(cd "$T/src" && $PY -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$T/dist" .) >"$T/pip.log" 2>&1 ||
	{ sed 's/^/# /' "$T/pip.log" | tail -20; notok "pip builds the test wheel"; exit 1; }
W=$T/dist/demo-1.0-py3-none-any.whl
N=demo-1.0-py3-none-any.whl
echo 'int priv(void) { return 42; }' >"$T/priv.c"
gcc -shared -fPIC -Wl,-soname,libpriv.so.1 -o "$T/lib/libpriv.so.1" "$T/priv.c"
cp "$T/lib/libpriv.so.1" "$T/numpy/libpriv.so.1"
echo 'int priv(void); int ext(void) { return priv(); }' >"$T/ext.c"
gcc -shared -fPIC -o "$T/ext.so" "$T/ext.c" "$T/lib/libpriv.so.1"

# elfwheel DIR NEEDED: $T/DIR/$N holds demo/_ext.so whose DT_NEEDED libpriv.so.1 is NEEDED
elfwheel () { mkdir -p "$T/$1"; cp "$T/ext.so" "$T/$1/_ext.so"
	[ "$2" = libpriv.so.1 ] || patchelf --replace-needed libpriv.so.1 "$2" "$T/$1/_ext.so"
	forgewheel "$W" "$T/$1/$N" addfile demo/_ext.so "$T/$1/_ext.so" || notok "forgewheel addfile"; }
fw () { timeout 60 fatwheel --plat=linux_x86_64 "$@" -w "$T/out"; }

# --- the control: a plain DT_NEEDED is bundled into demo.libs/ ---------------------------
elfwheel good libpriv.so.1
check "a plain DT_NEEDED is bundled" fw --lib-path "$T/lib" "$T/good/$N"
$PY -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' \
	"$T/out/demo-1.0-py3-none-linux_x86_64.whl" >"$T/names"
has "... as demo.libs/libpriv.so.1" "$T/names" "demo.libs/libpriv.so.1"
rm -f "$T/out"/*

# --- DT_NEEDED strings that would become paths outside demo.libs -------------------------
elfwheel up ../numpy/libpriv.so.1
readelf -d "$T/up/_ext.so" | grep -q 'NEEDED.*\[\.\./numpy/libpriv\.so\.1\]' && ok "the forged library needs ../numpy/libpriv.so.1" ||
	notok "the forged library needs ../numpy/libpriv.so.1"
# $T/lib/../numpy/libpriv.so.1 exists: a lookup that joins the string to a folder finds it
exits "DT_NEEDED '../numpy/libpriv.so.1' is refused" 2 fw --lib-path "$T/lib" "$T/up/$N"
has "... naming the member and the entry" "$T/.err" "demo/_ext.so: DT_NEEDED entry '../numpy/libpriv.so.1' is not a plain file name"
[ -z "$(ls "$T/out")" ] && ok "... and nothing is written" || notok "... and nothing is written"
exits "... in a dry run too" 2 fw -n --lib-path "$T/lib" "$T/up/$N"
elfwheel dd ..
exits "DT_NEEDED '..' is refused" 2 fw --lib-path "$T/lib" "$T/dd/$N"
has "... naming it" "$T/.err" "DT_NEEDED entry '..' is not a plain file name"
elfwheel abs "$T/lib/libpriv.so.1"
exits "an absolute DT_NEEDED is refused" 2 fw --lib-path "$T/lib" "$T/abs/$N"
has "... naming it" "$T/.err" "DT_NEEDED entry '$T/lib/libpriv.so.1' is not a plain file name"
elfwheel nl "$(printf 'libpriv\n.so.1')"
exits "a DT_NEEDED with a newline is refused" 2 fw --lib-path "$T/lib" "$T/nl/$N"
has "... printed escaped, on one line" "$T/.err" "DT_NEEDED entry 'libpriv\\x0a.so.1'"
exits "an --exclude of the entry is the way out" 0 fw --exclude '../numpy/*' "$T/up/$N"
rm -f "$T/out"/*

# --- member names: two spellings of one path, links, folder data, another project -------
forge () { d=$T/$1; shift; mkdir -p "$d"; forgewheel "$W" "$d/$N" "$@" 2>"$T/forge.err" ||
	{ notok "forgewheel $*"; sed 's/^/# /' "$T/forge.err"; }; }
forge dot add demo/./__init__.py
exits "'demo/./__init__.py' beside 'demo/__init__.py' is refused" 2 fw "$T/dot/$N"
has "... naming both" "$T/.err" "members 'demo/./__init__.py' and 'demo/__init__.py' install to the same path 'demo/__init__.py'"
forge pure add demo-1.0.data/purelib/demo/__init__.py
exits "a .data/purelib twin is refused" 2 fw "$T/pure/$N"
has "... naming both" "$T/.err" "install to the same path 'demo/__init__.py'"
# a member already at the bundled library's path, spelled differently
mkdir -p "$T/clash"; cp "$T/ext.so" "$T/clash/_ext.so"
forgewheel "$T/good/$N" "$T/clash/$N" add 'demo.libs//libpriv.so.1' 'not a library'
exits "a bundled library landing on a member spelled differently is refused" 2 fw --lib-path "$T/lib" "$T/clash/$N"
has "... naming both" "$T/.err" "install to the same path 'demo.libs/libpriv.so.1'"
[ -z "$(ls "$T/out")" ] && ok "... and nothing is written" || notok "... and nothing is written"
forge link addlink demo/link.py __init__.py
check "a symlink member is accepted" fw "$T/link/$N"
has "... with a warning" "$T/.err" "member 'demo/link.py' is a symbolic link; written as a regular file"
$PY - "$T/out/demo-1.0-py3-none-linux_x86_64.whl" >"$T/mode" <<'PYEOF'
import sys, zipfile
i = zipfile.ZipFile(sys.argv[1]).getinfo("demo/link.py")
print("%o" % (i.external_attr >> 16))
PYEOF
same "... and written as a regular 0644 file, as pip installs it" 100644 "$(cat "$T/mode")"
rm -f "$T/out"/*
forge dir adddir demo/data/ hidden
exits "a folder entry carrying data is refused" 2 fw "$T/dir/$N"
has "... naming it" "$T/.err" "folder entry 'demo/data/' carries data"
forge other rename demo-1.0.dist-info/ numpy-1.0.dist-info/
exits "a .dist-info named for another project is refused" 2 fw "$T/other/$N"
has "... naming it" "$T/.err" "the metadata folder numpy-1.0.dist-info/ is not this wheel's (demo 1.0)"
forge ver rename demo-1.0.dist-info/ demo-2.0.dist-info/
exits "a .dist-info of another version is refused" 2 fw "$T/ver/$N"
forge two add numpy-1.0.dist-info/METADATA 'Name: numpy'
exits "a second .dist-info folder is refused" 2 fw "$T/two/$N"
has "... naming both" "$T/.err" "more than one .dist-info folder (demo-1.0.dist-info/, numpy-1.0.dist-info/)"

# --- lying headers ------------------------------------------------------------------------
forge cdcrc cdcrc demo/__init__.py
exits "a central-directory CRC that lies is refused" 2 fw "$T/cdcrc/$N"
has "... naming the member" "$T/.err" "member 'demo/__init__.py': the local header's CRC-32"
forge enc encrypt demo/__init__.py
exits "the encrypted flag is refused" 2 fw "$T/enc/$N"
has "... naming the member" "$T/.err" "member 'demo/__init__.py' is encrypted"
forge size usize demo/__init__.py 1
exits "a declared size that lies is refused" 2 fw "$T/size/$N"
has "... naming the member" "$T/.err" "'demo/__init__.py' inflates to 6 bytes, recorded 7"
forge bomb bomb demo/__init__.py
exits "a size deflate cannot reach is refused" 2 fw "$T/bomb/$N"
has "... before inflating" "$T/.err" "declares 2147483648 bytes from"

# two members sharing bytes: B's local header and data lie inside A's stored data (the
# overlapping-entries zip bomb); every header is otherwise valid
mkdir -p "$T/overlap"
$PY - "$T/overlap/$N" <<'PYEOF'
import struct, sys, zlib
def local(name, data):
    return struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0, zlib.crc32(data),
                       len(data), len(data), len(name), 0) + name + data
def central(name, data, off):
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, 0, 0, 0, zlib.crc32(data),
                       len(data), len(data), len(name), 0, 0, 0, 0, 0, off) + name
b = local(b"demo/b.py", b"x = 1\n")
a = local(b"demo/a.py", b)
cd = central(b"demo/a.py", b, 0) + central(b"demo/b.py", b"x = 1\n", 30 + 9)
out = a + cd + struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 2, 2, len(cd), len(a), 0)
open(sys.argv[1], "wb").write(out)
PYEOF
$PY -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(len(z.read("demo/b.py")))' "$T/overlap/$N" >"$T/ov" 2>&1
has "the overlapping archive is readable by Python's zipfile" "$T/ov" "6"
exits "members that overlap are refused" 2 fw "$T/overlap/$N"
has "... naming both" "$T/.err" "members 'demo/a.py' and 'demo/b.py' overlap"

# --- files that would block ------------------------------------------------------------------
mkdir -p "$T/fifo" "$T/fifolib" "$T/inc"
mkfifo "$T/fifo/$N" "$T/fifolib/libpriv.so.1" "$T/inc/libextra.so"
exits "a FIFO as the input wheel is an input error" 2 fw "$T/fifo/$N"
has "... naming it and what it is" "$T/.err" "fatwheel: $T/fifo/$N: is a FIFO, not a regular file"
exits "a FIFO where --lib-path has the library is an input error" 2 fw --lib-path "$T/fifolib" "$T/good/$N"
has "... naming it" "$T/.err" "$T/fifolib/libpriv.so.1: is a FIFO, not a library file"
exits "a FIFO given to --include is an input error" 2 fw --lib-path "$T/lib" --include "$T/inc/libextra.so" "$T/good/$N"
has "... naming it" "$T/.err" "--include $T/inc/libextra.so: is a FIFO, not a file or folder"
exits "a FIFO inside an --include folder is an input error" 2 fw --lib-path "$T/lib" --include "$T/inc" "$T/good/$N"
mkfifo "$T/rocm.tar.gz"
exits "a FIFO as the --rocm tarball is an input error" 2 fw --rocm="$T/rocm.tar.gz" "$T/good/$N"
has "... naming it" "$T/.err" "$T/rocm.tar.gz: not a readable tarball: is a FIFO, not a regular file"
[ -z "$(ls "$T/out")" ] && ok "... and nothing is written" || notok "... and nothing is written"
