#!/usr/bin/env python3
"""Load and receivers for deploy/bench/delivery (standard library only).

  delivery_load.py receiver [LOG]
      -> a webhook receiver on a free loopback port (prints it): answers 204 to every POST; /hang answers after
         30 s (a partner slower than the service's 15 s timeout). With LOG, appends "path webhook-id epoch" per
         request as it arrives. ThreadingHTTPServer, so a slow sender is never waiting for another's answer
  delivery_load.py register CLIENT.json PORT URL
      -> POST /api/v1/webhooks {"url": URL, "events": ["case.opened"]} signed as the client; prints the status
  delivery_load.py open CLIENT.json[,CLIENT.json...] PORT COUNT THREADS [RATE]
      -> COUNT cases opened over HTTP, by the clients in turn (each queues one mail and one webhook), at most RATE
         a second when given; prints "opened errors seconds"
  delivery_load.py latency OUTBOX.csv INBOX RECEIVER_LOG WAITED
      -> mail and webhook latency from queued (OUTBOX.csv: id,channel,endpoint,created epoch) to accepted by the
         SMTP server (INBOX/*.json accepted_at) or received by the webhook receiver; a message not accepted counts as
         slower than WAITED seconds. Prints a Markdown table
"""
import glob, hashlib, hmac, http.client, json, os, re, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Answer204(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log = None
    lock = threading.Lock()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if Answer204.log:
            with Answer204.lock, open(Answer204.log, "a") as f:
                f.write("%s %s %.6f\n" % (self.path, self.headers.get("webhook-id", "-"), time.time()))
        if self.path == "/hang":
            time.sleep(30)
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def receiver(log=None):
    Answer204.log = log
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


def open_cases(client_files, port, count, threads, rate="0"):
    clients = [json.load(open(name)) for name in client_files.split(",")]
    count, threads, rate = int(count), int(threads), float(rate)
    next_index, lock, errors = [0], threading.Lock(), [0]

    def worker():
        connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
        while True:
            with lock:
                index = next_index[0]
                if index >= count:
                    return
                next_index[0] += 1
            client = clients[index % len(clients)]
            if rate > 0:  # paced: case i is opened no sooner than i / rate seconds after the start
                time.sleep(max(0, started + index / rate - time.monotonic()))
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


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, max(0, int(round(p / 100 * len(sorted_values))) - 1))]


def latency(outbox_csv, inbox, receiver_log, waited):
    waited = float(waited)
    queued = {}  # id -> (channel, endpoint, created)
    for line in open(outbox_csv):
        message_id, channel, endpoint, created = line.strip().split(",")
        queued[message_id] = (channel, endpoint, float(created))
    arrived = {}
    for name in glob.glob(os.path.join(inbox, "*.json")):
        if not os.path.exists(name[:-5] + ".eml"):
            continue
        eml = open(name[:-5] + ".eml", "rb").read(4096).decode("utf-8", "replace")
        found = re.search(r"^Message-ID: <([0-9a-f-]{36})@", eml, re.M | re.I)
        if found:
            arrived.setdefault(found.group(1), json.load(open(name))["accepted_at"])
    if os.path.exists(receiver_log):
        for line in open(receiver_log):
            _, message_id, at = line.split()
            arrived.setdefault(message_id, float(at))  # the first request: a retry is not the latency
    lanes = {}
    for message_id, (channel, endpoint, created) in queued.items():
        at = arrived.get(message_id)
        lanes.setdefault((channel, endpoint), []).append(at - created if at is not None else float("inf"))
    print("| messages | queued | arrived | p50 | p99 | max |")
    print("|---|---|---|---|---|---|")
    for (channel, endpoint), values in sorted(lanes.items()):
        values.sort()
        shown = lambda v: "> %.0f s (not arrived)" % waited if v == float("inf") else "%.2f s" % v
        print("| %s%s | %d | %d | %s | %s | %s |" % (channel, (" to " + endpoint) if endpoint else "", len(values),
              sum(1 for v in values if v != float("inf")), shown(percentile(values, 50)), shown(percentile(values, 99)),
              shown(values[-1])))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "receiver":
        receiver(*sys.argv[2:3])
    elif command == "register":
        register(*sys.argv[2:5])
    elif command == "open":
        open_cases(*sys.argv[2:7])
    elif command == "latency":
        latency(*sys.argv[2:6])
    else:
        sys.exit("delivery_load.py: unknown command %s" % command)
