#!/usr/bin/env python3
"""Load and receivers for deploy/bench/delivery (standard library only).

  delivery_load.py receiver
      -> a webhook receiver on a free loopback port (prints it): answers 204 to every POST, counts nothing;
         ThreadingHTTPServer, so a slow sender is never waiting for another's answer
  delivery_load.py register CLIENT.json PORT URL
      -> POST /api/v1/webhooks {"url": URL, "events": ["case.opened"]} signed as the client; prints the status
  delivery_load.py open CLIENT.json PORT COUNT THREADS
      -> COUNT cases opened over HTTP as the client (each queues one mail and one webhook); prints
         "opened errors seconds"
"""
import hashlib, hmac, http.client, json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Answer204(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def receiver():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer204)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def signed(client, method, target, body):
    t = str(int(time.time()))
    mac = hmac.new(client["signing_secret"].encode(), ("%s.%s.%s." % (t, method, target)).encode() + body, hashlib.sha256).hexdigest()
    return {"Authorization": "Bearer " + client["api_key"], "Reclaim-Signature": "t=%s,v1=%s" % (t, mac),
            "Content-Type": "application/json"}


def register(client_file, port, url):
    client = json.load(open(client_file))
    body = json.dumps({"url": url, "events": ["case.opened"]}).encode()
    connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
    connection.request("POST", "/api/v1/webhooks", body, signed(client, "POST", "/api/v1/webhooks", body))
    response = connection.getresponse()
    response.read()
    print(response.status)


def open_cases(client_file, port, count, threads):
    client = json.load(open(client_file))
    count, threads = int(count), int(threads)
    next_index, lock, errors = [0], threading.Lock(), [0]

    def worker():
        connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
        while True:
            with lock:
                index = next_index[0]
                if index >= count:
                    return
                next_index[0] += 1
            serial = "C02B%08d" % index
            body = json.dumps({"kind": "activation_lock", "account_email": "owner-%d@example.net" % index,
                               "customer": {"name": "Bench Owner", "contact_email": "owner-%d@example.org" % index},
                               "devices": [{"serial": serial, "imei": None, "model": "Phone"}],
                               "facts": {"rescue_email_added": False, "security_questions_changed": False,
                                         "two_step_enabled": False, "lost_mode_enabled": True},
                               "summary": "Delivery benchmark"}).encode()
            connection.request("POST", "/api/v1/cases", body, signed(client, "POST", "/api/v1/cases", body))
            response = connection.getresponse()
            response.read()
            if response.status != 201:
                with lock:
                    errors[0] += 1

    started = time.monotonic()
    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    print(count - errors[0], errors[0], "%.1f" % (time.monotonic() - started))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "receiver":
        receiver()
    elif command == "register":
        register(*sys.argv[2:5])
    elif command == "open":
        open_cases(*sys.argv[2:6])
    else:
        sys.exit("delivery_load.py: unknown command %s" % command)
