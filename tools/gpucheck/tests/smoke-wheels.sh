#!/bin/sh
# stack.smoke (ninja/stack-steps.sh step_smoke) checks torch's installed folder and every
# other wheel the stack picked that carries GPU code, for every --arch: a vision-like wheel
# whose HIP library lacks one arch fails the stage naming the wheel; a wheel without GPU
# code is named and passed. Real clang-19 HIP objects, a real venv, envclean as the stage runs it.
. "$KILN_SRC/tests/lib.sh"
need clang++-19 clang-19 python3
cd "$T" || exit 2
cat >k.hip <<'EOK'
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void *f, dim3_ g, dim3_ b, void **a, unsigned long s, void *st);
__attribute__((global)) void k(float *p) { p[0] = 1.0f; }
EOK
lib () { o=$1; shift; clang++-19 -x hip -nogpulib -nogpuinc -fPIC "$@" -c k.hip -o "$o.o" 2>cc.err &&
	clang-19 -shared -fuse-ld=lld -o "$o" "$o.o" || { notok "clang-19 $*"; cat cc.err; exit 1; }; }
lib libtorch_toy.so --offload-arch=gfx1100 --offload-arch=gfx1151
lib _C.so --offload-arch=gfx1100
/usr/bin/python3 -m venv --without-pip venv || exit 2
site=$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$site/torch/lib" b/wheels
: >"$site/torch/__init__.py"
cp libtorch_toy.so "$site/torch/lib/"
/usr/bin/python3 - <<'EOP'
import zipfile
with zipfile.ZipFile("b/wheels/vis-1.0-cp311-cp311-linux_x86_64.whl", "w", zipfile.ZIP_DEFLATED) as z:
    z.write("_C.so", "vis/_C.so")
    z.writestr("vis/__init__.py", "")
with zipfile.ZipFile("b/wheels/aud-1.0-py3-none-any.whl", "w") as z:
    z.writestr("aud/__init__.py", "")
EOP
echo "$T/b/wheels/vis-1.0-cp311-cp311-linux_x86_64.whl" >b/wheels/vision.picked
echo "$T/b/wheels/aud-1.0-py3-none-any.whl" >b/wheels/audio.picked
# the stage's settings, as kiln-stage env hands them over
smoke () {
	env KILN_KEYS="B PY ARCH IMPORTS BACKEND COVER PROFILES MIRROR KBIN" KILN_K_B="$T/b" \
		KILN_K_PY="$T/venv/bin/python" KILN_K_ARCH="$1" KILN_K_IMPORTS=torch KILN_K_BACKEND=gfx \
		KILN_K_COVER=yes KILN_K_PROFILES= KILN_K_MIRROR= KILN_K_KBIN="$KILN_BIN" KILN_STAGE=stack.smoke \
		sh "$KILN_SRC/ninja/stack-steps.sh" smoke stack
}
check "one arch every wheel has: the stage passes" smoke gfx1100
has "torch's folder is covered" "$T/.out" "gfx1100: covered natively"
has "a wheel without GPU code is named" "$T/.out" "smoke: aud-1.0-py3-none-any.whl: no GPU code"
exits "an arch vision's wheel lacks: the stage fails" 1 smoke "gfx1100 gfx1151"
has "naming the wheel and the arch" "$T/.err" "vis-1.0-cp311-cp311-linux_x86_64.whl does not cover gfx1151"
has "with gpucheck's verdict" "$T/.out" "vis/_C.so: 1 of 1 bundles lack it"
