"""Times the proof routes over one keep-alive loopback connection: proofs.py PORT SIZE REQUESTS -> one JSON object."""
import http.client
import json
import random
import sys
import time

port, size, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
connection = http.client.HTTPConnection('127.0.0.1', port, timeout=30)
random.seed(23)


def measure(targets):
    times, hashes, sizes = [], [], []
    for target in targets:
        start = time.perf_counter()
        connection.request('GET', target)
        response = connection.getresponse()
        body = response.read()
        times.append((time.perf_counter() - start) * 1000)
        if response.status != 200:
            raise SystemExit('%s answered %d: %s' % (target, response.status, body[:200]))
        hashes.append(len(json.loads(body)['hashes']))
        sizes.append(len(body))
    times.sort()
    return {'requests': len(targets), 'hashes_min': min(hashes), 'hashes_max': max(hashes), 'bytes_max': max(sizes),
            'p50_ms': round(times[len(times) // 2], 2), 'p99_ms': round(times[int(len(times) * 0.99)], 2)}


print(json.dumps({
    'inclusion': measure(['/api/v1/audit/proof?leaf=%d&size=%d' % (random.randrange(size), size) for _ in range(count)]),
    'inclusion_older_size': measure(['/api/v1/audit/proof?leaf=%d&size=%d' % (l, random.randrange(l + 1, size + 1))
                                     for l in (random.randrange(size - 1) for _ in range(count))]),
    'consistency': measure(['/api/v1/audit/consistency?from=%d&to=%d' % (random.randrange(1, size), size) for _ in range(count)]),
}))
