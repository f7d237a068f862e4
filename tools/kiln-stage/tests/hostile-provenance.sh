#!/bin/sh
# provenance against hostile values: a record value that is not UTF-8 still gives valid
# JSON (the byte comes back through Python's surrogateescape); a pin that is not UTF-8,
# or a URL with credentials, is refused in one line before anything is written (the
# secret never repeated), in a pin file, in --pin and in configure's --stage-cache.
. "$KILN_SRC/tests/lib.sh"
need python3
cd "$T" || exit 2

# --- kiln-stage info: records written the way the install step writes them
mkdir info || exit 2
printf 'COMPONENT=vision\nURL=https://example.com/v\351sion\nREF=v1\377-latin1\nVERSION=1.0\n' |
	kiln-stage kv -o info/vision.info || exit 2
printf 'COMPONENT=torch\nREF=v2.8.0\n' | kiln-stage kv -o info/torch.info || exit 2
check "info: records with bytes that are not UTF-8" kiln-stage info -o bi.json info
check "info: build-info.json is valid JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' bi.json
same "info: the bytes come back (surrogateescape)" "b'v1\\xff-latin1' b'https://example.com/v\\xe9sion'" \
	"$(python3 -c 'import json, os, sys; c = json.load(open(sys.argv[1]))["components"]["vision"]; print(os.fsencode(c["ref"]), os.fsencode(c["url"]))' bi.json 2>&1)"
same "info: UTF-8 passes as it is" "v2.8.0" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["components"]["torch"]["ref"])' bi.json 2>&1)"

# --- pins: the generator (what configure calls) refuses before writing anything
venv_new python3 "$PWD/venv" >/dev/null 2>&1 || exit 2
cp "$KILN_SRC/env/versions.env" base.env || exit 2
{ cat base.env; printf 'vision_REF=v1\377\n'; } >nonutf8.env
{ cat base.env; printf 'vision_URL=https://kiln:s3cret@example.com/vision.git\n'; } >cred.env
{ cat base.env; printf 'rocm_URL=ftp://kiln:s3cret@example.com/sdk.tgz\nrocm_SHA256=%064d\n' 0; } >credsdk.env
# gen DIR OPTION...: the generator run in DIR, as configure runs it
gen () { b=$1; shift; (cd "$T/$b" && kiln-stage graph --srcdir="$KILN_SRC" --builddir="$T/$b/build" \
	--arch=cpu --python="$T/venv/bin/python" "$@"); }
mkdir -p g1 g2 g3 g4 g5
run gen g1 --pins="$T/nonutf8.env" -- configure
exits_rc () { same "$1: exit 2" 2 "$rc"; same "$1: one line" 1 "$(lines "$T/.err")"; }
exits_rc "pins: a REF that is not UTF-8"
has "pins: the file and line are named" "$T/.err" "nonutf8.env:"
has "pins: why" "$T/.err" "vision_REF=v1"
has "pins: not UTF-8" "$T/.err" "is not UTF-8 text"
run gen g2 --pins="$T/cred.env" -- configure
exits_rc "pins: a URL with credentials"
has "pins: credentials named" "$T/.err" "has credentials in the URL"
lacks "pins: the secret is not repeated" "$T/.err" "s3cret"
run gen g3 --pins="$T/credsdk.env" -- configure
exits_rc "pins: an SDK URL with credentials"
run gen g4 --pins="$T/base.env" -- configure "--pin=rocm=https://kiln:s3cret@example.com/sdk.tgz#sha256=$(printf %064d 0)"
exits_rc "--pin: an SDK URL with credentials"
lacks "--pin: the secret is not repeated" "$T/.err" "s3cret"
run gen g5 --pins="$T/base.env" -- configure "$(printf -- '--pin=vision=v1\377')"
exits_rc "--pin: a ref that is not UTF-8"
same "no file was written for any of them" "" "$(find g1 g2 g3 g4 g5 -type f)"
same "no file holds the secret" "" "$(grep -rl s3cret g1 g2 g3 g4 g5)"

# --- configure: a stage-cache URL with credentials, any scheme spelling
mkdir c && cd c || exit 2
for u in "HTTPS://kiln:s3cret@cache.example.com/kiln/" "http://kiln:s3cret@cache.example.com/kiln/"; do
	run sh "$KILN_SRC/configure" --python="$T/venv/bin/python" --arch=cpu --stage-cache="$u" KILN_BIN="$KILN_BIN"
	same "configure: --stage-cache=${u%%:*}://user:secret@: refused" 1 "$([ "$rc" != 0 ] && echo 1)"
	has "configure: credentials named" "$T/.err" "credentials in a URL would land in build.ninja"
	lacks "configure: the secret is not repeated" "$T/.err" "s3cret"
	lacks "configure: nor on stdout" "$T/.out" "s3cret"
done
exit 0
