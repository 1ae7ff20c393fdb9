#!/usr/bin/env python3
"""An independent verifier of the service's transparency log, written from the specifications, not from the
service's code: RFC 9162 §2.1 (tree hash, §2.1.3.2 inclusion and §2.1.4.2 consistency verification), C2SP
signed-note (verifier keys, key ids, Ed25519 signature lines) and C2SP tlog-checkpoint, with PyPI's
`cryptography` for Ed25519.

Reads {"checks": [...]} as JSON on stdin and prints {"results": [...]}, one result per check:
  {"kind": "note", "note": TEXT, "key": VERIFIER KEY}          -> {"ok", "origin", "size", "root"} or {"ok": false, "error"}
  {"kind": "inclusion", "index", "size", "event_hash" (hex), "proof" [b64], "root" (b64)}   -> {"ok"}
  {"kind": "consistency", "from", "to", "from_root", "to_root", "proof"}                    -> {"ok"}
  {"kind": "root", "event_hashes": [hex]}                                                    -> {"root" (b64)}
"""
import base64
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def sha256(data):
    return hashlib.sha256(data).digest()


def leaf_hash(entry):
    return sha256(b"\x00" + entry)


def node_hash(left, right):
    return sha256(b"\x01" + left + right)


def mth(leaves):
    """RFC 9162 §2.1.1: MTH of a list of leaf hashes (already hashed with 0x00)."""
    n = len(leaves)
    if n == 0:
        return sha256(b"")
    if n == 1:
        return leaves[0]
    k = 1
    while k * 2 < n:
        k *= 2
    return node_hash(mth(leaves[:k]), mth(leaves[k:]))


def verify_inclusion(index, size, leaf, proof, root):
    """RFC 9162 §2.1.3.2, step by step."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not (fn & 1) and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(first, second, first_hash, second_hash, path):
    """RFC 9162 §2.1.4.2, step by step (equal sizes: an empty proof and equal roots)."""
    if first < 1 or first > second:
        return False
    if first == second:
        return len(path) == 0 and first_hash == second_hash
    if not path:
        return False
    if first & (first - 1) == 0:
        path = [first_hash] + path
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not (fn & 1) and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first_hash and sr == second_hash and sn == 0


def parse_verifier_key(text):
    """C2SP signed-note: <name>+<hex key id>+<base64(0x01 || public key)>; the id must be the key's."""
    name, key_id, key = text.split("+", 2)  # the base64 key may contain "+"
    raw = base64.b64decode(key, validate=True)
    if raw[0] != 0x01 or len(raw) != 33 or not name or " " in name:
        raise ValueError("not an Ed25519 verifier key")
    expected = sha256(name.encode() + b"\n" + raw)[:4]
    if bytes.fromhex(key_id) != expected or len(key_id) != 8:
        raise ValueError("the key id is not the key's")
    return name, expected, Ed25519PublicKey.from_public_bytes(raw[1:])


def open_note(note, verifier_key):
    """C2SP signed-note: text, a blank line, signature lines `— <name> <base64(key id || signature)>`."""
    name, key_id, public_key = parse_verifier_key(verifier_key)
    if not note.endswith("\n") or "\n\n" not in note:
        raise ValueError("not a signed note")
    split = note.rindex("\n\n")
    text, signatures = note[: split + 1], note[split + 2 :]
    for line in signatures[:-1].split("\n"):
        if not line.startswith("\u2014 "):
            raise ValueError("a line after the blank line is not a signature")
        signer, encoded = line[2:].split(" ")
        raw = base64.b64decode(encoded, validate=True)
        if signer == name and raw[:4] == key_id:
            public_key.verify(raw[4:], text.encode())  # raises InvalidSignature
            return text
    raise ValueError("no signature by the key")


def parse_checkpoint(text):
    """C2SP tlog-checkpoint: origin, decimal size, base64 root, then optional extension lines."""
    lines = text.split("\n")
    origin, size, root = lines[0], lines[1], lines[2]
    if not size.isdigit() or (size != "0" and size.startswith("0")):
        raise ValueError("bad tree size")
    root_bytes = base64.b64decode(root, validate=True)
    if len(root_bytes) != 32:
        raise ValueError("bad root hash")
    return origin, int(size), root_bytes


def check(item):
    b64 = lambda text: base64.b64decode(text, validate=True)
    kind = item["kind"]
    if kind == "note":
        try:
            origin, size, root = parse_checkpoint(open_note(item["note"], item["key"]))
            return {"ok": True, "origin": origin, "size": size, "root": base64.b64encode(root).decode()}
        except (ValueError, InvalidSignature, IndexError) as error:
            return {"ok": False, "error": repr(error)}
    if kind == "inclusion":
        leaf = leaf_hash(bytes.fromhex(item["event_hash"]))
        return {"ok": verify_inclusion(item["index"], item["size"], leaf, [b64(p) for p in item["proof"]], b64(item["root"]))}
    if kind == "consistency":
        return {"ok": verify_consistency(item["from"], item["to"], b64(item["from_root"]), b64(item["to_root"]),
                                         [b64(p) for p in item["proof"]])}
    if kind == "root":
        return {"root": base64.b64encode(mth([leaf_hash(bytes.fromhex(h)) for h in item["event_hashes"]])).decode()}
    raise SystemExit(f"unknown check {kind!r}")


if __name__ == "__main__":
    request = json.load(sys.stdin)
    json.dump({"results": [check(item) for item in request["checks"]]}, sys.stdout)
