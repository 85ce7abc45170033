#!/usr/bin/env python3
"""Starts (or stops) the HTTP servers the remote source tests read from, bound to 127.0.0.1.

  http_fixture.py start STATE_DIR   nginx (Debian's /usr/sbin/nginx) and flaky_http_server.py
  http_fixture.py stop STATE_DIR

Both serve STATE_DIR/www/files/, where the tests write their files. The ports are written to
STATE_DIR/nginx.port and STATE_DIR/flaky.port; without nginx, STATE_DIR/skipped says why and the
tests skip. With openssl, nginx also serves /files/ over HTTPS on the port in STATE_DIR/https.port,
with a certificate for 127.0.0.1 made here (STATE_DIR/tls/cert.pem, its own CA). nginx's locations:
  /files/NAME      the file, with byte ranges          /no-ranges/NAME  the file, ranges ignored
  /error/...       HTTP 500                            /forbidden/...   HTTP 403
  /drop/...        connection closed, no response      /stall/...       no response for 60 s
  /slow/NAME       the file, 1 KiB/s after its first 64 KiB
  /error-after-open/NAME, /drop-after-open/NAME   byte 0 of the file (what opening asks for), then
                   HTTP 500 or a closed connection for any other range
"""
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time

NGINX = "/usr/sbin/nginx"
ECHO_MODULE = "/usr/lib/nginx/modules/ngx_http_echo_module.so"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def make_certificate(state):
    """A self-signed certificate for 127.0.0.1, or None without openssl."""
    tls = state / "tls"
    tls.mkdir(exist_ok=True)
    if not shutil.which("openssl"):
        return None
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "30",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(tls / "key.pem"), "-out", str(tls / "cert.pem")],
                   check=True, capture_output=True)
    return tls


def nginx_config(state, port, tls, tls_port):
    nginx_dir = state / "nginx"
    files = state / "www" / "files"
    stall = ""
    modules = ""
    if os.path.exists(ECHO_MODULE):
        modules = f"load_module {ECHO_MODULE};"
        stall = "location /stall/ { echo_sleep 60; echo late; }"
    else:
        # Without the echo module a stall is a rate limit from the first byte.
        stall = f"location /stall/ {{ alias {files}/; limit_rate 1; }}"
    # A root master would hand the workers to "nobody"; the tests' files are the invoker's.
    user = "user root;" if os.geteuid() == 0 else ""
    temp = "\n".join(f"  {kind}_temp_path {nginx_dir}/{kind};"
                     for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    https = ""
    if tls:
        https = f"""  server {{
    listen 127.0.0.1:{tls_port} ssl;
    ssl_certificate {tls}/cert.pem;
    ssl_certificate_key {tls}/key.pem;
    location /files/ {{ alias {files}/; }}
  }}"""
    return f"""{modules}
{user}
worker_processes 2;
daemon on;
pid {nginx_dir}/nginx.pid;
error_log {nginx_dir}/error.log warn;
events {{ worker_connections 512; }}
http {{
  access_log off;
{temp}
  default_type application/octet-stream;
  sendfile on;
  keepalive_requests 100000;
  server {{
    listen 127.0.0.1:{port};
    location /files/ {{ alias {files}/; }}
    location /no-ranges/ {{ alias {files}/; max_ranges 0; }}
    location /slow/ {{ alias {files}/; limit_rate_after 64k; limit_rate 1k; }}
    location /error/ {{ return 500; }}
    location /forbidden/ {{ return 403; }}
    location /drop/ {{ return 444; }}
    location /error-after-open/ {{
      alias {files}/;
      if ($http_range != "bytes=0-0") {{ return 500; }}
    }}
    location /drop-after-open/ {{
      alias {files}/;
      if ($http_range != "bytes=0-0") {{ return 444; }}
    }}
    {stall}
  }}
{https}
}}
"""


def pid_alive(pid, marker):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return marker.encode() in f.read()
    except OSError:
        return False


def stop(state):
    nginx_pid = state / "nginx" / "nginx.pid"
    if nginx_pid.exists():
        pid = int(nginx_pid.read_text().strip() or 0)
        if pid and pid_alive(pid, "nginx"):
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if not pid_alive(pid, "nginx"):
                    break
                time.sleep(0.05)
        nginx_pid.unlink(missing_ok=True)
    flaky_pid = state / "flaky.pid"
    if flaky_pid.exists():
        pid = int(flaky_pid.read_text().strip() or 0)
        if pid and pid_alive(pid, "flaky_http_server.py"):
            os.kill(pid, signal.SIGTERM)
        flaky_pid.unlink(missing_ok=True)
    for name in ("nginx.port", "flaky.port", "https.port"):
        (state / name).unlink(missing_ok=True)


def start_nginx(state):
    nginx_dir = state / "nginx"
    nginx_dir.mkdir(parents=True, exist_ok=True)
    config = nginx_dir / "nginx.conf"
    tls = make_certificate(state)
    for _ in range(5):  # another process may take the free port before nginx binds it
        port, tls_port = free_port(), free_port()
        config.write_text(nginx_config(state, port, tls, tls_port))
        result = subprocess.run([NGINX, "-p", str(nginx_dir), "-c", str(config),
                                 "-e", str(nginx_dir / "startup.log")],
                                capture_output=True, text=True)
        if result.returncode == 0 and wait_for_port(port):
            if tls:
                (state / "https.port").write_text(str(tls_port))
            return port
        sys.stderr.write(result.stderr)
    raise SystemExit("http_fixture: nginx did not start (see " + str(nginx_dir) + ")")


def start_flaky(state):
    port_file = state / "flaky.port"
    script = pathlib.Path(__file__).with_name("flaky_http_server.py")
    log = open(state / "flaky.log", "w")
    process = subprocess.Popen([sys.executable, str(script), str(state / "www" / "files"),
                                str(port_file)], stdout=log, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    (state / "flaky.pid").write_text(str(process.pid))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not port_file.exists():
        if process.poll() is not None:
            raise SystemExit("http_fixture: flaky_http_server.py exited (see flaky.log)")
        time.sleep(0.05)
    if not port_file.exists():
        raise SystemExit("http_fixture: flaky_http_server.py did not start")


def main():
    command, state = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    state.mkdir(parents=True, exist_ok=True)
    stop(state)
    if command == "stop":
        return
    (state / "skipped").unlink(missing_ok=True)
    if not os.access(NGINX, os.X_OK):
        (state / "skipped").write_text(f"{NGINX} is absent (tools/install-deps.sh installs it)\n")
        print("http_fixture: nginx is absent; the HTTP tests skip")
        return
    files = state / "www" / "files"
    shutil.rmtree(files, ignore_errors=True)
    files.mkdir(parents=True)
    port = start_nginx(state)
    start_flaky(state)
    (state / "nginx.port").write_text(str(port))
    print(f"http_fixture: nginx on 127.0.0.1:{port}, flaky server on 127.0.0.1:"
          f"{(state / 'flaky.port').read_text()}")


if __name__ == "__main__":
    main()
