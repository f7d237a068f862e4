#!/bin/sh
# valgrind: the release tools ($KILN_BUILD/bin, the build plain `ninja` makes, not the
# sanitized one on PATH) under memcheck on one real path each: wheelpick choosing from a
# folder of wheels, gpucheck targets on a clang-19 HIP object (and librocsparse when
# installed), gpucheck --sysfs on a KFD capture, envclean -n, srcpin fetch + checkout of a
# git repository, fatwheel --dry-run on a wheel carrying a system ELF, kiln-stage run.
# Each must exit as it does natively, with no memcheck error and no definite leak.
. "$KILN_SRC/tests/lib.sh"
need valgrind git
R=$KILN_BUILD/bin
for t in wheelpick gpucheck envclean srcpin fatwheel kiln-stage; do
	[ -x "$R/$t" ] || skip_all "needs the release tools in $R (plain ninja builds them)"
done
cd "$T" || exit 2
# vg DESC STATUS TOOL ARGS...: TOOL under memcheck exits STATUS (99: a memcheck error)
vg () {
	d=$1 want=$2 tool=$3; shift 3
	run valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--suppressions="$KILN_SRC/tests/regress/valgrind.supp" --log-file="$T/vg.$tool.%p" "$R/$tool" "$@"
	if [ "$rc" = "$want" ] && ! cat "$T"/vg."$tool".* 2>/dev/null | grep -q .; then ok "valgrind: $d"
	else
		notok "valgrind: $d (exit $rc, want $want)"
		cat "$T"/vg."$tool".* 2>/dev/null | sed -n '1,40s/^/#   vg: /p'; _show
	fi
	rm -f "$T"/vg."$tool".*
}

# wheelpick: a folder of wheels (empty files, valid names) for this Python
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
mkdir -p wh
for w in kvg-1.0-py3-none-any.whl kvg-1.2-py3-none-any.whl kvg-1.3-cp399-cp399-linux_x86_64.whl \
	kvg-1.1-cp3-abi3-manylinux_2_17_x86_64.whl kvg-2.0.dev1-py3-none-any.whl other-9.0-py3-none-any.whl; do
	: >"wh/$w"
done
vg "wheelpick chooses from a folder" 0 wheelpick --python="$PY" --require 'kvg' wh
has "wheelpick: chose the newest compatible release" "$T/.out" "kvg-1.2-py3-none-any.whl"

# gpucheck targets: a HIP object from clang-19 for two targets
if command -v clang-19 >/dev/null; then
	cat >k.hip <<'HIP'
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void *f, dim3_ g, dim3_ b, void **a, unsigned long s, void *st);
__attribute__((global)) void k(float *p) { p[0] = 1.0f; }
HIP
	if clang-19 -x hip -nogpulib -nogpuinc -c k.hip -o k.o --offload-arch=gfx1100 --offload-arch=gfx942 2>clang.err; then
		vg "gpucheck targets on a clang-19 HIP object" 0 gpucheck targets k.o
		has "gpucheck targets: names gfx1100" "$T/.out" "gfx1100"
		has "gpucheck targets: names gfx942" "$T/.out" "gfx942"
	else
		notok "clang-19 compiles a HIP object"; sed 's/^/#   /' clang.err
	fi
else
	echo "skip valgrind gpucheck targets on a HIP object: needs clang-19"
fi
rs=$(ls /usr/lib/x86_64-linux-gnu/librocsparse.so.* /opt/rocm/lib/librocsparse.so.* 2>/dev/null | head -n 1)
if [ -n "$rs" ]; then
	vg "gpucheck targets on ${rs##*/}" 0 gpucheck targets "$rs"
else
	echo "skip valgrind gpucheck targets on librocsparse: not installed"
fi

# gpucheck --sysfs: a KFD topology capture, one CPU node and one gfx1100 GPU node
node () {
	d=sys/class/kfd/kfd/topology/nodes/$1; shift
	mkdir -p "$d/mem_banks/0"
	printf '%s\n' "$@" >"$d/properties"
	printf 'heap_type 1\nsize_in_bytes 25753026560\nflags 0\nwidth 384\nmem_clk_max 1249\n' >"$d/mem_banks/0/properties"
}
node 0 "cpu_cores_count 16" "simd_count 0" "mem_banks_count 1" "gfx_target_version 0" "vendor_id 0" "device_id 0" "location_id 0" "drm_render_minor 0"
node 1 "cpu_cores_count 0" "simd_count 192" "mem_banks_count 1" "io_links_count 1" "max_waves_per_simd 16" "lds_size_in_kb 64" \
	"wave_front_size 32" "array_count 12" "simd_arrays_per_engine 2" "cu_per_simd_array 8" "simd_per_cu 2" \
	"gfx_target_version 110000" "vendor_id 4098" "device_id 29772" "location_id 768" "domain 0" "drm_render_minor 128" \
	"num_xcc 1" "max_engine_clk_fcompute 2371"
vg "gpucheck --sysfs on a KFD capture" 0 gpucheck --sysfs=sys
has "gpucheck --sysfs: found the gfx1100" "$T/.out" "gfx1100"
vg "gpucheck --arch --json --sysfs" 0 gpucheck --json --sysfs=sys

# envclean -n: what it would remove, set and run
export LD_LIBRARY_PATH=/opt/kvg/lib PYTHONPATH=/opt/kvg/py
vg "envclean -n" 0 envclean -n -- "$PY" -c 'print(1)'
has "envclean -n: says PYTHONPATH goes" "$T/.out" "PYTHONPATH"
unset LD_LIBRARY_PATH PYTHONPATH

# srcpin: fetch a small repository with a submodule into a new cache, check it out
export HOME="$T/home" GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
mkdir -p "$HOME"
git config --global protocol.file.allow always
git init -q -b main up/sub && (cd up/sub && echo sub >s.txt && git add . && git commit -qm s) &&
	git init -q -b main up/top && (cd up/top && echo top >t.txt && git add . && git commit -qm t &&
	git submodule -q add ../sub third/sub && git commit -qm sub && git tag v1) || { notok "make the git repositories"; exit 1; }
v1=$(git -C up/top rev-parse v1)
vg "srcpin fetch (first fetch, new mirror)" 0 srcpin fetch top "file://$T/up/top" v1 --cache="$T/cache"
same "srcpin fetch: prints the tag's commit" "$v1" "$(cat "$T/.out")"
vg "srcpin checkout --submodules" 0 srcpin checkout top --commit "$v1" --into "$T/w" --submodules --cache="$T/cache"
has "srcpin checkout: the submodule's file is there" "$T/w/third/sub/s.txt" "sub"

# fatwheel --dry-run: a wheel made with zipfile, carrying an ELF copied from /usr/lib
elf=$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /usr/lib/*/libz.so.1 2>/dev/null | head -n 1)
if [ -n "$elf" ] && [ -x /usr/bin/python3 ]; then
	mkdir -p whl
	/usr/bin/python3 - whl/kvg-1.0-py3-none-linux_x86_64.whl "$elf" <<'PY'
import sys, zipfile, hashlib, base64
out, elf = sys.argv[1], sys.argv[2]
def rec(n, d): return "%s,sha256=%s,%d" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode(), len(d))
m = [("kvg/__init__.py", b"x = 1\n"), ("kvg/libz_copy.so.1", open(elf, "rb").read()),
     ("kvg-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: kvg\nVersion: 1.0\n"),
     ("kvg-1.0.dist-info/WHEEL", b"Wheel-Version: 1.0\nGenerator: kiln-test\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n")]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for n, d in m: z.writestr(n, d)
    z.writestr("kvg-1.0.dist-info/RECORD", "\n".join([rec(n, d) for n, d in m] + ["kvg-1.0.dist-info/RECORD,,"]) + "\n")
PY
	mkdir -p fwout
	vg "fatwheel --dry-run on a wheel with an ELF" 0 fatwheel --dry-run whl/kvg-1.0-py3-none-linux_x86_64.whl -w fwout
	has "fatwheel --dry-run: read the ELF member (its GLIBC version need)" "$T/.out" "needs GLIBC 2."
	same "fatwheel --dry-run: wrote nothing" "" "$(ls -A fwout)"
else
	echo "skip valgrind fatwheel: needs libz.so.1 in /usr/lib and /usr/bin/python3"
fi

# kiln-stage run: a trivial stage runs once and writes its stamp; then it is up to date
mkdir -p st/out st/logs
printf 'STAGE=a\nREF="v1"\n' >st/a.key
printf 'echo hello >"$KILN_STAGE_OUT/a-1.0-py3-none-any.whl"\n' >st/step.sh
vg "kiln-stage run (the stage runs)" 0 kiln-stage run --key=st/a.key --stamp=st/a.stamp --logdir=st/logs --out=st/out \
	--stage-cache="$T/stc" a -- sh st/step.sh
check "kiln-stage run: the stamp is written" test -s st/a.stamp
vg "kiln-stage run (up to date)" 0 kiln-stage run --key=st/a.key --stamp=st/a.stamp --logdir=st/logs --out=st/out \
	--stage-cache="$T/stc" a -- sh st/step.sh
