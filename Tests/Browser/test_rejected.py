"""A rejected document leads somewhere (issue 20): tier 3 rejects with the reason the customer reads, the case goes
back to the customer by itself, and the status page says why, coherently, in English and Chinese; tier 3 can ask
again from review. Screenshots of the path in Traditional Chinese go to docs/screenshots (status-rejected-*.png)."""
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from harness import BrowserTestCase, png_bytes


class RejectedDocumentTest(BrowserTestCase):

    def look_up(self, browser, case):
        browser.fill('#case-number', case['case_number'])
        browser.fill('#access-code', case['access_code'])
        browser.click('#lookup-submit')
        return browser.wait_for('#stage')

    def upload(self, browser, kind):
        Select(browser.find('#doc-type')).select_by_value(kind)
        browser.find('#doc-file').send_keys(self.file_with(png_bytes(8, 8), '.png'))
        browser.click('#upload-submit')
        browser.wait_for_text('#upload-message', 'we received')

    def open_case(self, browser, case_number):
        browser.open('/#/cases/' + case_number)
        browser.wait_for_text('#case-title', case_number[:4])
        browser.wait_for('#evidence-list')

    def review(self, browser, kind, decision, reason, customer_reason=None, screenshot=None):
        """Reviews the pending document of `kind` through the case page's form."""
        item = browser.wait_for('#evidence-list li[data-type="%s"]' % kind)
        evidence = item.get_attribute('data-evidence')
        [b for b in item.find_elements(By.CSS_SELECTOR, 'button') if b.text == 'Review'][0].click()
        form = browser.wait_for('#evidence-list li[data-evidence="%s"] form.review-form' % evidence)
        field = form.find_element(By.CSS_SELECTOR, '.customer-reason-field')
        self.assertFalse(field.is_displayed(), 'accepting asks nothing for the customer')
        form.find_element(By.CSS_SELECTOR, 'input[value="%s"]' % decision).click()
        form.find_element(By.CSS_SELECTOR, 'textarea').send_keys(reason)
        if decision == 'rejected':
            self.assertTrue(field.is_displayed(), 'rejecting asks what the customer reads')
            form.find_element(By.CSS_SELECTOR, 'button[type="submit"]').click()
            browser.wait_for_text('#evidence-list li[data-evidence="%s"] .field-error' % evidence, 'what the customer reads')
            Select(form.find_element(By.CSS_SELECTOR, 'select[name="customer_reason"]')).select_by_value(customer_reason)
            if screenshot:
                browser.driver.execute_script('arguments[0].scrollIntoView({block: "center"})', form)
                self.readme_screenshot(browser, screenshot)
        form.find_element(By.CSS_SELECTOR, 'button[type="submit"]').click()
        browser.wait_for_text('#evidence-list li[data-evidence="%s"] .badge' % evidence, decision)
        return evidence

    def test_a_rejected_document_reaches_the_customer_with_its_reason_in_their_language(self):
        case = self.service.case(state='awaiting_documents', path='documents')
        number = case['case_number']
        customer = self.browser(1100, 1000).open('/status')
        self.look_up(customer, case)
        self.upload(customer, 'invoice')
        self.upload(customer, 'imei_photo')
        customer.wait_for_text('#stage', 'We are reviewing your documents')

        # Tier 3 accepts the photo and rejects the invoice: the form asks what the customer reads.
        tier3 = self.browser()
        self.sign_in(tier3, 'tier3')
        self.open_case(tier3, number)
        self.review(tier3, 'imei_photo', 'accepted', 'Serial matches the device on file.')
        evidence = self.review(tier3, 'invoice', 'rejected', 'Blurred: the date and the seller cannot be read.', 'unreadable',
                               screenshot='dashboard-review-customer-reason.png')
        item = tier3.wait_for_text('#evidence-list li[data-evidence="%s"] .customer-reason' % evidence, 'The customer reads')
        self.assertIn('Unreadable', item.text)
        # Nothing else waits for review and the proof of purchase is now missing: back with the customer, by itself.
        tier3.wait_for_text('#case-state', 'Awaiting documents')
        timeline = tier3.wait_for_text('#timeline-list', 'the customer reads: Unreadable').text
        self.assertIn('Request documents', timeline)
        self.assert_accessible(tier3)

        # The customer comes back later, in Traditional Chinese: heading, next step, progress and lists agree, and the
        # reason is shown.
        customer = self.browser(1100, 1000).open('/status')
        customer.click('[data-language="zh-Hant"]')
        self.look_up(customer, case)
        customer.wait_for_text('#stage', '您提交的一份文件未通過審核')
        self.assertIn('原因顯示在下方', customer.find('#next-step').text)
        self.assertIn('暫停', customer.find('#next-step').text, 'the deadline is paused: it is the customer’s turn')
        current = customer.find_all('#progress li[aria-current="step"]')
        self.assertEqual(len(current), 1)
        self.assertIn('您的文件', current[0].text, 'the documents are the current step, not ticked')
        self.assertNotIn('審核', current[0].text)
        self.assertIn('購買證明', customer.find('#missing').text)
        rejected = [li for li in customer.find_all('#evidence li') if li.find_elements(By.CSS_SELECTOR, '.badge.rejected')]
        self.assertEqual(len(rejected), 1)
        self.assertIn('發票或收據', rejected[0].text, 'the list names the rejected document')
        self.assertIn('我們無法辨識這份文件', rejected[0].find_element(By.CSS_SELECTOR, '.evidence-reason').text)
        self.assert_accessible(customer)
        customer.driver.execute_script('window.scrollTo(0, 0); document.activeElement.blur()')
        self.readme_screenshot(customer, 'status-rejected-zh-Hant.png')
        customer.driver.execute_script("document.getElementById('evidence').scrollIntoView()")
        self.readme_screenshot(customer, 'status-rejected-reason-zh-Hant.png')
        # Simplified Chinese says the same in its own words.
        customer.click('[data-language="zh-Hans"]')
        customer.wait_for_text('#stage', '您提交的一份材料未能通过审核')
        self.assertIn('我们无法看清这份材料', customer.find('#evidence .evidence-reason').text)

        # A new invoice: under review again by itself; the rejected one keeps its reason.
        customer.click('[data-language="en"]')
        customer.wait_for_text('#stage', 'We could not accept one of your documents')
        self.upload(customer, 'invoice')
        customer.wait_for_text('#stage', 'We are reviewing your documents')
        self.assertIn('We could not read it', customer.find('#evidence .evidence-reason').text)

        # Tier 3 may ask again from review (the refusal tells them to).
        tier3.driver.refresh()
        tier3.wait_for_text('#case-state', 'Document review')
        tier3.click('button[data-action="request_documents"]')
        tier3.fill('#action-reason', 'The new invoice is for another device: asking for the right one.')
        tier3.click('#action-confirm')
        tier3.wait_for_text('#case-state', 'Awaiting documents')
