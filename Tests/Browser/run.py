"""Runs the browser tests: `python3 Tests/Browser/run.py [test names...]` (deploy/test calls this).

The test classes (all of them, or those holding the named modules, classes or tests) are shared out among worker
processes, RECLAIM_BROWSER_WORKERS of them (default 3; 1 runs everything in this process). A class never spans two
workers: it keeps its one service and database (the harness's), and its tests run in their usual order. Classes are
balanced by how long each took last time (.build/browser-times.json), or else by their number of tests. A worker's
output is printed whole when it ends, so workers never interleave; the run fails if any test failed in any worker, and
the failures are named again at the end.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TIMES = os.path.join(HERE, '..', '..', '.build', 'browser-times.json')
SETUP_WEIGHT = 2  # a class's service start-up, in tests' worth, when no time was recorded
sys.path.insert(0, HERE)


def tests_of(suite):
    """The tests of a (nested) suite, in the order unittest would run them."""
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from tests_of(item)
        else:
            yield item


def class_of(test):
    return test.id().rsplit('.', 1)[0]


class TimedResult(unittest.TextTestResult):
    """Records each class's seconds, its service start-up included (from the end of the class before)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mark = time.monotonic()
        self.seconds = {}

    def stopTest(self, test):
        super().stopTest(test)
        now = time.monotonic()
        name = class_of(test)
        self.seconds[name] = self.seconds.get(name, 0) + now - self.mark
        self.mark = now


def run_here(tests, summary=None):
    """Runs the tests in this process; `summary` (a path) receives the classes' seconds and the failed tests."""
    result = unittest.TextTestRunner(verbosity=2, resultclass=TimedResult).run(unittest.TestSuite(tests))
    if summary:
        failed = [test.id() for test, _ in result.failures + result.errors + result.unexpectedSuccesses]
        with open(summary, 'w') as out:
            json.dump({'seconds': result.seconds, 'failed': failed, 'run': result.testsRun}, out)
    return result.wasSuccessful()


def recorded_times():
    try:
        with open(TIMES) as file:
            return json.load(file)
    except (OSError, ValueError):
        return {}


def share_out(classes, workers):
    """Longest first, each class to the worker with the least so far (classes: name -> tests)."""
    times = recorded_times()
    weight = {name: times.get(name, len(tests) + SETUP_WEIGHT) for name, tests in classes.items()}
    plans = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for name in sorted(classes, key=lambda n: -weight[n]):
        emptiest = loads.index(min(loads))
        plans[emptiest].append(name)
        loads[emptiest] += weight[name]
    return [plan for plan in plans if plan]


def run_in_workers(classes, workers):
    plans = share_out(classes, workers)
    scratch = tempfile.mkdtemp(prefix='reclaim-browser-run-')
    started = time.monotonic()
    running = {}
    for index, plan in enumerate(plans, 1):
        log = open(os.path.join(scratch, 'worker%d.log' % index), 'w+')
        summary = os.path.join(scratch, 'worker%d.json' % index)
        ids = [test.id() for name in plan for test in classes[name]]
        process = subprocess.Popen([sys.executable, os.path.abspath(__file__), '--worker', summary] + ids,
                                   stdout=log, stderr=subprocess.STDOUT)
        running[process.pid] = (index, plan, log, summary)
    print('browser: %d classes in %d workers' % (len(classes), len(plans)), flush=True)
    failed, total, seconds = [], 0, recorded_times()
    while running:
        pid, status = os.wait()  # whichever worker ends first
        if pid not in running:
            continue
        index, plan, log, summary = running.pop(pid)
        try:
            with open(summary) as file:
                outcome = json.load(file)
        except (OSError, ValueError):  # the worker died before writing it
            outcome = {'seconds': {}, 'failed': ['worker %d (exit status %d)' % (index, os.waitstatus_to_exitcode(status))], 'run': 0}
        if os.waitstatus_to_exitcode(status) != 0 and not outcome['failed']:
            outcome['failed'] = ['worker %d (exit status %d)' % (index, os.waitstatus_to_exitcode(status))]
        failed += outcome['failed']
        total += outcome['run']
        seconds.update(outcome['seconds'])
        log.seek(0)
        print('==== browser worker %d of %d, %s after %.0f s: %s' % (
            index, len(plans), 'FAILED' if outcome['failed'] else 'ok', time.monotonic() - started, ', '.join(plan)), flush=True)
        sys.stdout.write(log.read())
        print('==== end of browser worker %d' % index, flush=True)
        log.close()
    os.makedirs(os.path.dirname(TIMES), exist_ok=True)
    with open(TIMES, 'w') as out:
        json.dump(seconds, out, indent=1, sort_keys=True)
    print('browser: %d tests in %d workers, %.0f s, %s' % (
        total, len(plans), time.monotonic() - started, 'OK' if not failed else '%d FAILED:\n  %s' % (len(failed), '\n  '.join(failed))))
    return not failed


def main(arguments):
    if arguments[:1] == ['--worker']:
        tests = list(tests_of(unittest.TestLoader().loadTestsFromNames(arguments[2:])))
        return run_here(tests, summary=arguments[1])
    loader = unittest.TestLoader()
    suite = loader.loadTestsFromNames(arguments) if arguments else loader.discover(HERE, pattern='test_*.py')
    tests = list(tests_of(suite))
    classes = {}
    for test in tests:
        classes.setdefault(class_of(test), []).append(test)
    workers = int(os.environ.get('RECLAIM_BROWSER_WORKERS', '3'))
    # A name that did not load is a test that fails at once: shown here, as unittest shows it.
    if workers <= 1 or len(classes) <= 1 or any(name.startswith('unittest.') for name in classes):
        return run_here(tests)
    return run_in_workers(classes, workers)


if __name__ == '__main__':
    sys.exit(0 if main(sys.argv[1:]) else 1)
