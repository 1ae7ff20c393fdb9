"""The administration page (/admin) in real headless Chromium: agents, API clients and the audit log."""
import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request

from selenium.webdriver.common.by import By

from harness import BrowserTestCase

CASE = {
    'kind': 'account_takeover', 'account_email': 'victim@example.com',
    'customer': {'name': 'Ada Victim', 'contact_email': 'victim.home@example.net'},
    'devices': [{'serial': 'C02XK1ZJH3QD', 'imei': '490154203237518', 'model': 'Phone 12'}],
    'facts': {'rescue_email_added': True}, 'summary': 'Opened by a partner during a secret rotation.',
}


class AdminTests(BrowserTestCase):

    def open_admin(self, width=1280):
        browser = self.browser(width=width)
        admin = self.sign_in(browser, 'tier1', self.service.new_agent('tier1', admin=True))
        link = browser.wait_for('#admin-link')
        link.click()
        browser.wait_for('#admin-body')
        browser.wait_for_text('#audit-chain', 'verified')
        return browser, admin

    def secrets(self, browser):
        """The one-time values shown in #secret, by their label."""
        panel = browser.wait_for('#secret')
        labels = [e.text for e in panel.find_elements(By.CSS_SELECTOR, 'dt')]
        values = [e.text for e in panel.find_elements(By.CSS_SELECTOR, 'dd code')]
        return dict(zip(labels, values))

    def dismiss_secret(self, browser):
        browser.click('#secret-done')
        browser.wait_until_gone('#secret')
        self.assertEqual(browser.find_all('#secret-values dd'), [], 'the secret is dropped from the page')

    def signed_post(self, key, secret, path='/api/v1/cases', body=None):
        # Each request differs (a counter in the summary): two identical ones signed in the same second are a replay.
        self.posts = getattr(self, 'posts', 0) + 1
        data = json.dumps(body or dict(CASE, summary='%s (%d)' % (CASE['summary'], self.posts))).encode()
        timestamp = int(time.time())
        mac = hmac.new(secret.encode(), b'%d.POST.%s.' % (timestamp, path.encode()) + data, hashlib.sha256).hexdigest()
        request = urllib.request.Request(self.service.origin + path, data=data, method='POST', headers={
            'Content-Type': 'application/json', 'Authorization': 'Bearer ' + key, 'Reclaim-Signature': 't=%d,v1=%s' % (timestamp, mac)})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def test_a_lone_admin_is_told_it_acts_alone(self):
        # Named to run first: the demo's admin is demoted for it and made admin again after, so this admin is the only one.
        demoted = self.service.psql("SELECT string_agg(id::text, ',') FROM agents WHERE is_admin")
        self.service.psql('UPDATE agents SET is_admin = false WHERE is_admin')
        try:
            browser, _ = self.open_admin()
            browser.wait_for_text('#proposals-alone', 'only administrator')
            self.assertFalse(browser.find('#proposals-two').is_displayed())
            self.assert_accessible(browser)
            # Alone, an agent is added at once, with both secrets.
            browser.fill('#agent-email', 'alone.added@example.com')
            browser.fill('#agent-name-input', 'Alone Added')
            browser.click('#agent-add')
            shown = self.secrets(browser)
            self.assertTrue(shown['TOTP URI'].startswith('otpauth://totp/'))
            self.assertEqual(browser.find_all('#proposals-rows tr'), [])
        finally:
            self.service.psql("UPDATE agents SET is_admin = true WHERE id = ANY(string_to_array('%s', ',')::uuid[])" % demoted)

    def test_an_admin_adds_an_agent_who_signs_in_with_the_shown_secrets_and_is_sent_to_sign_in_when_deactivated(self):
        # The demo has an admin of its own: two people, so adding an agent is a proposal another admin confirms.
        browser, _ = self.open_admin()
        browser.wait_for('#proposals-two')
        self.assertFalse(browser.find('#proposals-alone').is_displayed())
        self.assert_accessible(browser)
        self.assertEqual(browser.unlabelled_controls(), [])
        browser.fill('#agent-email', 'shown.once@example.com')
        browser.fill('#agent-name-input', 'Shown Once')
        browser.driver.find_element(By.CSS_SELECTOR, '#agent-tier option[value="tier2"]').click()
        browser.click('#agent-add')
        # The proposer holds the password only; the agent does not exist yet.
        shown = self.secrets(browser)
        self.assertEqual(shown['Email'], 'shown.once@example.com')
        self.assertNotIn('TOTP URI', shown)
        self.assertIn('awaits a second administrator', browser.find('#secret-intro').text)
        browser.wait_for_text('#flash', 'awaits a second administrator')
        proposal = '#proposals-rows tr[data-kind="agent_add"][data-status="pending"]'
        self.assertIn('(you)', browser.wait_for(proposal).text)
        self.assertEqual(browser.find_all(proposal + ' button[data-action="confirm"]'), [], 'the proposer cannot confirm')
        self.assertEqual(self.service.psql("SELECT count(*) FROM agents WHERE email = 'shown.once@example.com'"), '0')
        self.assert_accessible(browser)
        self.readme_screenshot(browser, 'admin.png')
        self.dismiss_secret(browser)

        # A second admin confirms it at /admin and is shown the other half: the TOTP URI, never the password.
        second, _ = self.open_admin()
        second.click(proposal + ' button[data-action="confirm"]')
        confirmed = self.secrets(second)
        self.assertTrue(confirmed['TOTP URI'].startswith('otpauth://totp/'))
        self.assertNotIn('Password', confirmed)
        second.wait_for_text('#proposals-rows tr[data-kind="agent_add"]', 'Confirmed')
        row = second.wait_for('#agents-rows tr[data-email="shown.once@example.com"]')
        self.assertIn('Never', row.text)
        self.assert_accessible(second)
        self.dismiss_secret(second)
        browser = second

        # The new agent signs in on the dashboard with the two halves.
        agent = {'email': shown['Email'], 'password': shown['Password'], 'totp_uri': confirmed['TOTP URI']}
        other = self.browser()
        self.sign_in(other, 'tier2', agent)
        self.assertEqual(other.find('#agent-tier').text, 'Tier 2')
        self.assertEqual(other.find_all('#admin-link:not([hidden])'), [], 'no administration link for a non-admin')

        # Deactivated: the agent's open dashboard is sent to sign-in at its next request.
        browser.click('#agents-rows tr[data-email="shown.once@example.com"] button[data-action="deactivate"]')
        browser.wait_for_text('#agents-rows tr[data-email="shown.once@example.com"] [data-state]', 'Inactive')
        self.expect_http_errors(401)
        other.driver.execute_script("document.dispatchEvent(new Event('visibilitychange'))")
        other.wait_for('#signin')
        self.assertIn('session has ended', other.find('#signin-reason').text)
        self.assertEqual(self.service.psql("SELECT count(*) FROM sessions s JOIN agents a ON a.id = s.agent_id WHERE a.email = 'shown.once@example.com'"), '0')

        # Every change is in the audit log, newest first, and the chain verifies.
        browser.wait_for_text('#audit-rows tr:first-child', 'deactivated')
        self.assertIn('Added agent shown.once@example.com (Tier 2)', ' '.join(e.text for e in browser.find_all('#audit-rows tr[data-type="agent_added"]')))
        self.assertIn('Add agent shown.once@example.com', browser.find('#audit-rows tr[data-type="proposal_made"]').text)
        self.assertIn('Confirmed the proposal', browser.find('#audit-rows tr[data-type="proposal_confirmed"]').text)
        self.assertIn('verified', browser.find('#audit-chain').text)

        # A non-admin who opens /admin is told so, and sees no data.
        self.expect_http_errors(403)
        outsider = self.browser()
        self.sign_in(outsider, 'tier3')
        outsider.open('/admin')
        outsider.wait_for_text('#admin-denied', 'Only administrators')
        self.assertFalse(outsider.find('#admin-body').is_displayed())

    def test_a_rotated_client_secret_overlaps_then_stops_and_the_page_works_at_360_px(self):
        browser, _ = self.open_admin(width=360)
        self.assertLessEqual(browser.overflow(), 0, 'the page scrolls sideways at 360 px')
        browser.fill('#client-name', 'Carrier desk')
        browser.click('#client-add')
        created = self.secrets(browser)
        key, old_secret = created['API key'], created['Signing secret']
        self.dismiss_secret(browser)
        self.assertEqual(self.signed_post(key, old_secret), 201)

        row = '#clients-rows tr[data-client="%s"]' % created['Client id']
        browser.click(row + ' button[data-action="rotate"]')
        new_secret = self.secrets(browser)['Signing secret']
        self.assertNotEqual(new_secret, old_secret)
        self.assertIn('previous one keeps working', browser.find('#secret-intro').text)
        self.assertLessEqual(browser.overflow(), 0)
        self.assert_accessible(browser)
        self.dismiss_secret(browser)
        self.assertEqual(self.signed_post(key, old_secret), 201)
        self.assertEqual(self.signed_post(key, new_secret), 201)
        # The overlap ends (its end moved to the past rather than waited for): the old secret stops, the new one works.
        self.service.psql("UPDATE api_clients SET previous_signing_expires_at = now() - interval '1 second' WHERE id = '%s'" % created['Client id'])
        self.assertEqual(self.signed_post(key, old_secret), 401)
        self.assertEqual(self.signed_post(key, new_secret), 201)

        # A new API key asks once more, then the old key stops at once; the signing secret stays.
        browser.click(row + ' button[data-action="rotate-key"]')
        browser.wait_for_text(row + ' button[data-action="rotate-key"]', 'Press again')
        browser.click(row + ' button[data-action="rotate-key"]')
        new_key = self.secrets(browser)['API key']
        self.assertNotEqual(new_key, key)
        self.assertIn('previous key no longer works', browser.find('#secret-intro').text)
        self.dismiss_secret(browser)
        self.assertEqual(self.signed_post(key, new_secret), 401)
        self.assertEqual(self.signed_post(new_key, new_secret), 201)
        browser.wait_for_text('#audit-rows tr:first-child', 'new API key')
        key = new_key

        # Revoke asks once more, then the key stops.
        browser.click(row + ' button[data-action="revoke"]')
        browser.wait_for_text(row + ' button[data-action="revoke"]', 'Press again')
        browser.click(row + ' button[data-action="revoke"]')
        browser.wait_for_text(row, 'Revoked')
        self.assertEqual(self.signed_post(key, new_secret), 401)
        browser.wait_for_text('#audit-rows tr:first-child', 'Revoked API client Carrier desk')

    def test_an_admin_imports_a_file_of_accounts_and_puts_one_on_file_by_hand(self):
        browser, _ = self.open_admin()
        good = {'email': 'imported.one@example.net', 'security_questions': [{'id': 'q1', 'question': 'First pet?', 'answer': 'Biscuit'}],
                'cards': [{'number': '4111111111111111', 'exp_month': 9, 'exp_year': 2031}],
                'devices': [{'serial': 'C02IMPORT01QD', 'model': 'Phone 14'}]}
        bad_card = dict(good, email='imported.two@example.net', cards=[{'number': '4111111111111112', 'exp_month': 9, 'exp_year': 2031}])
        lines = [json.dumps(good), json.dumps(good), json.dumps(bad_card), 'not json', '']
        self.expect_http_errors(409, 422)
        browser.find('#account-file').send_keys(self.file_with('\n'.join(lines).encode(), '.jsonl'))
        browser.click('#account-import')
        browser.wait_for_text('#account-import-message', '1 of 4 accounts put on file')
        outcomes = [(e.get_attribute('data-line'), e.get_attribute('data-outcome')) for e in browser.find_all('#account-import-results li')]
        self.assertEqual(outcomes, [('1', 'stored'), ('2', 'refused'), ('3', 'refused'), ('4', 'refused')])
        results = browser.find('#account-import-results').text
        self.assertIn('already on file', results)
        self.assertIn('not JSON', results)
        self.assertNotIn('4111111111111112', results, 'a refusal never echoes the card')
        self.assertEqual(self.service.psql("SELECT count(*) FROM accounts WHERE email LIKE 'imported.%'"), '1')
        self.assert_accessible(browser)

        # By hand: questions with their answers, a card, a device; the answer is stored hashed, never as typed.
        browser.fill('#account-email', 'typed.in@example.net')
        browser.fill('#account-q1', 'City where your parents met?')
        browser.click('#account-add')
        browser.wait_for_text('#account-form-message', 'answer')
        browser.fill('#account-a1', 'Lyon')
        browser.fill('#account-card', '5555 5555 5555 4444')
        browser.fill('#account-card-month', '12')
        browser.fill('#account-card-year', '2031')
        browser.fill('#account-imei', '490154203237518')
        # The addresses it had before the theft: each told of every unlock scheduled on its cases.
        browser.fill('#account-notice', 'before.theft@example.org\nold.work@example.net')
        browser.click('#account-add')
        browser.wait_for_text('#flash', 'typed.in@example.net is on file')
        self.assertEqual(self.service.psql("SELECT array_to_string(notice_addresses, ',') FROM accounts WHERE email = 'typed.in@example.net'"),
                         'before.theft@example.org,old.work@example.net')
        self.assertEqual(browser.find('#account-email').get_attribute('value'), '', 'the form is emptied')
        self.assertEqual(self.service.psql("SELECT count(*) FROM accounts WHERE email = 'typed.in@example.net'"), '1')
        self.assertNotIn('Lyon', self.service.psql(
            "SELECT string_agg(q::text, ' ') FROM account_security_questions q JOIN accounts a ON a.id = q.account_id WHERE a.email = 'typed.in@example.net'"))
        self.assert_accessible(browser)

        # Corrected: what is on file for the address is replaced, and the audit log says so.
        browser.fill('#account-replace', 'typed.in@example.net')
        browser.fill('#account-email', 'typed.in@example.net')
        browser.fill('#account-q1', 'Street you grew up on?')
        browser.fill('#account-a1', 'Elm')
        browser.click('#account-add')
        browser.wait_for_text('#flash', 'is replaced')
        self.assertEqual(self.service.psql(
            "SELECT string_agg(q.question, ',') FROM account_security_questions q JOIN accounts a ON a.id = q.account_id WHERE a.email = 'typed.in@example.net'"),
            'Street you grew up on?')
        self.assertEqual(self.service.psql("SELECT count(*) FROM account_cards c JOIN accounts a ON a.id = c.account_id WHERE a.email = 'typed.in@example.net'"), '0')
        browser.wait_for_text('#audit-rows tr:first-child', 'Replaced the account on file for typed.in@example.net')

    def test_an_admin_signs_out_from_the_administration_page(self):
        browser, _ = self.open_admin()
        browser.click('#signout')
        browser.wait_for('#signin')
        self.assertNotIn('/admin', browser.driver.current_url)
        # The session is over: /admin now says so.
        self.expect_http_errors(401)
        browser.open('/admin')
        browser.wait_for_text('#admin-denied', 'not signed in')
        self.assertFalse(browser.find('#signout').is_displayed())
        self.assert_accessible(browser)

    def test_z_tampering_with_the_audit_log_shows_a_broken_chain(self):
        # Named to run last in the class: it leaves the chain broken for good.
        browser, _ = self.open_admin()
        owner = self.service.owner_conninfo  # an owner who switches the guard off: the service's own role cannot
        self.service.psql('ALTER TABLE admin_events DISABLE TRIGGER admin_events_append_only', owner)
        self.service.psql("UPDATE admin_events SET at = at + interval '1 second' WHERE seq = 1", owner)
        self.service.psql('ALTER TABLE admin_events ENABLE TRIGGER admin_events_append_only', owner)
        browser.driver.refresh()
        browser.wait_for_text('#audit-chain', 'broken at entry 1')
        self.assert_accessible(browser)
