"""archive-server.py ROOT PORTFILE LOG: a Debian archive on loopback for the debsrc tests.

Serves ROOT over HTTP on 127.0.0.1, on a port the kernel picks (bound to 0, then written
to PORTFILE), with byte ranges ("Range: bytes=N-", answered 206) so that apt can resume a
download. Each request is a line in LOG: the path and the Range header. The fault: while
the file ROOT/.cut exists and holds a number K, every response to a file under pool/
sends at most K bytes of its body and closes the connection (an interrupted download).
"""
import http.server
import os
import sys

root, portfile, log = sys.argv[1], sys.argv[2], sys.argv[3]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.serve(False)

    def do_GET(self):
        self.serve(True)

    def serve(self, body):
        rng = self.headers.get("Range", "")
        with open(log, "a") as f:
            f.write("%s %s %s\n" % (self.command, self.path, rng or "-"))
        path = os.path.join(root, self.path.split("?")[0].lstrip("/"))
        if not os.path.isfile(path) or ".." in self.path:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with open(path, "rb") as f:
            data = f.read()
        start = 0
        if rng.startswith("bytes=") and rng[6:].endswith("-"):
            start = int(rng[6:-1])
        if start >= len(data) and start > 0:
            self.send_response(416)
            self.send_header("Content-Range", "bytes */%d" % len(data))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if start:
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        else:
            self.send_response(200)
        part = data[start:]
        self.send_header("Content-Length", str(len(part)))
        self.send_header("Last-Modified", "Wed, 25 Nov 2026 12:00:00 GMT")
        self.end_headers()
        if not body:
            return
        cut = os.path.join(root, ".cut")
        if self.path.startswith("/pool/") and os.path.exists(cut):
            with open(cut) as f:
                k = int(f.read().strip() or "0")
            self.wfile.write(part[:k])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(part)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
