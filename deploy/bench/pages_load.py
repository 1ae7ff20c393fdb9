"""Loads the dashboard and the status page repeatedly in headless Chromium and prints weights and timings.
Run through deploy/bench/pages (which builds release and starts PostgreSQL)."""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'Tests', 'Browser'))
from harness import Browser, Service, totp_code  # noqa: E402

loads = int(sys.argv[1]) if len(sys.argv) > 1 else 20

# Milliseconds from navigation start until the last request the page needed had answered.
LAST_RESPONSE = """
const entries = performance.getEntriesByType('resource').filter((e) => e.name.includes(arguments[0]));
return entries.length ? Math.max(...entries.map((e) => e.responseEnd)) : null;
"""
WEIGHT = """
const nav = performance.getEntriesByType('navigation')[0];
const files = performance.getEntriesByType('resource').filter((e) => !e.name.includes('/api/'));
return { requests: files.length + 1, bytes: nav.decodedBodySize + files.reduce((sum, e) => sum + e.decodedBodySize, 0) };
"""


def summary(values):
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
    return 'median %.0f ms, p95 %.0f ms (%d loads)' % (statistics.median(values), p95, len(values))


service = Service('bench_pages').start()
try:
    agent = service.agent('tier3')
    browser = Browser(service.origin)
    browser.open('/')
    browser.fill('#signin-email', agent['email'])
    browser.fill('#signin-password', agent['password'])
    browser.fill('#signin-totp', totp_code(agent['totp_uri'], int(time.time() // 30)))
    browser.click('#signin-submit')
    browser.wait_for('#queue[aria-busy="false"]')
    dashboard_weight = browser.driver.execute_script(WEIGHT)  # the first load, before anything is cached

    queue, case_page = [], []
    number = next(c['case_number'] for c in service.seed['cases'] if c['state'] == 'document_review')
    for _ in range(loads):
        browser.open('/#/')
        browser.driver.refresh()
        browser.wait_for('#queue[aria-busy="false"]')
        queue.append(browser.driver.execute_script(LAST_RESPONSE, '/api/v1/cases?'))
    for _ in range(loads):
        browser.open('/#/cases/' + number)
        browser.driver.refresh()
        browser.wait_for('#chain-mark')
        browser.wait_for('#notes-list')
        browser.wait_for('#verification-outcome')
        case_page.append(browser.driver.execute_script(LAST_RESPONSE, '/api/v1/'))
    browser.quit()

    status = []
    customer = Browser(service.origin)
    case = service.seed['cases'][0]
    customer.open('/status')
    status_weight = customer.driver.execute_script(WEIGHT)
    for _ in range(loads):
        customer.open('/status')
        customer.fill('#case-number', case['case_number'])
        customer.fill('#access-code', case['access_code'])
        started = time.perf_counter()
        customer.click('#lookup-submit')
        customer.wait_for('#stage')
        status.append((time.perf_counter() - started) * 1000)
    customer.quit()

    print('dashboard: %d requests, %.1f kB of HTML, CSS and JavaScript (first load, uncompressed)' % (dashboard_weight['requests'], dashboard_weight['bytes'] / 1000))
    print('status page: %d requests, %.1f kB of HTML, CSS and JavaScript (first load, uncompressed)' % (status_weight['requests'], status_weight['bytes'] / 1000))
    print('queue usable (50 cases) after navigation: ' + summary(queue))
    print('case page complete (case, timeline checked, evidence, notes, verification): ' + summary(case_page))
    print('status shown after pressing "Check my case": ' + summary(status))
finally:
    service.stop()
