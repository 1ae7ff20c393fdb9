"""The customer status page at /status: look-up, mistakes caught in the page, lock-out, upload, phone width,
keyboard, and the README screenshots."""
import json
import time
import urllib.error
import urllib.request

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from harness import POLL, WAIT, BrowserTestCase, png_bytes

STATUS_API = '/api/v1/status'
NOT_FOUND = 'No case matches this case number and access code'
LOCKED = 'This case number is locked'


def spaced(case_number):
    return ' '.join(case_number[i:i + 4] for i in range(0, 12, 4))


def mistyped(case_number):
    """The number with one digit changed (never the first, which may not become 0): Damm catches every such typo."""
    digit = str((int(case_number[5]) + 1) % 10)
    return case_number[:5] + digit + case_number[6:]


class StatusPageTest(BrowserTestCase):

    # Steps.
    def look_up(self, browser, case_number, access_code):
        browser.fill('#case-number', case_number)
        browser.fill('#access-code', access_code)
        browser.click('#lookup-submit')

    def status_requests(self, browser, path=STATUS_API):
        """How many requests the page made to `path` (the Resource Timing entries, which every fetch leaves)."""
        return browser.driver.execute_script(
            "return performance.getEntriesByType('resource')"
            ".filter((e) => new URL(e.name).pathname === arguments[0]).length", path)

    def wait_for_requests(self, browser, count, path=STATUS_API):
        WebDriverWait(browser.driver, 10, POLL).until(lambda _: self.status_requests(browser, path) >= count)
        # The response is in; wait for the page to have handled it (the form is busy until then).
        WebDriverWait(browser.driver, 10, POLL).until(
            lambda d: d.execute_script("return !document.querySelector('[aria-busy]')"))

    def api_status(self, case):
        body = json.dumps({'case_number': case['case_number'], 'access_code': case['access_code']}).encode()
        request = urllib.request.Request(self.service.origin + STATUS_API, data=body,
                                         headers={'Content-Type': 'application/json'})
        with urllib.request.urlopen(request) as response:
            return json.load(response)

    def active_id(self, browser):
        return browser.driver.execute_script('return document.activeElement && document.activeElement.id')

    def fits_width(self, browser):
        return browser.overflow() <= 0

    # Tests.
    def test_customer_sees_plain_stage_progress_next_step_and_missing(self):
        case = self.service.case(state='awaiting_documents', path='documents')
        expected = self.api_status(case)
        browser = self.browser().open('/status')
        # As pasted from an e-mail: the number in groups, the code lower-case with spaces.
        self.look_up(browser, spaced(case['case_number']), case['access_code'].lower().replace('-', ' '))

        stage = browser.wait_for_text('#stage', 'We need your proof of ownership')
        self.assertEqual(stage.tag_name, 'h2')
        self.assertEqual(self.active_id(browser), 'stage', 'focus moves to the result heading')
        current = browser.find_all('#progress li[aria-current="step"]')
        self.assertEqual(len(current), 1)
        self.assertIn('Your documents', current[0].text)
        steps = browser.find_all('#progress li')
        self.assertEqual(len(steps), len(expected['progress']))
        done = browser.find_all('#progress li.done')
        self.assertTrue(done and all('✓' in d.text for d in done), 'done steps carry a visible tick')
        self.assertIn('(done)', done[0].get_attribute('textContent'), 'screen readers hear "done"')
        self.assertEqual(browser.find('#next-step').text, expected['next_step'])
        missing = browser.find('#missing').text
        self.assertIn('Proof of purchase: an invoice, a photo of the back of the box, or your carrier contract', missing)
        self.assertIn('A photo of the serial number or IMEI, ideally of the “Hello” setup screen', missing)
        self.assertIn('Last updated', browser.find('#facts').text)
        self.assertRegex(browser.find('#updated').text, r'\d{1,2} [A-Z][a-z]+ \d{4}')
        self.assertIn('Please upload', browser.find('#notes').text, 'the customer-visible note is shown')
        self.assert_accessible(browser)
        self.assertEqual(Select(browser.find('#doc-type')).first_selected_option.get_attribute('value'), 'invoice',
                         'the first missing document type is preselected')
        # The code went to the API only: not into the URL, storage or a cookie.
        code = case['access_code'].replace('-', '')
        leaked = browser.driver.execute_script(
            'return [location.href, JSON.stringify(localStorage), JSON.stringify(sessionStorage), document.cookie].join(" ")')
        self.assertNotIn(code, leaked.upper().replace('-', ''))

    def test_check_again_shows_what_changed_since(self):
        case = self.service.case(state='awaiting_documents')
        browser = self.browser().open('/status')
        self.look_up(browser, case['case_number'], case['access_code'])
        browser.wait_for('#stage')
        self.assertEqual(browser.find('#evidence').text.strip(), '')
        # Meanwhile a document arrives (as if from another device).
        self.upload_by_api(case, 'box_photo')
        browser.click('#refresh')
        browser.wait_for_text('#evidence', 'Photo of the back of the box')
        self.assertEqual(self.status_requests(browser), 2)
        self.assertEqual(self.active_id(browser), 'stage')

    def upload_by_api(self, case, kind):
        boundary = 'b0undary'
        parts = b''
        for name, value in (('case_number', case['case_number']), ('access_code', case['access_code']), ('type', kind)):
            parts += ('--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n' % (boundary, name, value)).encode()
        parts += ('--%s\r\nContent-Disposition: form-data; name="file"; filename="box.png"\r\nContent-Type: image/png\r\n\r\n'
                  % boundary).encode() + png_bytes() + ('\r\n--%s--\r\n' % boundary).encode()
        request = urllib.request.Request(self.service.origin + STATUS_API + '/evidence', data=parts,
                                         headers={'Content-Type': 'multipart/form-data; boundary=' + boundary})
        with urllib.request.urlopen(request) as response:
            self.assertEqual(response.status, 201)

    def test_mistyped_case_number_is_refused_in_the_page(self):
        case = self.service.case(state='new')
        browser = self.browser().open('/status')
        self.look_up(browser, spaced(mistyped(case['case_number'])), case['access_code'])
        error = browser.wait_for_text('#case-number-error', 'typo')
        field = browser.find('#case-number')
        self.assertEqual(field.get_attribute('aria-invalid'), 'true')
        self.assertIn('case-number-error', field.get_attribute('aria-describedby').split())
        self.assertEqual(self.active_id(browser), 'case-number', 'focus goes to the field to correct')
        self.assertTrue(error.is_displayed())
        self.assert_accessible(browser)
        # A short access code is caught too.
        self.look_up(browser, case['case_number'], case['access_code'][:10])
        browser.wait_for_text('#access-code-error', 'An access code has 16 letters and digits')
        self.assertEqual(browser.find('#access-code').get_attribute('aria-invalid'), 'true')
        self.assertIsNone(browser.find('#case-number').get_attribute('aria-invalid'), 'the corrected number is fine')
        time.sleep(0.3)  # would a request be on its way, give it time to show
        self.assertEqual(self.status_requests(browser), 0, 'no request was made')
        self.assertFalse(browser.find('#result').is_displayed())

    def test_a_replaced_code_says_when_and_where_the_new_one_was_mailed(self):
        """api.md v1.3: the agent mails a new code; the customer who tries the old one reads when and to which
        (masked) address the new one went, and nothing of the case."""
        self.expect_http_errors(404)
        case = self.service.case(state='awaiting_documents')
        number = case['case_number']
        agent = self.browser()
        self.sign_in(agent, 'tier1')
        agent.open('/#/cases/' + number)
        agent.click('button[data-action="access-code"]')
        agent.click('#action-confirm')
        deadline = time.time() + WAIT
        while self.service.psql("SELECT access_code_replaced_at IS NOT NULL FROM cases WHERE case_number = '%s'" % number) != 't' \
                and time.time() < deadline:
            time.sleep(0.1)
        contact = self.service.psql("SELECT customer_contact_email FROM cases WHERE case_number = '%s'" % number)
        masked = contact[0] + '***@' + contact.split('@')[1][0] + '***.' + contact.rsplit('.', 1)[1]

        browser = self.browser().open('/status')
        self.look_up(browser, number, case['access_code'])
        message = browser.wait_for_text('#message', 'This access code was replaced')
        self.assertIn(masked, message.text)
        self.assertNotIn(contact, message.text)
        self.assertFalse(browser.find('#result').is_displayed(), 'nothing of the case is shown')

    def test_wrong_access_code_says_so(self):
        self.expect_http_errors(404)
        case = self.service.case(state='identity_check')
        wrong = ('Z' if case['access_code'][0] != 'Z' else 'Y') + case['access_code'][1:]
        browser = self.browser().open('/status')
        self.look_up(browser, case['case_number'], wrong)
        message = browser.wait_for_text('#message', NOT_FOUND)
        self.assertEqual(message.get_attribute('role'), 'alert')
        self.assertIn('after 9 failed tries the case number is locked for 8 hours', message.text)
        self.assertEqual(self.active_id(browser), 'message', 'focus moves to the message')
        self.assertFalse(browser.find('#result').is_displayed())

    def test_nine_wrong_codes_lock_the_case_number_even_for_the_right_code(self):
        self.expect_http_errors(404, 429)
        case = self.service.case(state='engineering')
        browser = self.browser().open('/status')
        browser.fill('#case-number', case['case_number'])
        for attempt in range(1, 10):
            browser.fill('#access-code', 'WRONG%011d' % attempt)
            browser.click('#lookup-submit')
            self.wait_for_requests(browser, attempt)
            self.assertIn(NOT_FOUND, browser.find('#message').text, 'try %d' % attempt)
        # The tenth, with the right code: the lock holds, and says when it lifts.
        browser.fill('#access-code', case['access_code'])
        browser.click('#lookup-submit')
        message = browser.wait_for_text('#message', LOCKED)
        self.assertIn('8 hours', message.text)
        self.assertRegex(message.text, r'You can try again after \d{1,2} [A-Z][a-z]+ \d{4} at \d{2}:\d{2} [A-Z]+\.', 'a time with its zone')
        self.assertFalse(browser.find('#result').is_displayed())
        self.assertEqual(self.active_id(browser), 'message')
        self.assert_accessible(browser)

    def test_customer_uploads_a_photo_and_sees_it_received(self):
        case = self.service.case(state='awaiting_documents', path='activation_lock')
        browser = self.browser().open('/status')
        self.look_up(browser, case['case_number'], case['access_code'])
        browser.wait_for('#stage')
        self.assertIn('A photo of the serial number or IMEI', browser.find('#missing').text)
        Select(browser.find('#doc-type')).select_by_value('imei_photo')
        browser.find('#doc-file').send_keys(self.file_with(png_bytes(), '.png'))
        browser.click('#upload-submit')
        browser.wait_for_text('#upload-message', 'Thank you: we received your file')
        self.assertEqual(browser.find('#upload-message').get_attribute('data-kind'), 'ok')
        received = browser.wait_for_text('#evidence', 'Photo of the serial number or IMEI')
        self.assertIn('Waiting for review', received.text)
        self.assertNotIn('A photo of the serial number or IMEI', browser.find('#missing').text,
                         'the status was reloaded: the photo is no longer missing')
        self.assertEqual(self.status_requests(browser, STATUS_API + '/evidence'), 1)
        self.assert_accessible(browser)

    def test_the_mails_link_fills_the_case_number_and_asks_for_the_code(self):
        case = self.service.case(state='awaiting_documents')
        browser = self.browser().open('/status?case=' + case['case_number'])
        WebDriverWait(browser.driver, 10, POLL).until(lambda _: browser.find('#case-number').get_attribute('value'))
        self.assertEqual(browser.find('#case-number').get_attribute('value'), spaced(case['case_number']))
        self.assertEqual(self.active_id(browser), 'access-code', 'only the code is left to type')
        self.assertNotIn('case=', browser.driver.current_url, 'the number leaves the address bar')
        browser.fill('#access-code', case['access_code'])
        browser.click('#lookup-submit')
        browser.wait_for('#stage')

    def test_switching_language_puts_the_upload_message_in_the_new_language(self):
        case = self.service.case(state='awaiting_documents', path='activation_lock')
        browser = self.browser().open('/status')
        browser.click('[data-language="en"]')
        self.look_up(browser, case['case_number'], case['access_code'])
        browser.wait_for('#stage')
        # The ransom conversation: the service says "Received" for it (nobody reviews it before the case).
        Select(browser.find('#doc-type')).select_by_value('transcript')
        browser.find('#doc-file').send_keys(self.file_with(b'Pay 200 USD or the phone stays locked.\n', '.txt'))
        browser.click('#upload-submit')
        browser.wait_for_text('#upload-message', 'Thank you: we received your file')
        browser.wait_for_text('#evidence', 'Received')
        self.assertNotIn('received received', browser.find('#evidence').text.lower(), 'the status word once')
        browser.click('[data-language="zh-Hans"]')
        browser.wait_for_text('#upload-message', '谢谢，我们已收到您的文件')
        self.assertNotIn('Thank you', browser.find('#upload-message').text)
        # A refused look-up's message follows the language too.
        self.expect_http_errors(404)
        browser.click('#another')
        wrong = ('Z' if case['access_code'][0] != 'Z' else 'Y') + case['access_code'][1:]
        self.look_up(browser, case['case_number'], wrong)
        browser.wait_for('#message')
        zh = browser.find('#message').text
        browser.click('[data-language="en"]')
        browser.wait_for_text('#message', NOT_FOUND)
        self.assertNotEqual(zh, browser.find('#message').text)

    def test_the_call_codes_are_explained_in_each_language_and_match_the_service(self):
        """api.md v1.3 "The call, verified both ways": the desk code and the customer code, each under its sentence,
        in the reader's language; the codes are the service's, grouped for reading aloud."""
        case = self.service.case(state='identity_check')
        expected = self.api_status(case)['call_codes']
        browser = self.browser().open('/status')
        browser.click('[data-language="en"]')
        self.look_up(browser, case['case_number'], case['access_code'])
        browser.wait_for('#calls-block')
        self.assertEqual(browser.find('#call-desk').text.replace(' ', ''), expected['desk'])
        self.assertEqual(browser.find('#call-customer').text.replace(' ', ''), expected['customer'])
        self.assertRegex(browser.find('#call-customer').text, r'^\d{3} \d{3}$')
        for language, desk, customer in (('en', 'If we call you, we will tell you this code', 'If you call us, read us this code'),
                                         ('zh-Hans', '如果我们致电给您，我们会告诉您这个验证码', '如果您致电给我们，请向我们念出这个验证码'),
                                         ('zh-Hant', '如果我們致電給您，我們會告訴您這個驗證碼', '如果您致電給我們，請向我們唸出這個驗證碼')):
            browser.click('[data-language="%s"]' % language)
            browser.wait_for_text('#calls-desk-lead', desk)
            browser.wait_for_text('#calls-customer-lead', customer)
            self.assertNotEqual(browser.find('#calls-until').text, '')
        self.assert_accessible(browser)

    def test_a_finished_case_offers_no_upload(self):
        for state in ('resolved', 'rejected', 'closed'):
            case = self.service.case(state=state)
            browser = self.browser().open('/status')
            self.look_up(browser, case['case_number'], case['access_code'])
            browser.wait_for('#stage')
            self.assertFalse(browser.find('#upload').is_displayed(), state)
            self.assertFalse(browser.find('#calls-block').is_displayed(), 'a finished case has no call codes')
            # Every finished case says how to reach support (RECLAIM_SUPPORT_CONTACT; the default here).
            self.assertIn('support@reclaim.example', browser.find('#notices').text, state)
            self.assertNotIn('Waiting for review', browser.find('#evidence').text, 'nobody reviews a finished case')
            if state == 'resolved' and case['path'] != 'activation_lock':
                self.assertIn('turn on two-step verification', browser.find('#notices').text)
            if state != 'resolved':  # a refused or closed case says whom to contact with more proof
                self.assertIn('quoting your case number', browser.find('#next-step').text)

    def test_upload_refuses_a_file_too_large_before_sending_and_explains_a_wrong_type(self):
        self.expect_http_errors(415)
        case = self.service.case(state='awaiting_documents')
        browser = self.browser().open('/status')
        self.look_up(browser, case['case_number'], case['access_code'])
        browser.wait_for('#stage')
        browser.find('#doc-file').send_keys(self.file_with(b'\0' * (10 * 1024 * 1024 + 1), '.pdf'))
        browser.click('#upload-submit')
        browser.wait_for_text('#doc-file-error', 'we accept files up to 10 MB')
        self.assertEqual(browser.find('#doc-file').get_attribute('aria-invalid'), 'true')
        self.assertEqual(self.status_requests(browser, STATUS_API + '/evidence'), 0, 'nothing was sent')
        # A file that is not a document the service accepts: its answer in words.
        browser.find('#doc-file').send_keys(self.file_with(b'just some text, not a photo', '.png'))
        browser.click('#upload-submit')
        message = browser.wait_for_text('#upload-message', 'We accept PDF, JPEG, PNG or HEIC')
        self.assertEqual(message.get_attribute('data-kind'), 'error')
        self.assertEqual(self.active_id(browser), 'upload-message')
        self.assert_accessible(browser)

    def test_network_failure_asks_to_try_again(self):
        case = self.service.case(state='new')
        browser = self.browser().open('/status')
        browser.driver.set_network_conditions(offline=True, latency=0, download_throughput=0, upload_throughput=0)
        self.look_up(browser, case['case_number'], case['access_code'])
        browser.wait_for_text('#message', 'Check your internet connection and try again')
        # Chromium logs the refused fetch; that line is this test's purpose, any other error still fails it.
        self.expect_log('net::ERR_INTERNET_DISCONNECTED')
        browser.driver.set_network_conditions(offline=False, latency=0, download_throughput=-1, upload_throughput=-1)
        browser.click('#lookup-submit')
        browser.wait_for('#stage')

    def test_usable_at_phone_width(self):
        case = self.service.case(state='document_review', path='activation_lock')
        browser = self.browser(360, 800).open('/status')
        self.assertEqual(browser.driver.execute_script('return window.innerWidth'), 360)
        self.assertTrue(self.fits_width(browser), 'no horizontal scrolling at 360 px (form)')
        self.look_up(browser, spaced(case['case_number']), case['access_code'])
        browser.wait_for_text('#stage', 'We are reviewing your documents')
        self.assertTrue(self.fits_width(browser), 'no horizontal scrolling at 360 px (status)')
        self.assert_accessible(browser)
        for css in ('#refresh', '#doc-type', '#doc-file', '#upload-submit'):
            box = browser.find(css).rect
            self.assertLessEqual(box['x'] + box['width'], 360, '%s fits the screen' % css)
        browser.driver.execute_script('window.scrollTo(0, 0)')
        self.readme_screenshot(browser, 'status-phone.png')

    def test_keyboard_only_and_every_control_labelled(self):
        case = self.service.case(state='identity_check')
        browser = self.browser().open('/status')
        keys = ActionChains(browser.driver)
        # From the top of the page: skip link, brand, the three languages, then the case number.
        for _ in range(6):
            keys.send_keys(Keys.TAB)
        keys.perform()
        self.assertEqual(self.active_id(browser), 'case-number')
        ActionChains(browser.driver).send_keys(spaced(case['case_number'])).send_keys(Keys.TAB) \
            .send_keys(case['access_code']).send_keys(Keys.ENTER).perform()
        browser.wait_for_text('#stage', 'We are checking that the account is yours')
        # "Check again" from the keyboard (focus is on the heading; the button follows in order).
        browser.driver.execute_script("document.getElementById('refresh').focus()")
        ActionChains(browser.driver).send_keys(Keys.ENTER).perform()
        self.wait_for_requests(browser, 2)
        self.assertEqual(browser.unlabelled_controls(), [])
        self.assertEqual(browser.driver.execute_script('return document.documentElement.lang'), 'en')
        self.assertEqual(len(browser.find_all('h1')), 1)

    def test_readme_screenshot_of_a_loaded_status(self):
        case = self.service.case(state='document_review', path='documents')
        browser = self.browser(1100, 900).open('/status')
        self.look_up(browser, case['case_number'], case['access_code'])
        browser.wait_for('#stage')
        self.assertTrue(browser.find('#evidence li').is_displayed(), 'the demo case has a received document')
        self.assertRegex(browser.find('#due').text, r'^\d{1,2} [A-Z][a-z]+ \d{4}', 'the due date, in words')
        self.assertTrue(self.fits_width(browser))
        browser.driver.execute_script('window.scrollTo(0, 0); document.activeElement.blur()')
        self.readme_screenshot(browser, 'status.png')
