# envclean against the real failure: a package whose native part refuses to initialise
# a type twice in one process (tests/dupdemo, built with pip offline and installed in a
# venv) meets a second copy through PYTHONPATH, the working folder, the user site, a .pth
# line or hook, and an older core library through LD_LIBRARY_PATH. Each time: the plain
# import breaks, envclean runs it clean where it can, and --check names both copies.
. "$KILN_SRC/tests/lib.sh"
need cc
PY=${KILN_TEST_PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3) || skip_all "needs python3"
"$PY" -c 'import os, sysconfig, setuptools, wheel, pip, venv
assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null ||
	skip_all "needs $PY with pip, setuptools, wheel, venv and its headers (python3-dev)"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore
unset PYTHONPATH PYTHONHOME PYTHONSAFEPATH LD_LIBRARY_PATH PYTHONNOUSERSITE VIRTUAL_ENV
FIX=$KILN_SRC/tools/envclean/tests/dupdemo
S=$T/src V=$T/venv

# --- build the package: the core library, a wheel, an in-place build in the source tree
cp -R "$FIX" "$S" && mkdir -p "$S/dupdemo/lib" "$T/oldlib" "$T/home" || exit 2
cc -shared -fPIC -O2 -Wl,-soname,libdupcore.so -o "$S/dupdemo/lib/libdupcore.so" "$S/core/dupcore.c" &&
cc -shared -fPIC -DDUPCORE_OLD -Wl,-soname,libdupcore.so -o "$T/oldlib/libdupcore.so" "$S/core/dupcore.c" ||
	{ notok "build libdupcore.so"; exit 1; }
check "pip builds the dupdemo wheel offline" \
	sh -c "cd '$S' && '$PY' -m pip wheel -q --no-build-isolation --no-deps --no-index -w '$T/dist' ."
WHL=$(ls "$T"/dist/dupdemo-1.0-*.whl 2>/dev/null)
[ -f "$WHL" ] || { notok "no wheel in $T/dist"; exit 1; }
check "setup.py build_ext --inplace builds the source tree's copy" \
	sh -c "cd '$S' && '$PY' setup.py -q build_ext --inplace"
"$PY" -m venv --without-pip "$V" || exit 2
check "pip installs the wheel into a venv" \
	"$PY" -m pip -q --python "$V/bin/python" install --no-index --no-deps "$WHL"
SP=$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cd "$T" || exit 2

check "the installed package imports alone" "$V/bin/python" -c 'import dupdemo'
exits "clean venv: --check finds nothing" 0 envclean --check --python="$V" --module=dupdemo
same "clean venv: --check prints nothing" "" "$(cat "$T/.out")"

# --- a second copy on PYTHONPATH
export PYTHONPATH=$S
exits "PYTHONPATH copy: the plain import breaks" 1 "$V/bin/python" -c 'import dupdemo'
has "PYTHONPATH copy: with the pybind11-style message" "$T/.err" 'generic_type: cannot initialize type "Widget"'
check "PYTHONPATH copy: envclean -- python -c 'import dupdemo' works" \
	envclean -- "$V/bin/python" -c 'import dupdemo; print(dupdemo.__file__, dupdemo.widget())'
has "PYTHONPATH copy: envclean imports the installed copy" "$T/.out" "$SP/dupdemo/__init__.py widget from libdupcore ABI 2"
check "PYTHONPATH copy: envclean --prepend-path VENV/bin -- python works" \
	envclean --prepend-path "$V/bin" -- python -c 'import dupdemo, os; print(os.environ["VIRTUAL_ENV"])'
same "PYTHONPATH copy: --prepend-path of a venv sets VIRTUAL_ENV" "$V" "$(cat "$T/.out")"
exits "PYTHONPATH copy: --check exits 1" 1 envclean --check --python="$V/bin/python" --module=dupdemo
has "PYTHONPATH copy: --check names the source tree copy" "$T/.out" "$S/dupdemo (PYTHONPATH; source tree with setup.py"
has "PYTHONPATH copy: --check names the installed copy" "$T/.out" "shadows $SP/dupdemo (site-packages; metadata dupdemo 1.0)"
has "PYTHONPATH copy: --check gives the fix" "$T/.out" "fix: unset PYTHONPATH or drop $S from it"
same "PYTHONPATH copy: one line per finding" 1 "$(lines "$T/.out")"
exits "PYTHONPATH copy: --check --json exits 1" 1 envclean --check --python="$V" --module=dupdemo --json
cp "$T/.out" "$T/check.json"
check "PYTHONPATH copy: --json holds the finding with both paths" "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["level"] == "problem"]
assert len(f) == 1 and f[0]["kind"] == "copies" and f[0]["module"] == "dupdemo", f
assert f[0]["paths"] == [sys.argv[2] + "/dupdemo", sys.argv[3] + "/dupdemo"], f[0]["paths"]
assert [p["origin"] for p in d["sys_path"] if p["path"] == sys.argv[2]] == ["PYTHONPATH"]
m = d["modules"][0]
assert m["name"] == "dupdemo" and [c["imported"] for c in m["copies"]] == [True, False], m
assert m["copies"][1]["origin"] == "site-packages" and m["copies"][1]["metadata"] == "dupdemo 1.0", m
' "$T/check.json" "$S" "$SP"
exits "PYTHONPATH copy: --check run under envclean is clean" 0 \
	envclean -- envclean --check --python="$V" --module=dupdemo
unset PYTHONPATH

# --- stale metadata: a copy half removed, its dist-info left behind
"$PY" -m pip -q install --no-index --no-deps --target "$T/stale" "$WHL" && rm -r "$T/stale/dupdemo"
exits "stale dist-info on PYTHONPATH: --check exits 1" 1 \
	env PYTHONPATH="$T/stale" envclean --check --python="$V" --module=dupdemo
has "stale dist-info: --check names the metadata and the imported copy" "$T/.out" \
	"$T/stale/dupdemo-1.0.dist-info says dupdemo 1.0 is installed in $T/stale, but that folder holds no dupdemo; Python imports $SP/dupdemo"

# --- a source checkout in the working folder
exits "source tree in cwd: the plain import breaks" 1 sh -c "cd '$S' && '$V/bin/python' -c 'import dupdemo'"
exits "source tree in cwd: --check --cwd exits 1" 1 envclean --check --python="$V" --module=dupdemo --cwd="$S"
has "source tree in cwd: --check names the working folder's copy" "$T/.out" "$S/dupdemo (the working folder; source tree with setup.py"
has "source tree in cwd: --check names the installed copy" "$T/.out" "shadows $SP/dupdemo"
has "source tree in cwd: --check says to run elsewhere" "$T/.out" "fix: run from another folder than $S"
exits "source tree in cwd, not on sys.path (PYTHONSAFEPATH): --check still exits 1" 1 \
	env PYTHONSAFEPATH=1 envclean --check --python="$V" --module=dupdemo --cwd="$S"
has "source tree in cwd, not on sys.path: a script run there would import it" "$T/.out" \
	"a script run there (python setup.py) imports it before $SP/dupdemo"

# --- a .pth path line and a .pth import hook in the venv
echo "$S" >"$SP/zz_devpath.pth"
exits ".pth path line: the plain import breaks" 1 "$V/bin/python" -c 'import dupdemo'
exits ".pth path line: --check exits 1" 1 envclean --check --python="$V" --module=dupdemo
has ".pth path line: --check names the file and line" "$T/.out" "$S/dupdemo (added by line 1 of $SP/zz_devpath.pth"
has ".pth path line: --check says to remove it" "$T/.out" "fix: remove line 1 of $SP/zz_devpath.pth"
rm "$SP/zz_devpath.pth"
printf '# a develop hook\nimport sys; sys.path.insert(0, "%s")\n' "$S" >"$SP/zz_devhook.pth"
exits ".pth import hook: the plain import breaks" 1 "$V/bin/python" -c 'import dupdemo'
exits ".pth import hook: envclean cannot undo a hook inside the venv" 1 envclean -- "$V/bin/python" -c 'import dupdemo'
exits ".pth import hook: --check exits 1" 1 envclean --check --python="$V" --module=dupdemo
has ".pth import hook: --check names the hook as the origin of the copy" "$T/.out" "$S/dupdemo (added by the import hook on line 2 of $SP/zz_devhook.pth"
has ".pth import hook: --check flags the hook itself" "$T/.out" "$SP/zz_devhook.pth:2: import hook runs at every interpreter start and changes what gets imported"
rm "$SP/zz_devhook.pth"
echo "import dupdemo" >"$SP/zz_preload.pth"
exits "module imported by a startup hook: --check exits 1" 1 envclean --check --python="$V" --module=dupdemo
has "module imported by a startup hook: --check names the file imported" "$T/.out" "dupdemo: imported at interpreter startup (by a .pth hook or sitecustomize) from $SP/dupdemo/__init__.py"
rm "$SP/zz_preload.pth"
echo 'import os; os.write(1, b"a hook that prints at startup\n")' >"$SP/zz_print.pth"
exits "a hook that prints to stdout at startup: --check still reads the answer, clean" 0 \
	envclean --check --python="$V" --module=dupdemo
exits "a hook that prints: -v shows it as a note, exit 0" 0 envclean --check --python="$V" --module=dupdemo -v
has "a hook that prints: the note names file and line" "$T/.out" "note: $SP/zz_print.pth:1: import hook runs at every interpreter start: import os"
rm "$SP/zz_print.pth"
exits "hooks removed: --check is clean again" 0 envclean --check --python="$V" --module=dupdemo

# --- LD_LIBRARY_PATH reaching an older core library
export LD_LIBRARY_PATH=$T/oldlib
exits "LD_LIBRARY_PATH: the plain import breaks" 1 "$V/bin/python" -c 'import dupdemo'
has "LD_LIBRARY_PATH: with the loader's message" "$T/.err" "undefined symbol: dupcore_register_v2"
check "LD_LIBRARY_PATH: envclean -- python -c 'import dupdemo' works" envclean -- "$V/bin/python" -c 'import dupdemo'
exits "LD_LIBRARY_PATH: envclean --keep LD_LIBRARY_PATH keeps the breakage" 1 \
	envclean --keep LD_LIBRARY_PATH -- "$V/bin/python" -c 'import dupdemo'
exits "LD_LIBRARY_PATH: --check exits 1" 1 envclean --check --python="$V" --module=dupdemo
has "LD_LIBRARY_PATH: --check names both libraries" "$T/.out" \
	"LD_LIBRARY_PATH reaches $T/oldlib/libdupcore.so, another copy of libdupcore.so than the one dupdemo ships ($SP/dupdemo/lib/libdupcore.so)"
exits "LD_LIBRARY_PATH to the shipped folder itself: --check is clean" 0 \
	env LD_LIBRARY_PATH="$SP/dupdemo/lib" envclean --check --python="$V" --module=dupdemo
unset LD_LIBRARY_PATH

# --- the user site (HOME in scratch), enabled in a venv that sees system packages
SV=$T/sysvenv
"$PY" -m venv --without-pip --system-site-packages "$SV" &&
	"$PY" -m pip -q --python "$SV/bin/python" install --no-index --no-deps "$WHL" || exit 2
US=$(HOME=$T/home "$SV/bin/python" -c 'import site; print(site.getusersitepackages())')
case "$US" in "$T/home/"*) ;; *) notok "user site $US is not under the scratch HOME"; exit 1 ;; esac
"$PY" -m pip -q install --no-index --no-deps --target "$US" "$WHL" || exit 2
export HOME=$T/home
exits "user site copy: the plain import breaks" 1 "$SV/bin/python" -c 'import dupdemo'
has "user site copy: with the pybind11-style message" "$T/.err" 'generic_type: cannot initialize type "Widget"'
check "user site copy: envclean -- python -c 'import dupdemo' works" envclean -- "$SV/bin/python" -c 'import dupdemo'
exits "user site copy: --check exits 1" 1 envclean --check --python="$SV" --module=dupdemo
has "user site copy: --check names the user site copy" "$T/.out" "$US/dupdemo (user site;"
has "user site copy: --check names the venv copy" "$T/.out" "$SV/lib/"
has "user site copy: --check gives the fix" "$T/.out" "fix: pip uninstall --user dupdemo, or set PYTHONNOUSERSITE=1"
exits "user site copy, PYTHONNOUSERSITE=1: --check exits 0" 0 \
	env PYTHONNOUSERSITE=1 envclean --check --python="$SV" --module=dupdemo -v
has "user site copy, PYTHONNOUSERSITE=1: -v notes the disabled copy" "$T/.out" "note: dupdemo: the user site $US holds a copy"

# --- a PEP 660 editable install (setuptools' __editable__ finder) against a PYTHONPATH copy
ED=$T/ed EV=$T/edvenv
export HOME=$T/edhome  # a user site without dupdemo
mkdir -p "$ED/impl" && cp -R "$FIX/dupdemo" "$ED/impl/dupdemo_impl" || exit 2
cat >"$ED/setup.py" <<'PYEOF'
# a pure-Python dupdemo 2.0 whose package folder has another name: setuptools maps it
# with an __editable__ finder on sys.meta_path instead of a sys.path entry
from setuptools import setup
setup(name="dupdemo", version="2.0", packages=["dupdemo"],
      package_dir={"dupdemo": "impl/dupdemo_impl"})
PYEOF
printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n' >"$ED/pyproject.toml"
"$PY" -m venv --without-pip --system-site-packages "$EV" || exit 2
check "pip install -e makes an editable install with a finder" \
	sh -c "cd '$ED' && '$PY' -m pip -q --python '$EV/bin/python' install --no-index --no-deps --no-build-isolation -e ."
exits "editable install alone: --check is clean" 0 envclean --check --python="$EV" --module=dupdemo
exits "editable install + PYTHONPATH copy: --check exits 1" 1 \
	env PYTHONPATH="$S" envclean --check --python="$EV" --module=dupdemo
has "editable install + PYTHONPATH copy: --check names the editable copy, its finder and metadata" "$T/.out" \
	"shadows $ED/impl/dupdemo_impl (editable install, finder $EV/lib/"
has "editable install + PYTHONPATH copy: with the editable's metadata" "$T/.out" "metadata dupdemo 2.0)"

# --- what is not a conflict, and what is: the same folder twice, a shared namespace,
#     one project's metadata twice
exits "cwd is site-packages itself (one folder reached twice): --check is clean" 0 \
	envclean --check --python="$V" --module=dupdemo --cwd="$SP"
for p in a b; do
	mkdir -p "$T/ns$p/kilnns/$p" && echo "X = '$p'" >"$T/ns$p/kilnns/$p/__init__.py"
	printf 'from setuptools import setup\nsetup(name="kiln-ns-%s", version="1.0", packages=["kilnns.%s"])\n' \
		"$p" "$p" >"$T/ns$p/setup.py"
done
check "pip installs two projects sharing the namespace package kilnns" \
	"$PY" -m pip -q install --no-index --no-deps --no-build-isolation --target "$T/ns" "$T/nsa" "$T/nsb"
exits "two projects sharing a namespace package: --check is clean" 0 \
	env PYTHONPATH="$T/ns" envclean --check --python="$V" --module=kilnns
"$PY" -m pip -q install --no-index --no-deps --target "$T/dbl" "$WHL" || exit 2
check "setup.py egg_info --egg-base writes dupdemo 2.0's metadata beside the 1.0 install" \
	sh -c "cd '$ED' && '$PY' setup.py -q egg_info --egg-base '$T/dbl'"
exits "one project's metadata twice in a folder: --check exits 1" 1 \
	env PYTHONPATH="$T/dbl" envclean --check --python="$V" --module=dupdemo
has "one project's metadata twice: both named" "$T/.out" \
	"dupdemo: 2 metadata folders for one module in $T/dbl: dupdemo 1.0 and dupdemo 2.0"

# --- single copies that still make a build depend on the wrong thing
E0=$T/emptyvenv
"$PY" -m venv --without-pip "$E0" || exit 2
exits "the only copy is a source tree on PYTHONPATH: --check exits 1" 1 \
	env PYTHONPATH="$S" envclean --check --python="$E0" --module=dupdemo
has "the only copy is a source tree on PYTHONPATH: named, with the fix" "$T/.out" \
	"dupdemo: PYTHONPATH holds the source tree $S (setup.py + $S/dupdemo); Python imports it instead of an installed dupdemo; fix: unset PYTHONPATH"
exits "the only copy is the working folder's source tree: --check exits 1" 1 \
	envclean --check --python="$E0" --module=dupdemo --cwd="$S"
has "the only copy is the working folder's source tree: named" "$T/.out" \
	"dupdemo: the working folder $S is a source checkout (setup.py + $S/dupdemo)"
E1=$T/sysvenv2
"$PY" -m venv --without-pip --system-site-packages "$E1" || exit 2
export HOME=$T/home    # its user site holds dupdemo (installed above)
exits "the only copy is in the enabled user site: --check exits 1" 1 envclean --check --python="$E1" --module=dupdemo
has "the only copy is in the enabled user site: named" "$T/.out" "dupdemo: the user site $US holds the only copy ($US/dupdemo) and is enabled"
echo 'import os' >"$US/usercustomize.py"
exits "a usercustomize in the user site: --check exits 1" 1 envclean --check --python="$E1" --module=kiln_none
has "a usercustomize in the user site: named" "$T/.out" "$US/usercustomize.py: usercustomize from the user site runs at every interpreter start"
rm "$US/usercustomize.py"
mkdir -p "$T/sc" && echo 'import os' >"$T/sc/sitecustomize.py"
exits "a sitecustomize on PYTHONPATH (before the distro's): --check exits 1" 1 \
	env PYTHONPATH="$T/sc" envclean --check --python="$E1" --module=kiln_none
has "a sitecustomize on PYTHONPATH: named" "$T/.out" "$T/sc/sitecustomize.py: sitecustomize runs at every interpreter start and can change sys.path"
exits "nothing left: --check on a module nowhere is clean" 0 envclean --check --python="$E1" --module=kiln_none

# --- copies that are single extension modules, under two of the interpreter's suffixes
cat >"$T/kilnext.c" <<'CEOF'
#include <Python.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "kilnext", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_kilnext(void) { return PyModule_Create(&def); }
CEOF
INC=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
SUF=$("$PY" -c 'import importlib.machinery as m; print(m.EXTENSION_SUFFIXES[0])')
mkdir -p "$T/exta" "$T/extb"
cc -shared -fPIC -I"$INC" -o "$T/exta/kilnext$SUF" "$T/kilnext.c" &&
	cc -shared -fPIC -I"$INC" -o "$T/extb/kilnext.abi3.so" "$T/kilnext.c" || { notok "build kilnext"; exit 1; }
check "the extension module imports from the first folder" \
	env PYTHONPATH="$T/exta:$T/extb" "$E0/bin/python" -c 'import kilnext; assert kilnext.__file__.startswith(__import__("sys").argv[1])' "$T/exta"
exits "two extension-module copies: --check exits 1" 1 \
	env PYTHONPATH="$T/exta:$T/extb" envclean --check --python="$E0" --module=kilnext
has "two extension-module copies: both named with their kind" "$T/.out" \
	"kilnext: 2 copies on sys.path: $T/exta/kilnext$SUF (PYTHONPATH; extension module; no metadata) is imported and shadows $T/extb/kilnext.abi3.so (PYTHONPATH; extension module; no metadata)"

# hostile input (issue #15): a FIFO where --check reads metadata does not hang it
mkdir -p "$SP/kilnfifo-1.0.dist-info"
mkfifo "$SP/kilnfifo-1.0.dist-info/top_level.txt" "$SP/kilnfifo-1.0.dist-info/RECORD"
run timeout 30 envclean --check --python="$V" --module=dupdemo
[ "$rc" = 0 ] || [ "$rc" = 1 ] && ok "a FIFO as a dist-info's top_level.txt and RECORD: --check finishes (exit $rc)" ||
	notok "a FIFO as a dist-info's top_level.txt and RECORD: --check finishes (exit $rc)"
rm -rf "$SP/kilnfifo-1.0.dist-info"
