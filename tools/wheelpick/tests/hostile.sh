# wheelpick on hostile wheels (issue 15): --check never passes a wheel pip refuses or
# installs unsafely, and no file makes wheelpick wait. Each wheel is the pip-built one
# with one change forged by tests/forgewheel.py.
. "$KILN_SRC/tests/lib.sh"
PY=/usr/bin/python3
[ -x $PY ] || { notok "needs Debian's /usr/bin/python3 (apt-get install python3)"; exit 1; }
$PY -c 'import setuptools, wheel, pip' 2>/dev/null ||
	{ notok "needs python3-setuptools python3-wheel python3-pip"; exit 1; }
need timeout mkfifo
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 XDG_CACHE_HOME=$T/cache
# forgewheel.py as a function: $KILN_SRC may hold spaces
forgewheel () { $PY "$KILN_SRC/tests/forgewheel.py" "$@"; }

mkdir -p "$T/src" "$T/dist"
echo 'VALUE = 1' >"$T/src/kilnwp.py"
printf 'from setuptools import setup\nsetup(name="kilnwp", version="1.0", py_modules=["kilnwp"])\n' >"$T/src/setup.py"
(cd "$T/src" && $PY -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$T/dist" .) >"$T/pip.log" 2>&1 ||
	{ sed 's/^/# /' "$T/pip.log" | tail -20; notok "pip builds the test wheel"; exit 1; }
W=$T/dist/kilnwp-1.0-py3-none-any.whl
N=kilnwp-1.0-py3-none-any.whl
exits "--check passes the wheel pip built" 0 wheelpick --python=$PY --check "$W"
mkdir -p "$T/stream"; forgewheel "$W" "$T/stream/$N" stream
$PY -c 'import sys, zipfile; sys.exit(not all(i.flag_bits & 8 for i in zipfile.ZipFile(sys.argv[1]).infolist()))' "$T/stream/$N" &&
	ok "the streamed copy has data descriptors" || notok "the streamed copy has data descriptors"
exits "--check passes it too (descriptors agree with the central directory)" 0 wheelpick --python=$PY --check "$T/stream/$N"

# forge DIR OP ARG...: $T/DIR/$N is the wheel with one change
forge () { d=$T/$1; shift; mkdir -p "$d"; forgewheel "$W" "$d/$N" "$@" 2>"$T/forge.err" ||
	{ notok "forgewheel $*"; sed 's/^/# /' "$T/forge.err"; }; }
# hostile DESC STATUS DIR TEXT: --check on $T/DIR/$N exits STATUS and says TEXT, prints no path
hostile () { exits "$1" "$2" timeout 20 wheelpick --python=$PY --check "$T/$3/$N"
	has "... saying why" "$T/.err" "$4"; lacks "... and prints no path" "$T/.out" ".whl"; }

# --- member paths pip would write outside site-packages: exit 2 -------------------------
forge up add ../evil.py
hostile "a '../' member is refused" 2 up "unsafe member path '../evil.py'"
forge abs add /tmp/evil.py
hostile "an absolute member is refused" 2 abs "unsafe member path '/tmp/evil.py'"
forge ctl add "$(printf 'kilnwp_\033[2Jx.py')"
hostile "a member name with a control character is refused" 2 ctl "unsafe member path 'kilnwp_\\x1b[2Jx.py'"

# --- two spellings of one installed path: exit 2 ------------------------------------------
forge dot add ./kilnwp.py
hostile "'./kilnwp.py' beside 'kilnwp.py' is refused" 2 dot "members './kilnwp.py' and 'kilnwp.py' install to the same path 'kilnwp.py'"
forge slash add 'kilnwp-1.0.dist-info//METADATA'
hostile "'NAME.dist-info//METADATA' beside 'NAME.dist-info/METADATA' is refused" 2 slash "install to the same path 'kilnwp-1.0.dist-info/METADATA'"
forge back add 'x/../kilnwp.py'
hostile "'x/../kilnwp.py' is refused" 2 back "unsafe member path 'x/../kilnwp.py'"
forge pure add kilnwp-1.0.data/purelib/kilnwp.py
hostile "a .data/purelib twin of a root member is refused" 2 pure "members 'kilnwp-1.0.data/purelib/kilnwp.py' and 'kilnwp.py' install to the same path"
forge plat add kilnwp-1.0.data/platlib/kilnwp.py
hostile "a .data/platlib twin of a root member is refused" 2 plat "install to the same path 'kilnwp.py'"
forge fold add kilnwp.py/x.py
hostile "a member inside another member's file is refused" 2 fold "member 'kilnwp.py' installs a file where 'kilnwp.py/x.py' needs a folder"
forge case add KILNWP.py
exits "case differences pass (pip on Linux installs both)" 0 wheelpick --python=$PY --check "$T/case/$N"

# --- lying headers pip's zipfile trips on, or that other readers would read differently --
forge cdcrc cdcrc kilnwp.py
hostile "a central-directory CRC that lies is refused" 1 cdcrc "the local header's CRC-32"
forge crc crc kilnwp.py
hostile "CRC-32 fields that disagree with the data are refused" 1 crc "'kilnwp.py': CRC-32 mismatch"
forge enc encrypt kilnwp.py
hostile "the encrypted flag is refused" 1 enc "member 'kilnwp.py' is encrypted"
forge big usize kilnwp.py 1
hostile "a declared size one byte too large is refused" 1 big "'kilnwp.py' inflates to 10 bytes, recorded 11"
forge small usize kilnwp.py -1
hostile "a declared size one byte too small is refused" 1 small "inflates to more than its recorded 9 bytes"
forge short csize kilnwp.py -1
hostile "a compressed size that cuts the stream is refused" 1 short "'kilnwp.py': corrupt deflate data"
forge bomb bomb kilnwp.py
hostile "a size deflate cannot reach is refused before inflating" 1 bomb "declares 2147483648 bytes from"
forge dirdata adddir kilnwp_data/ hidden
hostile "a folder entry carrying data is refused" 1 dirdata "folder entry 'kilnwp_data/' carries data"
forge other rename kilnwp-1.0.dist-info/ numpy-1.0.dist-info/
hostile "a .dist-info named for another project is refused" 1 other "numpy-1.0.dist-info does not match the file name"
forge two add numpy-1.0.dist-info/METADATA 'Name: numpy'
hostile "a second .dist-info folder is refused" 1 two "more than one .dist-info folder"
# what pip does with the same files: it refuses the CRC and encryption cases too
run $PY -m pip install -q --no-deps --no-index --target "$T/site" "$T/cdcrc/$N"
same "pip refuses the lying CRC as well" 2 "$rc"
has "... with Bad CRC-32" "$T/.err" "Bad CRC-32"

# --- files that would block: a FIFO is never opened -----------------------------------------
mkdir -p "$T/fifo"
cp "$W" "$T/fifo/"
mkfifo "$T/fifo/kilnwp-2.0-py3-none-any.whl"
exits "a FIFO named *.whl in a folder is skipped" 0 timeout 20 wheelpick --python=$PY --check "$T/fifo"
has "... with a warning naming it" "$T/.err" "kilnwp-2.0-py3-none-any.whl: is a FIFO, not a wheel file; skipped"
has "... and the real wheel is chosen" "$T/.out" "$N"
ln -s kilnwp-2.0-py3-none-any.whl "$T/fifo/kilnwp-3.0-py3-none-any.whl"
exits "a link to a FIFO is skipped too" 0 timeout 20 wheelpick --python=$PY "$T/fifo"
has "... with a warning" "$T/.err" "kilnwp-3.0-py3-none-any.whl: is a FIFO, not a wheel file; skipped"
exits "a FIFO named directly is an input error" 2 timeout 20 wheelpick --python=$PY "$T/fifo/kilnwp-2.0-py3-none-any.whl"
has "... naming it and what it is" "$T/.err" "wheelpick: $T/fifo/kilnwp-2.0-py3-none-any.whl: is a FIFO, not a wheel file"
exits "/dev/null named as a wheel is an input error" 2 timeout 20 wheelpick --python=$PY /dev/null
has "... as a character device" "$T/.err" "is a character device"
