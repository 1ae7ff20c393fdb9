#!/usr/bin/env python3
"""Load for deploy/bench/evidence (standard library only).

  evidence_load.py upload PORT COOKIE CSRF CASE SIZE THREADS SECONDS
      -> raw document uploads (POST /api/v1/cases/CASE/evidence?type=invoice, image/png) of SIZE bytes from
         THREADS keep-alive connections for SECONDS; prints "uploads_per_s MiB_per_s p50_ms p99_ms errors"
  evidence_load.py rss PORT COOKIE CSRF CASE SIZE COUNT PID
      -> COUNT uploads of SIZE bytes started at once; samples PID's VmRSS every 10 ms;
         prints "baseline_MiB peak_MiB after_MiB statuses" (after: 3 s after the last answer; statuses as count x status)
"""
import http.client, os, sys, threading, time


def body(size):
    head = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    return head + os.urandom(size - len(head))


def headers(cookie, csrf):
    return {"Content-Type": "image/png", "Cookie": cookie, "X-CSRF-Token": csrf, "Connection": "keep-alive"}


def upload(port, cookie, csrf, case, size, threads, seconds):
    payload = body(int(size))
    deadline = time.monotonic() + float(seconds)
    latencies, errors, lock = [], [0], threading.Lock()

    def worker():
        connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
        while time.monotonic() < deadline:
            started = time.monotonic()
            connection.request("POST", "/api/v1/cases/%s/evidence?type=invoice" % case, payload, headers(cookie, csrf))
            response = connection.getresponse()
            response.read()
            with lock:
                if response.status == 201:
                    latencies.append(time.monotonic() - started)
                else:
                    errors[0] += 1

    started = time.monotonic()
    pool = [threading.Thread(target=worker) for _ in range(int(threads))]
    for thread in pool: thread.start()
    for thread in pool: thread.join()
    elapsed = time.monotonic() - started
    latencies.sort()
    count = len(latencies)
    p = lambda q: latencies[min(count - 1, int(q * count))] * 1000 if count else 0
    print("%.2f %.1f %.0f %.0f %d" % (count / elapsed, count * int(size) / elapsed / 1048576, p(0.5), p(0.99), errors[0]))


def rss_mib(pid):
    with open("/proc/%s/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0


def rss(port, cookie, csrf, case, size, count, pid):
    payload = body(int(size))
    baseline = rss_mib(pid)
    peak = [baseline]
    done = threading.Event()
    statuses = []

    def sampler():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mib(pid))
            time.sleep(0.01)

    def worker(barrier):
        connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=120)
        barrier.wait()
        try:
            connection.request("POST", "/api/v1/cases/%s/evidence?type=invoice" % case, payload, headers(cookie, csrf))
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
        except OSError:
            # Refused mid-body (503 too_many_uploads) and closed before the whole body was sent.
            statuses.append(0)

    barrier = threading.Barrier(int(count))
    watch = threading.Thread(target=sampler)
    watch.start()
    pool = [threading.Thread(target=worker, args=(barrier,)) for _ in range(int(count))]
    for thread in pool: thread.start()
    for thread in pool: thread.join()
    time.sleep(3)
    done.set()
    watch.join()
    after = rss_mib(pid)
    counts = {}
    for status in statuses: counts[status] = counts.get(status, 0) + 1
    print("%.0f %.0f %.0f %s" % (baseline, peak[0], after, ",".join("%dx%d" % (n, s) for s, n in sorted(counts.items()))))


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    {"upload": upload, "rss": rss}[command](*arguments)
