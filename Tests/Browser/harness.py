"""The browser tests' harness: a real service on a real database, driven in real headless Chromium.

Each test class gets its own database (created, migrated and filled by `reclaim demo seed`) and its own
`reclaim serve` on a free loopback port; each test gets a fresh Chromium. After every test the browser log
is read: any console error or CSP violation fails the test, except the network lines for HTTP statuses the
test said it expects (a wrong access code is a 404 by contract, and Chromium logs every 4xx fetch).
A failing test leaves a screenshot in .build/browser-failures/.

The database is made by the SQL `reclaim db roles` prints, run as the cluster's superuser: migrations run as its
owner, and `reclaim serve`, `demo seed` and `self.psql` connect as the service's login, which owns nothing (a test
that plays an owner switching a guard off passes `self.owner_conninfo`).

Environment: RECLAIM_TEST_PG (conninfo of a server we may create databases on, as its superuser; deploy/test exports it),
RECLAIM_BIN (the reclaim executable; default .build/debug/reclaim), RECLAIM_SCREENSHOTS (where README
screenshots go; default docs/screenshots).
"""
import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request
import zlib

from selenium import webdriver
from selenium.common.exceptions import ElementClickInterceptedException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service as DriverService
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
FAILURES = os.path.join(ROOT, '.build', 'browser-failures')
SCREENSHOTS = os.environ.get('RECLAIM_SCREENSHOTS', os.path.join(ROOT, 'docs', 'screenshots'))
WAIT = 10  # seconds an element may take to appear
# Seconds between looks while waiting: selenium's default, 0.5 s, costs a quarter of a second per wait on average.
POLL = 0.05


def totp_code(uri, step):
    """RFC 6238 code (SHA-1, 6 digits, 30 s) of an otpauth:// URI for time step `step`."""
    secret = urllib.parse.parse_qs(urllib.parse.urlparse(uri).query)['secret'][0]
    key = base64.b32decode(secret + '=' * ((8 - len(secret) % 8) % 8))
    digest = hmac.new(key, struct.pack('>Q', step), hashlib.sha1).digest()
    offset = digest[-1] & 15
    return '%06d' % ((struct.unpack('>I', digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1000000)


def png_bytes(width=1, height=1, rgb=(11, 92, 173)):
    """A valid PNG filled with one colour, made here so no test needs a fixture file."""
    def chunk(kind, data):
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b''.join(b'\x00' + bytes(rgb) * width for _ in range(height))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


class Service:
    """`reclaim serve` on its own database, filled with the demo data (agents of every tier, ~40 cases)."""

    def __init__(self, name):
        conninfo = os.environ.get('RECLAIM_TEST_PG')
        if not conninfo:
            raise RuntimeError('RECLAIM_TEST_PG is not set: run the browser tests through deploy/test')
        self.binary = os.environ.get('RECLAIM_BIN', os.path.join(ROOT, '.build', 'debug', 'reclaim'))
        self.database = 'browser_%s_%d' % (re.sub(r'[^a-z0-9]', '_', name.lower()), os.getpid())
        self.admin_conninfo = conninfo
        self.conninfo = self.connect_as('reclaim')
        self.owner_conninfo = self.connect_as('reclaim_owner')
        self.directory = tempfile.mkdtemp(prefix='reclaim-browser-')
        self.process = None
        self.last_totp_step = {}

    def connect_as(self, user):
        """The conninfo of this class's database as `user` (keyword form, as deploy/pg prints it)."""
        conninfo = re.sub(r'dbname=\S+', 'dbname=' + self.database, self.admin_conninfo)
        return re.sub(r'user=\S+', 'user=' + user, conninfo) if 'user=' in conninfo else conninfo + ' user=' + user

    def psql(self, sql, conninfo=None):
        done = subprocess.run(['psql', conninfo or self.conninfo, '-v', 'ON_ERROR_STOP=1', '-qtAc', sql],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError('psql refused %r: %s' % (sql, done.stderr.strip()))
        return done.stdout.strip()

    def start(self):
        self.psql('DROP DATABASE IF EXISTS %s' % self.database, self.admin_conninfo)
        roles = subprocess.run([self.binary, 'db', 'roles', '--database', self.database], check=True, capture_output=True, text=True)
        done = subprocess.run(['psql', self.admin_conninfo, '-qX', '-v', 'ON_ERROR_STOP=1'], input=roles.stdout, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError('the roles script failed: ' + done.stderr.strip())
        self.port = free_port()
        self.origin = 'http://localhost:%d' % self.port
        keys = os.path.join(self.directory, 'reclaim.keys')
        self.env = dict(os.environ, DATABASE_URL=self.conninfo, RECLAIM_MIGRATION_DATABASE_URL=self.owner_conninfo, RECLAIM_KEY_FILE=keys,
                        RECLAIM_ADDRESS='127.0.0.1:%d' % self.port,
                        RECLAIM_PUBLIC_DIR=os.path.join(ROOT, 'Public'),
                        RECLAIM_MIGRATIONS_DIR=os.path.join(ROOT, 'Migrations'),
                        # Without SMTP the delivery worker writes each mail here as an .eml file.
                        RECLAIM_DATA_DIR=os.path.join(self.directory, 'data'),
                        # A short cooling-off: an engineer's recorded step is done by the service within seconds, and
                        # the case page looks again when it falls due (the demo's own scheduled step waits a day).
                        RECLAIM_UNLOCK_DELAY='2')
        run = dict(env=self.env, check=True, capture_output=True, text=True)
        subprocess.run([self.binary, 'keys', 'generate', '--output', keys], **run)
        subprocess.run([self.binary, 'migrate'], **run)
        self.seed = json.loads(subprocess.run([self.binary, 'demo', 'seed', '--json'], **run).stdout)
        self.log = open(os.path.join(self.directory, 'serve.log'), 'w')
        self.process = subprocess.Popen([self.binary, 'serve'], env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        # Generous: on a loaded machine (the suites run side by side) a start can take many seconds.
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(self.origin + '/readyz', timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                pass
            if self.process.poll() is not None or time.time() > deadline:
                self.log.flush()
                with open(self.log.name) as log:
                    tail = log.read()[-2000:]
                raise RuntimeError('reclaim serve did not become ready (exit status %s); the end of %s:\n%s'
                                   % (self.process.poll(), self.log.name, tail))
            time.sleep(0.1)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.psql('DROP DATABASE IF EXISTS %s WITH (FORCE)' % self.database, self.admin_conninfo)
        shutil.rmtree(self.directory, ignore_errors=True)

    # The demo data.
    def agent(self, tier):
        return next(a for a in self.seed['agents'] if a['tier'] == tier)

    def case(self, state=None, path=None, kind=None, exclude=()):
        """A demo case matching the filters that no earlier test took (tests change cases)."""
        for case in self.seed['cases']:
            if case['case_number'] in exclude or case.get('_taken'):
                continue
            if (state is None or case['state'] == state) and (path is None or case['path'] == path) \
                    and (kind is None or case['kind'] == kind):
                case['_taken'] = True
                return case
        raise LookupError('no demo case with state=%s path=%s kind=%s left' % (state, path, kind))

    def new_agent(self, tier, admin=False):
        """A new agent of `tier` through `reclaim agent add` (each agent may sign in once per 30 s TOTP step,
        so tests that sign in often use fresh agents rather than wait)."""
        self.agent_count = getattr(self, 'agent_count', 0) + 1
        email = 'browser.%s.%d@example.com' % (tier, self.agent_count)
        command = [self.binary, 'agent', 'add', '--email', email, '--name', 'Browser %s %d' % (tier, self.agent_count),
                   '--tier', tier, '--json'] + (['--admin'] if admin else [])
        agent = json.loads(subprocess.run(command, env=self.env, check=True, capture_output=True, text=True).stdout)
        agent['name'] = 'Browser %s %d' % (tier, self.agent_count)
        return agent

    def totp(self, agent):
        """A code for the agent's next unused time step (the service refuses a step twice), waiting if needed."""
        now = int(time.time() // 30)
        step = max(now, self.last_totp_step.get(agent['email'], -1) + 1)
        if step > now + 1:  # the service accepts one step either side; wait until this one is near
            pause = (step - 1) * 30 - time.time() + 0.5
            sys.stderr.write('harness: %.0f s until a new TOTP step for %s (a fresh agent would not wait)\n' % (pause, agent['email']))
            time.sleep(pause)
        self.last_totp_step[agent['email']] = step
        return totp_code(agent['totp_uri'], step)


NETWORK_STATUS = re.compile(r'Failed to load resource: the server responded with a status of (\d{3})')


class Browser:
    """One headless Chromium with the browser log captured."""

    def __init__(self, origin, width=1280, height=900, lang='en-GB', time_zone=None):
        options = webdriver.ChromeOptions()
        # The browser's locale: --lang sets navigator.language, intl.accept_languages the Accept-Language header.
        for argument in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu',
                         '--window-size=%d,%d' % (width, height), '--lang=%s' % lang):
            options.add_argument(argument)
        options.add_experimental_option('prefs', {'intl.accept_languages': lang})
        options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
        self.driver = webdriver.Chrome(service=DriverService(shutil.which('chromedriver') or '/usr/bin/chromedriver'),
                                       options=options)
        # Chromium's window has a minimum width (about 500 px); a phone is emulated exactly instead.
        if width < 500:
            self.driver.execute_cdp_cmd('Emulation.setDeviceMetricsOverride',
                                        {'width': width, 'height': height, 'deviceScaleFactor': 1, 'mobile': True})
        if time_zone:  # the reader's zone, as a browser in Shanghai or Taipei would have it
            self.driver.execute_cdp_cmd('Emulation.setTimezoneOverride', {'timezoneId': time_zone})
        self.origin = origin
        self.log = []

    def open(self, path):
        self.driver.get(self.origin + path)
        return self

    def wait_for(self, css, visible=True, timeout=WAIT):
        condition = EC.visibility_of_element_located if visible else EC.presence_of_element_located
        try:
            return WebDriverWait(self.driver, timeout, POLL).until(condition((By.CSS_SELECTOR, css)))
        except TimeoutException:
            raise AssertionError('nothing matching %r appeared within %d s' % (css, timeout)) from None

    def wait_for_text(self, css, text, timeout=WAIT):
        try:
            WebDriverWait(self.driver, timeout, POLL).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))
        except TimeoutException:
            found = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, css)]
            raise AssertionError('%r never showed %r (it shows %r)' % (css, text, found)) from None
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def wait_until_gone(self, css, timeout=WAIT):
        try:
            WebDriverWait(self.driver, timeout, POLL).until(EC.invisibility_of_element_located((By.CSS_SELECTOR, css)))
        except TimeoutException:
            raise AssertionError('%r is still shown after %d s' % (css, timeout)) from None

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def fill(self, css, text):
        element = self.wait_for(css)
        element.clear()
        element.send_keys(text)
        return element

    def click(self, css):
        """Clicks what matches css once it can be clicked. A page that renders again between the finding and the
        click (the case page does when a poll brings news) leaves a stale element: it is found again, as a
        person's second look would find the button where it now is."""
        deadline = time.time() + WAIT
        self.wait_for(css)
        while True:
            try:
                element = WebDriverWait(self.driver, max(deadline - time.time(), POLL), POLL).until(
                    EC.element_to_be_clickable((By.CSS_SELECTOR, css)))
                element.click()
                return element
            except (StaleElementReferenceException, ElementClickInterceptedException):
                if time.time() > deadline:
                    raise
                time.sleep(POLL)
            except TimeoutException:
                raise AssertionError('%r was shown but never clickable within %d s' % (css, WAIT)) from None

    def unlabelled_controls(self):
        """Form controls (hidden inputs aside) with no label, aria-label or aria-labelledby: should be none."""
        return self.driver.execute_script("""
            return [...document.querySelectorAll('input, select, textarea')].filter((c) => c.type !== 'hidden')
              .filter((c) => !(c.labels && c.labels.length) && !c.getAttribute('aria-label') && !c.getAttribute('aria-labelledby'))
              .map((c) => c.id || c.name || c.outerHTML.slice(0, 80));""")

    def overflow(self):
        """Pixels the page is wider than the window (0 or less: no horizontal scrolling)."""
        return self.driver.execute_script('return document.documentElement.scrollWidth - window.innerWidth;')

    def read_log(self):
        self.log.extend(self.driver.get_log('browser'))
        return self.log

    def problems(self, allowed_statuses=(), allowed_texts=()):
        """Log entries that are errors: anything SEVERE (console errors, uncaught exceptions, CSP refusals),
        bar network lines for the allowed HTTP statuses; also every CSP message whatever its level."""
        found = []
        for entry in self.read_log():
            message = entry.get('message', '')
            if any(text in message for text in allowed_texts):
                continue
            if 'Content Security Policy' in message or 'Refused to' in message:
                found.append(message)
            elif entry.get('level') == 'SEVERE':
                status = NETWORK_STATUS.search(message)
                if status and int(status.group(1)) in allowed_statuses:
                    continue
                # The dashboard asks GET /api/v1/session whether it is signed in; 401 is the documented "no".
                if status and status.group(1) == '401' and message.split(' ')[0].endswith('/api/v1/session'):
                    continue
                found.append(message)
        return found

    def screenshot(self, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.driver.save_screenshot(path)

    def quit(self):
        self.driver.quit()


# WCAG 2.x contrast of every visible text against the background it is drawn on (the first opaque
# background up the tree): 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold). Disabled controls are exempt.
CONTRAST_FAILURES = r"""
const parse = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null;
  const [r, g, b, a = 1] = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return { r, g, b, a }; };
const lum = ({ r, g, b }) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
const background = (el) => { for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
  if (c && c.a >= 0.99) return c; } return { r: 255, g: 255, b: 255, a: 1 }; };
const failures = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const seen = new Set();
while (walker.nextNode()) {
  const el = walker.currentNode.parentElement;
  if (!el || seen.has(el) || !walker.currentNode.textContent.trim()) continue;
  seen.add(el);
  if (el.closest('[disabled], .visually-hidden, dialog:not([open])') || !el.getClientRects().length) continue;
  const style = getComputedStyle(el);
  if (style.visibility === 'hidden' || Number(style.opacity) === 0) continue;
  const fg = parse(style.color), bg = background(el);
  const [l1, l2] = [lum(fg), lum(bg)].sort((a, b) => b - a);
  const ratio = (l1 + 0.05) / (l2 + 0.05);
  const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
  const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
  if (ratio < needed) failures.push(`${ratio.toFixed(2)} < ${needed}: "${el.textContent.trim().slice(0, 40)}" (${style.color} on rgb(${bg.r}, ${bg.g}, ${bg.b}))`);
}
return failures;
"""


def axe_source():
    """axe-core (Deque's accessibility rules engine, MPL-2.0) as shipped in the axe-core-python wheel,
    which deploy/test installs into its virtual environment."""
    import axe_core_python
    with open(os.path.join(os.path.dirname(axe_core_python.__file__), 'axe.min.js')) as file:
        return file.read()


# WCAG 2.0/2.1 A and AA rules, plus axe's best practices (landmarks, one h1, headings in order).
AXE_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })
  .then((results) => done(results.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }))))
  .catch((error) => done([{ id: 'axe-error', help: String(error), nodes: [] }]));
"""


class BrowserTestCase(unittest.TestCase):
    """One service per class; browsers opened with `self.browser()` are checked and closed after each test."""

    service = None

    @classmethod
    def setUpClass(cls):
        cls.service = Service(cls.__name__).start()

    @classmethod
    def tearDownClass(cls):
        if cls.service:
            cls.service.stop()

    def setUp(self):
        self.browsers = []
        self.files = []
        self.allowed_statuses = set()
        self.allowed_texts = []

    def browser(self, width=1280, height=900, lang='en-GB', time_zone=None):
        browser = Browser(self.service.origin, width, height, lang, time_zone)
        self.browsers.append(browser)
        return browser

    def file_with(self, data, suffix):
        """A temporary file holding `data` (for a file input), removed after the test."""
        handle, path = tempfile.mkstemp(suffix=suffix)
        with os.fdopen(handle, 'wb') as file:
            file.write(data)
        self.files.append(path)
        return path

    def expect_http_errors(self, *statuses):
        """Statuses the test provokes on purpose; their network lines in the log are not errors."""
        self.allowed_statuses.update(statuses)

    def expect_log(self, text):
        """A log line containing `text` is what the test provokes on purpose (say, a fetch while offline)."""
        self.allowed_texts.append(text)

    def _callTestMethod(self, method):
        # Screenshots are taken before tearDown closes the browsers.
        try:
            method()
        except BaseException:
            for index, browser in enumerate(self.browsers):
                path = os.path.join(FAILURES, '%s-%d.png' % (self.id(), index))
                try:
                    browser.screenshot(path)
                    sys.stderr.write('\nscreenshot of the failure: %s\n' % path)
                except Exception as error:  # the browser itself may be what failed
                    sys.stderr.write('\nno screenshot: %s\n' % error)
            raise

    def tearDown(self):
        for path in self.files:
            os.unlink(path)
        problems = []
        for browser in self.browsers:
            try:
                problems.extend(browser.problems(self.allowed_statuses, self.allowed_texts))
            finally:
                browser.quit()
        self.assertEqual(problems, [], 'the browser logged errors')

    def assert_accessible(self, browser):
        """The page as it is now: every visible text meets WCAG AA contrast (our own check, which also sees
        text over images and states axe leaves 'incomplete'), and axe-core finds no WCAG 2.1 A/AA violation
        nor a best-practice one (labels, names, roles, landmarks, headings, contrast, lang...)."""
        self.assertEqual(browser.driver.execute_script(CONTRAST_FAILURES), [], 'text below WCAG AA contrast')
        if not hasattr(BrowserTestCase, '_axe'):
            BrowserTestCase._axe = axe_source()
        browser.driver.execute_script(BrowserTestCase._axe)  # WebDriver's scripts are not subject to the page's CSP
        violations = browser.driver.execute_async_script(AXE_RUN)
        self.assertEqual(violations, [], 'axe-core found accessibility problems')

    def readme_screenshot(self, browser, name):
        browser.screenshot(os.path.join(SCREENSHOTS, name))

    # Shared steps.
    def sign_in(self, browser, tier, agent=None):
        """Signs an agent of `tier` (a new one unless given) in through the form with a computed TOTP;
        waits for the queue."""
        agent = agent or self.service.new_agent(tier)
        browser.open('/')
        self.fill_sign_in(browser, agent)
        browser.wait_for('#queue')
        return agent

    def wait_for_queue(self, browser, query_part=''):
        """Waits until the queue shows the answer to a query containing `query_part` (e.g. 'overdue=true')."""
        # An empty [attr*=""] matches nothing in CSS, so the query part is only added when given.
        browser.wait_for('#queue[aria-busy="false"]' + ('[data-query*="%s"]' % query_part if query_part else ''))

    def fill_sign_in(self, browser, agent):
        browser.fill('#signin-email', agent['email'])
        browser.fill('#signin-password', agent['password'])
        browser.fill('#signin-totp', self.service.totp(agent))
        browser.click('#signin-submit')
        browser.wait_until_gone('#signin')
