"""A webhook receiver for the notification tests: verifies every request with the Standard Webhooks
reference library (PyPI `standardwebhooks`) and records what it got.

Usage: webhook_receiver.py SECRETS_FILE LOG_FILE [ADDRESS]. Listens on ADDRESS (default 127.0.0.1; ::1 for IPv6) and
prints its port. SECRETS_FILE holds one whsec_ secret per line (re-read on each request; any may match). Each request appends a JSON line to LOG_FILE:
{"path", "id", "verified", "body", "in_flight"} (requests to that path being answered, this one included). The path
decides the answer: /ok → 204 when verified (401 when not), /fail → 500, /gone → 410, /slow → sleeps 3 s then 204,
/retry-after → 503 with Retry-After: 2, /busy → sleeps 0.2 s then 204, /hang → holds the request until the file
LOG_FILE.release exists (at most 60 s; a partner that answers after the sender gave up), then 204.
"""
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

SECRETS, LOG = sys.argv[1], sys.argv[2]
lock = threading.Lock()
in_flight = {}


def verified(body, headers):
    try:
        secrets = [line.strip() for line in open(SECRETS) if line.strip()]
    except FileNotFoundError:
        secrets = []
    for secret in secrets:
        try:
            Webhook(secret).verify(body, headers)
            return True
        except Exception:
            pass
    return False


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        ok = verified(body, headers)
        with lock, open(LOG, "a") as f:
            in_flight[self.path] = in_flight.get(self.path, 0) + 1
            f.write(json.dumps({"path": self.path, "id": headers.get("webhook-id"), "verified": ok,
                                "body": body.decode("utf-8", "replace"), "in_flight": in_flight[self.path]}) + "\n")
        try:
            status, extra = self.answer(ok)
        finally:
            # Counted out before the answer is written: once the sender has the answer it may send the next request,
            # and that one must not find this one still counted (a race in the receiver, not the sender).
            with lock:
                in_flight[self.path] -= 1
        self.send_response(status)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def answer(self, ok):
        """Waits as the path says, then returns the status and extra headers to answer with."""
        if self.path == "/slow":
            time.sleep(3)
        if self.path == "/busy":
            time.sleep(0.2)
        if self.path == "/hang":
            end = time.monotonic() + 60
            while not os.path.exists(LOG + ".release") and time.monotonic() < end:
                time.sleep(0.05)
        status, extra = {"/ok": (204 if ok else 401, {}), "/fail": (500, {}), "/gone": (410, {}), "/slow": (204, {}),
                         "/busy": (204, {}), "/hang": (204, {}), "/retry-after": (503, {"Retry-After": "2"})}.get(self.path, (404, {}))
        return status, extra

    def log_message(self, *args):
        pass


ADDRESS = sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1"


class Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6 if ":" in ADDRESS else socket.AF_INET


server = Server((ADDRESS, 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
