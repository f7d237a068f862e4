#!/bin/sh
# bench/fatwheel-torch.sh: the big real target. Packs Debian's python3-torch 1.13.1
# (/usr/lib/python3/dist-packages/torch, whose libtorch links ~500 Debian libraries)
# into a wheel, repairs it with fatwheel in PyTorch's layout (pkg:torch/lib), installs
# the result into a fresh venv and runs a small torch computation with the main
# libraries hidden from the system and LD_DEBUG showing where each library came from.
#   usage: bench/fatwheel-torch.sh [WORKDIR]   (FATWHEEL=path/to/fatwheel;
#          PACK_ONLY=1 only packs the input wheel and prints its path;
#          SONAME_HASH=1 repairs with --soname-hash: every bundled library renamed)
# Prints "ok"/"not ok" lines and the timings; exits 1 on any failure.
set -u
FATWHEEL=${FATWHEEL:-fatwheel}
PY=/usr/bin/python3
SRC=/usr/lib/python3/dist-packages/torch
W=${1:-${TMPDIR:-/tmp}/fatwheel-torch}
[ -d "$SRC" ] || { echo "skip: needs Debian's python3-torch ($SRC)"; exit 0; }
command -v "$FATWHEEL" >/dev/null || { echo "not ok: no fatwheel (set FATWHEEL=)"; exit 1; }
rm -rf "$W" && mkdir -p "$W/in" "$W/out" || exit 1
fails=0
ok () { echo "ok $*"; }
notok () { echo "not ok $*"; fails=$((fails + 1)); }
now () { date +%s.%N; }

# 1. a wheel of the torch package as pip would install it (torch/lib's symlinks into
#    /usr/lib are left out: those libraries are what fatwheel has to bring in)
t0=$(now)
$PY - "$SRC" "$W/in/torch-1.13.1-cp311-cp311-linux_x86_64.whl" <<'EOF' || exit 1
import base64, hashlib, os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
top = os.path.dirname(src)
rec = []
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    def put(name, data, mode=0o644):
        zi = zipfile.ZipInfo(name, (2023, 3, 14, 0, 0, 0)); zi.compress_type = zipfile.ZIP_DEFLATED
        zi.external_attr = (0o100000 | mode) << 16
        z.writestr(zi, data)
        rec.append("%s,sha256=%s,%d" % (name, base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode(), len(data)))
    for d, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            if os.path.islink(p) or "__pycache__" in p: continue
            put(os.path.relpath(p, top), open(p, "rb").read(), os.stat(p).st_mode & 0o777)
    di = "torch-1.13.1.dist-info/"
    put(di + "METADATA", b"Metadata-Version: 2.1\nName: torch\nVersion: 1.13.1\nRequires-Dist: typing_extensions\n")
    put(di + "WHEEL", b"Wheel-Version: 1.0\nGenerator: kiln-bench\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n")
    put(di + "top_level.txt", b"torch\n")
    z.writestr(di + "RECORD", "\n".join(rec + [di + "RECORD,,"]) + "\n")
EOF
IN=$W/in/torch-1.13.1-cp311-cp311-linux_x86_64.whl
t1=$(now)
echo "# packed $(du -h "$IN" | cut -f1) input wheel in $(echo "$t1 - $t0" | bc) s"
[ "${PACK_ONLY:-0}" = 1 ] && { echo "$IN"; exit 0; }

# 2. repair it (torch/bin/test_jit needs two test libraries Debian does not ship; torch
#    dlopens torch/lib/libtorch_global_deps.so by file name, so it is an --include)
t0=$(now)
"$FATWHEEL" --json --layout=pkg:torch/lib --plat=auto $([ "${SONAME_HASH:-0}" = 1 ] && echo --soname-hash) --exclude libjitbackend_test.so --exclude libbackend_with_compiler.so \
	--include "$SRC/lib/libtorch_global_deps.so" "$IN" -w "$W/out" >"$W/result.json" 2>"$W/fatwheel.err" ||
	{ notok "fatwheel repairs the torch wheel"; cat "$W/fatwheel.err"; exit 1; }
t1=$(now)
OUT=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["output"])' "$W/result.json")
nlib=$($PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["bundled"]))' "$W/result.json")
ok "fatwheel bundled $nlib libraries into $(du -h "$OUT" | cut -f1) ${OUT##*/} in $(echo "$t1 - $t0" | bc) s"
$PY -m wheel unpack -d "$W/unpack" "$OUT" >/dev/null 2>&1 && ok "wheel unpack checks every RECORD hash" || notok "wheel unpack checks every RECORD hash"
rm -rf "$W/unpack"

# 3. install into a fresh venv and compute, with the main libraries hidden
$PY -m venv "$W/venv" && "$W/venv/bin/pip" install -q --no-deps --no-index "$OUT" &&
	ok "pip installs it into a fresh venv" || { notok "pip installs it into a fresh venv"; exit 1; }
mkdir -p "$W/pydeps" && ln -sf /usr/lib/python3/dist-packages/typing_extensions.py "$W/pydeps/"
site=$("$W/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
hide=
for l in libtorch_cpu.so.1.13 libtorch_python.so.1.13 libc10.so.1.13 libopenblas.so.0 libprotobuf.so.32; do
	f=$(readlink -f "/usr/lib/x86_64-linux-gnu/$l" 2>/dev/null) && [ -f "$f" ] && hide="$hide $f"
done
prog='import torch; a = torch.arange(12, dtype=torch.float32).reshape(3, 4); print(torch.__file__); print(float((a @ a.T).sum()))'
cd "$W" || exit 1
if unshare -m true 2>/dev/null; then
	unshare -m sh -c 'for f; do mount --bind /dev/null "$f" || exit 3; done; PYTHONPATH='"$W/pydeps"' LD_DEBUG=libs LD_DEBUG_OUTPUT='"$W/lddebug"' '"$W/venv/bin/python"' -c "$0"' "$prog" $hide >"$W/run.out" 2>"$W/run.err"
else
	echo "# unshare -m not permitted: running without hiding the system copies"
	PYTHONPATH=$W/pydeps LD_DEBUG=libs LD_DEBUG_OUTPUT=$W/lddebug "$W/venv/bin/python" -c "$prog" >"$W/run.out" 2>"$W/run.err"
fi
if [ "$(sed -n 2p "$W/run.out")" = "1134.0" ]; then ok "torch computes (a @ a.T).sum() = 1134.0 from the venv"; else notok "torch computes"; cat "$W/run.out" "$W/run.err" | tail -5; fi
case $(sed -n 1p "$W/run.out") in "$site"/torch/*) ok "torch imported from the venv" ;; *) notok "torch imported from the venv ($(sed -n 1p "$W/run.out"))" ;; esac
cat "$W"/lddebug.* 2>/dev/null | sed -n 's/.*calling init: //p' | sort -u >"$W/loaded"
fromwheel=$(grep -c "^$site/torch/lib/" "$W/loaded")
# what came from the system must be on the manylinux list, or be what the interpreter
# and its stdlib extension modules (lib-dynload) link
# and what glibc itself dlopens for NSS (getpwuid and friends, as /etc/nsswitch.conf
# says: libnss_systemd and its libcap), which no wheel decides
nss=$(grep '/libnss_[^/]*$' "$W/loaded")
ldd "$(readlink -f "$W/venv/bin/python")" /usr/lib/python3.11/lib-dynload/*.so $nss 2>/dev/null | awk '/=> \// {print $3}' | xargs -r readlink -f | sort -u >"$W/pyown"
for f in $nss; do readlink -f "$f"; done >>"$W/pyown"
others=$(grep -v "^$site/" "$W/loaded" | grep -v -E '/python3\.11/lib-dynload/' | while read -r f; do
	b=${f##*/}
	case $b in libc.so.*|libm.so.*|libz.so.*|libanl.so.*|libatomic.so.*|libdl.so.*|librt.so.*|libpthread.so.*|libgcc_s.so.*|libstdc++.so.*|libutil.so.*|libresolv.so.*|libnsl.so.*|ld-linux*|libX11.so.*|libXext.so.*|libXrender.so.*|libICE.so.*|libSM.so.*|libGL.so.*|libgobject-2.0.so.*|libgthread-2.0.so.*|libglib-2.0.so.*) continue ;; esac
	grep -qx "$(readlink -f "$f")" "$W/pyown" || echo "$f"
done)
[ "$fromwheel" -gt 100 ] && ok "LD_DEBUG: $fromwheel libraries initialised from the wheel's torch/lib" || notok "LD_DEBUG: only $fromwheel libraries from the wheel"
[ -z "$others" ] && ok "LD_DEBUG: every other library is a manylinux one or one Python's stdlib loads" || { notok "LD_DEBUG: libraries from the system"; echo "$others" | head; }
[ $fails = 0 ]
