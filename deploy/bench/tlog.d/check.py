"""Checks the bench tree's proofs with the tests' independent RFC 9162 verifier (Tests/Audit/verify.py), not the service's
code: check.py PORT SEEDED FIRST_CHECKPOINT LAST_CHECKPOINT APPENDED_FILE SEED_TREE [COUNT] -> one JSON object.

SEEDED leaves were seeded by seed_tree (event hash of leaf i: SHA-256 of i's eight big-endian bytes); FIRST_CHECKPOINT is
the note the service signed over them, LAST_CHECKPOINT the one after the appends; APPENDED_FILE holds `leaf_index hex`
lines of appended leaves and their events' hashes, read from the database. Every root compared is seed_tree's (a C
program of its own) or a checkpoint whose signature verify.py checked under GET /api/v1/audit/key."""
import base64
import hashlib
import http.client
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', '..', 'Tests', 'Audit'))
import verify  # noqa: E402

port, seeded = int(sys.argv[1]), int(sys.argv[2])
first_note, last_note = open(sys.argv[3]).read(), open(sys.argv[4]).read()
appended = [line.split() for line in open(sys.argv[5]).read().splitlines() if line.strip()]
seed_tree = sys.argv[6]
count = int(sys.argv[7]) if len(sys.argv) > 7 else 5
random.seed(9162)


def get(target):
    # A connection per request: computing the roots takes longer than the service keeps an idle connection open.
    connection = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
    connection.request('GET', target)
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise SystemExit('%s answered %d: %s' % (target, response.status, body[:200]))
    return body


def proof(target):
    return [base64.b64decode(h) for h in json.loads(get(target))['hashes']]


def event_hash(i):
    return hashlib.sha256(i.to_bytes(8, 'big')).digest()


key = get('/api/v1/audit/key').decode().strip()
first = verify.check({'kind': 'note', 'note': first_note, 'key': key})
last = verify.check({'kind': 'note', 'note': last_note, 'key': key})
if not (first['ok'] and last['ok']):
    raise SystemExit('a checkpoint does not verify: %r %r' % (first, last))
size, final = first['size'], last['size']
first_root, final_root = base64.b64decode(first['root']), base64.b64decode(last['root'])
olders = sorted(random.randrange(1, size) for _ in range(count))
roots = {}
for line in subprocess.run([seed_tree, 'roots', str(seeded), str(size)] + [str(m) for m in olders], check=True, capture_output=True,
                           text=True).stdout.splitlines():
    m, root = line.split()
    roots[int(m)] = base64.b64decode(root)

results = {'seeded_root_is_checkpoint_root': roots[size] == first_root, 'checkpoints': [size, final]}
# Inclusion of seeded leaves in the first checkpoint's tree.
leaves = [random.randrange(size) for _ in range(count)]
results['inclusion_seeded'] = [
    verify.verify_inclusion(i, size, verify.leaf_hash(event_hash(i)), proof('/api/v1/audit/proof?leaf=%d&size=%d' % (i, size)), first_root)
    for i in leaves]
# Inclusion of appended leaves (their admin events' hashes) in the last checkpoint's tree.
results['inclusion_appended'] = [
    verify.verify_inclusion(int(i), final, verify.leaf_hash(bytes.fromhex(h)), proof('/api/v1/audit/proof?leaf=%s&size=%d' % (i, final)),
                            final_root)
    for i, h in appended]
# Consistency from older sizes (seed_tree's roots) to the first checkpoint, and from the first checkpoint to the last.
results['consistency_seeded'] = [
    verify.verify_consistency(m, size, roots[m], first_root, proof('/api/v1/audit/consistency?from=%d&to=%d' % (m, size))) for m in olders]
results['consistency_checkpoints'] = verify.verify_consistency(
    size, final, first_root, final_root, proof('/api/v1/audit/consistency?from=%d&to=%d' % (size, final)))
# A wrong root or a wrong leaf must fail (the verifier is not saying yes to everything).
results['tampered_refused'] = not verify.verify_inclusion(
    leaves[0], size, verify.leaf_hash(event_hash(leaves[0] + 1)), proof('/api/v1/audit/proof?leaf=%d&size=%d' % (leaves[0], size)), first_root)
checks = results['inclusion_seeded'] + results['inclusion_appended'] + results['consistency_seeded']
results['ok'] = all(checks) and results['consistency_checkpoints'] and results['seeded_root_is_checkpoint_root'] and results['tampered_refused']
results['checked'] = {'inclusion': len(leaves) + len(appended), 'consistency': len(olders) + 1}
print(json.dumps(results))
