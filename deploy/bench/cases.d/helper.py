#!/usr/bin/env python3
"""Helpers for deploy/bench/cases (standard library only).

  helper.py signin AGENT.json PORT        -> prints "COOKIE CSRF" for the agent (TOTP computed here)
  helper.py open PORT COOKIE CSRF COUNT   -> opens COUNT cases over HTTP, prints "NUMBER CODE" lines
  helper.py damm                          -> prints pgbench \\set lines computing :num, the 12-digit case
                                             number of body 10000000000 + :g (Damm check digit), client-side
"""
import base64, hashlib, hmac, http.client, json, struct, sys, time

DAMM = [
    [0, 3, 1, 7, 5, 9, 8, 6, 4, 2], [7, 0, 9, 2, 1, 5, 4, 8, 6, 3], [4, 2, 0, 6, 8, 7, 1, 3, 5, 9],
    [1, 7, 5, 0, 9, 8, 3, 4, 2, 6], [6, 1, 2, 3, 0, 4, 5, 9, 7, 8], [3, 6, 7, 4, 2, 0, 9, 5, 8, 1],
    [5, 8, 6, 9, 7, 2, 0, 1, 3, 4], [8, 9, 4, 5, 3, 6, 2, 0, 1, 7], [9, 4, 3, 8, 6, 1, 7, 2, 0, 5],
    [2, 5, 8, 1, 4, 3, 6, 7, 9, 0],
]


def totp(secret_b32, at):
    secret = base64.b32decode(secret_b32 + "=" * (-len(secret_b32) % 8))
    digest = hmac.new(secret, struct.pack(">Q", int(at // 30)), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return "%06d" % ((struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1000000)


def signin(agent_file, port):
    agent = json.load(open(agent_file))
    secret = agent["totp_uri"].split("secret=")[1].split("&")[0]
    connection = http.client.HTTPConnection("127.0.0.1", int(port))
    body = json.dumps({"email": agent["email"], "password": agent["password"], "totp": totp(secret, time.time())})
    connection.request("POST", "/api/v1/session", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    payload = json.loads(response.read())
    if response.status != 201:
        sys.exit("sign-in answered %d: %s" % (response.status, payload))
    cookie = response.getheader("Set-Cookie").split(";")[0]
    print(cookie, payload["csrf_token"])


def open_cases(port, cookie, csrf, count):
    connection = http.client.HTTPConnection("127.0.0.1", int(port))
    headers = {"Content-Type": "application/json", "Cookie": cookie, "X-CSRF-Token": csrf, "Connection": "keep-alive"}
    for index in range(int(count)):
        body = json.dumps({"kind": "account_takeover", "account_email": "status%d@example.com" % index,
                           "customer": {"name": "Bench Customer", "contact_email": "home%d@example.net" % index},
                           "devices": [], "facts": {"rescue_email_added": True}, "summary": "bench"})
        connection.request("POST", "/api/v1/cases", body, headers)
        response = connection.getresponse()
        payload = json.loads(response.read())
        if response.status != 201:
            sys.exit("create answered %d: %s" % (response.status, payload))
        print(payload["case_number"], payload["access_code"])


def damm_pgbench():
    # Each table row as one integer of 10 digits; digit d of row r is (row / 10^(9-d)) % 10.
    rows = [int("".join(map(str, row))) for row in DAMM]
    print("\\set body 10000000000 + :g")
    print("\\set i 0")
    for position in range(11):
        print("\\set d (:body / %d) %% 10" % (10 ** (10 - position)))
        print("\\set row (case " + " ".join("when :i = %d then %d" % (r, rows[r]) for r in range(10)) + " end)")
        print("\\set p (case " + " ".join("when :d = %d then %d" % (d, 10 ** (9 - d)) for d in range(10)) + " end)")
        print("\\set i (:row / :p) % 10")
    print("\\set num :body * 10 + :i")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "signin":
        signin(sys.argv[2], sys.argv[3])
    elif command == "open":
        open_cases(*sys.argv[2:6])
    elif command == "damm":
        damm_pgbench()
