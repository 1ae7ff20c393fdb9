"""What was sent, in real headless Chromium: the case page's Messages panel (mail to the customer, with its state)
and, on /admin, an API client's webhook endpoints with their latest deliveries.

The service runs its delivery worker as in production: without RECLAIM_SMTP_URL each mail is written as an .eml file
(so it becomes `sent`); the webhook endpoint is a loopback port nobody listens on (allowed by RECLAIM_WEBHOOK_ALLOW),
so its delivery is refused and waits for a retry with the error recorded."""
import hashlib
import hmac
import json
import os
import time
import urllib.error
import urllib.request

from selenium.webdriver.common.by import By

from harness import WAIT, BrowserTestCase, free_port

CASE = {
    'kind': 'account_takeover', 'account_email': 'partner.victim@example.com',
    'customer': {'name': 'Ada Victim', 'contact_email': 'ada.home@example.net'},
    'devices': [{'serial': 'C02XK1ZJH3QD', 'model': 'Phone 12'}],
    'facts': {'rescue_email_added': True}, 'summary': 'Opened by a partner with a webhook.',
}


class MessagesTests(BrowserTestCase):

    @classmethod
    def setUpClass(cls):
        # This class's service only: loopback webhook destinations allowed (the harness keeps the .eml files in its
        # own scratch directory).
        saved = os.environ.get('RECLAIM_WEBHOOK_ALLOW')
        os.environ['RECLAIM_WEBHOOK_ALLOW'] = '127.0.0.1'
        try:
            super().setUpClass()
        finally:
            if saved is None:
                os.environ.pop('RECLAIM_WEBHOOK_ALLOW', None)
            else:
                os.environ['RECLAIM_WEBHOOK_ALLOW'] = saved

    def signed_post(self, key, secret, path, body):
        data = json.dumps(body).encode()
        timestamp = int(time.time())
        mac = hmac.new(secret.encode(), b'%d.POST.%s.' % (timestamp, path.encode()) + data, hashlib.sha256).hexdigest()
        request = urllib.request.Request(self.service.origin + path, data=data, method='POST', headers={
            'Content-Type': 'application/json', 'Authorization': 'Bearer ' + key, 'Reclaim-Signature': 't=%d,v1=%s' % (timestamp, mac)})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read() or b'null')
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b'null')

    def wait_for_sql(self, sql, expected, timeout=WAIT):
        deadline = time.time() + timeout
        while self.service.psql(sql) != expected:
            if time.time() > deadline:
                raise AssertionError('%r never answered %r (it answers %r)' % (sql, expected, self.service.psql(sql)))
            time.sleep(0.2)

    def test_an_agent_sees_the_opening_mail_then_the_next_one_after_a_transition(self):
        case = self.service.case(state='new', kind='account_takeover')
        number = case['case_number']
        contact = self.service.psql("SELECT customer_contact_email FROM cases WHERE case_number = '%s'" % number)
        # The worker writes the demo's queued mails as .eml files within moments of starting.
        self.wait_for_sql("SELECT count(*) FROM outbox o JOIN cases c ON c.id = o.case_id WHERE c.case_number = '%s' AND o.state <> 'sent'" % number, '0')
        browser = self.browser()
        self.sign_in(browser, 'tier1')
        browser.open('/#/cases/' + number)
        browser.wait_for_text('#case-state', 'New')
        opening = browser.wait_for('#messages-list li[data-kind="case_opened"]')
        self.assertIn('Mail to %s: case opened (number, access code, status link)' % contact, opening.text)
        self.assertIn(contact, opening.text)
        self.assertIn('Sent ', opening.find_element(By.CSS_SELECTOR, '.message-state').text)
        self.assertEqual(len(browser.find_all('#messages-list li')), 1)
        self.assertNotIn(self.service.psql("SELECT payload FROM outbox o JOIN cases c ON c.id = o.case_id WHERE c.case_number = '%s'" % number),
                         browser.find('#messages-list').text)

        browser.click('button[data-action="escalate"]')
        browser.click('#action-confirm')
        browser.wait_for_text('#case-state', 'Identity check')
        second = browser.wait_for('#messages-list li:nth-child(2)[data-kind="state_changed"]')
        self.assertIn(contact, second.text)
        # Queued at first; the panel looks again while something waits, and the worker sends it within seconds.
        browser.wait_for_text('#messages-list li:nth-child(2) .message-state', 'Sent ', timeout=20)
        self.assert_accessible(browser)

    def test_an_admin_sees_a_clients_endpoint_and_a_refused_delivery(self):
        browser = self.browser()
        self.sign_in(browser, 'tier1', self.service.new_agent('tier1', admin=True))
        browser.click('#admin-link')
        browser.wait_for('#admin-body')
        browser.fill('#client-name', 'Webhook partner')
        browser.click('#client-add')
        panel = browser.wait_for('#secret')
        shown = dict(zip([e.text for e in panel.find_elements(By.CSS_SELECTOR, 'dt')], [e.text for e in panel.find_elements(By.CSS_SELECTOR, 'dd code')]))
        browser.click('#secret-done')
        key, secret, client_id = shown['API key'], shown['Signing secret'], shown['Client id']

        url = 'http://127.0.0.1:%d/hook' % free_port()  # nobody listens: the delivery is refused and retried later
        status, endpoint = self.signed_post(key, secret, '/api/v1/webhooks', {'url': url, 'events': ['case.opened']})
        self.assertEqual(status, 201, endpoint)
        status, opened = self.signed_post(key, secret, '/api/v1/cases', CASE)
        self.assertEqual(status, 201, opened)
        self.wait_for_sql("SELECT count(*) > 0 FROM outbox_attempts a JOIN outbox o ON o.id = a.message_id WHERE o.endpoint_id = '%s'" % endpoint['id'], 't')

        row = '#clients-rows tr[data-client="%s"]' % client_id
        browser.click(row + ' button[data-action="webhooks"]')
        detail = '#webhooks-%s' % client_id
        shown_endpoint = browser.wait_for(detail + ' [data-endpoint="%s"]' % endpoint['id'])
        self.assertIn(url, shown_endpoint.text)
        self.assertIn('Active', shown_endpoint.text)
        self.assertIn('case.opened', shown_endpoint.text)
        delivery = browser.wait_for(detail + ' tr[data-state="queued"]')
        self.assertIn('case.opened', delivery.text)
        self.assertIn('Retry at', delivery.text)
        attempt = delivery.find_element(By.CSS_SELECTOR, 'ol.attempts li').text
        self.assertIn('no answer', attempt)
        self.assertRegex(attempt, r'\d+ ms')
        page = browser.find('#admin-body').text
        self.assertNotIn(endpoint['secret'], page)
        self.assertNotIn(opened['access_code'], page)
        self.assertEqual(browser.find(row + ' button[data-action="webhooks"]').get_attribute('aria-expanded'), 'true')
        self.assert_accessible(browser)

        # Closing it removes the row; the list redrawn after a change keeps an open one open.
        browser.click(row + ' button[data-action="webhooks"]')
        browser.wait_until_gone(detail)
        browser.click(row + ' button[data-action="webhooks"]')
        browser.wait_for(detail + ' [data-endpoint="%s"]' % endpoint['id'])
        browser.click(row + ' button[data-action="rotate"]')
        browser.click('#secret-done')
        browser.wait_for(detail + ' [data-endpoint="%s"]' % endpoint['id'])

        # A delivery that gave up (dead-lettered) has a retry button: pressed, it is queued again, due now, and the
        # admin log says who did it.
        self.service.psql("UPDATE outbox SET state = 'failed', next_attempt_at = now() + interval '1 day' WHERE endpoint_id = '%s'" % endpoint['id'])
        browser.click(row + ' button[data-action="webhooks"]')
        browser.wait_until_gone(detail)
        browser.click(row + ' button[data-action="webhooks"]')
        failed = browser.wait_for(detail + ' tr[data-state="failed"]')
        self.assertIn('Failed (no more retries)', failed.text)
        self.assert_accessible(browser)
        failed.find_element(By.CSS_SELECTOR, 'button[data-action="retry"]').click()
        browser.wait_for_text('#flash', 'queued again')
        self.assertEqual(self.service.psql(
            "SELECT count(*) FROM outbox WHERE endpoint_id = '%s' AND (state = 'failed' OR next_attempt_at > now() + interval '1 hour')"
            % endpoint['id']), '0')
        browser.wait_for_text('#audit-rows tr:first-child', 'Queued a webhook delivery to Webhook partner again')
        self.assertEqual(self.service.psql("SELECT count(*) FROM admin_events WHERE type = 'webhook_retried'"), '1')
