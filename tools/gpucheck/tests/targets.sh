#!/bin/sh
# gpucheck targets / cover on real HIP code objects made by clang-19 (no ROCm needed):
# plain and compressed (CCOB) bundles, -fgpu-rdc objects, gfx11-generic code object v6,
# shared libraries with several bundles, a pip-built wheel, a folder; and bad input.
. "$KILN_SRC/tests/lib.sh"
need clang++-19 clang-offload-bundler-19 python3
cd "$T" || exit 2

# kernel NAME: a HIP source with one kernel and our own hipLaunchKernel declaration
kernel () {
	cat >"$1.hip" <<EOK
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void *f, dim3_ g, dim3_ b, void **a, unsigned long s, void *st);
__attribute__((global)) void $1(float *p) { p[0] = 1.0f; }
EOK
}
hip () { clang++-19 -x hip -nogpulib -nogpuinc -fPIC "$@" 2>"$T/cc.err" || { notok "clang++-19 $*"; cat "$T/cc.err"; exit 1; }; }
kernel ka; kernel kb; kernel kc; kernel kg
hip --offload-arch=gfx803 --offload-arch=gfx1151 -c ka.hip -o ka.o
hip --offload-arch=gfx1100 --offload-arch=gfx90a:xnack- --offload-compress -c kb.hip -o kb.o
hip --offload-arch=gfx803 --offload-arch=gfx1151 -fgpu-rdc -c kc.hip -o kc.o
hip --offload-arch=gfx11-generic -mcode-object-version=6 -c kg.hip -o kg.o
hip --offload-arch=gfx1100 --offload-arch=gfx1030 -c kc.hip -o kd.o
clang-19 -shared -fuse-ld=lld -o libab.so ka.o kb.o || exit 2
clang-19 -shared -fuse-ld=lld -o libg.so kg.o || exit 2
clang-19 -shared -fuse-ld=lld -o libd.so kd.o kb.o || exit 2

# ids gpucheck lists for a file's bundles, sorted, and the bundler's for one bundle
ours () { gpucheck targets -v "$1" | sed -n 's/^    //p' | sort; }
peer () {
	objcopy -O binary --only-section=.hip_fatbin "$1" "$1.fatbin" &&
	clang-offload-bundler-19 --list --type=o --input="$1.fatbin" | sort
}
same "plain bundle: ids agree with clang-offload-bundler --list" "$(peer ka.o)" "$(ours ka.o)"
same "compressed bundle (CCOB): ids agree with clang-offload-bundler --list" "$(peer kb.o)" "$(ours kb.o)"
same "-fgpu-rdc object: ids agree with clang-offload-bundler --list" \
	"$(clang-offload-bundler-19 --list --type=o --input=kc.o | sort)" "$(ours kc.o)"

check "targets on a plain object" gpucheck targets ka.o
has "gfx1151 listed with its code object version" "$T/.out" "gfx1151                  code-object v5   1 bundle"
has "gfx803 listed" "$T/.out" "gfx803 "
has "per-file counts" "$T/.out" "ka.o: 1 bundle, 2 entries"
check "targets -v on a CCOB object" gpucheck targets -v kb.o
has "CCOB version and method shown" "$T/.out" "ccob v2 zstd"
has "feature flags kept" "$T/.out" "gfx90a:xnack-"
check "targets on an rdc object" gpucheck targets kc.o
has "rdc entries are bitcode" "$T/.out" "bitcode"
check "targets on a generic code object" gpucheck targets libg.so
has "gfx11-generic is code object v6" "$T/.out" "gfx11-generic            code-object v6"
check "targets on a library of two bundles" gpucheck targets libab.so
has "both bundles counted" "$T/.out" "libab.so: 2 bundles, 4 entries"
same "clang-offload-bundler stops at the first bundle (why gpucheck walks them itself)" \
	"$(peer libab.so | grep -c amdgcn)" 2
check "targets --json" gpucheck targets --json libab.so
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); f=d["files"][0]; assert f["bundles"]==2 and f["entries"]==4, f; t={x["target"] for x in f["targets"]}; assert t=={"gfx803","gfx1151","gfx1100","gfx90a:xnack-"}, t' "$T/.out" &&
	ok "targets --json has the counts and targets" || notok "targets --json has the counts and targets"
check "targets -v --json" gpucheck targets -v --json kb.o
python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["files"][0]; b=f["bundle_list"]; assert len(b)==1 and b[0]["format"]=="ccob" and b[0]["ccob_version"]==2 and b[0]["method"]=="zstd" and b[0]["raw_size"]>0, b; print("\n".join(sorted(e["id"] for e in b[0]["entries"])))' "$T/.out" >"$T/ids" 2>&1
same "targets -v --json: the CCOB bundle and its entries, the ids the bundler lists" "$(peer kb.o)" "$(cat "$T/ids")"

# a wheel built by pip (read as a zip, not unpacked) and a folder
mkdir -p pkg/gpk && cp libab.so pkg/gpk/ && : >pkg/gpk/__init__.py
cat >pkg/setup.py <<'EOP'
from setuptools import setup
setup(name="gpk", version="1.0", packages=["gpk"], package_data={"gpk": ["*.so"]})
EOP
# Debian's python3 carries setuptools and wheel; a pyenv python3 first on PATH may not
pyw=/usr/bin/python3; [ -x "$pyw" ] || pyw=python3
if (cd pkg && "$pyw" -m pip wheel -q --no-deps --no-build-isolation -w ../dist . >/dev/null 2>&1); then
	whl=$(ls dist/*.whl)
	check "targets on a pip-built wheel" gpucheck targets "$whl"
	has "the wheel member is named" "$T/.out" ".whl!gpk/libab.so: 2 bundles, 4 entries"
	exits "cover on the wheel: gfx1100 is in one bundle of two" 1 gpucheck cover --target=gfx1100 "$whl"
	has "cover names the wheel member" "$T/.out" ".whl!gpk/libab.so: 1 of 2 bundles lack it"
else
	echo "skip wheel: pip wheel could not build offline"
fi
mkdir -p tree/sub && cp libab.so tree/sub/ && cp libg.so tree/ && echo text >tree/README && ln -s sub/libab.so tree/link.so
check "targets on a folder" gpucheck targets tree
has "folder: nested library found" "$T/.out" "tree/sub/libab.so: 2 bundles"
has "folder: second library found" "$T/.out" "tree/libg.so: 1 bundle"
lacks "folder: symlinks not followed" "$T/.out" "link.so"
# a folder of many files is looked at by several threads, from the headers only: what it
# finds must be what scanning each file whole finds, in name order; a -fgpu-rdc object
# (bundle sections, no .hip_fatbin) is found too; files named like source or text are not
# opened; a malformed ELF among them is still reported
mkdir -p many/a many/b
i=0; while [ $i -lt 40 ]; do
	cp libab.so many/a/lib$i.so; cp kc.o many/b/k$i.o; echo "x = $i" >many/b/m$i.py; i=$((i + 1))
done
cp /bin/true many/true; cp libg.so many/elf-named.py; printf '\177EL' >many/short
check "targets on a folder of 123 files" gpucheck targets --json many
python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["files"]
p = [x["path"] for x in f]
assert p == sorted(p) and len(p) == 81, p
assert sum(x["bundles"] == 2 for x in f) == 40 and sum(x["path"].endswith(".o") and x["bundles"] == 1 for x in f) == 40, f
assert [x["bundles"] for x in f if x["path"].endswith("/true")] == [0], f
' "$T/.out" && ok "folder: every library and rdc object found in name order; true listed with no GPU code" ||
	notok "folder: every library and rdc object found in name order; true listed with no GPU code"
lacks "folder: a file named .py is not opened" "$T/.out" "elf-named.py"
check "cover on the folder" gpucheck cover --target=gfx1151 many/b
has "cover counts the rdc objects" "$T/.out" "40 bundles in 40 files"
sz=$(wc -c <libab.so); head -c $((sz / 2)) libab.so >many/a/zz-half.so
exits "folder with an ELF cut in half: exit 2" 2 gpucheck targets many
has "the cut ELF is named" "$T/.err" "zz-half.so: section header table"

# cover
exits "cover: gfx1151 missing from the CCOB bundle" 1 gpucheck cover --target=gfx1151 libab.so
has "cover names the failing bundle" "$T/.out" "1 of 2 bundles lack it: bundle at offset"
has "cover: no override (gfx1100 is not in every bundle): rebuild" "$T/.out" "fix: rebuild with PYTORCH_ROCM_ARCH=gfx1151"
exits "cover: gfx1151 on a library whose bundles all carry gfx1100" 1 gpucheck cover --target=gfx1151 libd.so
has "cover suggests the in-family override" "$T/.out" "fix: HSA_OVERRIDE_GFX_VERSION=11.0.0 runs the gfx1100 code"
has "cover also gives the rebuild" "$T/.out" "or rebuild with PYTORCH_ROCM_ARCH=gfx1151"
exits "cover: gfx1032 on the same library" 1 gpucheck cover --target=gfx1032 libd.so
lacks "no override across wave sizes/families (gfx1032 with gfx1100 code)" "$T/.out" "HSA_OVERRIDE_GFX_VERSION=11"
exits "cover: gfx906 (gfx9 family, no gfx9 code)" 1 gpucheck cover --target=gfx906 libd.so
lacks "no override from gfx90a code for gfx906" "$T/.out" "HSA_OVERRIDE"
exits "cover: gfx1103 covered through gfx11-generic" 0 gpucheck cover --target=gfx1103 libg.so
has "generic coverage said so" "$T/.out" "through gfx11-generic"
exits "cover: gfx1030 not covered by gfx11-generic" 1 gpucheck cover --target=gfx1030 libg.so
exits "cover: gfx90a with xnack- code, XNACK off" 0 gpucheck cover --target=gfx90a kb.o
exits "cover: gfx90a:xnack+ device, only xnack- code" 1 gpucheck cover --target=gfx90a:xnack+ kb.o
exits "cover: several targets at once" 1 gpucheck cover --target=gfx1100,gfx1151 libd.so
exits "cover --json (not covered: exit 1)" 1 gpucheck cover --json --target=gfx1151 libd.so
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"][0]; assert not d["covered"] and d["fix"]["override"]=="HSA_OVERRIDE_GFX_VERSION=11.0.0" and d["fix"]["rebuild"]=="PYTORCH_ROCM_ARCH=gfx1151", d' "$T/.out" 2>/dev/null &&
	ok "cover --json gives the fixes" || notok "cover --json gives the fixes"
exits "cover: no NVIDIA code for sm_90" 1 gpucheck cover --target=sm_90 libab.so
exits "cover: a bad target is a usage error" 2 gpucheck cover --target=foo libab.so

# bad input: each a clear message naming the file and an offset, exit 2
py () { python3 -c "$@"; }
head -c 100 libab.so >trunc.so
exits "truncated ELF: exit 2" 2 gpucheck targets trunc.so
has "truncated ELF: names the file" "$T/.err" "trunc.so: "
sz=$(wc -c <libab.so); head -c $((sz / 2)) libab.so >half.so
exits "ELF cut in half: exit 2" 2 gpucheck targets half.so
has "ELF cut in half: section table past the end, with its offset" "$T/.err" "past the end"
# .hip_fatbin's sh_offset moved past the end of the file
py '
import struct, sys
d = bytearray(open("libab.so", "rb").read())
shoff, = struct.unpack_from("<Q", d, 0x28); es, n, si = struct.unpack_from("<HHH", d, 0x3a)
so = struct.unpack_from("<Q", d, shoff + si * es + 24)[0]
for i in range(n):
    h = shoff + i * es
    nm = struct.unpack_from("<I", d, h)[0]
    if d[so + nm:so + nm + 12] == b".hip_fatbin\0":
        struct.pack_into("<Q", d, h + 24, len(d) + 4096)
open("secpast.so", "wb").write(d)'
exits "section offset past the end: exit 2" 2 gpucheck targets secpast.so
has "section offset past the end: named" "$T/.err" "section .hip_fatbin (offset"
py '
d = bytearray(open("ka.o", "rb").read()); i = d.find(b"__CLANG_OFFLOAD_BUNDLE__")
d[i + 24:i + 32] = (2**62).to_bytes(8, "little"); open("count.o", "wb").write(d)'
exits "overflowing bundle count: exit 2" 2 gpucheck targets count.o
has "overflowing bundle count: named with offset" "$T/.err" "count.o: offload bundle at offset 4096 claims 4611686018427387904 entries"
py '
d = bytearray(open("ka.o", "rb").read()); i = d.find(b"__CLANG_OFFLOAD_BUNDLE__")
d[i + 32 + 24 + 27 + 8:i + 32 + 24 + 27 + 16] = (2**63).to_bytes(8, "little"); open("esize.o", "wb").write(d)'
exits "entry size that overflows: exit 2" 2 gpucheck targets esize.o
has "entry size that overflows: named" "$T/.err" "is past the end of the bundle"
py '
d = bytearray(open("kb.o", "rb").read()); i = d.find(b"CCOB")
d[i + 8:i + 12] = (2**31).to_bytes(4, "little"); open("lie.o", "wb").write(d)'
exits "CCOB total size that lies: exit 2" 2 gpucheck targets lie.o
has "CCOB total size that lies: named with offset" "$T/.err" "lie.o: compressed bundle at offset 4096 says it is 2147483648 bytes but only"
py '
d = bytearray(open("kb.o", "rb").read()); i = d.find(b"CCOB")
d[i + 12:i + 16] = (int.from_bytes(d[i + 12:i + 16], "little") - 100).to_bytes(4, "little"); open("raw.o", "wb").write(d)'
exits "CCOB raw size that lies: exit 2" 2 gpucheck targets raw.o
has "CCOB raw size that lies: named" "$T/.err" "raw.o: compressed bundle at offset 4096"
exits "decompression cap: exit 2" 2 gpucheck targets --max-inflate=1000 kb.o
has "decompression cap: named" "$T/.err" "over the 1000-byte cap"
echo "not an elf" >plain.txt
exits "a text file: exit 2" 2 gpucheck targets plain.txt
has "a text file: says what it is not" "$T/.err" "plain.txt: not an ELF file, offload bundle or wheel (offset 0)"
exits "a missing file: exit 2" 2 gpucheck targets nosuch.so
exits "good and bad together: exit 2" 2 gpucheck targets ka.o count.o
has "good and bad together: the good one still listed" "$T/.out" "ka.o: 1 bundle"
