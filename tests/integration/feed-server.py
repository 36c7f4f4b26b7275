#!/usr/bin/env python3
# The loopback HTTPS server test-pkg-feed.sh and tests/windows/test-wfeed-win.sh
# fetch from: the files of ROOT with ETag validators and Range requests, and
# the misbehaviours a feed's host can show, by path prefix:
#   /cut/F      the first request gets half of F and a closed connection
#               (a connection cut short); later ones are served, Range too
#   /trunc/F    a complete response, chunked (no length given), holding only
#               the first half of F
#   /chunked/F  F chunked, with 4096 bytes more after it
#   /slow/F     the headers and 16 bytes, then nothing
#   /loop       a redirect to itself
# A file F of ROOT with a file F.link beside it is served with that file's
# text as its Link header (a release listing's next page). Anything else not
# in ROOT is a 404. 127.0.0.1 only; it stops after
# MAX_REQUESTS requests or MAX_SECONDS seconds, whichever comes first, and
# logs each request's line and its Range and If-None-Match headers to LOG.
#
# With CERT and KEY given as "-", it serves plain HTTP (a client whose TLS
# cannot be tested here).
#
# Usage: feed-server.py ROOT CERT KEY PORT-FILE LOG MAX_REQUESTS MAX_SECONDS
import hashlib
import http.server
import os
import ssl
import sys
import threading
import time

ROOT, CERT, KEY, PORT_FILE, LOG = sys.argv[1:6]
MAX_REQUESTS, MAX_SECONDS = int(sys.argv[6]), int(sys.argv[7])
lock = threading.Lock()
count = 0
cut_done = set()
stop = threading.Event()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def file(self, name):
        path = os.path.join(ROOT, name.lstrip("/"))
        if ".." in name or not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            return f.read()

    def send(self, code, body, extra=()):
        self.send_response(code)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        global count
        with lock:
            count += 1
            n = count
            with open(LOG, "a") as log:
                log.write("%s range=%s inm=%s\n" % (self.path, self.headers.get("Range"),
                                                     self.headers.get("If-None-Match")))
        if n >= MAX_REQUESTS:
            stop.set()
        path = self.path.split("?")[0]
        if path == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        kind, _, rest = path.lstrip("/").partition("/")
        if kind not in ("cut", "trunc", "chunked", "slow"):
            kind, rest = "", path
        body = self.file(rest)
        if body is None:
            self.send(404, b"not found\n")
            return
        if kind in ("trunc", "chunked"):
            parts = (body[: len(body) // 2],) if kind == "trunc" else (body, b"x" * 4096)
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in parts:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        if kind == "slow":
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:16])
            self.wfile.flush()
            stop.wait(60)
            self.close_connection = True
            return
        if kind == "cut" and rest not in cut_done:
            cut_done.add(rest)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        etag = '"%s"' % hashlib.sha256(body).hexdigest()[:16]
        if self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            self.send(206, body[start:], [("Content-Range", "bytes %d-%d/%d" %
                                            (start, len(body) - 1, len(body))),
                                           ("ETag", etag)])
            return
        link = self.file(rest + ".link")
        extra = [("ETag", etag)] + ([("Link", link.decode().strip())] if link else [])
        self.send(200, body, extra)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
if CERT != "-":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(CERT, KEY)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
threading.Thread(target=server.serve_forever, daemon=True).start()
stop.wait(MAX_SECONDS)
server.shutdown()
