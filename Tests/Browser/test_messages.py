"""What was sent and what came back, in real headless Chromium: the case page's Messages panel (mail to the customer,
with its state, and the customer's replies read from the service's Maildir), and, on /admin, an API client's webhook
endpoints with their latest deliveries.

The service runs its delivery worker as in production: without RECLAIM_SMTP_URL each mail is written as an .eml file
(so it becomes `sent`); the webhook endpoint is a loopback port nobody listens on (allowed by RECLAIM_WEBHOOK_ALLOW),
so its delivery is refused and waits for a retry with the error recorded. Replies are read from a Maildir of this
class's own (RECLAIM_INBOUND=maildir:..., read every second), where the test drops the customer's answer as an MTA
would: written in tmp/, renamed into new/."""
import email.message
import email.policy
import email.utils
import hashlib
import hmac
import json
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from harness import WAIT, BrowserTestCase, free_port, png_bytes

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
        # own scratch directory), and replies read every second from a Maildir of its own.
        cls.maildir = tempfile.mkdtemp(prefix='reclaim-browser-inbound-')
        settings = {'RECLAIM_WEBHOOK_ALLOW': '127.0.0.1', 'RECLAIM_INBOUND': 'maildir:' + cls.maildir,
                    'RECLAIM_INBOUND_POLL_SECONDS': '1', 'RECLAIM_REPLY_ADDRESS': 'cases@reclaim.test'}
        saved = {name: os.environ.get(name) for name in settings}
        os.environ.update(settings)
        try:
            super().setUpClass()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.maildir, ignore_errors=True)

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

    def drop_into_maildir(self, message):
        """Delivers `message` (an email.message.EmailMessage) as an MTA does: written in tmp/, renamed into new/."""
        for folder in ('tmp', 'new', 'cur'):
            os.makedirs(os.path.join(self.maildir, folder), exist_ok=True)
        name = '%d.%d_%s.browser-test' % (time.time(), os.getpid(), os.urandom(4).hex())
        with open(os.path.join(self.maildir, 'tmp', name), 'wb') as file:
            file.write(message.as_bytes(policy=email.policy.SMTP))
        os.rename(os.path.join(self.maildir, 'tmp', name), os.path.join(self.maildir, 'new', name))

    def test_a_customer_note_goes_out_the_reply_with_an_invoice_photo_comes_back_and_moves_the_documents_gate(self):
        case = self.service.case(state='awaiting_documents', path='documents')
        number = case['case_number']
        contact = self.service.psql("SELECT customer_contact_email FROM cases WHERE case_number = '%s'" % number)
        tier3 = self.browser()
        self.sign_in(tier3, 'tier3')
        tier3.open('/#/cases/' + number)
        tier3.wait_for_text('#case-state', 'Awaiting documents')
        self.assertIn('Proof of purchase', tier3.wait_for('#evidence-missing').text)

        # The agent writes to the customer with the notes composer: "Also the customer" sends it by mail.
        notes = "FROM outbox o JOIN cases c ON c.id = o.case_id WHERE c.case_number = '%s' AND o.channel = 'mail' " \
            "AND o.kind = 'customer_note'" % number
        before = int(self.service.psql('SELECT count(*) ' + notes))
        tier3.fill('#note-body', 'Could you send us the invoice for the phone? A photo of it is fine.')
        tier3.click('#note-customer')
        tier3.click('#note-submit')
        self.wait_for_sql("SELECT count(*) " + notes + " AND o.state = 'sent'", str(before + 1))
        outbox_id = self.service.psql('SELECT o.id ' + notes + ' ORDER BY o.created_at DESC LIMIT 1')
        tier3.wait_for('#messages-list li[data-kind="customer_note"]')

        # The mail as the customer's client received it (the worker wrote it as an .eml file, no SMTP here).
        with open(os.path.join(self.service.directory, 'data', 'mail', outbox_id + '.eml'), 'rb') as file:
            sent = email.message_from_binary_file(file, policy=email.policy.default)
        self.assertEqual(sent['To'].addresses[0].addr_spec, contact)
        reply_to = sent['Reply-To'].addresses[0].addr_spec
        self.assertTrue(reply_to.startswith('cases+%s-' % number), reply_to)

        # Her answer as a phone's mail client writes it: threading headers, quoted text, the invoice photo attached.
        reply = email.message.EmailMessage()
        reply['From'] = email.utils.formataddr(('Ada Victim', contact))
        reply['To'] = reply_to
        reply['Subject'] = 'Re: ' + sent['Subject']
        reply['Date'] = email.utils.formatdate(localtime=True)
        reply['Message-ID'] = email.utils.make_msgid(domain='example.net')
        reply['In-Reply-To'] = sent['Message-ID']
        reply['References'] = sent['Message-ID']
        reply.set_content('Hello,\n\nhere is the invoice, I took a photo of it.\n\nAda\n\n> Could you send us the invoice for the phone?\n')
        reply.add_attachment(png_bytes(48, 32, (240, 236, 220)), maintype='image', subtype='png', filename='invoice.png')
        self.drop_into_maildir(reply)
        self.wait_for_sql("SELECT count(*) FROM inbound_messages m JOIN cases c ON c.id = m.case_id WHERE c.case_number = '%s'" % number, '1')
        self.assertEqual(os.listdir(os.path.join(self.maildir, 'new')), [], 'removed from the Maildir once stored')

        # The agent looks again (reloads the case): the reply is in the conversation, after the note, as text.
        tier3.driver.refresh()
        received = tier3.wait_for('#messages-list li[data-direction="in"]')
        self.assertIn('here is the invoice, I took a photo of it.', received.find_element(By.CSS_SELECTOR, 'pre.received-text').text)
        self.assertIn(contact, received.text)
        self.assertIn('Matched by its reply address', received.text)
        directions = [li.get_attribute('data-direction') for li in tier3.find_all('#messages-list li')]
        self.assertEqual(directions[-1], 'in', 'the reply comes after the note it answers')
        self.assertIn('Attachments filed as evidence', received.text)
        self.assert_accessible(tier3)

        # The attachment is evidence waiting for review: accepted as an invoice, it counts for proof of purchase.
        item = tier3.wait_for('#evidence-list li[data-type="mail_attachment"]')
        evidence = item.get_attribute('data-evidence')
        [b for b in item.find_elements(By.CSS_SELECTOR, 'button') if b.text == 'Review'][0].click()
        form = tier3.wait_for('#evidence-list li[data-evidence="%s"] form.review-form' % evidence)
        form.find_element(By.CSS_SELECTOR, 'textarea').send_keys('The invoice for the phone on file, date and seller legible.')
        Select(form.find_element(By.CSS_SELECTOR, 'select[name="accepted_as"]')).select_by_value('invoice')
        form.find_element(By.CSS_SELECTOR, 'button[type="submit"]').click()
        tier3.wait_for_text('#evidence-list li[data-evidence="%s"] .badge' % evidence, 'accepted')
        # The gate: the page's "Still missing" no longer names proof of purchase (the photo of the IMEI still missing).
        deadline = time.time() + WAIT
        while 'Proof of purchase' in tier3.wait_for('#evidence-missing').text and time.time() < deadline:
            time.sleep(0.05)
        self.assertNotIn('Proof of purchase', tier3.find('#evidence-missing').text, 'the documents gate moved')
        self.assertEqual(self.service.psql("SELECT accepted_as FROM evidence_reviews WHERE evidence_id = '%s'" % evidence), 'invoice')
        self.assert_accessible(tier3)

    def test_a_fathers_mail_attached_by_an_agent_reads_as_added_by_the_team_never_as_her_reply(self):
        """api.md v1.3: mail an agent attached from someone other than the customer is shown on /status as a message
        from a masked sender added by our team, never as "your reply"."""
        case = self.service.case(state='awaiting_documents')
        number = case['case_number']
        father = email.message.EmailMessage()
        father['From'] = email.utils.formataddr(('Her Father', 'father.of.ada@family.example'))
        father['To'] = 'cases@reclaim.test'
        father['Subject'] = 'About my daughter'
        father['Date'] = email.utils.formatdate(localtime=True)
        father['Message-ID'] = email.utils.make_msgid(domain='family.example')
        father.set_content('Hello, my daughter lost her phone; I am writing for her.\n')
        self.drop_into_maildir(father)
        unmatched = "FROM inbound_messages WHERE from_address = 'father.of.ada@family.example' AND case_id IS NULL"
        self.wait_for_sql('SELECT count(*) ' + unmatched, '1')
        mail_id = self.service.psql('SELECT id ' + unmatched)

        # The agent attaches it from the unmatched list above the queue.
        tier1 = self.browser()
        self.sign_in(tier1, 'tier1')
        tier1.wait_for('#inbound-list li[data-inbound="%s"]' % mail_id)
        tier1.fill('#inbound-case-' + mail_id, number)
        tier1.click('#inbound-list li[data-inbound="%s"] form button[type="submit"]' % mail_id)
        self.wait_for_sql("SELECT matched_by FROM inbound_messages WHERE id = '%s'" % mail_id, 'agent')

        # The customer's page: a message from a masked sender added by the team, and no "your reply".
        customer = self.browser().open('/status')
        customer.fill('#case-number', number)
        customer.fill('#access-code', case['access_code'])
        customer.click('#lookup-submit')
        added = customer.wait_for('#messages-added li')
        self.assertIn('A message from f***@f***.example', added.text)
        self.assertIn('added to your case by our team', added.text)
        self.assertNotIn('father.of.ada', customer.find('body').text)
        self.assertFalse(customer.find('#reply-received').is_displayed(), 'not shown as her reply')
        self.assert_accessible(customer)
