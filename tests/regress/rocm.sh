#!/bin/sh
# rocm: the ROCm SDK as a pinned stage. SDK-shaped tarballs (TheRock's dist layout) are
# made from Debian's ROCm libraries (librocrand1: code objects gfx803..gfx1030;
# libamdhip64-5: the HIP runtime, host code only). kiln-stage fetch downloads from a
# loopback HTTP server that honours Range and can cut a response midway; kiln-stage
# unpack refuses hostile members; the graph's rocm.sdk and rocm.check pass for gfx90a,
# fail for gfx1151 naming the library, and a second run does nothing.
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"
need tar
# lib SONAME: the file behind a library the dynamic linker knows (ldconfig -p), wherever
# the distribution puts it
lib () {
	p=$({ ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null | awk -v s="$1" '$1 == s { print $NF; exit }')
	[ -n "$p" ] && readlink -f "$p"
}
RAND=$(lib librocrand.so.1) HIP=$(lib libamdhip64.so.5)
[ -f "$RAND" ] || missing "librocrand1 (Debian's rocRAND: real gfx803..gfx1030 code objects)"
[ -f "$HIP" ] || missing "libamdhip64-5 (Debian's HIP runtime)"
RN=${RAND##*/} HN=${HIP##*/}

# an SDK-shaped tree and its tarball
S=$T/sdk
mkdir -p "$S/bin" "$S/lib" "$S/include/hip" "$S/llvm/bin" "$S/share/doc" "$S/.info"
echo 5.3.3-debian >"$S/.info/version"
cp "$RAND" "$HIP" "$S/lib/" || exit 2
ln -s "$RN" "$S/lib/librocrand.so.1"
ln -s ../lib "$S/llvm/lib"
echo '#define HIP_TOY 1' >"$S/include/hip/hip_toy.h"
tar -C "$S" -czf "$T/sdk.tgz" . || exit 2
SHA=$(sha256sum "$T/sdk.tgz" | cut -c1-64)
BAD=$(printf '%s' "$SHA" | tr 0-9a-f 1-9a-f0)

# --- unpack ---------------------------------------------------------------------------
check "unpack: an SDK tarball" kiln-stage unpack "$T/sdk.tgz" --into="$T/u/sdk" --sha256="$SHA" --layout=rocm
check "unpack: the files are the SDK's" cmp "$RAND" "$T/u/sdk/lib/$RN"
same "unpack: links kept" "$RN" "$(readlink "$T/u/sdk/lib/librocrand.so.1")"
check "unpack: a second run is a no-op" kiln-stage unpack "$T/sdk.tgz" --into="$T/u/sdk" --sha256="$SHA"
same "unpack: nothing else beside it" sdk "$(ls "$T/u")"
# what an unpack killed before its rename leaves (a half-filled SDK.tmp-XXXXXX) goes on
# the next unpack into the same place; another folder's temporary stays
mkdir -p "$T/k/sdk.tmp-Ab3dEf/lib" "$T/k/other.tmp-Ab3dEf" && echo half >"$T/k/sdk.tmp-Ab3dEf/lib/half" || exit 2
check "unpack: after a killed one" kiln-stage unpack "$T/sdk.tgz" --into="$T/k/sdk" --sha256="$SHA" --layout=rocm
has "unpack: the stale folder is named" "$T/.err" "k/sdk.tmp-Ab3dEf: removed, left by an unpack that was stopped"
same "unpack: the stale folder is gone, the other kept" "other.tmp-Ab3dEf sdk" "$(ls "$T/k" | tr '\n' ' ' | sed 's/ $//')"
check "unpack: the SDK is whole after it" cmp "$RAND" "$T/k/sdk/lib/$RN"
# two unpacks into one place at once: one waits for the other, both succeed, one folder
kiln-stage unpack "$T/sdk.tgz" --into="$T/k2/sdk" --sha256="$SHA" 2>"$T/k2a.err" & kp=$!
kiln-stage unpack "$T/sdk.tgz" --into="$T/k2/sdk" --sha256="$SHA" 2>"$T/k2b.err"; kb=$?
wait "$kp"; ka=$?
same "unpack: two at once both succeed" "0 0" "$ka $kb"
same "unpack: two at once: one folder, no temporary left" sdk "$(ls -a "$T/k2" | grep -v '^\.\.*$')"
lacks "unpack: two at once: neither removed the other's folder" "$T/k2a.err" "removed"
lacks "unpack: two at once: nor the second" "$T/k2b.err" "removed"
exits "unpack: a wrong sha: 1" 1 kiln-stage unpack "$T/sdk.tgz" --into="$T/u/bad" --sha256="$BAD"
has "unpack: the sha named" "$T/.err" "sha256 is $SHA, but the pin says $BAD"
same "unpack: wrong sha: one line" 1 "$(lines "$T/.err")"
same "unpack: wrong sha: nothing left" sdk "$(ls "$T/u")"
head -c 300000 "$T/sdk.tgz" >"$T/trunc.tgz"
exits "unpack: a truncated tarball: 1" 1 kiln-stage unpack "$T/trunc.tgz" --into="$T/u/trunc"
has "unpack: truncated named" "$T/.err" "a truncated or corrupt tarball"
same "unpack: truncated: nothing left" sdk "$(ls "$T/u")"

# hostile members, made with Python's tarfile
"$PY3" - "$T" <<'EOF' || exit 2
import io, sys, tarfile
t = sys.argv[1]
def mk(name, members):
    with tarfile.open(f"{t}/{name}.tar", "w") as z:
        for m, data in members:
            z.addfile(m, io.BytesIO(data) if data is not None else None)
def f(name, data=b"x"):
    i = tarfile.TarInfo(name); i.size = len(data); return (i, data)
def l(name, target, kind=tarfile.SYMTYPE):
    i = tarfile.TarInfo(name); i.type = kind; i.linkname = target; return (i, None)
def dev(name):
    i = tarfile.TarInfo(name); i.type = tarfile.CHRTYPE; i.devmajor = 1; i.devminor = 3; return (i, None)
mk("dotdot", [f("lib/ok"), f("lib/../../escape")])
mk("abs", [f("/tmp/kiln-abs-escape")])
mk("link", [f("lib/ok"), l("lib/out", "../../outside")])
mk("abslink", [l("lib/etc", "/etc")])
mk("hard", [l("lib/h", "../x", tarfile.LNKTYPE)])
mk("dev", [dev("lib/null")])
mk("nolayout", [f("lib/librocrand.so", b"not much")])
mk("big", [f("lib/a", b"a" * 5000)])
EOF
for c in "dotdot:leaves the folder" "abs:is an absolute path" "link:outside the folder" \
	"abslink:outside the folder" "hard:leaves the folder" "dev:a device, FIFO or socket" \
	"nolayout:not a ROCm SDK tarball: no .info/version"; do
	n=${c%%:*}
	exits "unpack: $n refused: 1" 1 kiln-stage unpack "$T/$n.tar" --into="$T/u/$n" --layout=rocm
	has "unpack: $n: the reason" "$T/.err" "${c#*:}"
	same "unpack: $n: one line" 1 "$(lines "$T/.err")"
done
exits "unpack: over --max-size: 1" 1 kiln-stage unpack "$T/big.tar" --into="$T/u/big" --max-size=4096
has "unpack: the cap named" "$T/.err" "size cap of 4096 bytes"
same "unpack: refused ones leave nothing, no temp folder" sdk "$(ls -a "$T/u" | grep -v '^\.\.*$')"
[ -e /tmp/kiln-abs-escape ] && notok "unpack: wrote outside its folder" || ok "unpack: nothing written outside"

# --- fetch from a loopback server that honours Range and cuts the first CUTS responses
cat >"$T/serve.py" <<'EOF'
import http.server, os, socket, sys
root, cuts, log, portfile = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
state = {"cuts": cuts}
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        r = self.headers.get("Range")
        with open(log, "a") as f:
            f.write("%s %s\n" % (self.path, r or "-"))
        p = os.path.join(root, os.path.basename(self.path))
        if not os.path.isfile(p):
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
        data = open(p, "rb").read()
        start = 0
        if r and r.startswith("bytes="):
            start = int(r[6:].split("-")[0])
            if start >= len(data):
                self.send_response(416); self.send_header("Content-Range", "bytes */%d" % len(data))
                self.send_header("Content-Length", "0"); self.end_headers(); return
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if state["cuts"] > 0 and not r:
            state["cuts"] -= 1
            self.wfile.write(body[: len(body) // 3]); self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
EOF
mkdir -p "$T/www" && cp "$T/sdk.tgz" "$T/www/" || exit 2
"$PY3" "$T/serve.py" "$T/www" 2 "$T/req.log" "$T/port" &
srv=$!
at_exit 'kill $srv 2>/dev/null; wait $srv 2>/dev/null'
# the server binds port 0 itself and writes the port it got: no other process can hold it;
# ready once the file is there (a server that died first fails at once)
waitalive "$srv" test -s "$T/port" && waitlisten "$srv" "$(cat "$T/port")" ||
	{ notok "the SDK server did not start"; exit 1; }
URL=http://127.0.0.1:$(cat "$T/port")/sdk.tgz

check "fetch: a response cut midway is resumed in the same run" kiln-stage fetch "$URL" --sha256="$SHA" -o "$T/dl/a.tgz"
has "fetch: the resume said so" "$T/.err" "resuming"
check "fetch: the download is whole" cmp "$T/sdk.tgz" "$T/dl/a.tgz"
has "fetch: it asked for the rest with Range" "$T/req.log" "/sdk.tgz bytes="
exits "fetch: one try, cut: 1" 1 env KILN_FETCH_TRIES=1 kiln-stage fetch "$URL" --sha256="$SHA" -o "$T/dl/b.tgz"
has "fetch: cut: kept for resume" "$T/.err" "run again to resume"
[ -s "$T/dl/b.tgz.part" ] && [ ! -e "$T/dl/b.tgz" ] && ok "fetch: cut: only the .part exists" || notok "fetch: cut: only the .part exists"
part=$(wc -c <"$T/dl/b.tgz.part" | tr -d ' ')
check "fetch: the next run resumes" kiln-stage fetch "$URL" --sha256="$SHA" -o "$T/dl/b.tgz"
check "fetch: resumed download is whole" cmp "$T/sdk.tgz" "$T/dl/b.tgz"
has "fetch: resumed from the part's end" "$T/req.log" "/sdk.tgz bytes=$part-"
: >"$T/req.log"
check "fetch: already there: no-op" kiln-stage fetch "$URL" --sha256="$SHA" -o "$T/dl/b.tgz"
same "fetch: no-op: no request" 0 "$(lines "$T/req.log")"
exits "fetch: wrong sha: 1" 1 kiln-stage fetch "$URL" --sha256="$BAD" -o "$T/dl/c.tgz"
has "fetch: wrong sha named" "$T/.err" "sha256 is $SHA, but the pin says $BAD"
[ ! -e "$T/dl/c.tgz" ] && [ ! -e "$T/dl/c.tgz.part" ] && ok "fetch: wrong sha: nothing kept" || notok "fetch: wrong sha: nothing kept"
exits "fetch: 404: 1" 1 kiln-stage fetch "${URL%/*}/nothere.tgz" --sha256="$SHA" -o "$T/dl/d.tgz"
has "fetch: 404 named" "$T/.err" "HTTP 404"
exits "fetch: not a sha: 2" 2 kiln-stage fetch "$URL" --sha256=abc -o "$T/dl/e.tgz"

# --- the graph: rocm.sdk and rocm.check before any ROCm stage ---------------------------
toy_venv "$T/venv"
mkdir -p "$T/b" && cd "$T/b" || exit 2
conf () {
	"$KSRC/configure" --python="$T/venv/bin/python" --mirror="$T/mirror" --pins="$T/pins.env" --jobs=1 \
		KILN_BIN="$KILN_BIN" "$@"
}
check "configure: --pin rocm=URL#sha256= for gfx90a" conf --arch=gfx90a --pin="rocm=$URL#sha256=$SHA"
lacks "configure: no rocm.missing with a pinned SDK" "$T/b/build/stack.ninja" "rocm.missing"
has "configure: ROCM_PATH is the SDK folder" "$T/b/build/stack.env" "ROCM_PATH=\"$T/b/build/rocm/$SHA\""
ninja -t query build/stamp/torch.wheel >"$T/q" 2>&1
has "graph: torch.wheel comes after rocm.check" "$T/q" "build/stamp/rocm.check"
check "ninja rocm.check: gfx90a passes" ninja rocm.check
has "rocm.check: rocRAND covered" "$T/b/build/logs/rocm.check.log" "gfx90a: lib/$RN: covered"
check "the SDK is whole" cmp "$RAND" "$T/b/build/rocm/$SHA/lib/$RN"
check "ninja rocm.check again" ninja rocm.check
has "second run: nothing to do" "$T/.out" "no work to do"
check "configure: gfx1151" conf --arch=gfx1151 --pin="rocm=$URL#sha256=$SHA"
exits "ninja rocm.check: gfx1151 fails" 1 ninja rocm.check
has "gfx1151: the library named with the part and what it has" "$T/.out" "rocm.check: rocRAND (lib/$RN) has no code for gfx1151 in its code-object bundles (lib/$RN has gfx1030, gfx803"
has "gfx1151: gpucheck's fix line" "$T/.out" "gpucheck: rebuild with PYTORCH_ROCM_ARCH=gfx1151"
lacks "gfx1151: the HIP runtime (host code) is not blamed" "$T/.out" "$HN"
check "configure: a wrong pinned sha" conf --arch=gfx90a --pin="rocm=file://$T/sdk.tgz#sha256=$BAD"
exits "ninja rocm.sdk: wrong sha fails" 1 ninja rocm.sdk
has "wrong sha: named" "$T/.out" "but the pin says $BAD"
[ ! -e "$T/b/build/rocm/$BAD" ] && ok "wrong sha: no SDK folder" || notok "wrong sha: no SDK folder"
# the layout, but none of ROCm's GPU libraries (only the HIP runtime): not a ROCm SDK
mkdir -p "$T/hiponly/lib" "$T/hiponly/bin" "$T/hiponly/include" "$T/hiponly/.info" &&
	cp "$HIP" "$T/hiponly/lib/" && echo 5.3.3 >"$T/hiponly/.info/version" &&
	tar -C "$T/hiponly" -czf "$T/hiponly.tgz" . || exit 2
HSHA=$(sha256sum "$T/hiponly.tgz" | cut -c1-64)
check "configure: an SDK without GPU libraries" conf --arch=gfx90a --pin="rocm=$T/hiponly.tgz#sha256=$HSHA"
exits "ninja rocm.check: no GPU libraries fails" 1 ninja rocm.check
has "no GPU libraries: said so" "$T/.out" "has none of ROCm's GPU libraries (rocBLAS, hipBLASLt, rocSPARSE, MIOpen, rocRAND, ...) in lib/, lib64/ or lib/*-linux-gnu/: not a ROCm SDK"
printf 'rocm_URL=%s\n' "$T/sdk.tgz" >>"$T/pins.env"
check "configure: rocm_URL without rocm_SHA256 (trust on first use)" conf --arch=gfx90a
has "no sha: the lock named" "$T/.out" "its digest is locked on first fetch in $T/b/build/rocm.lock"
printf 'rocm_SHA256=%s\n' "$SHA" >>"$T/pins.env"
check "configure: the pin file's rocm_URL and rocm_SHA256" conf --arch=gfx90a
check "ninja rocm.check from a path" ninja rocm.check
check "configure: rocm_KIND=system keeps --rocm-path" conf --arch=gfx90a --rocm-path="$T/rocm" --pin=rocm=system
lacks "system: no rocm.sdk stage" "$T/b/build/stack.ninja" "rocm.sdk"

# --- rocm_KIND=wheels: TheRock-shaped rocm wheels (rocm[libraries,devel], the rocm-sdk
# command) made here, from a folder index, into the target venv ---------------------------
mkdir -p "$T/rw/bin" && : >"$T/rw/bin/.keep" || exit 2
"$PY3" "$KILN_SRC/tests/regress/rocm-wheels.py" "$T/rwheels" 7.0.0 core:bin/.keep="$T/rw/bin/.keep" \
	libraries:lib/"$RN"="$RAND" devel:include/hip/hip_toy.h="$S/include/hip/hip_toy.h" \
	device-gfx90a: device-gfx1151: || exit 2
cp "$T/pins.env" "$T/wpins.env"
printf 'rocm_KIND=wheels\nrocm_INDEX=%s\n' "$T/rwheels" >>"$T/wpins.env"
check "configure: rocm_KIND=wheels from a folder" conf --arch=gfx90a --pins="$T/wpins.env"
has "wheels: ROCM_PATH is kiln's link" "$T/b/build/stack.env" "ROCM_PATH=\"$T/b/build/rocm/wheels\""
check "ninja rocm.check (wheels): gfx90a passes" ninja rocm.check
check "wheels: installed into the target Python" "$T/venv/bin/python" -c "import rocm_sdk"
same "wheels: ROCM_PATH links to rocm-sdk path --root" "$("$T/venv/bin/rocm-sdk" path --root)" "$(readlink "$T/b/build/rocm/wheels")"
has "wheels: rocRAND checked" "$T/b/build/logs/rocm.check.log" "gfx90a: lib/$RN: covered"
check "configure: wheels for gfx1151" conf --arch=gfx1151 --pins="$T/wpins.env"
exits "ninja rocm.check (wheels): gfx1151 fails" 1 ninja rocm.check
has "wheels gfx1151: the library named" "$T/.out" "rocm.check: rocRAND (lib/$RN) has no code for gfx1151"
grep -v '^rocm_INDEX' "$T/wpins.env" >"$T/w2.env"
exits "configure: wheels without rocm_INDEX: 2" 2 conf --arch=gfx90a --pins="$T/w2.env"
has "no index: named" "$T/.err" "rocm_KIND=wheels needs rocm_INDEX"
