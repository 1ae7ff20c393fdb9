#!/usr/bin/env python3
"""Load for deploy/bench/export (standard library only).

  export_load.py seed PORT COOKIE CSRF CASE SIZE COUNT
      -> COUNT raw document uploads (image/png) of SIZE bytes, distinct, one after another; exits 1 on any refusal
  export_load.py rss PORT COOKIE CASE COUNT PID
      -> COUNT exports of CASE started at once, each read in 1 MiB pieces and never kept (its first header and its
         end record checked); samples PID's VmRSS every 10 ms; prints
         "baseline_MiB peak_MiB hwm_MiB after_MiB sizes_MiB entries seconds" (after: 3 s after the last byte; hwm: VmHWM)
"""
import http.client, os, struct, sys, threading, time


def seed(port, cookie, csrf, case, size, count):
    head = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=120)
    headers = {"Content-Type": "image/png", "Cookie": cookie, "X-CSRF-Token": csrf, "Connection": "keep-alive"}
    for _ in range(int(count)):
        connection.request("POST", "/api/v1/cases/%s/evidence?type=invoice" % case, head + os.urandom(int(size) - len(head)), headers)
        response = connection.getresponse()
        answer = response.read()
        if response.status != 201:
            sys.exit("upload answered %d: %s" % (response.status, answer[:300]))


def status_mib(pid, field):
    with open("/proc/%s/status" % pid) as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0


def rss(port, cookie, case, count, pid):
    baseline = status_mib(pid, "VmRSS")
    peak = [baseline]
    done = threading.Event()
    sizes, entries, failures = [], [], []

    def sampler():
        while not done.is_set():
            peak[0] = max(peak[0], status_mib(pid, "VmRSS"))
            time.sleep(0.01)

    def worker(barrier):
        connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=1800)
        barrier.wait()
        try:
            connection.request("GET", "/api/v1/cases/%s/export" % case, headers={"Cookie": cookie})
            response = connection.getresponse()
            # Read in pieces, as a client saving to disk would: only the size, the first and the last bytes are kept.
            total, head, tail = 0, b"", b""
            while True:
                piece = response.read(1 << 20)
                if not piece: break
                total += len(piece)
                head = head or piece[:64]
                tail = (tail + piece)[-65536:]
            if response.status != 200:
                failures.append("status %d" % response.status)
                return
            # A local header first; the end record counts the entries and closes the archive.
            end = tail[-22:]
            if head[:4] != b"PK\x03\x04" or end[:4] != b"PK\x05\x06":
                failures.append("bad archive")
            entries.append(struct.unpack("<H", end[10:12])[0])
            sizes.append(total / 1048576)
        except (OSError, http.client.HTTPException) as error:
            failures.append(repr(error))

    barrier = threading.Barrier(int(count))
    watch = threading.Thread(target=sampler)
    watch.start()
    started = time.monotonic()
    pool = [threading.Thread(target=worker, args=(barrier,)) for _ in range(int(count))]
    for thread in pool: thread.start()
    for thread in pool: thread.join()
    elapsed = time.monotonic() - started
    time.sleep(3)
    done.set()
    watch.join()
    if failures: sys.exit("exports failed: %s" % "; ".join(failures))
    print("%.0f %.0f %.0f %.0f %s %s %.1f" % (baseline, peak[0], status_mib(pid, "VmHWM"), status_mib(pid, "VmRSS"),
                                             ",".join("%.0f" % s for s in sizes), ",".join(map(str, entries)), elapsed))


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    {"seed": seed, "rss": rss}[command](*arguments)
