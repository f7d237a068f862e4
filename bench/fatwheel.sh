#!/bin/sh
# bench/fatwheel.sh: fatwheel vs `auditwheel repair` vs a plain cp, side by side on the
# same input wheels, in one run.
#   usage: bench/fatwheel.sh [small|torch|all]   (default all)
#   FATWHEEL     the fatwheel to time (default: fatwheel on PATH)
#   AUDITWHEEL   a folder holding auditwheel 6.7.0's src/ (a fetched snapshot of
#                pypa/auditwheel, run from there with Debian's python3-pyelftools,
#                python3-packaging and patchelf; never copied into kiln)
#                [/tmp/auditwheel-6.7.0]
#   RUNS         timed runs of the fast commands [3]
# Inputs: "small" is a pip-built extension linking libzstd and libgit2 (15 libraries to
# bundle); "torch" is Debian's python3-torch packed into a wheel (~270 libraries,
# ~500 MB) by bench/fatwheel-torch.sh. Both tools bundle into NAME.libs with hashed
# sonames (what auditwheel always does); fatwheel runs at its default level (the lowest
# libdeflate level no bigger than zlib's 6) and at --level=1.
# The floor each fatwheel run is held to ("cp + multithreaded deflate of the newly added
# libraries"): `cp` of the input wheel, then libdeflate-gzip at the same level over the
# libraries fatwheel added (as it wrote them), one process per library, largest first,
# $(nproc) at a time (xargs -P). pigz -6 over the same bytes is printed beside it.
# Needs hyperfine, pigz, libdeflate-tools, unzip. The load average is printed before and
# after: the machine may be shared.
set -u
FATWHEEL=${FATWHEEL:-fatwheel}
AW=${AUDITWHEEL:-/tmp/auditwheel-6.7.0}
RUNS=${RUNS:-3}
PY=/usr/bin/python3
what=${1:-all}
here=$(cd "$(dirname "$0")" && pwd)
B=${TMPDIR:-/tmp}/fatwheel-bench
command -v hyperfine >/dev/null || { echo "needs hyperfine"; exit 2; }
command -v pigz >/dev/null || { echo "needs pigz"; exit 2; }
command -v libdeflate-gzip >/dev/null || { echo "needs libdeflate-gzip (Debian's libdeflate-tools)"; exit 2; }
command -v "$FATWHEEL" >/dev/null || { echo "no fatwheel (set FATWHEEL=)"; exit 2; }
FATWHEEL=$(command -v "$FATWHEEL")
[ -d "$AW/src/auditwheel" ] || { echo "no auditwheel sources in $AW/src (see the header)"; exit 2; }
# auditwheel reads its own version from installed metadata: give it some, in /tmp
mkdir -p "$AW/src/auditwheel-6.7.0.dist-info"
printf 'Metadata-Version: 2.1\nName: auditwheel\nVersion: 6.7.0\n' >"$AW/src/auditwheel-6.7.0.dist-info/METADATA"
glibc=$(ldd --version | sed -n '1s/.* \([0-9]*\)\.\([0-9]*\)$/\1_\2/p')
plat=manylinux_${glibc}_x86_64
rm -rf "$B" && mkdir -p "$B" || exit 2

small () {
	mkdir -p "$B/small/zdemo"
	echo 'from ._z import version' >"$B/small/zdemo/__init__.py"
	cat >"$B/small/_z.c" <<'EOF'
#include <Python.h>
#include <zstd.h>
#include <git2.h>
static PyObject *version(PyObject *s, PyObject *a) { int x, y, z; git_libgit2_version(&x, &y, &z); return PyUnicode_FromFormat("%s %d", ZSTD_versionString(), x); }
static PyMethodDef m[] = {{"version", version, METH_NOARGS, ""}, {0}};
static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "_z", 0, -1, m};
PyMODINIT_FUNC PyInit__z(void) { return PyModule_Create(&d); }
EOF
	cat >"$B/small/setup.py" <<'EOF'
from setuptools import setup, Extension
setup(name="zdemo", version="1.0", packages=["zdemo"],
      ext_modules=[Extension("zdemo._z", ["_z.c"], libraries=["zstd", "git2"])])
EOF
	(cd "$B/small" && $PY -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$B/in-small" .) >/dev/null 2>&1 || return 1
	ls "$B"/in-small/*.whl
}

# bench NAME WHEEL RUNS-FOR-AUDITWHEEL EXTRA-FATWHEEL-ARGS...
bench () {
	name=$1 in=$2 awruns=$3
	shift 3
	mkdir -p "$B/o-$name-cp" "$B/o-$name-fw" "$B/o-$name-fw1" "$B/o-$name-aw"
	echo "== $name: $(du -h "$in" | cut -f1) ${in##*/}"
	# The floor each fatwheel run is held to: cp of the input wheel, plus deflating the
	# libraries fatwheel added (their bytes as fatwheel wrote them, read back from the
	# page cache) with the same libdeflate at the same level, one libdeflate-gzip per
	# library, largest first, $(nproc) at a time: the parallelism fatwheel has, with
	# nothing else done (no closure, no edits, no hashing, no zip). pigz -6 (zlib's level
	# 6, auditwheel's) over all of them on every core is printed beside it. One untimed
	# fatwheel run names the libraries; each floor runs right after its fatwheel, in the
	# same hyperfine call, so that a shared machine's load drifts less between them.
	"$FATWHEEL" -q --soname-hash --plat=$plat "$@" "$in" -w "$B/o-$name-fw" >/dev/null || return 1
	rm -rf "$B/u-$name" && mkdir -p "$B/u-$name" && (cd "$B/u-$name" && unzip -q "$B"/o-$name-fw/*.whl) || return 1
	find "$B/u-$name/$libdir" -type f -printf '%s %p\n' | sort -rn | cut -d' ' -f2- >"$B/u-$name.list"
	[ -s "$B/u-$name.list" ] || { echo "no bundled libraries under $libdir"; return 1; }
	mb=$(xargs cat <"$B/u-$name.list" | wc -c | awk '{printf "%.0f", $1 / 1048576}')
	n=$(lines "$B/u-$name.list")
	hyperfine -N --style basic --time-unit millisecond --export-json "$B/$name.json" --runs "$RUNS" \
		--prepare "rm -rf $B/o-$name-cp/x.whl" -n "cp" "cp $in $B/o-$name-cp/x.whl" \
		--prepare "find $B/o-$name-fw -name *.whl -delete" -n "fatwheel" \
		"$FATWHEEL -q --soname-hash --plat=$plat $* $in -w $B/o-$name-fw" \
		--prepare "rm -f $B/o-$name-cp/x.whl" -n "floor: cp + libdeflate-gzip -$level of the $n added ($mb MiB)" \
		"sh -c 'cp $in $B/o-$name-cp/x.whl && xargs -P $(nproc) -n 1 libdeflate-gzip -$level -c <$B/u-$name.list >/dev/null'" \
		--prepare "find $B/o-$name-fw1 -name *.whl -delete" -n "fatwheel --level=1" \
		"$FATWHEEL -q --level=1 --soname-hash --plat=$plat $* $in -w $B/o-$name-fw1" \
		--prepare "rm -f $B/o-$name-cp/x.whl" -n "floor at --level=1: cp + libdeflate-gzip -1" \
		"sh -c 'cp $in $B/o-$name-cp/x.whl && xargs -P $(nproc) -n 1 libdeflate-gzip -1 -c <$B/u-$name.list >/dev/null'" \
		--prepare "rm -f $B/o-$name-cp/x.whl" -n "cp + pigz -6 -p $(nproc) of them" \
		"sh -c 'cp $in $B/o-$name-cp/x.whl && xargs cat <$B/u-$name.list | pigz -6 -p $(nproc) >/dev/null'" >/dev/null || return 1
	hyperfine -N --style basic --time-unit millisecond --export-json "$B/$name-aw.json" --runs "$awruns" \
		--prepare "find $B/o-$name-aw -name *.whl -delete" -n "auditwheel repair" \
		"sh -c 'cd /tmp && PYTHONPATH=$AW/src exec $PY -m auditwheel repair -w $B/o-$name-aw --plat $plat $(for e in "$@"; do case $e in --exclude=*) printf -- '--exclude %s ' "${e#--exclude=}" ;; esac; done) $in'" >/dev/null || return 1
	rm -rf "$B/u-$name" "$B/u-$name.list"
	echo "-- sizes: in $(wc -c <"$in"), fatwheel $(cat "$B"/o-$name-fw/*.whl | wc -c), fatwheel --level=1 $(cat "$B"/o-$name-fw1/*.whl | wc -c), auditwheel $(cat "$B"/o-$name-aw/*.whl | wc -c) bytes"
	$PY - "$name" "$B/$name.json" "$B/$name-aw.json" <<'EOF2'
import json, sys
r = {}
for f in sys.argv[2:]:
    for x in json.load(open(f))["results"]:
        r[x["command"]] = x
for k, x in r.items():
    print("   %-62s %10.1f ms  (min %.1f, max %.1f; CPU user+sys %.1f ms)" % (k, x["mean"] * 1000, x["min"] * 1000, x["max"] * 1000, (x["user"] + x["system"]) * 1000))
aw = r["auditwheel repair"]
awc = aw["user"] + aw["system"]
fl = [k for k in r if k.startswith("floor: ")][0]
for fw, floor in (("fatwheel", fl), ("fatwheel --level=1", "floor at --level=1: cp + libdeflate-gzip -1")):
    x = r[fw]
    print("-- %s: %s %.1f ms, %.1fx faster than auditwheel's %.1f ms (CPU: %.1fx), %.2fx its floor of %.1f ms"
          % (sys.argv[1], fw, x["mean"] * 1000, aw["mean"] / x["mean"], aw["mean"] * 1000,
             awc / (x["user"] + x["system"]), x["mean"] / r[floor]["mean"], r[floor]["mean"] * 1000))
EOF2
}

lines () { wc -l <"$1" | tr -d ' '; }
level=$("$FATWHEEL" --help 2>&1 | sed -n 's/.*--level=N.*default \([0-9]*\).*/\1/p')
[ -n "$level" ] || { echo "cannot read fatwheel's default level from --help"; exit 2; }
echo "== load before: $(cat /proc/loadavg) on $(nproc) cores"
if [ "$what" = small ] || [ "$what" = all ]; then
	w=$(small) || { echo "could not build the small wheel"; exit 2; }
	libdir=zdemo.libs
	bench small "$w" "$RUNS"
fi
if [ "$what" = torch ] || [ "$what" = all ]; then
	w=$(PACK_ONLY=1 FATWHEEL=$FATWHEEL sh "$here/fatwheel-torch.sh" "$B/torch" | tail -n1)
	[ -f "$w" ] || { echo "could not pack the torch wheel"; exit 2; }
	libdir=torch.libs
	bench torch "$w" 1 --exclude=libjitbackend_test.so --exclude=libbackend_with_compiler.so
fi
echo "== load after: $(cat /proc/loadavg)"
