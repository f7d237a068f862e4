#!/bin/sh
# rocm-therock: ROCm the way TheRock ships it in 2026 (ROCm/TheRock RELEASES.md,
# "multi-arch releases"). Wheels in TheRock's shape (tests/regress/rocm-wheels.py) are
# served by nginx on loopback as a PEP 503 index: the selector `rocm` with the extras
# libraries, devel and device-gfxNNNN; rocm-sdk-core / -libraries / -devel;
# rocm-sdk-device-gfxNNNN wheels that overlay kernel packs and MIOpen's kernel databases
# into the SDK root `rocm-sdk path --root` names (TheRock docs/packaging/python_packaging.md).
# Its rocBLAS is a HIP library built by clang-19 for gfx1100 and gfx1151 whose code moved
# into kernel packs as ROCm's rocm-kpack does it (tools/gpucheck/tests/kpackify.py: HIPK
# wrappers, .rocm_kpack_ref naming ../.kpack/blas_lib_@GFXARCH@.kpack, KPAK archives);
# rocm.check judges it with gpucheck cover, as the kpack loader picks archives. Its MIOpen
# is host code with sqlite kernel databases in share/miopen/db (gfx1151_40.kdb,
# gfx110060.kdb: ROCm/MIOpen's names). A multi-arch tarball
# (therock-dist-linux-multiarch-VERSION.tar.gz: .kpack/ bin/ include/ lib/ share/therock/)
# is pinned by URL alone: its digest is locked on first fetch (build/rocm.lock). And
# configure's default channel per --arch.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"
need tar cc clang++-19 objcopy
NGINX=${NGINX:-/usr/sbin/nginx}
[ -x "$NGINX" ] || missing "needs nginx (nginx-light) for the loopback package index"
/usr/bin/python3 -c 'import msgpack' 2>/dev/null || missing "python3-msgpack (kpackify.py writes the kernel packs)"
V=7.14.0

# --- the fixtures: rocBLAS in kernel packs, MIOpen's kernel databases, wheels, tarball ---
kp () { /usr/bin/python3 "$KILN_SRC/tools/gpucheck/tests/kpackify.py" "$@" || { notok "kpackify.py $1"; exit 1; }; }
hip () { clang++-19 -x hip -nogpulib -nogpuinc -fPIC "$@" 2>"$T/cc.err" || { cat "$T/cc.err"; notok "clang++-19 $*"; exit 1; }; }
hip --offload-arch=gfx1100 --offload-arch=gfx1151 -c "$KILN_SRC/tests/regress/rocm-blas.hip" -o "$T/blas.o"
clang-19 -shared -fuse-ld=lld -Wl,-soname,librocblas.so.5 -o "$T/fat.so" "$T/blas.o" || exit 2
kp lib "$T/fat.so" "$T/librocblas.so.5" lib/librocblas.so.5 '../.kpack/blas_lib_@GFXARCH@.kpack'
for a in gfx1100 gfx1151; do
	hip --offload-arch=$a --cuda-device-only --no-gpu-bundle-output -c "$KILN_SRC/tests/regress/rocm-blas.hip" -o "$T/blas-$a.co"
	kp archive "$T/blas_lib_$a.kpack" zstd-per-kernel $a "lib/librocblas.so.5#0=$a=$T/blas-$a.co"
done
printf 'int miopenCreate(void **h) { *h = 0; return 0; }\n' >"$T/miopen.c"
cc -shared -fPIC -Wl,-soname,libMIOpen.so.1 -o "$T/libMIOpen.so.1" "$T/miopen.c" || exit 2
# MIOpen's kernel database: sqlite, table kern_db (ROCm/MIOpen src/include/miopen/kern_db.hpp);
# named ID_CUs.kdb up to 64 compute units, ID then the count in hex above (handle.hpp)
kdb () {
	"$PY3" -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE kern_db (id INTEGER PRIMARY KEY ASC, kernel_name TEXT NOT NULL, kernel_args TEXT NOT NULL, kernel_blob BLOB NOT NULL, kernel_hash TEXT NOT NULL, uncompressed_size INT NOT NULL)")
c.execute("INSERT INTO kern_db VALUES (1, ?, ?, ?, ?, 4)", ("MIOpenBatchNormFwdTrainSpatial.cl.o", "-DMIOPEN_USE_FP32=1", open(sys.argv[2], "rb").read(), "x"))
c.commit()' "$1" "$2" || exit 2
}
kdb "$T/gfx1151_40.kdb" "$T/blas-gfx1151.co"
kdb "$T/gfx110060.kdb" "$T/blas-gfx1100.co"
printf '#!/bin/sh\necho "HIP version: toy"\n' >"$T/hipcc" && chmod 755 "$T/hipcc" && echo '#define HIP_TOY 1' >"$T/hip_toy.h" || exit 2
"$PY3" "$KILN_SRC/tests/regress/rocm-wheels.py" "$T/www" "$V" --index core:bin/hipcc="$T/hipcc" \
	libraries:lib/librocblas.so.5="$T/librocblas.so.5" libraries:lib/libMIOpen.so.1="$T/libMIOpen.so.1" \
	devel:include/hip/hip_toy.h="$T/hip_toy.h" \
	device-gfx1100:.kpack/blas_lib_gfx1100.kpack="$T/blas_lib_gfx1100.kpack" \
	device-gfx1100:share/miopen/db/gfx110060.kdb="$T/gfx110060.kdb" \
	device-gfx1151:.kpack/blas_lib_gfx1151.kpack="$T/blas_lib_gfx1151.kpack" \
	device-gfx1151:share/miopen/db/gfx1151_40.kdb="$T/gfx1151_40.kdb" || exit 2
# the multi-arch tarball in TheRock's layout (kernel packs for gfx1100 and gfx1151; MIOpen
# with no kernel database at all)
S=$T/dist
mkdir -p "$S/.kpack" "$S/bin" "$S/lib" "$S/include/hip" "$S/share/therock" "$S/libexec" || exit 2
cp "$T/librocblas.so.5" "$T/libMIOpen.so.1" "$S/lib/" && cp "$T/hipcc" "$S/bin/hipcc" &&
	echo "{\"rocm_version\": \"$V\"}" >"$S/share/therock/therock_manifest.json" &&
	cp "$T/blas_lib_gfx1100.kpack" "$T/blas_lib_gfx1151.kpack" "$S/.kpack/" || exit 2
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
# (the archive named by its real path, as the HIP runtime resolves it from /proc/self/maps)
has "wheels: rocBLAS's code from the archive the kpack loader picks" "$T/b/build/logs/rocm.check.log" "gfx1151: lib/librocblas.so.5: covered (kernel packs: $T/venv/lib/"
has "wheels: that archive is the device wheel's kernel pack for gfx1151" "$T/b/build/logs/rocm.check.log" "/_rocm_sdk_devel/lib/../.kpack/blas_lib_gfx1151.kpack (gfx1151))"
has "wheels: MIOpen's kernel database for gfx1151" "$T/b/build/logs/rocm.check.log" "gfx1151: share/miopen/db/gfx1151_40.kdb: covered (MIOpen's kernel database)"
has "wheels: the summary line" "$T/b/build/logs/rocm.check.log" "gfx1151: 2 GPU libraries, 2 covered, 0 lacking it"
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

# without the extra (what rocm[libraries,devel] gives): rocm.check names the kernel pack;
# MIOpen with no kernel database at all is said, not failed (it compiles at run time)
toy_venv "$T/v2"
clean_pip () { "$T/v2/bin/python" -m pip install -q --disable-pip-version-check --index-url "$IDX" "$@"; }
check "no extra: pip install rocm[libraries,devel]" clean_pip "rocm[libraries,devel]==$V"
R2=$("$T/v2/bin/rocm-sdk" path --root)
check "no extra: configure --rocm-path=ROOT --arch=gfx1151" conf --arch=gfx1151 --pins="$T/pins.env" --rocm-path="$R2"
exits "no extra: ninja rocm.check fails" 1 ninja rocm.check
has "no extra: the missing kernel pack named" "$T/.out" "rocm.check: rocBLAS (lib/librocblas.so.5) has no code for gfx1151 in its kernel packs (co_index 0; no archive its kpack_search_paths reach lists gfx1151 or gfx11-generic or a subset of their features (no .kpack/blas_lib_gfx1151.kpack); install rocm[device-gfx1151]"
lacks "no extra: MIOpen without any kernel database is not failed" "$T/.out" "rocm.check: MIOpen"
has "no extra: MIOpen without any kernel database is said" "$T/b/build/logs/rocm.check.log" "gfx1151: share/miopen/db: no MIOpen kernel database (*.kdb) for any arch: MIOpen compiles its kernels when first used"
same "no extra: one line per library lacking it" 1 "$(grep -c 'has no code for gfx1151' "$T/b/build/logs/rocm.check.log")"
# another arch's device wheel only: MIOpen's databases are for gfx1100 alone
check "gfx1100's extra only" clean_pip "rocm[libraries,devel,device-gfx1100]==$V"
check "gfx1100's extra only: configure --arch=gfx1151,gfx1100" conf --arch=gfx1151,gfx1100 --pins="$T/pins.env" --rocm-path="$R2"
exits "gfx1100's extra only: rocm.check fails for gfx1151" 1 ninja rocm.check
has "gfx1100's extra only: MIOpen's kernel database named with what it has" "$T/.out" "rocm.check: MIOpen (lib/libMIOpen.so.1) has no code for gfx1151 in its kernel database (share/miopen/db has gfx110060.kdb; none is gfx1151_CUs.kdb or gfx1151.kdb)"
has "gfx1100's extra only: gfx1100's database by its hex name" "$T/b/build/logs/rocm.check.log" "gfx1100: share/miopen/db/gfx110060.kdb: covered (MIOpen's kernel database)"
has "gfx1100's extra only: gfx1100 passes" "$T/b/build/logs/rocm.check.log" "gfx1100: 2 GPU libraries, 2 covered, 0 lacking it"
has "gfx1100's extra only: gfx1151 lacks it in both" "$T/b/build/logs/rocm.check.log" "gfx1151: 2 GPU libraries, 0 covered, 2 lacking it"
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
has "tarball: MIOpen with no kernel database is said" "$T/b/build/logs/rocm.check.log" "gfx1151: share/miopen/db: no MIOpen kernel database"
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
has "tarball: gfx1201: the pack named" "$T/.out" "(no .kpack/blas_lib_gfx1201.kpack); install rocm[device-gfx1201]"

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

# a --rocm-path that is a folder but no ROCm of any layout: refused in one line naming
# what was looked for
exits "layout: configure --rocm-path=a folder that is no ROCm: 2" 2 conf --arch=gfx1151 --pins="$T/pins.env" --rocm-path="$T/www"
has "layout: named with what was looked for" "$T/.err" "configure: --rocm-path=$T/www is not a ROCm of any known layout: it has neither bin/hipcc"
same "layout: one line" 1 "$(lines "$T/.err")"
# the wheels' SDK root is a ROCm of a known layout (bin/hipcc), its version from TheRock's manifest
check "layout: the wheels' root" conf --arch=gfx1151 --pins="$T/pins.env" --rocm-path="$root"
has "layout: its line" "$T/.out" "checking for ROCm at $root... yes (ROCm $V, TheRock's layout: hipcc $root/bin/hipcc"

# --- the default channel per --arch ------------------------------------------------------
check "default: --arch=gfx1151 with no ROCm and no rocm pin" conf --arch=gfx1151 --pins="$T/pins.env" --rocm-path=/opt/rocm
if [ -x /opt/rocm/bin/hipcc ]; then optional_case default "a ROCm at /opt/rocm"; else
has "default: one line names TheRock's channel" "$T/.out" "using TheRock's multi-arch wheels, the default channel for --arch (env/rocm-channels.env): rocm $V from https://repo.amd.com/rocm/whl-multi-arch/"
has "default: the device extra in rocm.sdk's key" "$T/b/build/keys/rocm.sdk" "rocm[libraries,devel,device-gfx1151]==$V"
check "default: --arch=gfx803" conf --arch=gfx803 --pins="$T/pins.env" --rocm-path=/opt/rocm
has "default: gfx803 names Debian's route and its track" "$T/.out" "TheRock builds nothing for gfx803: use Debian's ROCm inside a Debian sid root with --rocm-path=/usr, as env/tracks/gfx803-debian.env sets it up"
has "default: gfx803: the stages stop at rocm.missing" "$T/b/build/stack.ninja" "rocm.missing"
fi
