"""The thief on the phone (api.md v1.2): the risk panel, the flag, a tier-3 clearance and the queue's risk filter, in
real Chromium against the demo data (which holds a case of each signal the service raises)."""
from harness import BrowserTestCase


class RiskTests(BrowserTestCase):

    def open_case(self, browser, case_number):
        browser.open('/#/cases/' + case_number)
        browser.wait_for_text('#case-title', case_number[:4])
        browser.wait_for('#chain-mark')

    def test_the_demo_shows_a_device_claimed_by_two_accounts_with_links_to_the_other_case(self):
        number, other = self.service.psql(
            "SELECT c.case_number || ' ' || s.other_cases[1] FROM case_risk_signals s JOIN cases c ON c.id = s.case_id "
            "WHERE s.signal = 'device_claimed_elsewhere' AND s.cleared_at IS NULL ORDER BY c.case_number LIMIT 1").split()
        # Both claimants' accounts are not on file: the page asks for security questions and hears 404 no_account_on_file.
        self.expect_http_errors(404)
        browser = self.browser()
        self.sign_in(browser, 'tier1')
        self.open_case(browser, number)
        self.assertEqual(browser.wait_for('#case-risk').text, 'At risk')
        item = browser.wait_for('#risk-standing li[data-signal="device_claimed_elsewhere"]')
        self.assertIn('Device claimed by another account', item.text)
        self.assertIn(other, item.text)
        # Tier 1 may flag but not clear.
        self.assertEqual(browser.find_all('#risk-clear'), [])
        browser.find('#risk-standing a.risk-other-case').click()
        browser.wait_for_text('#case-title', other[:4])
        browser.wait_for('#risk-standing li[data-signal="device_claimed_elsewhere"]')
        self.assert_accessible(browser)

    def test_the_demo_shows_a_second_case_on_a_victims_account_as_related_and_parallel(self):
        # api.md v1.3 "One account, one story": the thief's case on the victim's account, with her phone and his name.
        number, other = self.service.psql(
            "SELECT c.case_number || ' ' || s.other_cases[1] FROM case_risk_signals s JOIN cases c ON c.id = s.case_id "
            "WHERE s.signal = 'parallel_case' AND c.customer_name = 'Jordan Blake'").split()
        browser = self.browser()
        self.sign_in(browser, 'tier3')
        self.open_case(browser, number)
        self.assertIn('Another case on this account or device names a different customer',
                      browser.wait_for('#risk-standing li[data-signal="parallel_case"]').text)
        self.assertIn('different customer', browser.wait_for('#related-warning').text)
        item = browser.wait_for('#related-list li[data-number="%s"]' % other)
        self.assertIn('same account', item.text)
        self.assertIn('a different customer', item.text)
        self.assert_accessible(browser)
        # The link leads to the victim's case, which lists the thief's and carries the signal too.
        item.find_element('css selector', 'a.related-link').click()
        browser.wait_for_text('#case-title', other[:4])
        browser.wait_for('#related-list li[data-number="%s"]' % number)
        browser.wait_for('#risk-standing li[data-signal="parallel_case"]')

    def test_tier1_flags_the_queue_filters_it_and_tier3_clears_it(self):
        number = self.service.psql("SELECT case_number FROM cases WHERE state = 'new' AND NOT risk ORDER BY case_number LIMIT 1")
        tier1 = self.browser()
        self.sign_in(tier1, 'tier1')
        self.open_case(tier1, number)
        self.assertEqual(tier1.find_all('#case-risk'), [])
        tier1.wait_for_text('#risk-none', 'No risk signal')
        tier1.click('#risk-flag')
        tier1.click('#risk-confirm')  # no reason: refused in the form
        tier1.wait_for_text('#risk-error', 'Say why')
        tier1.fill('#risk-reason', 'The caller could not name the phone model and pressed for speed.')
        tier1.click('#risk-confirm')
        tier1.wait_for_text('#case-message', 'Flagged')
        self.assertEqual(tier1.wait_for('#case-risk').text, 'At risk')
        self.assertIn('pressed for speed', tier1.wait_for('#risk-standing li[data-signal="flagged"]').text)
        tier1.wait_for_text('#timeline-list', 'Risk raised: Flagged by an agent')
        self.assert_accessible(tier1)

        # The queue: the risk filter lists only cases at risk, each marked.
        tier1.open('/#/?tier=any')
        self.wait_for_queue(tier1)
        tier1.find('#filter-risk').click()
        tier1.click('#filter-apply')
        self.wait_for_queue(tier1, 'risk=true')
        rows = tier1.find_all('#queue-rows tr')
        self.assertIn(number, [r.get_attribute('data-case') for r in rows])
        self.assertTrue(rows and all('At risk' in r.text for r in rows))
        at_risk = int(self.service.psql("SELECT count(*) FROM cases WHERE risk AND state NOT IN ('resolved', 'rejected', 'closed', 'merged')"))
        self.assertEqual(len(rows), min(at_risk, 50))
        tier1.driver.refresh()
        self.wait_for_queue(tier1, 'risk=true')
        self.assertTrue(tier1.find('#filter-risk').is_selected())
        self.assert_accessible(tier1)

        # Tier 3 clears it with a reason; the mark goes, the cleared signal stays readable.
        tier3 = self.browser()
        self.sign_in(tier3, 'tier3')
        self.open_case(tier3, number)
        tier3.click('#risk-clear')
        tier3.fill('#risk-reason', 'Called back on the number on file: the owner confirmed the request.')
        tier3.click('#risk-confirm')
        tier3.wait_for_text('#case-message', 'Cleared')
        tier3.wait_until_gone('#case-risk')
        tier3.wait_for_text('#risk-none', 'Every signal was cleared')
        tier3.wait_for_text('#timeline-list', 'Risk cleared: Flagged by an agent')
        self.assertEqual(self.service.psql("SELECT risk FROM cases WHERE case_number = '%s'" % number), 'f')
        self.assert_accessible(tier3)
