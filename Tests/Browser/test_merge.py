"""Merge knows whose case it is (api.md v1.2): the merge form warns when the two cases look like different people,
asks for a confirmation before it sends the merge, and says nothing when they are the same person."""
from harness import BrowserTestCase


class MergeWarningTests(BrowserTestCase):

    def pair(self):
        """Two open cases on one demo account (the demo's customers have a contact address each)."""
        rows = self.service.psql(
            "SELECT a.case_number || ' ' || b.case_number FROM cases a JOIN cases b ON a.account_email = b.account_email "
            "AND a.id <> b.id WHERE a.state IN ('new', 'identity_check') AND b.state IN ('new', 'identity_check') AND NOT a.frozen "
            "ORDER BY a.case_number, b.case_number LIMIT 1")
        return rows.split(' ')

    def open_merge_form(self, browser, source, target):
        browser.open('/#/cases/' + source)
        browser.wait_for('#chain-mark')
        browser.click('button[data-action="merge"]')
        browser.click('#merge-choices input[data-case="%s"]' % target)
        browser.wait_for('#action-form[data-customer-checked="%s"]' % target)

    def test_the_merge_form_warns_of_different_people_and_asks_for_a_confirmation(self):
        source, target = self.pair()
        self.service.psql("UPDATE cases SET customer_name = 'Eve Stranger', customer_contact_email = 'eve@elsewhere.example' "
                          "WHERE case_number = '%s'" % target)
        browser = self.browser()
        self.sign_in(browser, 'tier2')
        self.open_merge_form(browser, source, target)
        warning = browser.wait_for('#merge-warning')
        self.assertIn('look like different people', warning.text)
        self.assertIn('Eve Stranger', browser.find('#merge-warning li[data-field="customer.name"]').text)
        self.assertIn('eve@elsewhere.example', browser.find('#merge-warning li[data-field="customer.contact_email"]').text)
        self.assert_accessible(browser)
        browser.driver.execute_script('arguments[0].scrollIntoView({block: "center"})', warning)
        browser.screenshot('/tmp/merge-shots/merge-warning-en.png')
        # Not sent without the confirmation.
        browser.click('#action-confirm')
        browser.wait_for_text('#action-form .field-error', 'tick the confirmation')
        self.assertNotEqual(self.service.psql("SELECT state FROM cases WHERE case_number = '%s'" % source), 'merged')
        # Confirmed: merged, and the timeline says the difference was confirmed.
        browser.click('#merge-confirm')
        browser.fill('#merge-reason', 'Her new name; she called from the number on file.')
        browser.click('#action-confirm')
        browser.wait_for_text('#case-state', 'Merged')
        browser.wait_for_text('#timeline-list', 'confirmed as the same person')
        self.assertEqual(self.service.psql("SELECT state FROM cases WHERE case_number = '%s'" % source), 'merged')
        # Undone, for the next test.
        browser.click('button[data-action="unmerge"]')
        browser.click('#action-confirm')
        browser.wait_for('button[data-action="merge"]')

    def test_the_same_person_written_alike_merges_without_a_warning(self):
        source, target = self.pair()
        self.service.psql(
            "UPDATE cases t SET customer_name = upper(s.customer_name), customer_contact_email = upper(s.customer_contact_email) "
            "FROM cases s WHERE t.case_number = '%s' AND s.case_number = '%s'" % (target, source))
        browser = self.browser()
        self.sign_in(browser, 'tier2')
        self.open_merge_form(browser, source, target)
        self.assertEqual(browser.find_all('#merge-warning'), [])
        self.assertEqual(browser.find_all('#merge-confirm'), [])
        browser.click('#action-confirm')
        browser.wait_for_text('#case-state', 'Merged')
        browser.click('button[data-action="unmerge"]')
        browser.click('#action-confirm')
        browser.wait_for('button[data-action="merge"]')

    def test_after_a_confirmed_merge_the_merged_customers_page_shows_nothing_of_the_other_customers(self):
        source, target = self.pair()
        self.service.psql("UPDATE cases SET customer_name = 'Eve Stranger', customer_contact_email = 'eve@elsewhere.example' "
                          "WHERE case_number = '%s'" % target)
        for number, body in ((target, 'For Eve only: call 555 0100.'), (source, 'For the merged customer.')):
            self.service.psql("INSERT INTO case_notes (id, case_id, body, visibility, author, created_at) "
                              "SELECT gen_random_uuid(), id, '%s', 'customer', 'system', now() FROM cases WHERE case_number = '%s'"
                              % (body, number))
        agent = self.browser()
        self.sign_in(agent, 'tier2')
        self.open_merge_form(agent, source, target)
        agent.click('#merge-confirm')
        agent.click('#action-confirm')
        agent.wait_for_text('#case-state', 'Merged')
        code = next(c['access_code'] for c in self.service.seed['cases'] if c['case_number'] == source)
        target_items = int(self.service.psql(
            "SELECT count(*) FROM evidence e JOIN cases c ON c.id = e.case_id WHERE c.case_number = '%s'" % target))
        source_items = int(self.service.psql(
            "SELECT count(*) FROM evidence e JOIN cases c ON c.id = e.case_id WHERE c.case_number = '%s'" % source))
        for language in ('en', 'zh-Hans', 'zh-Hant'):
            customer = self.browser().open('/status')
            customer.click('#language-switch button[data-language="%s"]' % language)
            customer.fill('#case-number', source)
            customer.fill('#access-code', code)
            customer.click('#lookup-submit')
            customer.wait_for('#stage')
            # The target's status (its number), but only the merged case's own notes and evidence.
            customer.wait_for_text('#result-case', target[:4])
            self.assertIn(source[:4], customer.wait_for('#merged-from').text)
            notes = customer.find('#notes').text
            self.assertIn('For the merged customer.', notes)
            self.assertNotIn('555 0100', customer.find('#result').text)
            self.assertEqual(len(customer.find_all('#evidence li')), source_items, language)
            if target_items:
                self.assertNotEqual(len(customer.find_all('#evidence li')), source_items + target_items)
            self.assert_accessible(customer)
            customer.screenshot('/tmp/merge-shots/merged-status-%s.png' % language)
        agent.click('button[data-action="unmerge"]')
        agent.click('#action-confirm')
        agent.wait_for('button[data-action="merge"]')
