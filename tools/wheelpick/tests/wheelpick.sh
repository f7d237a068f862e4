# wheelpick regress: real wheels built offline with pip; every choice is compared with
# what pip itself would install (pip install --dry-run --report); bad input of each kind.
. "$KILN_SRC/tests/lib.sh"

# a Python with pip >= 22.2 (--dry-run --report), setuptools and wheel; it says its cpXY
# tag, pip's version and its C library (the manylinux tags follow it)
PY=
for p in python3 /usr/bin/python3; do
	command -v "$p" >/dev/null 2>&1 || continue
	pyinfo=$("$p" -c 'import platform, setuptools, wheel, pip, sys
v = tuple(int(x) for x in pip.__version__.split(".")[:2])
print("cp%d%d" % sys.version_info[:2], pip.__version__, "-".join(platform.libc_ver()) or "-")
sys.exit(v < (22, 2))' 2>/dev/null) && { PY=$(command -v "$p"); break; }
done
[ -n "$PY" ] || skip_all "needs a python3 with pip >= 22.2, setuptools and wheel (python3-pip python3-setuptools python3-wheel)"
export XDG_CACHE_HOME=$T/cache
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
read -r cp pipver libc <<EOF
$pyinfo
EOF
arch=$(uname -m)

# the package: version, tag and build number come from the environment
mkdir -p "$T/src"
cat >"$T/src/setup.py" <<'EOF'
import os
from setuptools import setup
from wheel.bdist_wheel import bdist_wheel
class B(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        if os.environ.get("WP_BUILD"):
            self.build_number = os.environ["WP_BUILD"]
    def get_tag(self):
        t = os.environ.get("WP_TAG")
        return tuple(t.split("-")) if t else super().get_tag()
setup(name=os.environ.get("WP_NAME", "kilnwp"), version=os.environ["WP_VERSION"],
      python_requires=os.environ.get("WP_REQPY") or None,
      py_modules=["kilnwp"], cmdclass={"bdist_wheel": B})
EOF
echo 'VALUE = 1' >"$T/src/kilnwp.py"
# pip builds it through setuptools' backend for setup.py projects (setuptools.build_meta
# __legacy__), offered with build_wheel alone: pip then asks for the metadata by building
# the wheel once and takes that wheel (pyproject_hooks' fallback), one setuptools process
# per wheel instead of two (egg_info, then bdist_wheel). The wheel's content is the same.
cat >"$T/src/pyproject.toml" <<'EOF'
[build-system]
requires = []
build-backend = "wpbuild"
backend-path = ["."]
EOF
cat >"$T/src/wpbuild.py" <<'EOF'
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    from setuptools import build_meta
    return build_meta.__legacy__.build_wheel(wheel_directory, config_settings, metadata_directory)
EOF

# the wheels: NAME VERSION TAG BUILD [REQUIRES-PYTHON] ("-": none)
cat >"$T/list" <<EOF
kilnwp 1.0 - -
kilnwp 1.10 - -
kilnwp 1.2 - -
kilnwp 2.0+rocm6.3 - -
kilnwp 2.0+rocm6.4 - -
kilnwp 2.0+rocm10.0 - -
kilnwp 2.0+rocmsdk20251015 - -
kilnwp 3.0 - -
kilnwp 3.0 $cp-$cp-linux_$arch -
kilnwp 3.0 $cp-$cp-manylinux_2_17_$arch -
kilnwp 3.0 $cp-abi3-manylinux_2_17_$arch -
kilnwp 9.0 cp99-cp99-linux_$arch -
kilnwp 4.0rc1 - -
kilnwp 5.0 $cp-$cp-linux_$arch 1
kilnwp 5.0 $cp-$cp-linux_$arch 2
other 1.0 - -
kilnwp 7.0 - - >=4
EOF
# the pip questions: ID CASE REQUIREMENT [PIP OPTIONS]
cat >"$T/queries" <<'EOF'
ver1 ver kilnwp
ver2 ver kilnwp<1.10
ver3 ver kilnwp~=1.0,!=1.2.*
loc1 local kilnwp
loc2 local kilnwp==2.0+rocm10.0
sdk1 sdk kilnwp
tag1 tag kilnwp
pre1 pre kilnwp
pre2 pre kilnwp --pre
pre3 pre kilnwp>=4.0rc1
pre4 onlypre kilnwp
bld1 build kilnwp
two1 two other
rp1 reqpy kilnwp
rp2 reqpy kilnwp --ignore-requires-python
EOF
# case NAME GLOB...: a folder holding the pool's wheels that match the globs; mkcases: the
# folders of the pip questions (in a file the oracle below runs too)
cat >"$T/cases.sh" <<'EOF'
case_dir () {
	c=$T/case.$1; shift; mkdir -p "$c"
	for g; do for f in "$pool"/$g; do [ -f "$f" ] && cp -p "$f" "$c/"; done; done
}
mkcases () {
	case_dir ver 'kilnwp-1.*'
	case_dir local 'kilnwp-2.0+rocm6.*' 'kilnwp-2.0+rocm10.0-*'
	case_dir sdk 'kilnwp-2.0+rocmsdk*' 'kilnwp-2.0+rocm6.4-*'
	case_dir tag 'kilnwp-3.0-*' 'kilnwp-9.0-*'
	case_dir pre 'kilnwp-4.0rc1-*' 'kilnwp-3.0-py3-*'
	case_dir onlypre 'kilnwp-4.0rc1-*'
	case_dir build 'kilnwp-5.0-*' 'kilnwp-3.0-py3-*'
	case_dir two 'kilnwp-1.0-*' 'other-1.0-*'
	case_dir reqpy 'kilnwp-7.0-*' 'kilnwp-3.0-py3-*'
}
EOF
. "$T/cases.sh"
# oracle.py: pip's side, in one interpreter: `pip wheel` builds each wheel of $T/list into
# $pool (from a copy of the source each), mkcases makes the folders, `pip install
# --dry-run --report` answers each question into $ans/ID (the file pip would install, or
# "pip-failed:" and the last line of its log), and `pip debug --verbose` writes the tag
# lists (native, and for two targets) into $ans/tags.*. pip's main() runs once per
# command as `python -m pip` runs it, its output in a log beside the result.
cat >"$T/oracle.py" <<'EOF'
import contextlib, io, json, os, shutil, subprocess, sys, urllib.parse
from pip._internal.cli.main import main as pip
T, pool, ans, arch = os.environ["T"], os.environ["pool"], os.environ["ans"], os.uname().machine

def run(log, args, out=None):
    with open(log, "w") as e, contextlib.redirect_stderr(e), contextlib.redirect_stdout(out or e):
        return pip(args)

for line in open(T + "/list"):
    n, v, tag, bn, *rp = line.split()
    d = "%s/b.%s.%s.%s.%s" % (T, n, v, tag, bn)
    shutil.copytree(T + "/src", d)
    os.environ.update(WP_NAME=n, WP_VERSION=v, WP_TAG="" if tag == "-" else tag,
                      WP_BUILD="" if bn == "-" else bn, WP_REQPY=rp[0] if rp else "")
    if run(d + ".log", ["wheel", "-q", "--no-deps", "--ignore-requires-python",
                        "--no-build-isolation", "--no-index", "-w", pool, d]):
        sys.exit("pip wheel %s %s %s %s failed:\n%s" % (n, v, tag, bn, open(d + ".log").read()))
subprocess.run(["sh", "-c", '. "$T/cases.sh" && mkcases'], check=True)
for line in open(T + "/queries"):
    qid, case, req, *opts = line.split()
    a = os.path.join(ans, qid)
    if run(a + ".log", ["install", "-q", "--dry-run", "--ignore-installed", "--no-index", "--no-deps",
                        "--find-links", T + "/case." + case, "--report", a + ".json"] + opts + [req]) == 0:
        r = json.load(open(a + ".json"))
        u = r["install"][0]["download_info"]["url"] if r["install"] else "none"
        got = os.path.basename(urllib.parse.unquote(u))
    else:
        got = "pip-failed: " + ([""] + open(a + ".log").read().splitlines())[-1]
    with open(a, "w") as f:
        print(got, file=f)
for name, opts in (("native", []),
                   ("cross", ["--python-version", "3.9", "--implementation", "cp", "--abi", "cp39",
                              "--platform", "linux_" + arch]),
                   ("py399", ["--python-version", "3.99"])):
    out = io.StringIO()
    run("%s/tags.%s.log" % (ans, name), ["debug", "--verbose"] + opts, out)
    lines = out.getvalue().splitlines()
    start = [i + 1 for i, l in enumerate(lines) if l.startswith("Compatible tags")][:1]
    with open("%s/tags.%s" % (ans, name), "w") as f:
        for l in lines[start[0]:] if start else []:
            print(l.lstrip(" "), file=f)
EOF

# Wheels, pip's answers and its tag lists are kept in the build folder, keyed by
# everything they come from (the C library too: the manylinux tags follow it), so a rerun
# compares against them in seconds (KILN_TEST_FRESH=1 rebuilds).
key=$({ cat "$T/src/setup.py" "$T/src/pyproject.toml" "$T/src/wpbuild.py" "$T/list" "$T/queries" "$T/cases.sh" "$T/oracle.py"
	echo "$PY $pipver $cp $arch $libc"; } | sha256sum | cut -c1-16)
cache=$KILN_BUILD/test-cache/wheelpick.$key
export T PY
if [ -f "$cache/done" ] && [ -z "${KILN_TEST_FRESH:-}" ]; then
	pool=$cache/pool ans=$cache/answers
	echo "# using the wheels and pip answers cached in $cache"
	mkcases
else
	pool=$T/pool ans=$T/answers
	mkdir -p "$pool" "$ans"
	export pool ans
	if ! "$PY" "$T/oracle.py" >"$T/build.out" 2>&1; then
		notok "pip wheel builds the test wheels"; sed 's/^/#   /' "$T/build.out" | tail -20; exit 1
	fi
	mkdir -p "$KILN_BUILD/test-cache" && rm -rf "$cache.tmp" && mkdir "$cache.tmp" &&
		cp -rp "$pool" "$ans" "$cache.tmp/" && : >"$cache.tmp/done" && rm -rf "$cache" &&
		mv "$cache.tmp" "$cache"
fi
same "pip built 17 wheels" 17 "$(ls "$pool" | wc -l | tr -d ' ')"

# compare ID DESC: wheelpick, given the query's requirement and options, names the file
# pip named
compare () {
	desc=$2
	set -f
	set -- $(grep "^$1 " "$T/queries")
	set +f
	id=$1 dir=$T/case.$2 req=$3; shift 3
	pipwant=$(cat "$ans/$id")
	run wheelpick --python="$PY" --require "$req" "$@" "$dir"
	same "$desc: wheelpick agrees with pip ($pipwant)" "$pipwant" "$(basename "$(cat "$T/.out")" 2>/dev/null)"
}

compare ver1 "release numbers compare as numbers (1.10 > 1.2)"
compare ver2 "--require <1.10"
compare ver3 "--require ~=1.0 with a != wildcard"
run wheelpick --python="$PY" --require 'kilnwp (<1.10)' "$T/case.ver"
has "--require takes PEP 508's parenthesized form" "$T/.out" "kilnwp-1.2-py3-none-any.whl"
compare loc1 "local labels: +rocm6.4 beats +rocm10.0 and +rocm6.3"
has "the +rocm10.0 trap is warned about" "$T/.err" "+rocm10.0 sorts below +rocm6.4"
compare loc2 "--require ==2.0+rocm10.0 takes the label pip would not prefer"
run wheelpick --python="$PY" --local rocm10.0 "$T/case.local"
has "--local rocm10.0 chooses it" "$T/.out" "kilnwp-2.0+rocm10.0-py3-none-any.whl"
compare sdk1 "+rocmsdkDATE beats +rocm6.4"
has "the +rocmsdk trap is warned about" "$T/.err" "+rocmsdk20251015 sorts above +rocm6.4"
compare tag1 "tags: pip ranks manylinux above linux_$arch, $cp above abi3 and py3; cp99 skipped"
has "which is the manylinux one" "$T/.out" "kilnwp-3.0-$cp-$cp-manylinux_2_17_$arch.whl"
run wheelpick --python="$PY" --tag-order=packaging "$T/case.tag"
has "--tag-order=packaging ranks linux_$arch first" "$T/.out" "kilnwp-3.0-$cp-$cp-linux_$arch.whl"
run wheelpick -v --python="$PY" "$T/case.tag"
has "-v says why cp99 was skipped" "$T/.err" "skipped kilnwp-9.0-cp99-cp99-linux_$arch.whl: python tag cp99 not supported by $PY"
has "-v says why py3 lost" "$T/.err" "lost kilnwp-3.0-py3-none-any.whl: same version; its best tag"
run wheelpick --python-version=9.9 --platform=linux_"$arch" "$T/case.tag"
has "cross-pick --python-version=9.9 takes the cp99 wheel" "$T/.out" "kilnwp-9.0-cp99-cp99-linux_$arch.whl"
run wheelpick --python-version=3.6 --abi=cp36m --platform=manylinux2014_"$arch" "$T/case.tag"
has "cross-pick cp36 on manylinux2014 takes the py3 wheel" "$T/.out" "kilnwp-3.0-py3-none-any.whl"
compare pre1 "a pre-release is skipped unless asked"
compare pre2 "--pre takes it"
compare pre3 "a clause naming a pre-release allows it"
compare pre4 "a pre-release is taken when it is all there is"
compare bld1 "the higher build tag wins"
exits "two projects without --name is a usage error" 2 wheelpick --python="$PY" "$T/case.two"
has "and says which" "$T/.err" "several projects in the input (kilnwp, other)"
compare two1 "naming one of two projects"
compare rp1 "a wheel whose Requires-Python excludes the interpreter gives way to the next"
run wheelpick -v --python="$PY" "$T/case.reqpy"
has "-v names its Requires-Python" "$T/.err" "skipped kilnwp-7.0-py3-none-any.whl: its Requires-Python >=4 excludes Python"
compare rp2 "--ignore-requires-python takes it"

# interpreters pip is not run for here: stand-ins answering wheelpick's query as PyPy 3.10,
# GraalPy 24.2 and a free-threaded debug CPython 3.13 would (their sysconfig EXT_SUFFIX,
# Py_DEBUG, Py_GIL_DISABLED); the ABI tags are those of packaging's tags.py: _generic_abi
# keeps the first two '-' fields of PyPy's SOABI and the first three of GraalPy's,
# _cpython_abis gives cp313td then cp313t
fakepy () {
	cat >"$T/$1" <<EOF2
#!/bin/sh
printf '%s\\n' impl=$2 major=3 minor=$3 full=3.$3.1 nodot=3$3 ext_suffix=$4 py_debug=$5 \\
	gil_disabled=$6 pymalloc=0 refcount=$5 platform=linux-x86_64 bits=64 'libc=glibc 2.36' \\
	executable=/opt/$1/bin/python3
EOF2
	chmod +x "$T/$1"
}
fakepy pypy pypy 10 .pypy310-pp73-x86_64-linux-gnu.so 0 ''
fakepy graalpy graalpy 10 .graalpy242-310-native-x86_64-linux.so 0 ''
fakepy cp313td cpython 13 .cpython-313td-x86_64-linux-gnu.so 1 1
run wheelpick --tags --no-cache --python="$T/pypy"
same "PyPy: its ABI tag is SOABI's first two fields" "pp310-pypy310_pp73-manylinux_2_36_x86_64" "$(head -n 1 "$T/.out")"
run wheelpick --tags --no-cache --python="$T/graalpy"
same "GraalPy: its ABI tag is SOABI's first three fields" "graalpy310-graalpy242_310_native-manylinux_2_36_x86_64" "$(head -n 1 "$T/.out")"
run wheelpick --tags --no-cache --python="$T/cp313td"
same "a free-threaded debug CPython 3.13: cp313td, then cp313t" "cp313-cp313td-manylinux_2_36_x86_64 cp313-cp313t-manylinux_2_36_x86_64" \
	"$(grep -m 2 -- '-manylinux_2_36_x86_64$' "$T/.out" | tr '\n' ' ' | sed 's/ $//')"

# the whole tag priority list, against the one pip itself prints (pip debug --verbose:
# the oracle's $ans/tags.*)
if [ -s "$ans/tags.native" ]; then
	run wheelpick --tags --python="$PY"
	if cmp -s "$T/.out" "$ans/tags.native"; then
		ok "--tags lists the $(lines "$ans/tags.native") tags of $PY in pip's order (pip debug --verbose)"
	else
		notok "--tags lists the tags in pip's order"; diff "$ans/tags.native" "$T/.out" | sed -n '1,20s/^/#   /p'
	fi
	run wheelpick --tags --python-version=3.9 --abi=cp39 --platform=linux_"$arch"
	if cmp -s "$T/.out" "$ans/tags.cross"; then
		ok "--tags for a cross target (3.9, cp39, linux_$arch) is pip's list too"
	else
		notok "--tags for a cross target is pip's list"; diff "$ans/tags.cross" "$T/.out" | sed -n '1,20s/^/#   /p'
	fi
	run wheelpick --tags --python="$PY" --python-version=3.99
	if cmp -s "$T/.out" "$ans/tags.py399"; then
		ok "--tags with --python and --python-version=3.99 is pip's list too (the ABI follows)"
	else
		notok "--tags with --python-version=3.99 is pip's list"; diff "$ans/tags.py399" "$T/.out" | sed -n '1,20s/^/#   /p'
	fi
else
	echo "skip tag list test: pip debug --verbose lists no tags here"
fi

# output forms
w=$T/case.tag
run wheelpick --python="$PY" --pip "$w"
same "--pip prints the shell-quoted command" \
	"'$PY' -m pip install --no-deps --force-reinstall '$w/kilnwp-3.0-$cp-$cp-manylinux_2_17_$arch.whl'" "$(cat "$T/.out")"
run wheelpick --python="$PY" --json "$w"
"$PY" -c 'import json, sys
j = json.load(open(sys.argv[1]))
st = {c["file"].rsplit("/", 1)[1]: c["status"] for c in j["candidates"]}
assert j["chosen"].endswith("-%s-manylinux_2_17_%s.whl" % (sys.argv[3], sys.argv[2])), j["chosen"]
assert st["kilnwp-9.0-cp99-cp99-linux_" + sys.argv[2] + ".whl"] == "skipped", st
assert st["kilnwp-3.0-py3-none-any.whl"] == "lost", st
assert j["target"]["tag_order"] == "pip" and j["pip_command"].startswith("'"'"'")
' "$T/.out" "$arch" "$cp" 2>"$T/json.err" && ok "--json lists the choice and every candidate with its status" ||
	{ notok "--json lists the choice and every candidate"; sed 's/^/#   /' "$T/json.err"; }

# bad names are skipped with a warning, never fatal
case_dir bad 'kilnwp-1.0-*'
w=$T/case.bad
: >"$w/notawheel.whl"; : >"$w/kilnwp-1.x-py3-none-any.whl"; : >"$w/README.txt"
exits "bad names are skipped" 0 wheelpick --python="$PY" "$w"
has "a name with too few parts is warned about" "$T/.err" "$w/notawheel.whl: skipped: not a valid wheel file name: wrong number of parts"
has "an invalid version is warned about" "$T/.err" "kilnwp-1.x-py3-none-any.whl: skipped: not a valid wheel file name: the version is not a valid PEP 440 version"
lacks "files that are not .whl are ignored" "$T/.err" "README.txt"
has "the valid wheel is still chosen" "$T/.out" "kilnwp-1.0-py3-none-any.whl"

# empty folder, nothing suitable, missing input
mkdir -p "$T/empty"
exits "an empty folder finds nothing" 1 wheelpick --python="$PY" "$T/empty"
has "and says so" "$T/.err" "no wheel files (*.whl) in $T/empty"
w=$T/case.ver
exits "nothing matches --require" 1 wheelpick --python="$PY" --require 'kilnwp>7' "$w"
has "near misses are listed with the reason" "$T/.err" "kilnwp-1.10-py3-none-any.whl: version 1.10 does not match kilnwp>7"
exits "a missing folder is a usage error" 2 wheelpick --python="$PY" "$T/nonesuch"
has "naming it" "$T/.err" "$T/nonesuch: No such file or directory"
exits "a bad specifier is a usage error" 2 wheelpick --python="$PY" --require 'kilnwp>=1.0+local' "$w"
has "with the reason" "$T/.err" "a local label (+...) is only allowed with == and !="
exits "a Python that does not run is a usage error" 2 wheelpick --python="$T/nonesuch-python" "$w"

# unreadable wheels
case_dir unread 'kilnwp-1.0-*'
w=$T/case.unread
ln -s "$T/nowhere.whl" "$w/kilnwp-9.0-py3-none-any.whl"
exits "a chosen wheel that cannot be read is an input error" 2 wheelpick --python="$PY" "$w"
has "naming the file" "$T/.err" "$w/kilnwp-9.0-py3-none-any.whl: cannot read the chosen wheel: No such file or directory"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	case_dir perm 'kilnwp-1.0-*'
	w=$T/case.perm
	chmod 000 "$w/kilnwp-1.0-py3-none-any.whl"
	chmod 755 "$T" "$w"
	# the other user must reach the tool even when the checkout lives in a folder only
	# its owner can enter (mktemp -d): run a copy from $T
	mkdir -p "$T/otheruser"; cp "$KILN_BIN/wheelpick" "$T/otheruser/wheelpick"
	chmod 755 "$T/otheruser" "$T/otheruser/wheelpick"
	exits "a wheel without read permission is an input error" 2 \
		setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent \
		"$T/otheruser/wheelpick" --python-version=3.11 "$w"
	has "with the reason" "$T/.err" "cannot read the chosen wheel: Permission denied"
	chmod 700 "$T"
else
	echo "skip optional tier privileged: permission test needs root and setpriv to run as another user"
fi

# --check on real and corrupt wheels
good=$pool/kilnwp-1.0-py3-none-any.whl
exits "--check passes a wheel pip built" 0 wheelpick --python="$PY" --check "$good"
exits "--check passes a wheel with a build tag" 0 wheelpick --python="$PY" --check "$T/case.build"
w=$T/trunc; mkdir -p "$w"; head -c 300 "$good" >"$w/kilnwp-1.0-py3-none-any.whl"
exits "--check fails a truncated zip" 1 wheelpick --python="$PY" --check "$w"
has "saying it is not a valid zip" "$T/.err" "check failed: not a valid zip"
lacks "and prints no path" "$T/.out" ".whl"
w=$T/record; mkdir -p "$w"
"$PY" - "$good" "$w/kilnwp-1.0-py3-none-any.whl" <<'PYEOF'
import sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
    for i in zi.infolist():
        data = zi.read(i.filename)
        if i.filename == "kilnwp.py":
            data = b"VALUE = 2\n"
        zo.writestr(i, data)
PYEOF
exits "--check fails a RECORD hash mismatch" 1 wheelpick --python="$PY" --check "$w"
has "naming the member" "$T/.err" "check failed: kilnwp.py: sha256 mismatch (RECORD says"
w=$T/rename; mkdir -p "$w"; cp "$good" "$w/kilnwp-1.1-py3-none-any.whl"
exits "--check fails a wheel renamed to another version" 1 wheelpick --python="$PY" --check "$w"
has "naming the .dist-info" "$T/.err" "kilnwp-1.0.dist-info does not match the file name (kilnwp 1.1)"
w=$T/retag; mkdir -p "$w"; cp "$good" "$w/kilnwp-1.0-py2.py3-none-any.whl"
exits "--check fails tags the WHEEL file lacks" 1 wheelpick --python="$PY" --check "$w"
has "naming the tag" "$T/.err" "WHEEL does not list the tag py2-none-any of the file name"
exits "--check --json reports the failure" 1 wheelpick --python="$PY" --check --json "$w"
has "in the JSON" "$T/.out" '"check":{"ok":false,"error":"kilnwp-1.0.dist-info/WHEEL does not list'

# the interpreter is asked once, then its answer is cached by file
run wheelpick --python="$PY" "$T/case.ver"
if ls "$XDG_CACHE_HOME"/kiln/wheelpick/python-* >/dev/null 2>&1; then
	ok "the interpreter's answer is cached under XDG_CACHE_HOME"
elif head -c 4 "$(readlink -f "$PY")" | grep -q ELF; then
	notok "the interpreter's answer is cached under XDG_CACHE_HOME"
else
	echo "skip cache test: $PY is a script, which is never cached"
fi
if "$PY" -m venv --without-pip "$T/venv" >/dev/null 2>&1; then
	run wheelpick --python="$T/venv" --pip "$T/case.ver"
	has "--python=VENV asks the venv's interpreter" "$T/.out" "'$T/venv/bin/python' -m pip install"
	# one cache file per interpreter there is: a venv's goes with the venv (a test's
	# venvs, made anew on every run, do not pile up), and older-layout files too
	if [ -d "$XDG_CACHE_HOME/kiln/wheelpick" ]; then
		n=$(ls "$XDG_CACHE_HOME/kiln/wheelpick" | wc -l)
		printf 'executable=%s/gone/bin/python\n' "$T" >"$XDG_CACHE_HOME/kiln/wheelpick-python-0123"
		"$PY" -m venv --without-pip "$T/venv2" >/dev/null 2>&1 || exit 2
		run wheelpick --python="$T/venv2" "$T/case.ver"
		same "the cache: one more file for another venv" $((n + 1)) "$(ls "$XDG_CACHE_HOME/kiln/wheelpick" | wc -l)"
		run wheelpick --python="$T/venv2" "$T/case.ver"
		same "the cache: none for the same venv asked again" $((n + 1)) "$(ls "$XDG_CACHE_HOME/kiln/wheelpick" | wc -l)"
		rm -rf "$T/venv"
		"$PY" -m venv --without-pip "$T/venv3" >/dev/null 2>&1 || exit 2
		run wheelpick --python="$T/venv3" "$T/case.ver"
		same "the cache: a removed venv's file goes when another is written" $((n + 1)) "$(ls "$XDG_CACHE_HOME/kiln/wheelpick" | wc -l)"
		exits "the cache: an older layout's file for a gone interpreter goes too" 1 \
			test -e "$XDG_CACHE_HOME/kiln/wheelpick-python-0123"
		# the venv's python is a link: its answer is valid for the file it reaches
		sig () { cat $(grep -l -x "path=$T/venv3/bin/python" "$XDG_CACHE_HOME"/kiln/wheelpick/*) | sed -n 1p; }
		was=$(sig)
		cp "$(readlink -f "$T/venv3/bin/python")" "$T/py3" && ln -sf "$T/py3" "$T/venv3/bin/python" || exit 2
		run wheelpick --python="$T/venv3" "$T/case.ver"
		now=$(sig)
		case "$now" in "$was"|'') notok "the cache: another interpreter file at the same path is asked again" ;;
		*) ok "the cache: another interpreter file at the same path is asked again" ;; esac
		same "the cache: and its answer replaces the old one" $((n + 1)) "$(ls "$XDG_CACHE_HOME/kiln/wheelpick" | wc -l)"
	fi
else
	echo "skip venv test: $PY -m venv does not work here"
fi
# end to end: the printed command installs the chosen wheel into a fresh environment
if "$PY" -m venv --without-pip --system-site-packages "$T/iv" >/dev/null 2>&1 &&
	"$T/iv/bin/python" -c 'import importlib.util as u, sys; sys.exit(not u.find_spec("pip"))' >/dev/null 2>&1; then
	cmd=$(wheelpick --python="$T/iv" --pip "$T/case.local")
	eval "$cmd -q --no-index" >"$T/install.out" 2>&1
	got=$("$T/iv/bin/python" -c 'import importlib.metadata as m; print(m.version("kilnwp"))' 2>&1)
	same "the --pip command installs the chosen wheel (eval \"\$(wheelpick --pip)\")" "2.0+rocm6.4" "$got"
else
	echo "skip install test: no venv with a usable pip here"
fi
exits "--help exits 0" 0 wheelpick --help
has "--help shows the synopsis" "$T/.out" "usage: wheelpick"
exits "an unknown option is a usage error" 2 wheelpick --bogus "$T/case.ver"
