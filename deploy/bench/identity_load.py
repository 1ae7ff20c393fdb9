#!/usr/bin/env python3
"""Load clients for deploy/bench/identity (standard library only).

  identity_load.py logins AGENTS.jsonl PORT SECONDS THREADS
      signs agents in (each agent twice: the current and the next TOTP step, since a code is
      accepted once) from THREADS threads for at most SECONDS; prints one JSON line.
  identity_load.py signatures CLIENT.json PORT COUNT
      COUNT bearer-only requests (GET /api/v1/cases: 403 after the key lookup) and COUNT signed
      POSTs (POST /api/v1/cases with a body the handler refuses after authentication), one
      connection, sequentially; prints the per-request latencies as one JSON line.
"""
import base64, hashlib, hmac, http.client, json, queue, struct, sys, threading, time


def totp(secret_b32, at):
    secret = base64.b32decode(secret_b32 + "=" * (-len(secret_b32) % 8))
    counter = int(at // 30)
    digest = hmac.new(secret, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = (struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1000000
    return "%06d" % value


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100.0 * (len(ordered) - 1))))]


def logins(agents_file, port, seconds, threads):
    work = queue.Queue()
    now = time.time()
    agents = [json.loads(line) for line in open(agents_file)]
    # Every agent's current step first, then the next step: a later step used first would make the
    # earlier code stale (codes are accepted once, in order), which the service rightly refuses.
    for step in (0, 30):
        for agent in agents:
            secret = agent["totp_uri"].split("secret=")[1].split("&")[0]
            work.put((agent["email"], agent["password"], secret, step))
    deadline = time.time() + seconds
    latencies, statuses, lock = [], {}, threading.Lock()

    def run():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.time() < deadline:
            try:
                email, password, secret, step = work.get_nowait()
            except queue.Empty:
                return
            body = json.dumps({"email": email, "password": password, "totp": totp(secret, time.time() + step)})
            start = time.perf_counter()
            connection.request("POST", "/api/v1/session", body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            elapsed = time.perf_counter() - start
            with lock:
                latencies.append(elapsed)
                statuses[response.status] = statuses.get(response.status, 0) + 1

    started = time.time()
    pool = [threading.Thread(target=run) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    elapsed = time.time() - started
    print(json.dumps({
        "logins": statuses.get(201, 0), "statuses": statuses, "seconds": round(elapsed, 2),
        "logins_per_second": round(statuses.get(201, 0) / elapsed, 1),
        "p50_ms": round(percentile(latencies, 50) * 1000, 1), "p99_ms": round(percentile(latencies, 99) * 1000, 1),
    }))


def signatures(client_file, port, count):
    client = json.load(open(client_file))
    key, secret = client["api_key"], client["signing_secret"].encode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def timed(method, target, body, headers):
        start = time.perf_counter()
        connection.request(method, target, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return time.perf_counter() - start, response.status

    bearer, signed, statuses = [], [], {}
    for i in range(count):
        elapsed, status = timed("GET", "/api/v1/cases", None, {"Authorization": "Bearer " + key})
        bearer.append(elapsed)
        statuses["bearer_%d" % status] = statuses.get("bearer_%d" % status, 0) + 1
        body = json.dumps({"bench": i}).encode()
        t = str(int(time.time()))
        mac = hmac.new(secret, (t + ".POST./api/v1/cases.").encode() + body, hashlib.sha256).hexdigest()
        headers = {"Authorization": "Bearer " + key, "Reclaim-Signature": "t=%s,v1=%s" % (t, mac), "Content-Type": "application/json"}
        elapsed, status = timed("POST", "/api/v1/cases", body, headers)
        signed.append(elapsed)
        statuses["signed_%d" % status] = statuses.get("signed_%d" % status, 0) + 1
    mean = lambda values: sum(values) / len(values)
    print(json.dumps({
        "count": count, "statuses": statuses,
        "bearer_mean_us": round(mean(bearer) * 1e6), "bearer_p50_us": round(percentile(bearer, 50) * 1e6),
        "signed_mean_us": round(mean(signed) * 1e6), "signed_p50_us": round(percentile(signed, 50) * 1e6),
        "signature_cost_p50_us": round((percentile(signed, 50) - percentile(bearer, 50)) * 1e6),
    }))


if __name__ == "__main__":
    if sys.argv[1] == "logins":
        logins(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == "signatures":
        signatures(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("usage: identity_load.py logins|signatures ...")
