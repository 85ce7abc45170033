#!/usr/bin/env python3
"""A file server on 127.0.0.1 that fails some requests before it serves, for the retry tests.

  flaky_http_server.py FILES_DIR PORT_FILE

  /fail/N/TOKEN/NAME  the first N requests (counted per TOKEN) get HTTP 503, later ones the file
  /drop/N/TOKEN/NAME  the first N requests for more than one byte get the response headers and half
                      the body, then the connection is closed; later ones the file
  /endless/N/TOKEN/NAME  requests for more than one byte get the file's range as declared, then
                      JSON lines on and on (up to 1 GiB) without a Content-Length
Files are served with byte ranges (206, Content-Range) and an ETag and Last-Modified as nginx
makes them. The chosen port is written to PORT_FILE once the server listens.
"""
import email.utils
import http.server
import os
import re
import sys
import threading

FILES = sys.argv[1]
counts = {}
counts_lock = threading.Lock()


def count(token):
    with counts_lock:
        counts[token] = counts.get(token, 0) + 1
        return counts[token]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        match = re.fullmatch(r"/(fail|drop|endless)/(\d+)/([\w.-]+)/([\w.-]+)", self.path)
        if not match:
            return self.send_plain(404)
        mode, failures, token, name = match.group(1), int(match.group(2)), match.group(3), match.group(4)
        path = os.path.join(FILES, name)
        if not os.path.isfile(path):
            return self.send_plain(404)
        stat = os.stat(path)
        size = stat.st_size
        first, last = 0, size - 1
        ranged = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if ranged:
            first = int(ranged.group(1))
            last = min(int(ranged.group(2)), size - 1) if ranged.group(2) else size - 1
        if mode == "fail" and count(token) <= failures:
            return self.send_plain(503)
        with open(path, "rb") as f:
            f.seek(first)
            body = f.read(last + 1 - first)
        endless = mode == "endless" and len(body) > 1
        self.send_response(206 if ranged else 200)
        if endless:
            self.send_header("Connection", "close")
        else:
            self.send_header("Content-Length", str(len(body)))
        if ranged:
            self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
        self.send_header("ETag", '"%x-%x"' % (int(stat.st_mtime), stat.st_size))
        self.send_header("Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True))
        self.end_headers()
        if mode == "drop" and len(body) > 1 and count(token) <= failures:
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)
        if endless:
            self.close_connection = True
            line = b'{"more": "' + b"x" * 1000 + b'"}\n'
            try:
                for _ in range(1 << 20):
                    self.wfile.write(line)
            except OSError:
                pass

    def send_plain(self, status):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_file = sys.argv[2]
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
