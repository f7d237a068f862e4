#!/bin/sh
# kiln-stage fetch against servers that misbehave on purpose (a python3 http.server on
# loopback, port chosen by binding 0): one that ignores Range, an endless body, a
# trickle, an absurd Content-Length; FIFOs as the output, its .part or a file:// input;
# schemes beyond http, https, ftp and file; credentials in the URL, ~/.netrc and a token.
# A command that could hang on today's kiln runs under timeout (a hang is a failure).
. "$KILN_SRC/tests/lib.sh"
need python3 timeout mkfifo
cd "$T" || exit 2
head -c 300000 /dev/urandom >blob || exit 2
SHA=$(sha256sum blob | cut -c1-64)

cat >serve.py <<'EOF'
import base64, http.server, os, socket, sys, time
blob, log, portfile = open(sys.argv[1], "rb").read(), sys.argv[2], sys.argv[3]
state = {"cut": 1}
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def head(self, code, length=None, extra=()):
        self.send_response(code)
        for k, v in extra:
            self.send_header(k, v)
        if length is not None:
            self.send_header("Content-Length", str(length))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
    def do_GET(self):
        with open(log, "a") as f:
            f.write("%s %s %s\n" % (self.path, self.headers.get("Range") or "-",
                                   self.headers.get("Authorization") or "-"))
        p = self.path
        try:
            if p == "/norange":
                # the whole file on every request, Range or not; the first one cut midway
                self.head(200, len(blob))
                if state["cut"]:
                    state["cut"] = 0
                    self.wfile.write(blob[:100000]); self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR); self.close_connection = True
                    return
                self.wfile.write(blob)
            elif p == "/endless":
                self.head(200)
                while True:
                    self.wfile.write(b"\0" * 65536)
            elif p == "/trickle":
                self.head(200)
                while True:
                    self.wfile.write(b"x" * 2048); self.wfile.flush(); time.sleep(0.5)
            elif p == "/absurd":
                self.head(200, 10**15)
                self.wfile.write(blob[:1000]); self.wfile.flush()
                time.sleep(30)
            elif p == "/basic":
                want = "Basic " + base64.b64encode(b"kiln:s3cret").decode()
                if self.headers.get("Authorization") != want:
                    self.head(401, 0, [("WWW-Authenticate", 'Basic realm="k"')]); return
                self.head(200, len(blob)); self.wfile.write(blob)
            elif p == "/bearer":
                if self.headers.get("Authorization") != "Bearer t0ken":
                    self.head(401, 0); return
                self.head(200, len(blob)); self.wfile.write(blob)
            elif p == "/redir":
                self.head(302, 0, [("Location", "dict://127.0.0.1:%d/x" % self.server.server_address[1])])
            else:
                self.head(200, len(blob)); self.wfile.write(blob)
        except (BrokenPipeError, ConnectionResetError):
            pass
    def parse_request(self):
        # what another scheme sends (dict's CLIENT line ...) is logged too
        if not self.raw_requestline.startswith(b"GET "):
            with open(log, "a") as f:
                f.write("raw %r\n" % self.raw_requestline)
        return super().parse_request()
    def log_message(self, *a):
        pass
class S(http.server.ThreadingHTTPServer):
    daemon_threads = True
    def handle_error(self, request, address):
        pass
s = S(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
EOF
python3 serve.py blob req.log port &
srv=$!
trap 'kill $srv 2>/dev/null' EXIT INT TERM
waitfor 60 test -s port || { notok "the test server did not start in 60 s"; exit 1; }
B=http://127.0.0.1:$(cat port)
# f NAME URL [OPTION]...: kiln-stage fetch into dl/NAME, at most 60 s
f () { n=$1 u=$2; shift 2; run timeout 60 kiln-stage fetch "$u" --sha256="$SHA" -o "dl/$n" "$@"; }

# a server that ignores Range: the part is thrown away and the file fetched from zero
f norange "$B/norange"
same "fetch: a server that ignores Range: exit 0" 0 "$rc"
has "fetch: the restart is said" "$T/.err" "the server ignores Range; starting over from zero"
check "fetch: the file is whole" cmp blob dl/norange
# a part an earlier run left, resumed from a server that ignores Range
head -c 1000 blob >dl/rerun.part
f rerun "$B/norange"
same "fetch: an old part, a server that ignores Range: exit 0" 0 "$rc"

# an endless body, an absurd Content-Length, a trickle: the size cap and the deadline
f endless "$B/endless" --max-size=1000000
same "fetch: an endless body stops at --max-size: exit 1" 1 "$rc"
has "fetch: the cap is named" "$T/.err" "more than --max-size=1000000 bytes"
[ -e dl/endless.part ] && notok "fetch: over the cap, the part is removed" || ok "fetch: over the cap, the part is removed"
f absurd "$B/absurd"
same "fetch: an absurd Content-Length: exit 1" 1 "$rc"
has "fetch: the announced size is named" "$T/.err" "announces 1000000000000000 bytes"
f trickle "$B/trickle" --max-time=2
same "fetch: a trickle ends at --max-time: exit 1" 1 "$rc"
has "fetch: the deadline is named" "$T/.err" "--max-time=2"
same "fetch: one line" 1 "$(lines "$T/.err")"
exits "fetch: --max-time=0 is a usage error" 2 kiln-stage fetch "$B/x" --sha256="$SHA" -o dl/x --max-time=0

# FIFOs: as the output, as its .part, as a file:// input
mkfifo fifo-out fifo-in && mkdir -p dl && mkfifo dl/p.part || exit 2
f ../fifo-out "$B/blob"
same "fetch: a FIFO as the output: exit 2" 2 "$rc"
has "fetch: the FIFO is named" "$T/.err" "fifo-out: is a FIFO, not a regular file"
f p "$B/blob"
same "fetch: a FIFO as the .part: exit 2" 2 "$rc"
has "fetch: the part is named" "$T/.err" "p.part: is a FIFO, not a regular file"
f fromfifo "file://$T/fifo-in"
same "fetch: a file:// FIFO: exit 2" 2 "$rc"
has "fetch: the input is named" "$T/.err" "fifo-in: is a FIFO, not a regular file"
f fromdir "file://$T/dl"
same "fetch: a file:// folder: exit 2" 2 "$rc"
f fromnone "file://$T/none"
same "fetch: a missing file:// input: exit 2" 2 "$rc"
f fromfile "file://$T/blob"
same "fetch: a file:// input: exit 0" 0 "$rc"
check "fetch: the file:// copy is whole" cmp blob dl/fromfile

# schemes: http, https, ftp and file only, also after a redirect
: >req.log
for s in dict gopher telnet ldap scp smb mqtt; do
	f "s-$s" "$s://127.0.0.1:$(cat port)/x"
	same "fetch: $s:// refused: exit 2" 2 "$rc"
	has "fetch: $s:// named" "$T/.err" "scheme '$s' is not one of http, https, ftp, file"
done
same "fetch: no refused scheme reached the server" "" "$(cat req.log)"
f redir "$B/redir"
same "fetch: a redirect to dict:// is refused: exit 1" 1 "$rc"
same "fetch: the redirect was not followed" 1 "$(lines req.log)"

# credentials: never in the URL; ~/.netrc (or NETRC) and KILN_FETCH_TOKEN instead
f cred "http://kiln:s3cret@127.0.0.1:$(cat port)/basic"
same "fetch: user:secret@ in the URL: exit 2" 2 "$rc"
has "fetch: the fix is named" "$T/.err" "~/.netrc"
lacks "fetch: the secret is not repeated" "$T/.err" "s3cret"
printf 'machine 127.0.0.1 login kiln password s3cret\n' >netrc
NETRC=$T/netrc f basic "$B/basic"
same "fetch: credentials from NETRC: exit 0" 0 "$rc"
KILN_FETCH_TOKEN=t0ken f bearer "$B/bearer"
same "fetch: a bearer token from KILN_FETCH_TOKEN: exit 0" 0 "$rc"
lacks "fetch: the token is not logged" "$T/.err" "t0ken"
exit 0
