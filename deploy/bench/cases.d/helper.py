#!/usr/bin/env python3
"""Helpers for deploy/bench/cases (standard library only).

  helper.py signin AGENT.json PORT        -> prints "COOKIE CSRF" for the agent (TOTP computed here)
  helper.py open PORT COOKIE CSRF COUNT   -> opens COUNT cases over HTTP, prints "NUMBER CODE" lines
  helper.py script NAME LOW HIGH [--without-outbox]
                                          -> prints the pgbench script NAME.sql for a case body :g in random(LOW, HIGH):
                                             \\set lines computing :num, the 12-digit case number of body
                                             10000000000 + :g (Damm check digit, client-side), then the statements
  helper.py deep PORT COOKIE DEPTH...     -> walks the queue over HTTP and prints the cursor after each DEPTH cases
  helper.py capture LOG OFFSET [--selects] [--match TEXT] [--until EPOCH] -> prints, as a pgbench script, the statements one request ran: read from
                                             PostgreSQL's log (log_statement = all) after byte OFFSET, the backend that
                                             looked up the session, from that look-up to its first pause (50 ms)
                                             or EPOCH (when the answer had arrived),
                                             binds written in as literals

The pgbench scripts (status.sql, read.sql, transition.sql) hold the statements the service runs for one request, in
order, as the stores write them, with a pgbench variable (:name) wherever the store binds a value ($1, $2...; pgbench
-M prepared numbers its variables in the same order). {case_columns} stands for case_columns.sql (CaseStore.columns), {standing_columns} for standing_columns.sql (CaseStore.standingColumns).
Where pgbench cannot bind what the store binds (NULL, a fresh UUID), a comment "-- bind $N = EXPR" before the
statement says the store's $N is written EXPR (comment lines before a statement are not sent). A string literal never
holds a colon before a letter: pgbench would read a variable there. Tests/ReclaimAPITests/BenchStatementsTests.swift
records what the service sends for each request and fails when a script differs from it.
"""
import base64, hashlib, hmac, http.client, json, os, struct, sys, time

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
    """The \\set lines computing :num from :g."""
    lines = []
    # Each table row as one integer of 10 digits; digit d of row r is (row / 10^(9-d)) % 10.
    rows = [int("".join(map(str, row))) for row in DAMM]
    lines.append("\\set body 10000000000 + :g")
    lines.append("\\set i 0")
    for position in range(11):
        lines.append("\\set d (:body / %d) %% 10" % (10 ** (10 - position)))
        lines.append("\\set row (case " + " ".join("when :i = %d then %d" % (r, rows[r]) for r in range(10)) + " end)")
        lines.append("\\set p (case " + " ".join("when :d = %d then %d" % (d, 10 ** (9 - d)) for d in range(10)) + " end)")
        lines.append("\\set i (:row / :p) % 10")
    lines.append("\\set num :body * 10 + :i")
    return lines


def script(name, low, high, *options):
    here = os.path.dirname(os.path.abspath(__file__))
    columns = open(os.path.join(here, "case_columns.sql")).read().strip()
    standing = open(os.path.join(here, "standing_columns.sql")).read().strip()
    print("\\set g random(%d, %d)" % (int(low), int(high)))
    print("\n".join(damm_pgbench()))
    skipping = False
    for line in open(os.path.join(here, name + ".sql")).read().replace("{case_columns}", columns).replace("{standing_columns}", standing).splitlines():
        # --without-outbox: the statements that write the outbox are left out (its cost on a transition).
        if "--without-outbox" in options and line.startswith("INSERT INTO outbox"):
            skipping = True
        if not skipping:
            print(line)
        if skipping and line.rstrip().endswith(";"):
            skipping = False


def deep_cursor(port, cookie, *depths):
    """Walks the queue once, printing the cursor after each of depths (ascending), one a line."""
    connection = http.client.HTTPConnection("127.0.0.1", int(port))
    seen, cursor = 0, None
    for depth in map(int, depths):
        while seen < depth:
            limit = min(200, depth - seen)
            path = "/api/v1/cases?limit=%d" % limit + ("&cursor=" + cursor if cursor else "")
            connection.request("GET", path, headers={"Cookie": cookie, "Connection": "keep-alive"})
            response = connection.getresponse()
            payload = json.loads(response.read())
            if response.status != 200 or payload["next_cursor"] is None:
                sys.exit("queue page answered %d after %d cases" % (response.status, seen))
            seen += len(payload["items"])
            cursor = payload["next_cursor"]
        print(cursor)


def capture(log, offset, *options):
    """The statements of one request, from PostgreSQL's log (log_line_prefix '%m [%p] '), as a pgbench script."""
    import re
    with open(log, "rb") as handle:
        handle.seek(int(offset))
        text = handle.read().decode("utf-8", "replace")
    import datetime
    until = float(options[options.index("--until") + 1]) if "--until" in options else float("inf")
    start = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC \[(\d+)\] (\w+):  ", re.M)
    records = []  # (seconds of the day, pid, level, text)
    marks = list(start.finditer(text))
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
        at = datetime.datetime.strptime(mark.group(1), "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
        records.append((at, mark.group(2), mark.group(3), text[mark.end():end].rstrip("\n")))
    statements = []  # (pid, sql, parameters, at)
    for at, pid, level, body in records:
        if level == "LOG" and (body.startswith("statement: ") or body.startswith("execute ")):
            sql = body.split(": ", 1)[1]
            statements.append([pid, sql, {}, at])
        elif level == "DETAIL" and body.startswith("parameters: ") and statements and statements[-1][0] == pid:
            for number, value in re.findall(r"\$(\d+) = (NULL|'(?:[^']|'')*')", body[len("parameters: "):]):
                statements[-1][2][int(number)] = value
    # The request's backend: the one that looked up the session (a route without a session: --match TEXT it runs).
    match = options[options.index("--match") + 1] if "--match" in options else "FROM sessions"
    chosen = next((pid for pid, sql, _, _ in statements if match in sql), None)
    if chosen is None:
        sys.exit("capture: no statement with %r in the log" % match)
    began, last = False, None
    for pid, sql, parameters, at in statements:
        if pid != chosen:
            continue
        began = began or match in sql
        if not began:
            continue
        # The request's statements follow each other within milliseconds and end before its answer (--until, the
        # time the client had it); a pause or a later statement is the pooled connection's next work (a worker's poll).
        if (last is not None and at - last > 0.05) or at > until:
            break
        last = at
        # --selects: the reads only, without the session look-up (a write's look-ups, for pgbench on their own).
        reads = sql.lstrip().upper().startswith(("SELECT", "WITH")) and not any(w in sql.upper() for w in ("INSERT ", "UPDATE ", "DELETE "))
        if "--selects" in options and (not reads or "FROM sessions" in sql):
            continue
        def literal(match):
            value = parameters.get(int(match.group(1)), "NULL")
            # pgbench reads ":name" as a variable: a bind holding a colon before a letter is spelt with chr(58).
            if re.search(r":[A-Za-z]", value):
                value = "(" + re.sub(r":(?=[A-Za-z])", "' || chr(58) || '", value) + ")"
            # An array's type is not in the log: uuid[] when every element is one, bigint[] for integers, else text[].
            if value.startswith("'{"):
                elements = [e.strip('"') for e in value[2:-2].split(",") if e]
                if not elements:
                    pass  # '{}' takes its type from the other side
                elif all(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", e) for e in elements):
                    value += "::uuid[]"
                elif all(re.fullmatch(r"-?[0-9]+", e) for e in elements):
                    value += "::bigint[]"
                elif all(re.fullmatch(r"-?[0-9.]+(e[-+]?[0-9]+)?", e) for e in elements):
                    value += "::float8[]"
                else:
                    value += "::text[]"
            return value
        sql = re.sub(r"\$(\d+)\b", literal, sql)
        print(" ".join(line.strip() for line in sql.splitlines()).rstrip(";") + ";")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "signin":
        signin(sys.argv[2], sys.argv[3])
    elif command == "open":
        open_cases(*sys.argv[2:6])
    elif command == "script":
        script(*sys.argv[2:])
    elif command == "deep":
        deep_cursor(*sys.argv[2:])
    elif command == "capture":
        capture(*sys.argv[2:])
