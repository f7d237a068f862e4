#!/bin/sh
# rocm-therock: ROCm the way TheRock ships it in 2026 (ROCm/TheRock RELEASES.md,
# "multi-arch releases"). Wheels in TheRock's shape are built here and served by nginx
# on loopback as a PEP 503 index: the selector `rocm` with the extras libraries, devel
# and device-gfxNNNN; rocm-sdk-core / -libraries / -devel; rocm-sdk-device-gfxNNNN
# wheels that overlay kernel packs (.kpack/blas_lib_gfxNNNN.kpack) into the SDK root that
# `rocm-sdk path --root` names. Its rocBLAS is a real shared library whose
# .rocm_kpack_ref section names ../.kpack/blas_lib_@GFXARCH@.kpack (the reference the
# kpack loader follows). A multi-arch tarball (therock-dist-linux-multiarch-VERSION.tar.gz:
# .kpack/ bin/ include/ lib/ share/therock/) is pinned by URL alone: its digest is locked
# on first fetch (build/rocm.lock). And configure's default channel per --arch.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"
need tar cc
NGINX=${NGINX:-/usr/sbin/nginx}
[ -x "$NGINX" ] || missing "needs nginx (nginx-light) for the loopback package index"
V=7.14.0

# --- the fixtures: rocBLAS with kernel-pack references, the wheels, the tarball --------
"$PY3" - "$T/fx.c" <<'EOF' || exit 2
import sys
# .rocm_kpack_ref: a msgpack map {"kernel_name": "librocblas", "search_paths":
# ["../.kpack/blas_lib_@GFXARCH@.kpack"]} (issue 28's summary of rocm-kpack's format)
def s(x):
    b = x.encode()
    return bytes([0xa0 | len(b)]) + b if len(b) < 32 else bytes([0xd9, len(b)]) + b
ref = bytes([0x82]) + s("kernel_name") + s("librocblas") + s("search_paths") + bytes([0x91]) + \
    s("../.kpack/blas_lib_@GFXARCH@.kpack")
with open(sys.argv[1], "w") as f:
    f.write('__attribute__((used, section(".rocm_kpack_ref"))) static const unsigned char ref[] = {%s};\n'
            % ",".join(str(c) for c in ref))
    f.write("int rocblas_create_handle(void **h) { *h = 0; return 0; }\n")
EOF
cc -shared -fPIC -Wl,-soname,librocblas.so.5 -o "$T/librocblas.so.5" "$T/fx.c" || exit 2
# a kernel pack: KPAK, u32 version 1, u64 offset of its msgpack table of contents
kpack () {
	"$PY3" -c 'import struct, sys
toc = b"\x81\xa4arch" + bytes([0xa0 | len(sys.argv[2])]) + sys.argv[2].encode()
open(sys.argv[1], "wb").write(b"KPAK" + struct.pack("<IQ", 1, 16) + toc)' "$1" "$2"
}
"$PY3" - "$T/files" "$T/librocblas.so.5" "$V" <<'EOF' || exit 2
import base64, hashlib, os, sys, zipfile
out, rocblas, V = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)
def kp(arch):
    toc = b"\x81\xa4arch" + bytes([0xa0 | len(arch)]) + arch.encode()
    return b"KPAK" + (1).to_bytes(4, "little") + (16).to_bytes(8, "little") + toc
def wheel(dist, files, meta="", version=V, execs=()):
    name = f"{dist}-{version}"
    di = f"{name}.dist-info"
    files = dict(files)
    files[f"{di}/METADATA"] = f"Metadata-Version: 2.1\nName: {dist.replace('_', '-')}\nVersion: {version}\n{meta}".encode()
    files[f"{di}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: kiln-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    rec = []
    for n, d in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
        rec.append(f"{n},sha256={h},{len(d)}")
    rec.append(f"{di}/RECORD,,")
    files[f"{di}/RECORD"] = ("\n".join(rec) + "\n").encode()
    with zipfile.ZipFile(f"{out}/{name}-py3-none-any.whl", "w") as z:
        for n, d in files.items():
            zi = zipfile.ZipInfo(n)
            zi.external_attr = (0o100755 if n in execs else 0o100644) << 16
            z.writestr(zi, d)
main = b'''import os, sys
def main():
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_rocm_sdk_devel")
    if sys.argv[1:] == ["path", "--root"]:
        print(root)
        return 0
    print("usage: rocm-sdk path --root", file=sys.stderr)
    return 2
'''
R = "_rocm_sdk_devel"
dev = "".join(f"Provides-Extra: device-{a}\nRequires-Dist: rocm-sdk-device-{a}=={V}; extra == \"device-{a}\"\n"
              for a in ("gfx1100", "gfx1151"))
wheel("rocm", {"rocm_sdk/__init__.py": main,
               f"rocm-{V}.dist-info/entry_points.txt": b"[console_scripts]\nrocm-sdk = rocm_sdk:main\n"},
      f"Requires-Dist: rocm-sdk-core=={V}\n"
      f"Provides-Extra: libraries\nRequires-Dist: rocm-sdk-libraries=={V}; extra == \"libraries\"\n"
      f"Provides-Extra: devel\nRequires-Dist: rocm-sdk-devel=={V}; extra == \"devel\"\n" + dev)
wheel("rocm_sdk_core", {f"{R}/share/therock/therock_manifest.json": b'{"rocm_version": "%s"}\n' % V.encode(),
                        f"{R}/bin/hipcc": b"#!/bin/sh\necho 'HIP version: toy'\n"}, execs={f"{R}/bin/hipcc"})
wheel("rocm_sdk_libraries", {f"{R}/lib/librocblas.so.5": open(rocblas, "rb").read()})
wheel("rocm_sdk_devel", {f"{R}/include/hip/hip_toy.h": b"#define HIP_TOY 1\n"})
for a in ("gfx1100", "gfx1151"):
    wheel(f"rocm_sdk_device_{a}", {f"{R}/.kpack/blas_lib_{a}.kpack": kp(a)})
EOF
# the PEP 503 tree: simple/NAME/ lists NAME's files with their sha256
mkdir -p "$T/www/simple" && mv "$T/files" "$T/www/files" || exit 2
for w in "$T"/www/files/*.whl; do
	f=${w##*/} n=$(echo "${w##*/}" | cut -d- -f1 | tr _ -)
	mkdir -p "$T/www/simple/$n"
	printf '<a href="../../files/%s#sha256=%s">%s</a>\n' "$f" "$(sha256sum "$w" | cut -c1-64)" "$f" >>"$T/www/simple/$n/index.html"
done
# the multi-arch tarball in TheRock's layout (kernel packs for gfx1100 and gfx1151)
S=$T/dist
mkdir -p "$S/.kpack" "$S/bin" "$S/lib" "$S/include/hip" "$S/share/therock" "$S/libexec" || exit 2
cp "$T/librocblas.so.5" "$S/lib/" && printf '#!/bin/sh\n' >"$S/bin/hipcc" && chmod 755 "$S/bin/hipcc" &&
	echo "{\"rocm_version\": \"$V\"}" >"$S/share/therock/therock_manifest.json" &&
	kpack "$S/.kpack/blas_lib_gfx1100.kpack" gfx1100 && kpack "$S/.kpack/blas_lib_gfx1151.kpack" gfx1151 || exit 2
TB=therock-dist-linux-multiarch-$V.tar.gz
tar -C "$S" -czf "$T/www/files/$TB" . || exit 2

# nginx on a free loopback port, in the foreground, its files in $T/ng: ready when nginx
# itself listens there (lib.sh's startserver: another port when it lost that one)
ngx_run () {
	mkdir -p "$T/ng/logs" "$T/ng/tmp"
	cat >"$T/ng/nginx.conf" <<CONF
worker_processes 1;
pid $T/ng/nginx.pid;
error_log $T/ng/logs/error.log;
$( [ "$(id -u)" = 0 ] && echo "user root root;" )
events { worker_connections 64; }
http {
	access_log $T/ng/logs/access.log;
	client_body_temp_path $T/ng/tmp/body;
	proxy_temp_path $T/ng/tmp/proxy;
	fastcgi_temp_path $T/ng/tmp/fastcgi;
	uwsgi_temp_path $T/ng/tmp/uwsgi;
	scgi_temp_path $T/ng/tmp/scgi;
	types { application/octet-stream whl gz; text/html html; }
	server { listen 127.0.0.1:$1; root $T/www; index index.html; }
}
CONF
	"$NGINX" -e "$T/ng/logs/error.log" -p "$T/ng" -c "$T/ng/nginx.conf" -g 'daemon off;' >"$T/ng/logs/stdout" 2>&1 &
	SERVER_PID=$!
}
ngx=
at_exit 'kill $ngx 2>/dev/null; wait $ngx 2>/dev/null'
startserver 5 ngx_run || { cat "$T/ng/logs/error.log"; notok "nginx did not start"; exit 1; }
port=$SERVER_PORT ngx=$SERVER_PID
IDX=http://127.0.0.1:$port/simple/

toy_venv "$T/venv"
mkdir -p "$T/b" && cd "$T/b" || exit 2
conf () {
	"$KSRC/configure" --python="$T/venv/bin/python" --mirror="$T/mirror" --jobs=1 \
		KILN_BIN="$KILN_BIN" "$@"
}
wpins () { cp "$T/pins.env" "$T/w.env" && printf 'rocm_KIND=wheels\nrocm_INDEX="%s"\nrocm_VERSION=%s\n' "$1" "$2" >>"$T/w.env"; }

# --- wheels with the device extra -------------------------------------------------------
wpins "$IDX" "$V"
check "wheels: configure --arch=gfx1151" conf --arch=gfx1151 --pins="$T/w.env"
has "wheels: the requirement has the device extra" "$T/.out" "rocm[libraries,devel,device-gfx1151]==$V"
check "wheels: ninja rocm.check passes" ninja rocm.check
has "wheels: the kernel pack is there" "$T/b/build/logs/rocm.check.log" "gfx1151: lib/librocblas.so.5: covered (kernel packs present)"
has "wheels: the summary line" "$T/b/build/logs/rocm.check.log" "gfx1151: 1 GPU libraries, 1 covered, 0 lacking it"
root=$("$T/venv/bin/rocm-sdk" path --root)
same "wheels: ROCM_PATH links to rocm-sdk path --root" "$root" "$(readlink "$T/b/build/rocm/wheels")"
[ -f "$root/.kpack/blas_lib_gfx1151.kpack" ] && ok "wheels: the device wheel overlaid its kernel pack" || notok "wheels: the device wheel overlaid its kernel pack"
has "wheels: the device package is in the lock with its hash" "$T/b/build/requirements.lock" "rocm-sdk-device-gfx1151==$V --hash=sha256:$(sha256sum "$T/www/files/rocm_sdk_device_gfx1151-$V-py3-none-any.whl" | cut -c1-64)"
has "wheels: and in build-info" "$T/b/build/build-info.json" "rocm-sdk-device-gfx1151"
lacks "wheels: nothing but the index was asked" "$T/ng/logs/access.log" "GET /files/$TB"
check "wheels: ninja rocm.check again" ninja rocm.check
has "wheels: second run: nothing to do" "$T/.out" "no work to do"

# the wheels' digests are locked on first use too: a wheel changed on the index (its
# index page saying the new sha256, as a compromised index would) is refused before
# anything is installed
DW=$T/www/files/rocm_sdk_device_gfx1151-$V-py3-none-any.whl
has "wheels: the device wheel's digest locked" "$T/b/build/rocm.lock" "$(sha256sum "$DW" | cut -c1-64) http://127.0.0.1:$port/files/${DW##*/}"
cp "$DW" "$T/dw.keep" && cp "$T/www/simple/rocm-sdk-device-gfx1151/index.html" "$T/dwi.keep" || exit 2
"$PY3" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "a"); z.writestr("_rocm_sdk_devel/.kpack/extra", b"x"); z.close()' "$DW" || exit 2
printf '<a href="../../files/%s#sha256=%s">%s</a>\n' "${DW##*/}" "$(sha256sum "$DW" | cut -c1-64)" "${DW##*/}" >"$T/www/simple/rocm-sdk-device-gfx1151/index.html"
toy_venv "$T/v4"
check "changed wheel: configure" conf --python="$T/v4/bin/python" --arch=gfx1151 --pins="$T/w.env"
exits "changed wheel: ninja rocm.sdk refuses it" 1 ninja rocm.sdk
has "changed wheel: the lock named" "$T/.out" "but $T/b/build/rocm.lock locked it at"
exits "changed wheel: nothing installed" 1 "$T/v4/bin/python" -c "import rocm_sdk"
cp "$T/dw.keep" "$DW" && cp "$T/dwi.keep" "$T/www/simple/rocm-sdk-device-gfx1151/index.html" || exit 2

# into the venv kiln makes (--venv): rocm.sdk comes after stack.venv
check "venv: configure --venv=DIR" conf --arch=gfx1151 --pins="$T/w.env" --venv="$T/kv"
check "venv: ninja rocm.check" ninja rocm.check
check "venv: rocm is in kiln's venv" "$T/kv/bin/python" -c "import rocm_sdk"

# without the extra (what rocm[libraries,devel] gives): rocm.check names the kernel pack
toy_venv "$T/v2"
clean_pip () { "$T/v2/bin/python" -m pip install -q --disable-pip-version-check --index-url "$IDX" "$@"; }
check "no extra: pip install rocm[libraries,devel]" clean_pip "rocm[libraries,devel]==$V"
R2=$("$T/v2/bin/rocm-sdk" path --root)
check "no extra: configure --rocm-path=ROOT --arch=gfx1151" conf --arch=gfx1151 --pins="$T/pins.env" --rocm-path="$R2"
exits "no extra: ninja rocm.check fails" 1 ninja rocm.check
has "no extra: the missing kernel pack named" "$T/.out" "rocm.check: rocBLAS (lib/librocblas.so.5) has no code for gfx1151 in its kernel pack .kpack/blas_lib_gfx1151.kpack (missing; install rocm[device-gfx1151]"
check "no extra: the device wheel added" clean_pip "rocm[libraries,devel,device-gfx1151]==$V"
check "no extra: after it, configure" conf --arch=gfx1151 --pins="$T/pins.env" --rocm-path="$R2"
check "no extra: after it, rocm.check passes" ninja rocm.check

# an index without the device extra for --arch, a release it lacks: nothing installed
toy_venv "$T/v3"
conf3 () { conf --python="$T/v3/bin/python" "$@"; }
check "no device-gfx1030: configure" conf3 --arch=gfx1030 --pins="$T/w.env"
exits "no device-gfx1030: ninja rocm.sdk fails" 1 ninja rocm.sdk
has "no device-gfx1030: named" "$T/.out" "rocm $V there has no extra device-gfx1030 (it has device-gfx1100, device-gfx1151)"
exits "no device-gfx1030: nothing installed" 1 "$T/v3/bin/python" -c "import rocm_sdk"
wpins "$IDX" 9.9.9
check "rocm 9.9.9: configure" conf3 --arch=gfx1151 --pins="$T/w.env"
exits "rocm 9.9.9: ninja rocm.sdk fails" 1 ninja rocm.sdk
has "rocm 9.9.9: named" "$T/.out" "pip cannot resolve rocm[libraries,devel,device-gfx1151]==9.9.9 from $IDX"
exits "rocm 9.9.9: nothing installed" 1 "$T/v3/bin/python" -c "import rocm_sdk"

# an extra index is refused (the public index holds placeholder packages named rocm)
wpins "$IDX https://pypi.org/simple/" "$V"
exits "extra index: refused: 2" 2 conf --arch=gfx1151 --pins="$T/w.env"
has "extra index: the reason" "$T/.err" "an extra index is refused"
same "extra index: one line" 1 "$(lines "$T/.err")"
wpins "$IDX" "$V"
exits "PIP_EXTRA_INDEX_URL: refused: 2" 2 env PIP_EXTRA_INDEX_URL=https://pypi.org/simple/ "$KSRC/configure" \
	--python="$T/venv/bin/python" --mirror="$T/mirror" --jobs=1 KILN_BIN="$KILN_BIN" --arch=gfx1151 --pins="$T/w.env"
has "PIP_EXTRA_INDEX_URL: named" "$T/.err" "PIP_EXTRA_INDEX_URL=https://pypi.org/simple/ is set"

# --- the multi-arch tarball, trust on first use -----------------------------------------
U=http://127.0.0.1:$port/files/$TB
check "tarball: configure --pin rocm=URL (no sha256)" conf --arch=gfx1151 --pins="$T/pins.env" --pin="rocm=$U"
has "tarball: configure says the digest will be locked" "$T/.out" "its digest is locked on first fetch"
check "tarball: ninja rocm.check passes" ninja rocm.check
SHA=$(sha256sum "$T/www/files/$TB" | cut -c1-64)
has "tarball: the lock line shown" "$T/b/build/logs/rocm.sdk.log" "kiln: $U: sha256 $SHA locked in $T/b/build/rocm.lock"
has "tarball: the lock holds it" "$T/b/build/rocm.lock" "$SHA $U"
has "tarball: its kernel packs listed" "$T/b/build/logs/rocm.sdk.log" "kernel pack: .kpack/blas_lib_gfx1151.kpack"
has "tarball: version from TheRock's manifest" "$T/b/build/logs/rocm.sdk.log" "ROCm $V in"
: >"$T/ng/logs/access.log"
check "tarball: ninja rocm.check again" ninja rocm.check
has "tarball: second run: nothing to do" "$T/.out" "no work to do"
same "tarball: second run: no request" 0 "$(lines "$T/ng/logs/access.log")"
# the tarball changes upstream; a rebuild of rocm.sdk (its folder and download gone) refuses it
printf 'changed' >>"$S/include/hip/hip_toy.h" && tar -C "$S" -czf "$T/www/files/$TB" . || exit 2
rm -rf "$T/b/build/rocm/url-"* "$T/b/build/rocm/dl" "$T/b/build/stamp/rocm.sdk" "$T/b/build/stamp/rocm.check"
exits "tarball: a changed one is refused" 1 ninja rocm.check
has "tarball: the refusal names the lock" "$T/.out" "but $T/b/build/rocm.lock locked it at $SHA"
set +f; ls -d "$T/b/build/rocm/url-"* >/dev/null 2>&1 && notok "tarball: refused: no SDK folder" || ok "tarball: refused: no SDK folder"
# kernel packs for other arches only
check "tarball: configure --arch=gfx1201" conf --arch=gfx1201 --pins="$T/pins.env" --pin="rocm=$U#sha256=$(sha256sum "$T/www/files/$TB" | cut -c1-64)"
exits "tarball: gfx1201 fails" 1 ninja rocm.check
has "tarball: gfx1201: the pack named" "$T/.out" "its kernel pack .kpack/blas_lib_gfx1201.kpack (missing"

# kiln-stage sdklock itself: a local tarball, the lock file's form
L=$T/sdk.lock
check "sdklock: first use locks" kiln-stage sdklock "$L" "file:///sdk.tgz" "$T/www/files/$TB"
same "sdklock: prints the digest" "$(sha256sum "$T/www/files/$TB" | cut -c1-64)" "$(cat "$T/.out")"
same "sdklock: one line says so" 1 "$(lines "$T/.err")"
check "sdklock: the same file again" kiln-stage sdklock "$L" "file:///sdk.tgz" "$T/www/files/$TB"
same "sdklock: again: silent" 0 "$(lines "$T/.err")"
check "sdklock: the lock asked" kiln-stage sdklock "$L" "file:///sdk.tgz"
same "sdklock: the locked digest" "$(sha256sum "$T/www/files/$TB" | cut -c1-64)" "$(cat "$T/.out")"
exits "sdklock: another file: 1" 1 kiln-stage sdklock "$L" "file:///sdk.tgz" "$T/librocblas.so.5"
same "sdklock: refused in one line" 1 "$(lines "$T/.err")"
printf 'not a lock line\n' >>"$L"
exits "sdklock: a malformed lock: 2" 2 kiln-stage sdklock "$L" "file:///sdk.tgz"
has "sdklock: file and line named" "$T/.err" "$L:3: not a lock line"

# a --rocm-path that is a folder but no ROCm of any layout: one line says so
check "layout: configure --rocm-path=a folder that is no ROCm" conf --arch=gfx1151 --pins="$T/pins.env" --rocm-path="$T/www"
has "layout: named with what to give" "$T/.out" "$T/www is not a ROCm of any known layout (no bin/hipcc, no llvm/bin/clang"
# the wheels' SDK root is a ROCm of a known layout (bin/hipcc), its version from TheRock's manifest
check "layout: the wheels' root" conf --arch=gfx1151 --pins="$T/pins.env" --rocm-path="$root"
has "layout: its line" "$T/.out" "checking for ROCm at $root... yes (ROCm"

# --- the default channel per --arch ------------------------------------------------------
check "default: --arch=gfx1151 with no ROCm and no rocm pin" conf --arch=gfx1151 --pins="$T/pins.env" --rocm-path=/opt/rocm
if [ -x /opt/rocm/bin/hipcc ]; then optional_case default "a ROCm at /opt/rocm"; else
has "default: one line names TheRock's channel" "$T/.out" "using TheRock's multi-arch wheels, the default channel for --arch (env/rocm-channels.env): rocm $V from https://repo.amd.com/rocm/whl-multi-arch/"
has "default: the device extra in rocm.sdk's key" "$T/b/build/keys/rocm.sdk" "rocm[libraries,devel,device-gfx1151]==$V"
check "default: --arch=gfx803" conf --arch=gfx803 --pins="$T/pins.env" --rocm-path=/opt/rocm
has "default: gfx803 names Debian's route and its track" "$T/.out" "TheRock builds nothing for gfx803: use Debian's ROCm inside a Debian sid root with --rocm-path=/usr, as env/tracks/gfx803-debian.env sets it up"
has "default: gfx803: the stages stop at rocm.missing" "$T/b/build/stack.ninja" "rocm.missing"
fi
