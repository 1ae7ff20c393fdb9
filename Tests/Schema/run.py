"""schemathesis over /openapi.json: `python3 Tests/Schema/run.py` (deploy/test runs it beside the other suites).

Two runs at the same time, each on its own `reclaim serve` with its own freshly migrated database and the demo data
(the browser harness's Service), on loopback only, each bounded by examples per operation and by time:
unauthenticated, and as a signed-in tier3 admin agent (session cookie and CSRF token; signing out is left out so the
session lasts the run). Each fails on any 5xx, an undocumented status or media type, or a body that breaks its
schema; each run's output is printed whole when it ends.

Environment: RECLAIM_TEST_PG and RECLAIM_BIN as for the browser tests; SCHEMATHESIS (the executable; default
.build/schema-venv/bin/schemathesis); SCHEMA_EXAMPLES (per operation, default 25); SCHEMA_SECONDS (per run, default 90).
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'Tests', 'Browser'))
from harness import Service  # noqa: E402  (the same start-up as the browser tests)

CHECKS = 'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance'


def sign_in(service):
    """A fresh tier3 admin agent's cookie and CSRF token, through the real sign-in route."""
    agent = service.new_agent('tier3', admin=True)
    body = json.dumps({'email': agent['email'], 'password': agent['password'], 'totp': service.totp(agent)}).encode()
    request = urllib.request.Request(service.origin + '/api/v1/session', data=body, method='POST',
                                     headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(request, timeout=30) as response:
        cookie = response.headers['Set-Cookie'].split(';')[0]
        return cookie, json.load(response)['csrf_token']


def schemathesis(service, label, extra, parameters=None):
    """Starts one bounded run, its output to a file; `parameters` pins path parameters (a real case) through a config
    file. Returns the process and its output file."""
    executable = os.environ.get('SCHEMATHESIS', os.path.join(ROOT, '.build', 'schema-venv', 'bin', 'schemathesis'))
    report = os.path.join(ROOT, '.build', 'schema-report', label)
    os.makedirs(report, exist_ok=True)
    config = os.path.join(report, 'schemathesis.toml')
    with open(config, 'w') as out:
        # No state carried between runs (schemathesis would otherwise keep a cache in the work tree).
        out.write('[cache]\nenabled = false\n[parameters]\n' + ''.join('"%s" = %s\n' % (k, json.dumps(v)) for k, v in (parameters or {}).items()))
    command = [executable, '--config-file', config, 'run', service.origin + '/openapi.json', '--url', service.origin,
               '--checks', CHECKS, '--max-examples', os.environ.get('SCHEMA_EXAMPLES', '25'),
               '--max-time', os.environ.get('SCHEMA_SECONDS', '90'), '--phases', 'examples,coverage,fuzzing',
               '--workers', '1', '--seed', '10', '--generation-database', 'none', '--request-timeout', '30',
               '--suppress-health-check', 'all', '--no-color', '--report', 'junit', '--report-dir', report] + extra
    print('schema: %s run started' % label, flush=True)
    output = tempfile.TemporaryFile('w+')
    # A file of each declared upload media type (Tests/Schema/hooks.py): JSON Schema cannot describe one.
    environment = dict(os.environ, SCHEMATHESIS_HOOKS=os.path.join(ROOT, 'Tests', 'Schema', 'hooks.py'))
    return subprocess.Popen(command, cwd=ROOT, env=environment, stdout=output, stderr=subprocess.STDOUT), output


def main():
    # Each run has its own service: the unauthenticated run's sign-in attempts lock its address out of signing in.
    anonymous, agent = Service('schema_anonymous'), Service('schema_agent')
    try:
        anonymous.start()
        agent.start()
        cookie, csrf = sign_in(agent)
        # The agent works on a real open case, so handlers get past the look-up.
        case_number = agent.case(state='new')['case_number']
        runs = [('unauthenticated', schemathesis(anonymous, 'unauthenticated', [])), ('agent', schemathesis(agent, 'agent', [
            '--header', 'Cookie: ' + cookie, '--header', 'X-CSRF-Token: ' + csrf,
            '--exclude-operation-id', 'signOut',
            # Administration: schemathesis reuses agent ids it has seen, its own included, and a reset ends that
            # agent's sessions (as it should), which would sign the run out like signOut.
            '--exclude-operation-id', 'adminResetPassword', '--exclude-operation-id', 'adminResetTOTP',
        ], {'path.case_number': case_number}))]
        failures = 0
        for label, (process, output) in runs:
            status = process.wait()
            failures += status != 0
            output.seek(0)
            print('==== schema: %s run, %s' % (label, 'ok' if status == 0 else 'FAILED (exit status %d)' % status), flush=True)
            sys.stdout.write(output.read())
        print('%d passed, %d failed' % (2 - failures, failures))
        return 1 if failures else 0
    finally:
        anonymous.stop()
        agent.stop()


if __name__ == '__main__':
    sys.exit(main())
