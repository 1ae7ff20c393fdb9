"""Erasure and export on the case page in real headless Chromium: an admin sees both on a finished case, the
confirmation names what will go, the erased case shows as such with its timeline still verified in the browser, and
an agent who is not an admin sees neither."""
from harness import BrowserTestCase


class PrivacyTests(BrowserTestCase):

    def open_case(self, browser, number):
        browser.open('/#/cases/' + number)
        browser.wait_for('#chain-mark')

    def test_an_admin_exports_then_erases_a_finished_case_and_its_timeline_still_verifies(self):
        case = self.service.case(state='rejected')
        browser = self.browser()
        self.sign_in(browser, 'tier1', self.service.new_agent('tier1', admin=True))
        self.open_case(browser, case['case_number'])
        self.assertIn('ok', browser.find('#chain-mark').get_attribute('class'))

        browser.click('#export-case')
        link = browser.wait_for('#export-link')
        self.assertTrue(link.get_attribute('href').startswith('blob:'))
        self.assertEqual(link.get_attribute('download'), 'case-%s.zip' % case['case_number'])

        browser.click('#erase-case')
        items = browser.find_all('#erasure-items li')
        self.assertEqual(len(items), 7)
        self.assertIn('name and contact address', items[0].text)
        self.assert_accessible(browser)
        # A reason is required.
        browser.click('#erasure-confirm')
        browser.wait_for_text('#erasure-form .field-error', 'Say why')
        browser.fill('#erasure-reason', 'Data-subject request DSR-7')
        browser.click('#erasure-confirm')
        browser.wait_for('#erased-banner')
        browser.wait_for_text('#timeline-list li[data-type="case_erased"]', 'Personal data erased on request')
        self.assertIn('ok', browser.wait_for('#chain-mark').get_attribute('class'), 'the erased timeline still verifies in the browser')
        self.assertEqual(browser.find('#panel-customer dd').text, '—')
        self.assertEqual(browser.find_all('#erase-case'), [])
        self.assert_accessible(browser)

    def test_an_agent_who_is_not_an_admin_sees_no_erasure(self):
        case = self.service.case(state='resolved')
        browser = self.browser()
        self.sign_in(browser, 'tier3')
        self.open_case(browser, case['case_number'])
        self.assertEqual(browser.find_all('#erase-case'), [])
        self.assertEqual(browser.find_all('#export-case'), [])
