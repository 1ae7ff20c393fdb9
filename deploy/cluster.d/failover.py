#!/usr/bin/env python3
"""Kills the PostgreSQL primary (or one service instance) under keyed write load and reports what the clients saw.

Run by `deploy/cluster failover` (and `deploy/cluster lose-instance`). Writers are API clients opening cases (POST /api/v1/cases, signed,
each with its own Idempotency-Key); a failed attempt (5xx, reset, timeout) is retried with the same key
and a fresh signature until it is acknowledged, as a well-behaved partner would. After the kill the
writers go on until a 2xx has been seen and the load has run --after seconds more, then the database
is counted: every acknowledged case must be there, exactly once.
"""
import argparse, hashlib, hmac, http.client, json, subprocess, sys, threading, time, uuid

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--client", required=True, help="JSON from `reclaim client add --json`")
parser.add_argument("--writers", type=int, default=8)
parser.add_argument("--warmup", type=float, default=5.0, help="seconds of load before the kill")
parser.add_argument("--after", type=float, default=5.0, help="seconds of load after the first 2xx following the kill")
parser.add_argument("--limit", type=float, default=120.0, help="give up this many seconds after the kill")
parser.add_argument("--kill", required=True, help="command that kills something and prints what and when (Unix seconds)")
parser.add_argument("--primary", help="command that prints the primary's node index (failover: it must change)")
parser.add_argument("--database", required=True, help="libpq URL for counting (read-write)")
args = parser.parse_args()

client = json.load(open(args.client))
api_key, secret = client["api_key"], client["signing_secret"].encode()
run = uuid.uuid4().hex[:12]

lock = threading.Lock()
acknowledged = {}      # key -> (case_number, time acknowledged)
attempts = []          # (time sent, time answered, status or exception name, had Retry-After)
stop = threading.Event()
kill_at = [None]


def writer(index):
    connection = None
    sequence = 0
    while not stop.is_set():
        sequence += 1
        key = "failover-%s-%d-%d" % (run, index, sequence)
        body = json.dumps({
            "kind": "account_takeover", "account_email": "victim-%d@example.com" % index,
            "customer": {"name": "Failover Writer", "contact_email": "writer@example.net"},
            "devices": [{"serial": "C02XK1ZJH3QD", "imei": "490154203237518", "model": "Phone 12"}], "facts": {"rescue_email_added": True}, "summary": key,
        }).encode()
        last_t = None
        while True:
            t = int(time.time())
            if t == last_t:  # the replay store refuses a second identical signature: wait for a new second
                time.sleep(t + 1 - time.time() + 0.01)
                t = int(time.time())
            last_t = t
            mac = hmac.new(secret, (str(t) + ".POST./api/v1/cases.").encode() + body, hashlib.sha256).hexdigest()
            headers = {"Authorization": "Bearer " + api_key, "Reclaim-Signature": "t=%d,v1=%s" % (t, mac),
                       "Content-Type": "application/json", "Idempotency-Key": key}
            sent = time.time()
            status, retry_after, number = None, False, None
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=15)
                connection.request("POST", "/api/v1/cases", body, headers)
                response = connection.getresponse()
                payload = response.read()
                status = response.status
                retry_after = response.getheader("Retry-After") is not None
                if 200 <= status < 300:
                    number = json.loads(payload)["case_number"]
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = None
            except Exception as error:  # reset, refused, timeout: the answer is lost, the key is retried
                status = type(error).__name__
                if connection is not None:
                    connection.close()
                connection = None
            answered = time.time()
            with lock:
                attempts.append((sent, answered, status, retry_after))
                if number is not None:
                    acknowledged[key] = (number, answered)
            if number is not None:
                break
            if stop.is_set() and time.time() > deadline[0]:
                break  # never acknowledged: not counted, whatever the database holds
            time.sleep(0.2)


deadline = [float("inf")]
threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(args.writers)]
for thread in threads:
    thread.start()
time.sleep(args.warmup)
killed = subprocess.run(args.kill, shell=True, check=True, capture_output=True, text=True).stdout.split()
old_primary, kill_at[0] = killed[0], float(killed[1])
print("failover: killed %s with SIGKILL under %d writers" % (old_primary, args.writers), file=sys.stderr)

first_success = None
while time.time() - kill_at[0] < args.limit:
    with lock:
        after = [a for a in attempts if a[0] > kill_at[0] and isinstance(a[2], int) and 200 <= a[2] < 300]
    if after:
        first_success = min(a[1] for a in after)
        break
    time.sleep(0.05)
if first_success is not None:
    time.sleep(args.after)
stop.set()
deadline[0] = time.time() + 10  # writers holding an unacknowledged key may finish it within this bound
for thread in threads:
    thread.join(timeout=60)
new_primary = subprocess.run(args.primary, shell=True, capture_output=True, text=True).stdout.strip() if args.primary else None


def count(sql):
    output = subprocess.run(["psql", args.database, "-tAc", sql], capture_output=True, text=True, check=True).stdout
    return output.strip()


stored = int(count("SELECT count(*) FROM cases WHERE summary LIKE 'failover-%s-%%'" % run))
distinct = int(count("SELECT count(DISTINCT summary) FROM cases WHERE summary LIKE 'failover-%s-%%'" % run))
numbers = set(count("SELECT string_agg(case_number::text, ',') FROM cases WHERE summary LIKE 'failover-%s-%%'" % run).split(","))
missing = [k for k, (number, _) in acknowledged.items() if str(number) not in numbers]

with lock:
    during = [a for a in attempts if a[0] >= kill_at[0] and (first_success is None or a[0] <= first_success)]
    failed = [a for a in during if not (isinstance(a[2], int) and 200 <= a[2] < 300)]
    failed_total = [a for a in attempts if not (isinstance(a[2], int) and 200 <= a[2] < 300)]
    kinds = {}
    for a in failed_total:
        kinds[str(a[2])] = kinds.get(str(a[2]), 0) + 1
    answered_503 = [a for a in failed_total if a[2] == 503]
    last_failure = max((a[1] for a in failed_total), default=None)
    durations = sorted(a[1] - a[0] for a in failed_total if a[2] != 409)
    timeline = {}
    for a in attempts:
        second = int(a[0] - kill_at[0]) if a[0] >= kill_at[0] else -1
        if second < 0:
            continue
        bucket = timeline.setdefault(str(second), {})
        bucket[str(a[2])] = bucket.get(str(a[2]), 0) + 1

report = {
    "writers": args.writers,
    "killed": old_primary, "new_primary": new_primary and "node" + new_primary,
    "acknowledged_writes": len(acknowledged),
    "in_database": stored,
    "distinct_in_database": distinct,
    "acknowledged_missing": len(missing),
    "duplicates": stored - distinct,
    "kill_to_first_2xx_s": round(first_success - kill_at[0], 2) if first_success else None,
    "kill_to_last_failure_s": round(last_failure - kill_at[0], 2) if last_failure else None,
    "failed_requests_until_first_2xx": len(failed),
    "failed_requests_total": len(failed_total),
    "failures_by_kind": kinds,
    # 409 in_progress: a key whose first attempt was cut off by the kill after its claim committed (issue 15, item 1).
    "409_in_progress": kinds.get("409", 0),
    "503_with_retry_after": "%d of %d" % (sum(1 for a in answered_503 if a[3]), len(answered_503)),
    "attempts_total": len(attempts),
    # How long a failed attempt took to be answered (a 503 must come at once, not after a hang).
    "failed_answer_ms": {"median": round(1000 * durations[len(durations) // 2]) if durations else None,
                         "max": round(1000 * durations[-1]) if durations else None},
    # Seconds after the kill (by when the attempt was sent) -> answers, to see the outage's shape.
    "timeline": timeline,
}
print(json.dumps(report, indent=2))
ok = first_success is not None and not missing and report["duplicates"] == 0 \
    and (args.primary is None or "node" + new_primary != old_primary)
print("failover: %s" % ("ok: no acknowledged write lost" if ok else "FAILED"), file=sys.stderr)
sys.exit(0 if ok else 1)
