#!/bin/sh
# kiln-stage reqs, backend and lock on trees in the shape of upstream's (read with the
# search tool): torch's pyproject.toml ([build-system] requires + build-backend, comments
# in the array) and requirements-build.txt; vLLM's requirements/build/rocm.txt, which
# starts with "-r ../common.txt", carries "--extra-index-url" and pins torch==; trees that
# build with setup.py; and the inputs each refuses in one line.
. "$KILN_SRC/tests/lib.sh"
need python3
cd "$T" || exit 2

mkdir -p torch vllm/requirements/build vision
cat >torch/pyproject.toml <<'EOT'
# Package ######################################################################

[build-system]
requires = [
    "scikit-build-core>=1.0",  # the backend
    'cmake>=3.27',
    "ninja",
]
build-backend = "scikit_build_core.build"

[project]
name = "torch"
description = """multi-line, with [brackets] and "quotes" """
dynamic = ["version"]

[tool.x]
a = { b = "c", d = [1, 2] }
EOT
printf '# Build System requirements\nninja\nnumpy\nsix  # dependency chain: NNPACK -> PeachPy -> six\n' >torch/requirements-build.txt
printf 'filelock\nsympy>=1.13.3\n' >torch/requirements.txt
check "torch: reqs" kiln-stage reqs --runtime --frontend torch
same "pyproject's requires, requirements-build.txt, requirements.txt, the frontend; duplicates once" \
"scikit-build-core>=1.0	pyproject.toml:5
cmake>=3.27	pyproject.toml:6
ninja	pyproject.toml:7
numpy	requirements-build.txt:3
six	requirements-build.txt:4
filelock	requirements.txt:1
sympy>=1.13.3	requirements.txt:2
build	kiln (python -m build, the PEP 517 frontend)" "$(cat "$T/.out")"
check "without --runtime requirements.txt is not read" kiln-stage reqs torch
lacks "no filelock" "$T/.out" filelock
check "torch: backend" kiln-stage backend torch
same "a PEP 517 backend: python -m build" "build scikit_build_core.build" "$(cat "$T/.out")"

# vLLM: requirements/build/FLAVOUR.txt with -r ../common.txt and an extra index
printf -- '-r ../common.txt\n\n--extra-index-url https://download.pytorch.org/whl/rocm7.1\ntorch==2.11.0\ntriton==3.6.0\ncmake>=3.26.1,<4\nsetuptools-scm>=8\n' >vllm/requirements/build/rocm.txt
printf 'cmake>=3.26.1\ntorch==2.13.0\nwheel\n' >vllm/requirements/build/cuda.txt
printf 'regex\njinja2>=3.1.6 ; python_version >= "3.9"\n' >vllm/requirements/common.txt
printf '[build-system]\nrequires = ["setuptools>=77.0.3,<81.0.0", "torch == 2.11.0", "wheel"]\nbuild-backend = "setuptools.build_meta"\n' >vllm/pyproject.toml
touch vllm/setup.py
check "vllm rocm: reqs" kiln-stage reqs --flavour=rocm --exclude=torch,pytorch-triton-rocm,triton vllm
same "the rocm file and its include; kiln's own components left out" \
"setuptools>=77.0.3,<81.0.0	pyproject.toml:2
wheel	pyproject.toml:2
regex	requirements/common.txt:1
jinja2>=3.1.6 ; python_version >= \"3.9\"	requirements/common.txt:2
cmake>=3.26.1,<4	requirements/build/rocm.txt:6
setuptools-scm>=8	requirements/build/rocm.txt:7" "$(cat "$T/.out")"
has "the extra index is not followed, and says so" "$T/.err" \
	"note: requirements/build/rocm.txt:3: --extra-index-url https://download.pytorch.org/whl/rocm7.1: not followed"
has "torch==2.11.0 is kiln's to build" "$T/.err" "note: requirements/build/rocm.txt:4: torch==2.11.0: kiln builds torch itself"
check "vllm cuda: reqs" kiln-stage reqs --flavour=cuda --exclude=torch vllm
has "the cuda file" "$T/.out" "cmake>=3.26.1	requirements/build/cuda.txt:1"
check "vllm: backend" kiln-stage backend vllm
same "setuptools' backend with a setup.py: setup.py bdist_wheel" "setup setuptools.build_meta" "$(cat "$T/.out")"

# vision: a pyproject with tool settings only, and a setup.py
printf '[tool.black]\nline-length = 120\n' >vision/pyproject.toml
touch vision/setup.py
check "vision: reqs --frontend" kiln-stage reqs --frontend vision
same "PEP 518's default for a pyproject without requires" \
"setuptools>=40.8.0	kiln (PEP 518's default: pyproject.toml has no [build-system] requires)
wheel	kiln (PEP 518's default: pyproject.toml has no [build-system] requires)" "$(cat "$T/.out")"
rm vision/pyproject.toml
check "no pyproject at all: nothing declared" kiln-stage reqs --frontend vision
same "empty" "" "$(cat "$T/.out")"

# bad input: one line each, exit 2
bad () {
	bd=$1 bw=$2
	shift 2
	exits "$bd: exit 2" 2 kiln-stage "$@"
	same "$bd: one line" 1 "$(lines "$T/.err")"
	has "$bd: says what" "$T/.err" "$bw"
}
mkdir -p b1 b2 b3 b4 b5 b6
printf '[build-system]\nrequires = ["x"]\n' >b1/pyproject.toml
bad "no backend, no setup.py" "[build-system] names no build-backend and there is no setup.py" backend b1
printf '[build-system]\nbuild-backend = "os;system(1)"\n' >b2/pyproject.toml
bad "a backend no frontend can import" "is not a module a frontend can import" backend b2
bad "reqs --frontend refuses a tree with no backend, no setup.py" "b1: pyproject.toml: [build-system] names no build-backend" reqs --frontend b1
bad "reqs --frontend refuses a backend no frontend can import" "is not a module a frontend can import" reqs --frontend b2
check "without --frontend the requirements are still read" kiln-stage reqs b1
same "x" "x	pyproject.toml:2" "$(cat "$T/.out")"
printf '[build-system]\nrequires = ["x",\n' >b3/pyproject.toml
bad "an array that does not end" "pyproject.toml:" reqs b3
printf 'foo @ https://example.invalid/foo.whl\n' >b4/requirements-build.txt
bad "a URL requirement" "requirements-build.txt:1: 'foo @ https://example.invalid/foo.whl' names a URL" reqs b4
printf -- '-r ../../etc/passwd\n' >b5/requirements-build.txt
bad "an include outside the tree" "requirements-build.txt:1: -r ../../etc/passwd: leaves the source tree" reqs b5
printf -- '-r missing.txt\n' >b6/requirements-build.txt
bad "a missing include" "requirements-build.txt:1: -r missing.txt: no such file in the tree" reqs b6
exits "no tree" 2 kiln-stage reqs
exits "unknown flavour" 2 kiln-stage reqs --flavour=tpu torch

# backend --wheels=DIR: the backend's module must be in a wheel the deps stage fetched
mkdir -p hb whb
printf '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n' >hb/pyproject.toml
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1], "w").writestr("hatch/__init__.py", "")' whb/hatch-1.0-py3-none-any.whl
exits "a backend no fetched wheel provides: exit 1" 1 kiln-stage backend --wheels=whb hb
same "one line" 1 "$(lines "$T/.err")"
has "naming the backend and its module" "$T/.err" \
	"hb: pyproject.toml: build-backend = \"hatchling.build\": no build requirement provides module hatchling (no wheel in whb holds it)"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1], "w").writestr("hatchling/build.py", "")' whb/hatchling-1.27.0-py3-none-any.whl
check "a wheel holding hatchling/" kiln-stage backend --wheels=whb hb
same "build hatchling.build" "build hatchling.build" "$(cat "$T/.out")"
check "setup.py trees are not asked" kiln-stage backend --wheels=whb vllm
exits "an unknown option" 2 kiln-stage backend --whee=whb hb

# lock: name==version --hash=sha256:..., one file per project
mkdir -p wh
for n in six-1.17.0 build-0.9.0; do
	python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1], "w").writestr("x", "y")' "wh/$n-py3-none-any.whl"
done
check "lock" kiln-stage lock wh
same "sorted by name, with the files' sha256" \
"build==0.9.0 --hash=sha256:$(sha256sum wh/build-0.9.0-py3-none-any.whl | cut -c1-64)
six==1.17.0 --hash=sha256:$(sha256sum wh/six-1.17.0-py3-none-any.whl | cut -c1-64)" "$(cat "$T/.out")"
cp wh/six-1.17.0-py3-none-any.whl wh/six-1.16.0-py3-none-any.whl
exits "two files for one project" 1 kiln-stage lock wh
has "names both" "$T/.err" "two files for six: six-1.16.0-py3-none-any.whl and six-1.17.0-py3-none-any.whl"
