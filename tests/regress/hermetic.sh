#!/bin/sh
# hermetic: a stage's output is a function of its key and nothing else (issue #14), on a
# toy torch and torchvision that behave like the real ones where it matters: vision's
# setup.py builds an optional extension unless TORCHVISION_USE_PNG=0, reads its version
# from BUILD_VERSION or version.txt (+git sha), and setuptools reuses a build/ folder
# left in its tree; torch reads PYTORCH_BUILD_VERSION/PYTORCH_BUILD_NUMBER. Everything is
# driven through configure and ninja, as a user would:
# - the caller's PIP_*, a pip.conf and CFLAGS have no effect on any stage
# - wheels carry the pinned release plus a kiln local label; the source stays pristine
# - flipping vision_ENV drops the optional extension (no stale build products)
# - two build folders (two venvs) give byte-identical wheels
# - a stage cache added to a built tree fills; restores are private copies with the log;
#   a corrupted entry is ignored, removed and rebuilt
# - a wheel stage that leaves no wheel fails
. "$KILN_SRC/tests/lib.sh"
need ninja git cc flock srcpin envclean wheelpick kiln-stage
PY3=/usr/bin/python3
[ -x "$PY3" ] || need /usr/bin/python3
WHEELWHL=$(ls /usr/share/python-wheels/wheel-*.whl 2>/dev/null | head -n 1)
[ -n "$WHEELWHL" ] || need python3-wheel-whl

ksrc_copy
mkdir -p "$T/mirror"

venv () {
	venv_new "$PY3" "$1" "$WHEELWHL" >>"$T/.venv.log" 2>&1 ||
		{ cat "$T/.venv.log"; notok "cannot make an offline venv with $PY3"; exit 1; }
}

# toy torch: a C extension and a header that vision compiles against
d=$T/mirror/torch
mkdir -p "$d/torch/include" "$d/csrc"
cat >"$d/setup.py" <<'EOF'
import os
from setuptools import setup, Extension
version = open("version.txt").read().strip()
if os.getenv("PYTORCH_BUILD_VERSION"):
    assert os.getenv("PYTORCH_BUILD_NUMBER") is not None
    version = os.getenv("PYTORCH_BUILD_VERSION")
setup(name="torch", version=version, packages=["torch"], package_data={"torch": ["include/*.h"]},
      ext_modules=[Extension("torch._C", ["csrc/module.c"], extra_compile_args=["-g"])])
EOF
cat >"$d/torch/include/toy.h" <<'EOF'
/* __FILE__ here is the absolute path of the installed header: the target Python's prefix */
static const char *toy_header(void) { return __FILE__; }
EOF
cat >"$d/csrc/module.c" <<'EOF'
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#ifdef KILN_EVIL
#error the caller's CFLAGS reached the build
#endif
static PyObject *scale(PyObject *self, PyObject *args) { int x; if (!PyArg_ParseTuple(args, "i", &x)) return NULL; return PyLong_FromLong(x * 10); }
static PyMethodDef methods[] = {{"scale", scale, METH_VARARGS, "scale"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "torch._C", NULL, -1, methods};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&mod); }
EOF
printf 'from torch._C import scale\n' >"$d/torch/__init__.py"
printf '1.0.0a0\n' >"$d/version.txt"
printf '/build/\n/dist/\n*.egg-info\n' >"$d/.gitignore"
(cd "$d" && git init -q -b main . && git add . && GIT_COMMITTER_DATE=2022-10-28T12:00:00Z git commit -qm "toy torch" && git tag v1.0.0) || exit 2

# toy vision: an extension built against torch's header, and an optional one
d=$T/mirror/vision
mkdir -p "$d/torchvision" "$d/csrc"
cat >"$d/setup.py" <<'EOF'
import os, subprocess, torch
from setuptools import setup, Extension
t = os.path.dirname(torch.__file__)
version = open("version.txt").read().strip()
try:
    sha = subprocess.check_output(["git", "rev-parse", "HEAD"], stderr=subprocess.DEVNULL).decode().strip()
except Exception:
    sha = "Unknown"
if os.getenv("BUILD_VERSION"):
    version = os.getenv("BUILD_VERSION")
elif sha != "Unknown":
    version += "+" + sha[:7]
exts = [Extension("torchvision._C", ["csrc/ops.c"], include_dirs=[os.path.join(t, "include")],
                  extra_compile_args=["-g"])]
if os.getenv("TORCHVISION_USE_PNG", "1") != "0":
    print("building with PNG")
    exts.append(Extension("torchvision.image", ["csrc/image.c"]))
else:
    print("building without PNG/JPEG")
if os.getenv("TOY_NO_WHEEL"):
    raise SystemExit(0)
setup(name="torchvision", version=version, packages=["torchvision"], ext_modules=exts)
EOF
cat >"$d/csrc/ops.c" <<'EOF'
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "toy.h"
static PyObject *op(PyObject *self, PyObject *args) { return PyUnicode_FromString(toy_header()); }
static PyMethodDef methods[] = {{"op", op, METH_VARARGS, "op"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, methods};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&mod); }
EOF
cat >"$d/csrc/image.c" <<'EOF'
#include <Python.h>
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "image", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_image(void) { return PyModule_Create(&mod); }
EOF
printf 'import torch\nfrom torchvision._C import op\n' >"$d/torchvision/__init__.py"
printf '0.5.0a0\n' >"$d/version.txt"
printf '/build/\n/dist/\n*.egg-info\n' >"$d/.gitignore"
(cd "$d" && git init -q -b main . && git add . && GIT_COMMITTER_DATE=2022-12-15T12:00:00Z git commit -qm "toy vision" && git tag v0.5.0) || exit 2

pins () {
	cat >"$T/pins.env" <<EOF
torch_URL=https://example.invalid/toy/torch
torch_REF=v1.0.0
vision_URL=https://example.invalid/toy/vision
vision_REF=v0.5.0
vision_ENV="$1"
vision_BUILD=${2:-}
EOF
}
pins ""

# the caller's environment and files that must not reach any stage
mkdir -p "$T/evil" "$HOME/.config/pip"
printf '[global]\ntarget = %s/conf-target\n[install]\ntarget = %s/conf-target\n' "$T" "$T" >"$HOME/.config/pip/pip.conf"
printf '[build_ext]\ndefine = KILN_EVIL\n' >"$HOME/.pydistutils.cfg"
hostile () {
	env PIP_FIND_LINKS="$T/evil" PIP_TARGET="$T/pip-target" PIP_PREFIX="$T/pip-prefix" PIP_USER=1 \
		CFLAGS=-DKILN_EVIL CPPFLAGS=-DKILN_EVIL PYTHONPATH="$T/evil" "$@"
}

conf () {
	v=$1
	shift
	"$KSRC/configure" --python="$v/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--arch=cpu --without=audio --jobs=2 KILN_BIN="$KILN_BIN" "$@"
}
# build NAME: ninja under the hostile environment, output in $T/NAME.log, status in $brc
build () { hostile ninja >"$T/$1.log" 2>&1; brc=$?; }
showlog () { [ "$brc" = 0 ] || sed -n '1,60s/^/#   /p' "$T/$1.log"; }
rebuilt () { sed -n 's/^\([a-z_]*\.[a-z]*\): \(rebuilt\|restored from the stage cache\) in .*/\1/p' "$1" | sort | tr '\n' ' ' | sed 's/ $//'; }
# wheel F: the name of the one wheel in folder F
wheel () { ls "$1"/*.whl 2>/dev/null | head -n 1; }
members () { "$PY3" -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$1"; }

venv "$T/venv"
mkdir -p "$T/b" && cd "$T/b" || exit 2
check "configure --arch=cpu with the toy pins" conf "$T/venv"
build first
same "a hostile caller environment: ninja succeeds" 0 "$brc"
showlog first
vw=$(wheel "$T/b/build/wheels/vision")
tw=$(wheel "$T/b/build/wheels/torch")

# no caller variable and no pip.conf reached pip or setuptools
check "installed into the venv, not PIP_TARGET/PIP_PREFIX/--user/pip.conf's target" \
	"$T/venv/bin/python" -c 'import sys, torchvision; assert torchvision.__file__.startswith(sys.prefix), torchvision.__file__'
for p in pip-target pip-prefix conf-target home/.local; do
	exits "nothing written to $p" 1 test -e "$T/$p"
done
lacks "PIP_FIND_LINKS did not reach the install" "$T/b/build/logs/vision.install.log" "Looking in links"
lacks "PIP_FIND_LINKS did not reach the install (path)" "$T/b/build/logs/vision.install.log" "$T/evil"

# versions: the pinned release and a label saying how it was built
case "${vw##*/}" in
torchvision-0.5.0+kiln.cpu.g*-*.whl) ok "vision's wheel: release 0.5.0 + kiln label (${vw##*/})" ;;
*) notok "vision's wheel: release 0.5.0 + kiln label (${vw##*/})" ;;
esac
case "${tw##*/}" in
torch-1.0.0+kiln.cpu.g*-*.whl) ok "torch's wheel: PYTORCH_BUILD_VERSION (${tw##*/})" ;;
*) notok "torch's wheel: PYTORCH_BUILD_VERSION (${tw##*/})" ;;
esac
check "the installed vision satisfies torchvision>=0.5.0" "$T/venv/bin/python" -c '
import importlib.metadata as m
v = m.version("torchvision")
rel, local = v.split("+")
assert tuple(map(int, rel.split("."))) >= (0, 5, 0) and local.startswith("kiln.cpu.g"), v'
check "wheelpick takes it for >=0.5.0 (not a pre-release)" wheelpick --python="$T/venv/bin/python" \
	--require 'torchvision>=0.5.0' "$T/b/build/wheels/vision"

check "wheel members carry the pinned commit's time (SOURCE_DATE_EPOCH)" "$PY3" -c '
import sys, time, zipfile
t = time.gmtime(int(sys.argv[2]))[:6]
t = t[:5] + (t[5] // 2 * 2,)
got = {i.date_time for i in zipfile.ZipFile(sys.argv[1]).infolist()}
assert got == {t}, (got, t)' "$vw" "$(git -C "$T/mirror/vision" show -s --format=%ct v0.5.0)"

# the build ran in a copy: the checkout stays exactly its key
check "srcpin state: vision's source is pristine after its wheel stage" srcpin state --check "$T/b/build/src/vision"
check "srcpin state: torch's source is pristine after its wheel stage" srcpin state --check "$T/b/build/src/torch"
members "$vw" >"$T/m1"
has "the first wheel has the optional extension" "$T/m1" "torchvision/image"
has "build-info records where the sources were fetched from" "$T/b/build/build-info.json" "\"fetched_from\":\"$T/mirror/vision\""
has "build-info records the version" "$T/b/build/build-info.json" "\"version\":\"0.5.0+kiln.cpu.g"

# the ENV flip: a new key, a fresh tree, no stale image extension
pins "TORCHVISION_USE_PNG=0"
build flip
same "ENV flip: ninja succeeds" 0 "$brc"
showlog flip
same "ENV flip: only vision's wheel and what follows rerun" "stack.smoke vision.install vision.pick vision.wheel" "$(rebuilt "$T/flip.log")"
vw2=$(wheel "$T/b/build/wheels/vision")
members "$vw2" >"$T/m2"
has "ENV flip: the log says so" "$T/b/build/logs/vision.wheel.log" "building without PNG/JPEG"
lacks "ENV flip: the new wheel has no image extension" "$T/m2" "torchvision/image"
check "ENV flip: and neither has the installed vision" "$T/venv/bin/python" -c '
import importlib.util as u, sys
sys.exit(u.find_spec("torchvision.image") is not None)'
if [ "${vw##*/}" != "${vw2##*/}" ]; then ok "ENV flip: another local label (${vw2##*/})"; else notok "ENV flip: another local label (${vw2##*/})"; fi
check "ENV flip: the source is still pristine" srcpin state --check "$T/b/build/src/vision"

# a second build folder and venv elsewhere: the same bytes
venv "$T/other/venv"
mkdir -p "$T/other/b2" && cd "$T/other/b2" || exit 2
check "configure a second build folder" conf "$T/other/venv"
build second
same "second folder: ninja succeeds" 0 "$brc"
showlog second
for c in torch vision; do
	w1=$(wheel "$T/b/build/wheels/$c") w2=$(wheel "$T/other/b2/build/wheels/$c")
	same "second folder: the same $c wheel name" "${w1##*/}" "${w2##*/}"
	check "second folder: byte-identical $c wheel" cmp "$w1" "$w2"
done

# --work-dir: the wheel stages of another build folder build in one fixed folder (what
# nvcc needs: it names internal symbols after the source's real path), under a lock
mkdir -p "$T/wd4/b4" && cd "$T/wd4/b4" || exit 2
check "configure with --work-dir" conf "$T/other/venv" --work-dir="$T/wd"
build workdir
same "--work-dir: ninja succeeds" 0 "$brc"
showlog workdir
has "--work-dir: vision built in the work folder" build/logs/vision.wheel.log "building in $T/wd/vision (--work-dir)"
lacks "--work-dir: not in the build folder" "$T/workdir.log" "$T/wd4/b4/build/work/vision"
check "--work-dir: the lock is beside it" test -f "$T/wd/.vision.lock"
for c in torch vision; do
	w2=$(wheel "$T/other/b2/build/wheels/$c") w4=$(wheel "$T/wd4/b4/build/wheels/$c")
	check "--work-dir: byte-identical $c wheel" cmp "$w2" "$w4"
done
# a held lock makes the stage wait its turn, and says so: the lock is held (flock says so
# with a file) until the stage has said that it waits, then let go; no clock
rm -f build/stamp/vision.wheel "$T/held"
: >"$T/hold"
flock "$T/wd/.vision.lock" sh -c ': >"$1"; while [ -e "$2" ]; do sleep 0.1; done' sh "$T/held" "$T/hold" &
lockpid=$!
waitalive "$lockpid" test -e "$T/held" || notok "--work-dir: a held lock: flock did not take it"
hostile ninja >"$T/waited.log" 2>&1 &
bpid=$!
waitalive "$bpid" grep -q "waiting for another build" build/logs/vision.wheel.log ||
	notok "--work-dir: a held lock: the stage did not say it waits"
rm -f "$T/hold"
wait "$lockpid"
wait "$bpid"
brc=$?
same "--work-dir: a held lock: ninja succeeds" 0 "$brc"
has "--work-dir: a held lock: the stage waited" build/logs/vision.wheel.log "waiting for another build in $T/wd/vision"
# a work folder that is a link is refused
ln -s "$T/wd" "$T/wdlink"
check "configure with a linked --work-dir" conf "$T/other/venv" --work-dir="$T/wdlink"
rm -f build/stamp/vision.wheel
build wdlink
same "--work-dir that is a link: ninja fails" 1 "$brc"
has "--work-dir that is a link: named" "$T/wdlink.log" "--work-dir $T/wdlink is not a folder of yours"

# a stage cache added to the built tree: filled by the up-to-date stages, nothing rebuilt
cd "$T/b" || exit 2
check "configure --stage-cache on the built tree" conf "$T/venv" --stage-cache="$T/sc"
build late
same "late cache: ninja succeeds" 0 "$brc"
same "late cache: nothing rebuilt" "" "$(rebuilt "$T/late.log")"
has "late cache: torch.wheel stored" "$T/late.log" "torch.wheel: stored in the stage cache"
has "late cache: vision.wheel stored" "$T/late.log" "vision.wheel: stored in the stage cache"
ent=$(dirname "$(ls "$T"/sc/*/*/*.whl 2>/dev/null | grep torchvision)")
check "late cache: the entry holds the wheel" test -f "$ent/${vw2##*/}"
check "late cache: the entry records the digests" grep -q "  ${vw2##*/}\$" "$ent/.kiln-sums"
check "late cache: the entry records the key's inputs" grep -q '^IN_ENV="TORCHVISION_USE_PNG=0"' "$ent/.kiln-inputs"
has "late cache: the entry holds the log" "$ent/.kiln-log" "building without PNG/JPEG"

# a third folder restores from it: private copies, with the log
venv "$T/venv3"
mkdir -p "$T/b3" && cd "$T/b3" || exit 2
check "configure a third folder with the cache" conf "$T/venv3" --stage-cache="$T/sc"
build third
same "third folder: ninja succeeds" 0 "$brc"
showlog third
has "third folder: vision.wheel restored" "$T/third.log" "vision.wheel: restored from the stage cache"
has "third folder: torch.wheel restored" "$T/third.log" "torch.wheel: restored from the stage cache"
w3=$T/b3/build/wheels/vision/${vw2##*/}
same "restored: a private copy (one link)" 1 "$(stat -c %h "$w3")"
if [ "$(stat -c %i "$w3")" != "$(stat -c %i "$ent/${vw2##*/}")" ]; then ok "restored: not the cache's inode"; else notok "restored: not the cache's inode"; fi
has "restored: with the stored log" "$T/b3/build/logs/vision.wheel.log" "building without PNG/JPEG"
has "restored: the log says where from" "$T/b3/build/logs/vision.wheel.log" "restored from the stage cache"

# a corrupted entry: ignored, logged, removed, rebuilt; never installed
printf 'x' >>"$ent/${vw2##*/}"
rm -f "$T"/b3/build/wheels/vision/* "$T/b3/build/stamp/vision.wheel"
build corrupt
same "corrupt entry: ninja succeeds" 0 "$brc"
showlog corrupt
has "corrupt entry: logged" "$T/corrupt.log" "does not match its recorded digest; ignored and removed"
has "corrupt entry: vision.wheel rebuilt" "$T/corrupt.log" "vision.wheel: rebuilt in"
check "corrupt entry: the rebuilt wheel is the right one" cmp "$vw2" "$w3"
check "corrupt entry: replaced by a good entry" cmp "$vw2" "$ent/${vw2##*/}"

# pip wheel (which builds in the tree it is given) instead of setup.py: the same promises
cd "$T/b" || exit 2
pins "" pip
build pip
same "vision_BUILD=pip: ninja succeeds" 0 "$brc"
showlog pip
vw3=$(wheel "$T/b/build/wheels/vision")
members "$vw3" >"$T/m3"
has "vision_BUILD=pip: the optional extension is back" "$T/m3" "torchvision/image"
case "${vw3##*/}" in
torchvision-0.5.0+kiln.cpu.g*-*.whl) ok "vision_BUILD=pip: release + kiln label (${vw3##*/})" ;;
*) notok "vision_BUILD=pip: release + kiln label (${vw3##*/})" ;;
esac
check "vision_BUILD=pip: the source is still pristine" srcpin state --check "$T/b/build/src/vision"

# a wheel stage whose command succeeds but leaves no wheel: a failure, not a stamp
pins "TOY_NO_WHEEL=1"
build empty
same "no wheel: ninja fails" 1 "$brc"
has "no wheel: named" "$T/empty.log" "vision.wheel: the command succeeded but left no files in"
exits "no wheel: no stamp" 1 test -f "$T/b/build/stamp/vision.wheel"
