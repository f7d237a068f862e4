#!/bin/sh
# graph-deps: the 2026 stack on toy trees in the shape of upstream's
# (tests/regress/graph-toy26.inc): configure resolves vision_REF=@torch from the release
# matrix and prints the pairs; the C.deps stages install the build requirements each tree
# declares from a PEP 503 index on loopback (nginx) into a venv that starts empty; torch
# builds with its PEP 517 backend (python -m build --no-isolation), the gitignored file
# its ROCm step wrote force-included; a second build folder installs the same files and
# makes the same wheels; a wheelhouse gives the same lock; an index lacking one
# requirement, an index answering 503, a wheelhouse with two files for one project each
# fail C.deps in one line with the environment unchanged; a patch made for another range
# of releases is not taken, and one that no longer applies says so. Prints the C.deps
# timings (cold, warm, no-op).
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy26.inc"
index_start
idx=$INDEX_URL/index/simple/

# conf DIR VENV [ARG]...: configure the toy stack in DIR for an AMD target
conf () {
	cdir=$1 cvenv=$2
	shift 2
	mkdir -p "$cdir" && cd "$cdir" || exit 2
	"$KSRC/configure" --python="$cvenv/bin/python" --pins="$T/pins26.env" --mirror="$T/mirror" \
		--rocm-path="$T/rocm" --jobs=2 --arch=gfx1100 KILN_BIN="$KILN_BIN" "$@"
}
build () { ninja >"$T/$1.log" 2>&1; brc=$?; got=$(rebuilt "$T/$1.log"); }
py () { "$1/bin/python" -c "$2" 2>&1; }
pylist () { "$1/bin/python" -m pip list --format=freeze --disable-pip-version-check 2>/dev/null; }
secs () { sed -n "s/^$1: rebuilt in \([0-9.]*\)s.*/\1/p" "$2" | head -n 1; }

venv_new "$PY3" "$T/venv" || exit 2
same "the venv starts empty (pip and setuptools from venv only)" "pip setuptools" \
	"$(pylist "$T/venv" | sed 's/==.*//' | sort | tr '\n' ' ' | sed 's/ $//')"

check "configure with --index-url" conf "$T/b" "$T/venv" --index-url="$idx"
has "configure prints the pair vision_REF=@torch takes from the matrix" "$T/.out" \
	"torch 2.15.0: vision 0.30.0 (vision_REF=@torch, from $KSRC/env/matrix.env)"
check "ninja -n" ninja -n
for s in torch.deps vision.deps; do has "ninja -n shows $s" "$T/.out" "] $s"; done
has "the deps key holds the index" "$T/b/build/keys/torch.deps" "INDEX=\"$idx\""

t0=$(date +%s.%N)
build first
same "the stack builds from the empty venv" 0 "$brc"
[ "$brc" = 0 ] || { sed -n '1,60s/^/#   /p' "$T/first.log"; tail -n 30 "$T"/b/build/logs/*.deps.log | sed 's/^/#   /'; }
has "torch.deps ran before torch.wheel" "$T/first.log" "torch.deps: rebuilt in "
cold=$(secs torch.deps "$T/first.log")
has "torch.wheel built with python -m build (the tree's PEP 517 backend)" "$T/b/build/logs/torch.wheel.log" \
	"build: build (scikit_build_core.build), force-including torch/_rocm_init.py"
has "vision.wheel built with setup.py" "$T/b/build/logs/vision.wheel.log" "build: setup"
has "vision's pyproject without [build-system]: PEP 518's setuptools and wheel" "$T/b/build/deps/vision.req" \
	"wheel	kiln (PEP 518's default: pyproject.toml has no [build-system] requires)"
has "torch's requirements.txt is read" "$T/b/build/deps/torch.req" "filelock	requirements.txt:1"
has "the frontend is a requirement of a PEP 517 tree" "$T/b/build/deps/torch.req" "build	kiln (python -m build"
v=$(py "$T/venv" 'import torch; print(torch.__version__)')
case "$v" in
2.15.0+kiln.gfx1100.g*) ok "torch's version and kiln label as before ($v)" ;;
*) notok "torch's version and kiln label as before (got $v)" ;;
esac
same "the force-included generated file is in the installed torch" "hipified 30 31 gfx1100" \
	"$(py "$T/venv" 'import torch, torchvision; print(torch.ROCM, torch.scale(3), torchvision.op(3), torch.ARCH)')"
has "requirements.lock has a build section" "$T/b/build/requirements.lock" "# [build] the build requirements"
h=$(sha256sum "$T/wheels/scikit_build_core-1.0.0-py3-none-any.whl" | cut -c1-64)
has "the build section locks name, version and sha256" "$T/b/build/requirements.lock" \
	"scikit-build-core==1.0.0 --hash=sha256:$h  # build: torch"
has "build-info records torch's build requirements" "$T/b/build/build-info.json" \
	"\"build_requirements\":\"build==0.9.0 sha256:"
same "the deps went into the target Python" "6.0.3 1.17.0" \
	"$(py "$T/venv" 'import yaml, six; print(yaml.__version__, six.__version__)')"
# HIP: the toy compiles two HIP sources into one library the way hipcc runs clang (through
# HIP_CLANG_LAUNCHER): kiln's launcher gives each its own -cuid, so they link and carry two
# cuid symbols, the same in a second build folder (below)
cuids () { py "$1" 'import os, re, torch
d = open(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_toy.so"), "rb").read()
print(" ".join(sorted(set(m.decode() for m in re.findall(rb"__hip_cuid_[0-9a-f]*", d)))))'; }
c1=$(cuids "$T/venv")
case "$c1" in
__hip_cuid_[0-9a-f]*" "__hip_cuid_[0-9a-f]*) ok "two HIP objects, each with a cuid of its own ($c1)" ;;
*) notok "two HIP objects, each with a cuid of its own (got '$c1')" ;;
esac
has "torch.wheel ran its HIP compiles through kiln's launcher" "$T/b/build/logs/torch.wheel.log" \
	"toy-skbuild: $T/b/build/ccwrap/hiplaunch $T/rocm/llvm/bin/clang -x hip"
# the launcher kiln wrote, with echo for the compiler: a cuid for HIP compiles only
hl () { (cd "$T" && KILN_HIP_CACHE= KILN_HIP_WORK=$T KILN_HIP_WORKP=$T "$T/b/build/ccwrap/hiplaunch" echo "$@"); }
case "$(hl -x hip -c csrc/a.cpp -o a.o)" in
"-x hip -c csrc/a.cpp -o a.o -cuid="????????????????) ok "hipcc's '-x hip a.cpp' compile gets a -cuid" ;;
*) notok "hipcc's '-x hip a.cpp' compile gets a -cuid (got '$(hl -x hip -c csrc/a.cpp -o a.o)')" ;;
esac
hlid () { hl "$@" | sed -n 's/.*-cuid=//p'; }
same "the ID is the paths' in the copy, relative or absolute" "$(hlid -c csrc/k.hip -o b/k.o)" \
	"$(hlid -c "$T/csrc/k.hip" -o "$T/b/k.o")"
case "$(hlid -c csrc/k.hip -o b/k2.o)" in "$(hlid -c csrc/k.hip -o b/k.o)"|'') notok "another object, another ID" ;;
*) ok "another object, another ID" ;; esac
same "a host compile gets none" "-c a.c -o a.o" "$(hl -c a.c -o a.o)"
same "a compile with its own cuid keeps it" "-c k.hip -fuse-cuid=hash" "$(hl -c k.hip -fuse-cuid=hash)"

# the toy backend drops the generated file without the force-include (what kiln guards)
cp -a "$T/b/build/src/torch" "$T/plain" && rm -rf "$T/plain/build" && mkdir -p "$T/plain-out"
(cd "$T/plain" && "$T/venv/bin/python" -m build --wheel --no-isolation --outdir "$T/plain-out" . >"$T/plain.log" 2>&1) ||
	{ notok "the plain PEP 517 build runs"; sed 's/^/#   /' "$T/plain.log"; }
same "without -Cwheel.force-include the backend leaves the gitignored file out" "" \
	"$("$PY3" -c 'import sys, zipfile; print("\n".join(n for n in zipfile.ZipFile(sys.argv[1]).namelist() if "_rocm_init" in n))' "$T"/plain-out/*.whl)"

# no-op: nothing to do, and its time
t1=$(date +%s.%N)
build noop
t2=$(date +%s.%N)
same "second ninja: no work to do" "ninja: no work to do." "$(cat "$T/noop.log")"
noop=$(echo "$t2 - $t1" | bc)
# warm: the deps stage again (pip's cache holds the index's answers)
rm -f "$T/b/build/stamp/torch.deps"
build warm
warm=$(secs torch.deps "$T/warm.log")
same "warm: only torch.deps reruns (its lock, its ID, is unchanged)" "torch.deps" "$got"
echo "# C.deps timings (torch.deps: 12 requirements, 13 wheels locked, loopback index): cold ${cold}s, warm ${warm}s, no-op ninja ${noop}s"

# a second build folder and venv: the same requirement files, the same wheels
venv_new "$PY3" "$T/venv2" || exit 2
check "configure a second build folder" conf "$T/b2" "$T/venv2" --index-url="$idx"
build second
same "the second build folder builds" 0 "$brc"
same "it locked the same build requirements" "$(cat "$T/b/build/deps/torch.lock")" "$(cat "$T/b2/build/deps/torch.lock")"
same "it installed byte-identical requirement files" "$(cd "$T/b/build/deps/torch.wheels" && sha256sum *)" \
	"$(cd "$T/b2/build/deps/torch.wheels" && sha256sum *)"
same "the HIP objects' cuids are the first build folder's" "$c1" "$(cuids "$T/venv2")"
w1=$(cat "$T/b/build/wheels/torch.picked") w2=$(cat "$T/b2/build/wheels/torch.picked")
same "the torch wheels have one name" "${w1##*/}" "${w2##*/}"
if [ "$(sha256sum <"$w1")" = "$(sha256sum <"$w2")" ]; then ok "the torch wheels are byte-identical"; else
	notok "the torch wheels are byte-identical"
	"$PY3" -c 'import sys, zipfile
a, b = (dict((i.filename, (i.CRC, i.date_time)) for i in zipfile.ZipFile(p).infolist()) for p in sys.argv[1:])
for n in sorted(set(a) | set(b)):
    if a.get(n) != b.get(n): print("#   differs:", n, a.get(n), b.get(n))' "$w1" "$w2"
fi

# a wheelhouse: the same files, offline
venv_new "$PY3" "$T/venv3" || exit 2
check "configure with --wheelhouse" conf "$T/b3" "$T/venv3" --wheelhouse="$T/wheelhouse"
check "torch.deps from the wheelhouse" ninja torch.deps
same "the wheelhouse gives the same lock" "$(cat "$T/b/build/deps/torch.lock")" "$(cat "$T/b3/build/deps/torch.lock")"

# failures: one line, nothing installed, no stamp, the next ninja retries
# fails NAME WANT: torch.deps fails in a fresh venv, in one kiln line naming WANT, the
# venv as it was
fails () {
	before=$(pylist "$T/venvf")
	exits "$1: torch.deps fails" 1 ninja torch.deps
	# the failure summary's own frame (kiln-stage run: "last 30 lines of", "no ... error
	# recognised") is not the step's line
	n=$(grep '^kiln: torch.deps: ' "$T/.out" | grep -vc ': last [0-9]* lines of \|error recognised in the log\|: first error (')
	same "$1: one kiln line" 1 "$n"
	has "$1: it names the cause" "$T/.out" "$2" || :
	grep '^kiln: torch.deps: ' "$T/.out" | sed 's/^/#   /'
	same "$1: the environment is as before" "$before" "$(pylist "$T/venvf")"
	check "$1: no stamp" test ! -f build/stamp/torch.deps
}
venv_new "$PY3" "$T/venvf" || exit 2
mkdir -p "$T/index2/simple" && cp -R "$T/index/simple/." "$T/index2/simple/" && rm -rf "$T/index2/simple/filelock"
check "configure with an index lacking filelock" conf "$T/b4" "$T/venvf" --index-url="$INDEX_URL/index2/simple/"
fails "an index lacking one requirement" "no wheel for filelock in --index-url=$INDEX_URL/index2/simple/ (asked by requirements.txt:1)"
check "configure with an index answering 503" conf "$T/b4" "$T/venvf" --index-url="$INDEX_URL/broken/simple/"
fails "an index answering 503" "--index-url=$INDEX_URL/broken/simple/ answered HTTP 503 for $INDEX_URL/broken/simple/scikit-build-core/"
check "configure with an index answering an HTML page" conf "$T/b4" "$T/venvf" --index-url="$INDEX_URL/html/simple/"
fails "an index answering an HTML page that is no index" \
	"--index-url=$INDEX_URL/html/simple/ answered an HTML page without links (Sign in), not a package index page"
mkdir -p "$T/wh1" && cp "$T"/wheelhouse/*.whl "$T/wh1/" && rm -f "$T"/wh1/filelock-*
check "configure with a wheelhouse lacking filelock" conf "$T/b4" "$T/venvf" --wheelhouse="$T/wh1"
fails "a wheelhouse lacking one requirement" "no wheel for filelock in --wheelhouse=$T/wh1 (asked by requirements.txt:1)"
mkdir -p "$T/wh2" && cp "$T"/wheelhouse/*.whl "$T/wh2/" && toymod six 1.16.0 && cp "$T/wheels/six-1.16.0-py3-none-any.whl" "$T/wh2/"
check "configure with a wheelhouse holding two six" conf "$T/b4" "$T/venvf" --wheelhouse="$T/wh2"
fails "a wheelhouse with two files for one project" "two files for six: six-1.16.0-py3-none-any.whl and six-1.17.0-py3-none-any.whl"
# an install that fails part way (pip installs aa-broken last; its file "six" cannot be
# written over the folder six/ the toy six installed): what went in before is removed
mkdir -p "$T/index5/simple" && cp -R "$T/index/simple/." "$T/index5/simple/" && mkdir -p "$T/index5/simple/aa-broken"
"$PY3" -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w")
z.writestr("six", "not a folder\n")
z.writestr("aa_broken-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: aa-broken\nVersion: 1.0\n")
z.writestr("aa_broken-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
z.writestr("aa_broken-1.0.dist-info/RECORD", "")' "$T/index5/simple/aa-broken/aa_broken-1.0-py3-none-any.whl" || exit 2
(cd "$T/mirror/torch" && printf 'aa-broken\n' >>requirements.txt && git commit -qam "asks for aa-broken" && git tag v2.15.1) || exit 2
check "configure torch v2.15.1 (asks for aa-broken) with an index that has it" conf "$T/b4" "$T/venvf" \
	--index-url="$INDEX_URL/index5/simple/" --pin torch=v2.15.1
fails "an install that fails part way" "removed again: "
# ... and nothing of it stays importable: not the toy six it installed first, not the
# file aa-broken got in (a module pip wrote before it failed has no metadata, so pip's
# own uninstall cannot find it: kiln puts back every path the wheels were to write)
sp=$("$T/venvf/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
exits "after the failed install six is not importable" 1 "$T/venvf/bin/python" -c 'import six'
check "after the failed install no file of it is left" sh -c '! ls -d "$1"/six "$1"/six.py "$1"/aa_broken* 2>/dev/null | grep .' - "$sp"
check "after the failed install no undo folder is left" sh -c '! ls -d build/deps/torch.undo 2>/dev/null'
# a wheel with a member outside its folders: refused before anything is installed
mkdir -p "$T/index6/simple" && cp -R "$T/index5/simple/." "$T/index6/simple/" && rm -rf "$T/index6/simple/aa-broken" &&
	mkdir -p "$T/index6/simple/aa-broken"
"$PY3" -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w")
z.writestr("aa_broken/__init__.py", "X = 1\n")
z.writestr("../../../kiln-escape.py", "X = 1\n")
z.writestr("aa_broken-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: aa-broken\nVersion: 1.0\n")
z.writestr("aa_broken-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
z.writestr("aa_broken-1.0.dist-info/RECORD", "")' "$T/index6/simple/aa-broken/aa_broken-1.0-py3-none-any.whl" || exit 2
check "configure torch v2.15.1 with an index whose aa-broken climbs out" conf "$T/b4" "$T/venvf" \
	--index-url="$INDEX_URL/index6/simple/" --pin torch=v2.15.1
fails "a wheel with a path-traversal member" "unsafe member path '../../../kiln-escape.py'"
exits "the traversal wheel: aa_broken is not importable" 1 "$T/venvf/bin/python" -c 'import aa_broken'
check "the traversal wheel: nothing written above site-packages" sh -c '! ls "$1"/../../../kiln-escape.py "$1"/../../kiln-escape.py "$1"/../kiln-escape.py 2>/dev/null | grep .' - "$sp"
# pyproject.toml naming no backend, and one no requirement provides: one line each, before
# anything is installed
(cd "$T/mirror/torch" && git checkout -q v2.15.0 -- pyproject.toml requirements.txt &&
	sed -i '/^build-backend/d' pyproject.toml && git commit -qam "no backend" &&
	git tag v2.15.2 && git checkout -q v2.15.0 -- pyproject.toml &&
	sed -i 's/^build-backend = .*/build-backend = "hatchling.build"/' pyproject.toml &&
	git commit -qam "hatchling" && git tag v2.15.3) || exit 2
check "configure torch v2.15.2 (no build-backend)" conf "$T/b4" "$T/venvf" --index-url="$idx" --pin torch=v2.15.2
fails "a pyproject.toml naming no backend" "pyproject.toml: [build-system] names no build-backend and there is no setup.py"
check "configure torch v2.15.3 (hatchling.build, which no requirement provides)" conf "$T/b4" "$T/venvf" \
	--index-url="$idx" --pin torch=v2.15.3
fails "a backend kiln cannot run" "build-backend = \"hatchling.build\": no build requirement provides module hatchling"
check "configure with the whole index again" conf "$T/b4" "$T/venvf" --index-url="$idx"
check "the next ninja retries and succeeds" ninja torch.deps
# the lock is what is installed: a wheel whose bytes change under the same name and
# version is installed again (pip would keep the old file: "already satisfied")
mkdir -p "$T/wh5" && cp "$T"/wheelhouse/*.whl "$T/wh5/"
venv_new "$PY3" "$T/venv5" || exit 2
check "configure with a wheelhouse" conf "$T/b5" "$T/venv5" --wheelhouse="$T/wh5"
check "torch.deps from it" ninja torch.deps
mv "$T/mods/six/__init__.py" "$T/six.keep" && printf '__version__ = "1.17.0"\nCHANGED = True\n' >"$T/mods/six/__init__.py" &&
	mkw six 1.17.0 "" "six=$T/mods/six" && mv "$T/six.keep" "$T/mods/six/__init__.py" && cp "$T/wheels/six-1.17.0-py3-none-any.whl" "$T/wh5/"
rm -f build/stamp/torch.deps
check "torch.deps again, six's bytes changed under 1.17.0" ninja torch.deps
has "the lock has the new six" build/deps/torch.lock "six==1.17.0 --hash=sha256:$(sha256sum "$T/wh5/six-1.17.0-py3-none-any.whl" | cut -c1-64)"
same "the installed six is the new one" "True" "$(py "$T/venv5" 'import six; print(getattr(six, "CHANGED", False))')"

# bad input to configure and the tools
exits "--index-url and --wheelhouse together are refused" 2 conf "$T/b4" "$T/venvf" --index-url="$idx" --wheelhouse="$T/wheelhouse"
exits "a mismatched pair is refused" 2 conf "$T/b4" "$T/venvf" --pin vision=v0.26.0
same "in one line naming both and the one that fits" \
	"configure: vision v0.26.0 is made for torch 2.11, but the torch pin is 2.15.0; vision 0.30.0 goes with it ($KSRC/env/matrix.env): pin vision=v0.30.0; or pass --allow-mismatch to build it anyway" \
	"$(cat "$T/.err")"
check "--allow-mismatch takes it" conf "$T/b4" "$T/venvf" --pin vision=v0.26.0 --allow-mismatch

# patches per release: a series made for 2.0-2.8 is not taken for 2.15; one for 2.15 that
# does not apply stops torch.patch in one line naming the patch, the release and the file
mkdir -p "$T/tp/0-2.8" "$T/tp/2.15"
printf 'x.patch\n' >"$T/tp/0-2.8/series"
printf 'diff --git a/nowhere.c b/nowhere.c\n--- a/nowhere.c\n+++ b/nowhere.c\n@@ -1 +1 @@\n-a\n+b\n' >"$T/tp/0-2.8/x.patch"
sed 's/nowhere/csrc\/lib/g; s/^-a$/-int missing_line;/' "$T/tp/0-2.8/x.patch" >"$T/tp/2.15/0001-gone.patch"
printf '0001-gone.patch\n' >"$T/tp/2.15/series"
cp "$T/pins26.env" "$T/pins-p.env" && echo "torch_PATCHES=$T/tp" >>"$T/pins-p.env"
mkdir -p "$T/b5" && cd "$T/b5" || exit 2
check "configure with per-release patch folders" "$KSRC/configure" --python="$T/venvf/bin/python" \
	--pins="$T/pins-p.env" --mirror="$T/mirror" --arch=cpu KILN_BIN="$KILN_BIN"
has "configure says which series it took" "$T/.out" "torch 2.15.0: patches from $T/tp/2.15 (made for 2.15)"
exits "a patch that no longer applies stops torch.patch" 1 ninja torch.patch
has "naming the patch, the release and the file, and that upstream may carry it" "$T/.out" \
	"0001-gone.patch: csrc/lib.c"
has "the release" "$T/.out" "[release 2.15.0; the series is made for 2.15]: upstream may already carry this patch"
# release folders that are not ranges: one line each
cfgp () { "$KSRC/configure" --python="$T/venvf/bin/python" --pins="$T/pins-p.env" --mirror="$T/mirror" --arch=cpu KILN_BIN="$KILN_BIN"; }
mkdir -p "$T/tp/2.9-2.3" && printf 'x.patch\n' >"$T/tp/2.9-2.3/series"
exits "a range no release matches stops configure" 2 cfgp
has "naming it" "$T/.err" "$T/tp/2.9-2.3: no release matches this range (2.9 is after 2.3)"
rm -rf "$T/tp/2.9-2.3" && mkdir -p "$T/tp/newest" && printf 'x.patch\n' >"$T/tp/newest/series"
exits "a folder that is not a range stops configure" 2 cfgp
has "naming it" "$T/.err" "$T/tp/newest: not a release range (2.8, 2.0-2.8 or 2.14+)"
