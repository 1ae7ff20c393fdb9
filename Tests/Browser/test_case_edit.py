"""Correcting a case on the case page, in real headless Chromium against the real service (api.md v1.2 "A case can
be corrected" and "What agents must see is on the page"): the rescue address the thief added and the customer's
language shown, the Edit case form for each field, the case_corrected event on the timeline, the thief's mailbox
refused as the contact address, the notice to the previous address in the Messages panel, and the unlock checklist
read as things to do."""
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from harness import BrowserTestCase


class CaseEditTests(BrowserTestCase):

    def open_case(self, browser, case_number):
        browser.open('/#/cases/' + case_number)
        browser.wait_for_text('#case-title', case_number[:4])
        browser.wait_for('#chain-mark')

    def verify_by_phone(self, agent, case):
        """The call, both ways (api.md v1.3): the victim, on her phone's browser in Traditional Chinese, reads the desk
        code the agent reads her (the same on both screens), then reads the agent her customer code; the agent checks
        it on the case page, which then says the caller is verified and until when."""
        customer = self.browser(width=390, height=844, lang='zh-TW').open('/status')
        customer.click('[data-language="zh-Hant"]')
        customer.fill('#case-number', case['case_number'])
        customer.fill('#access-code', case['access_code'])
        customer.click('#lookup-submit')
        customer.wait_for('#calls-block')
        self.assertIn('如果我們致電給您', customer.find('#calls-block').text)
        self.assertIn('如果您致電給我們', customer.find('#calls-block').text)
        self.assertEqual(customer.find('#call-desk').text, agent.find('#call-desk-code').text, 'the desk code is one code')
        self.assertLessEqual(customer.overflow(), 0, 'nothing overflows at 390 px')
        self.assert_accessible(customer)
        customer.driver.execute_script("document.getElementById('calls-block').scrollIntoView()")
        self.readme_screenshot(customer, 'call-codes-status-zh-Hant-phone.png')
        spoken = customer.find('#call-customer').text
        self.assertNotIn(spoken, agent.find('#case-body').text, 'the agents never see the customer code')
        agent.fill('#call-customer-code', spoken)
        agent.click('#call-customer-check')
        agent.wait_for_text('#case-message', 'Caller verified until')
        agent.wait_for_text('#call-state', 'Caller verified by you (customer code) until')
        self.assert_accessible(agent)
        agent.driver.execute_script("document.getElementById('panel-call').scrollIntoView()")
        self.readme_screenshot(agent, 'call-case-verified.png')

    def row(self, case_number, columns):
        return self.service.psql("SELECT %s FROM cases WHERE case_number = '%s'" % (columns, case_number))

    def test_each_field_is_corrected_in_the_edit_form_and_the_page_and_timeline_show_it(self):
        case = self.service.case(state='new', kind='account_takeover')
        number = case['case_number']
        old_contact = self.row(number, 'customer_contact_email')
        browser = self.browser()
        # Tier 2: a demo case may be at risk, and a verified call's change of address there needs tier 2 (api.md v1.3).
        self.sign_in(browser, 'tier2')
        self.open_case(browser, number)
        # What the agent must see: the language (the demo cases have none) and what the thief changed.
        self.assertEqual(browser.find('#case-language').text, 'Not known')
        self.assertIn('Thief added a rescue address', browser.find('#panel-thief').text)

        browser.click('#edit-case')
        form = browser.wait_for('#edit-form')
        self.assertEqual(browser.find('#edit-name').get_attribute('value'), self.row(number, 'customer_name'))
        self.assertEqual(browser.find('#edit-contact').get_attribute('value'), old_contact)
        self.assertEqual(browser.find('#edit-language').get_attribute('value'), '')
        self.assertEqual(browser.unlabelled_controls(), [])
        self.assert_accessible(browser)
        browser.fill('#edit-name', 'Amara N. Nwosu')
        Select(browser.find('#edit-language')).select_by_value('zh-Hant')
        browser.fill('#edit-rescue', 'thief.recovery@mail-drop.example')
        browser.click('#edit-fact-lost_mode_enabled')
        browser.click('#edit-add-device')
        browser.fill('#edit-serial-1', 'F2LXK9ABCD12')
        browser.fill('#edit-model-1', 'Tablet')
        browser.fill('#edit-summary', 'Corrected on the phone: the customer spelt their name.')
        form.find_element(By.CSS_SELECTOR, '#edit-confirm').click()
        browser.wait_for_text('#case-message', 'Case corrected')

        self.assertEqual(browser.find('#case-language').text, 'Chinese (Traditional)')
        self.assertEqual(browser.find('#case-rescue-email').text, 'thief.recovery@mail-drop.example')
        self.assertIn('Yes Device in lost mode', browser.find('#panel-thief li[data-fact="lost_mode_enabled"]').text)
        self.assertIn('F2LXK9ABCD12', browser.find('#panel-devices').text)
        self.assertIn('Amara N. Nwosu', browser.find('#panel-customer').text)
        self.assertEqual(browser.find_all('#edit-form'), [], 'the form closes once saved')
        event = browser.wait_for('#timeline-list li[data-type="case_corrected"]')
        for words in ('Details corrected', 'customer name', 'language (now Chinese (Traditional))', 'rescue address',
                      'device in lost mode: yes', 'devices (1 added, 0 removed)', 'summary', 'by you'):
            self.assertIn(words, event.text)
        self.assertEqual(self.row(number, "customer_name || '|' || language || '|' || rescue_email || '|' || lost_mode_enabled"),
                         'Amara N. Nwosu|zh-Hant|thief.recovery@mail-drop.example|true')
        self.assertIn('Hash chain verified', browser.find('#chain-mark').text)

        # From the thief's side: the rescue mailbox spelt another way is refused as the contact address; nothing changes.
        self.expect_http_errors(422)
        version = browser.find('#case-version').text
        browser.click('#edit-case')
        browser.fill('#edit-contact', 'Thief.Recovery+case@mail-drop.example')
        browser.click('#edit-confirm')
        browser.wait_for_text('#case-message', 'same mailbox as the rescue address')
        self.assertEqual(self.row(number, 'customer_contact_email'), old_contact)
        self.assertEqual(browser.find('#case-version').text, version)
        self.assert_accessible(browser)

        # The caller is not verified yet (api.md v1.3): the change of address is refused, naming the two ways.
        self.expect_http_errors(409)
        browser.fill('#edit-contact', 'amara.new@example.net')
        browser.click('#edit-confirm')
        browser.wait_for_text('#case-message', 'Verify the caller first')
        self.assertEqual(self.row(number, 'customer_contact_email'), old_contact)
        self.verify_by_phone(browser, case)

        # The customer's own new address: the previous one is told (the Messages panel lists the notice to it).
        browser.click('#edit-case')
        browser.fill('#edit-contact', 'amara.new@example.net')
        browser.click('#edit-confirm')
        browser.wait_for_text('#case-message', 'Case corrected')
        self.assertIn('amara.new@example.net', browser.find('#panel-customer').text)
        notice = browser.wait_for('#messages-list li[data-kind="contact_changed"]')
        self.assertIn('Mail to %s: the contact address changed (to the previous address)' % old_contact, notice.text)
        self.assertIn('contact address', browser.find('#timeline-list li[data-type="case_corrected"]:last-child').text)

        # Nothing changed in the form: nothing is sent.
        browser.click('#edit-case')
        browser.click('#edit-confirm')
        browser.wait_for_text('#case-message', 'Nothing to save')
        self.assertEqual(len(browser.find_all('#timeline-list li[data-type="case_corrected"]')), 2)

    def test_engineering_reads_the_rescue_address_to_remove_as_a_thing_to_do(self):
        case = self.service.case(state='engineering', path='verified_identity')
        number = case['case_number']
        def correct_rescue_as(tier, answer):
            browser = self.browser()
            self.sign_in(browser, tier)
            self.open_case(browser, number)
            browser.click('#edit-case')
            browser.fill('#edit-rescue', 'recovery.desk@mail-drop.example')
            browser.click('#edit-confirm')
            browser.wait_for_text('#case-message', answer)

        # Past tier 1, what the thief changed is tier 2's to correct (api.md v1.3): tier 1 is refused and told why.
        self.expect_http_errors(403)
        correct_rescue_as('tier1', 'Not allowed for your tier')
        # Tier 2 takes down the address the customer now knows; engineering's checklist names it.
        correct_rescue_as('tier2', 'Case corrected')

        engineer = self.browser()
        self.sign_in(engineer, 'engineering')
        self.open_case(engineer, number)
        step = engineer.wait_for('#unlock-list li[data-step="remove_rescue_email"]')
        self.assertTrue(step.text.startswith('Remove the rescue address recovery.desk@mail-drop.example from the account'), step.text)
        checklist = engineer.find('#unlock-list').text
        self.assertNotIn('To do', checklist)
        self.assertNotIn('Removed', checklist)
        self.assertIn('Reset the security questions', checklist)
        self.assert_accessible(engineer)
        engineer.click('button[data-unlock="remove_rescue_email"]')
        engineer.click('#unlock-confirm')
        done = engineer.wait_for('#unlock-list li[data-step="remove_rescue_email"][data-done="true"]')
        self.assertTrue(done.text.startswith('✓ Done: Remove the rescue address recovery.desk@mail-drop.example'), done.text)
        engineer.wait_for_text('#timeline-list', 'Unlock step done: Remove the rescue address')

    def test_a_finished_case_offers_no_edit_and_an_unknown_rescue_address_is_said_so(self):
        browser = self.browser()
        self.sign_in(browser, 'tier1')
        finished = self.service.case(state='resolved')
        self.open_case(browser, finished['case_number'])
        self.assertEqual(browser.find_all('#edit-case'), [])
        unknown = self.service.psql("SELECT case_number FROM cases WHERE state = 'new' AND rescue_email_added AND rescue_email IS NULL LIMIT 1")
        self.open_case(browser, unknown)
        self.assertIn('(the address is not known)', browser.find('#panel-thief li[data-fact="rescue_email_added"]').text)
        known = self.service.psql("SELECT case_number FROM cases WHERE state = 'new' AND rescue_email IS NOT NULL LIMIT 1")
        self.open_case(browser, known)
        self.assertEqual(browser.find('#case-rescue-email').text, self.row(known, 'rescue_email'))
