"""http-faults.py ROOT LOG PORTFILE: an HTTP server on loopback that misbehaves on purpose,
for the tests of kiln-stage fetch (hostile-fetch.sh) and of the remote stage cache
(hostile-cache.sh); started by tests/http-faults.inc.

It binds 127.0.0.1 port 0 (the kernel's choice: no race for a port), listens, and only
then writes the port to PORTFILE (by rename): a test that reads the port may connect.
Every request is a line in LOG: "METHOD PATH RANGE AUTHORIZATION" (- when absent), and
a request line that is not GET, HEAD or PUT (what another scheme sends) "raw LINE".

GET and HEAD serve the files of ROOT, PUT stores one (through a temporary file). The
faults, by path (the body is the file ROOT/blob):
  /norange  the whole body whatever the Range; the first answer cut after 100000 bytes
  /endless  an endless body without a length;  /trickle  2 KiB every 0.5 s, forever
  /absurd   announces 10**15 bytes, sends 1000 and stalls
  /basic, /bearer  401 unless the Authorization is Basic kiln:s3cret or Bearer t0ken
  /redir    a redirect to dict://
and, while the file ROOT/.endless or ROOT/.trickle exists, a GET of a stage-cache
object (a path with /cas/) is sent endlessly, or one byte a second."""
import base64
import http.server
import os
import socket
import sys
import time

root, log, portfile = sys.argv[1], sys.argv[2], sys.argv[3]
state = {"cut": 1}


def note(line):
    with open(log, "a") as f:
        f.write(line + "\n")


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def file(self):
        return os.path.join(root, self.path.lstrip("/").replace("..", "_"))

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

    def parse_request(self):
        if not self.raw_requestline.split(b" ")[0] in (b"GET", b"HEAD", b"PUT"):
            note("raw %r" % self.raw_requestline)
        if not super().parse_request():
            return False
        note("%s %s %s %s" % (self.command, self.path, self.headers.get("Range") or "-",
                              self.headers.get("Authorization") or "-"))
        return True

    def do_HEAD(self):
        p = self.file()
        self.head(200 if os.path.isfile(p) else 404, os.path.getsize(p) if os.path.isfile(p) else 0)

    def do_GET(self):
        try:
            fault = getattr(self, "fault_" + self.path.lstrip("/"), None)
            if fault:
                fault(open(os.path.join(root, "blob"), "rb").read())
            else:
                self.serve()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        p = self.file()
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p + ".tmp", "wb") as f:
            f.write(body)
        os.rename(p + ".tmp", p)
        self.head(201, 0)

    def serve(self):
        p = self.file()
        if not os.path.isfile(p):
            self.head(404, 0)
            return
        data = open(p, "rb").read()
        cas = "/cas/" in self.path
        if cas and os.path.exists(os.path.join(root, ".endless")):
            self.head(200)
            while True:
                self.wfile.write(data)
        self.head(200, len(data))
        if cas and os.path.exists(os.path.join(root, ".trickle")):
            for b in data:
                self.wfile.write(bytes([b]))
                self.wfile.flush()
                time.sleep(1)
        self.wfile.write(data)

    def fault_norange(self, blob):
        self.head(200, len(blob))
        if state["cut"]:
            state["cut"] = 0
            self.wfile.write(blob[:100000])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(blob)

    def fault_endless(self, blob):
        self.head(200)
        while True:
            self.wfile.write(b"\0" * 65536)

    def fault_trickle(self, blob):
        self.head(200)
        while True:
            self.wfile.write(b"x" * 2048)
            self.wfile.flush()
            time.sleep(0.5)

    def fault_absurd(self, blob):
        self.head(200, 10**15)
        self.wfile.write(blob[:1000])
        self.wfile.flush()
        time.sleep(30)

    def fault_basic(self, blob):
        if self.headers.get("Authorization") != "Basic " + base64.b64encode(b"kiln:s3cret").decode():
            self.head(401, 0, [("WWW-Authenticate", 'Basic realm="k"')])
            return
        self.head(200, len(blob))
        self.wfile.write(blob)

    def fault_bearer(self, blob):
        if self.headers.get("Authorization") != "Bearer t0ken":
            self.head(401, 0)
            return
        self.head(200, len(blob))
        self.wfile.write(blob)

    def fault_redir(self, blob):
        self.head(302, 0, [("Location", "dict://127.0.0.1:%d/x" % self.server.server_address[1])])

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
