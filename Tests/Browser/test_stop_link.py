"""The cooling-off's stop link, in real headless Chromium: the victim opens the "this wasn't me" link of the unlock
notice the service mailed (the delivery worker writes it as an .eml file, as it would send it), stops the scheduled
change, and reads what happened and what to do next; the status page shows a scheduled change and when it takes
effect.

The demo seed schedules an unlock step a day ahead on one case (its notice is queued with the seed)."""
import email
import email.policy
import os
import re
import time

from harness import WAIT, BrowserTestCase

SCHEDULED_CASE = """
    SELECT c.case_number FROM cases c JOIN scheduled_unlocks s ON s.case_id = c.id
    WHERE s.status = 'scheduled' ORDER BY c.case_number LIMIT 1"""


class StopLinkTests(BrowserTestCase):

    def wait_for_sql(self, sql, expected, timeout=WAIT):
        deadline = time.time() + timeout
        while self.service.psql(sql) != expected:
            if time.time() > deadline:
                raise AssertionError('%r never answered %r (it answers %r)' % (sql, expected, self.service.psql(sql)))
            time.sleep(0.2)

    def notice(self, number):
        """The unlock notice to the case's contact address, as written by the delivery worker."""
        contact = self.service.psql("SELECT customer_contact_email FROM cases WHERE case_number = '%s'" % number)
        message_id = self.service.psql(
            "SELECT o.id FROM outbox o JOIN cases c ON c.id = o.case_id WHERE c.case_number = '%s' AND o.kind = 'unlock_scheduled' "
            "AND o.recipient = '%s'" % (number, contact))
        self.assertTrue(message_id, 'no notice to the contact address')
        self.wait_for_sql("SELECT state FROM outbox WHERE id = '%s'" % message_id, 'sent')
        path = os.path.join(self.service.directory, 'data', 'mail', message_id + '.eml')
        with open(path, 'rb') as file:
            return email.message_from_bytes(file.read(), policy=email.policy.default)

    def test_the_victim_opens_the_link_in_the_notice_and_stops_the_change(self):
        number = self.service.psql(SCHEDULED_CASE)
        self.assertTrue(number, 'the demo data has a scheduled unlock step')
        mail = self.notice(number)
        body = mail.get_body(preferencelist=('plain',)).get_content()
        self.assertIn('Remove the rescue e-mail address', body)
        link = re.search(r'(http\S+/status/stop#(\S+))', body)
        self.assertIsNotNone(link, body)
        token = link.group(2)
        # The token is nowhere in the database in clear (only its SHA-256), nor in the outbox's payload.
        self.assertEqual(self.service.psql("SELECT count(*) FROM outbox WHERE payload LIKE '%%%s%%'" % token), '0')
        self.assertEqual(self.service.psql(
            "SELECT count(*) FROM unlock_stop_tokens WHERE token_hash = sha256(convert_to('%s', 'UTF8'))" % token), '1')

        browser = self.browser()
        browser.open(link.group(1).replace(re.match(r'https?://[^/]+', link.group(1)).group(0), ''))
        browser.wait_for('#stop')
        self.assertFalse(browser.find('#lookup').is_displayed())
        # The token left the address bar at once.
        self.assertNotIn(token, browser.driver.current_url)
        self.assertEqual(self.service.psql(
            "SELECT count(*) FROM scheduled_unlocks s JOIN cases c ON c.id = s.case_id WHERE c.case_number = '%s' AND s.status = 'scheduled'"
            % number), '1', 'nothing changes before the victim confirms')
        browser.click('#stop-submit')
        browser.wait_for_text('#stop-message', 'We have stopped every change')
        self.assertIn('Remove the rescue e-mail address', browser.find('#stop-cancelled').text)
        self.assertIn('Never pay', browser.find('#stop-next').text)
        self.assertIn('call our support team', browser.find('#stop-next').text)
        self.assertEqual(self.service.psql(
            "SELECT state || ' ' || frozen FROM cases WHERE case_number = '%s'" % number), 'document_review true')
        self.assertEqual(self.service.psql(
            "SELECT string_agg(actor, ',') FROM case_events e JOIN cases c ON c.id = e.case_id WHERE c.case_number = '%s' "
            "AND e.type = 'unlock_cancelled'" % number), 'customer')
        # The token went to the stop API only, in a POST body.
        sent = browser.driver.execute_script(
            "return performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes(arguments[0]))", token)
        self.assertEqual(sent, [])
        self.assert_accessible(browser)

    def test_a_forged_link_says_it_is_not_ours(self):
        self.expect_http_errors(404)
        browser = self.browser(lang='zh-TW')
        browser.open('/status/stop#not-a-token-we-sent')
        browser.click('#stop-submit')
        browser.wait_for_text('#stop-message', '此連結不是我們寄出的')
