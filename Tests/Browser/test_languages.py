"""The status page in English, Simplified and Traditional Chinese (by the switch, kept, and by the browser's
locale), dates in the reader's zone with the zone named, and the ransom conversation uploaded from the page and
read by tier 3 as text. Screenshots of each language go to docs/screenshots."""
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from harness import POLL, BrowserTestCase, png_bytes

RANSOM_MAIL = (
    'Return-Path: <unlock-service@example.invalid>\r\n'
    'From: "Device Unlock Service" <unlock-service@example.invalid>\r\n'
    'To: victim@example.com\r\n'
    'Subject: =?UTF-8?B?5L2g55qE6K6+5aSH5bey6KKr6ZSB?=\r\n'
    'Date: Mon, 30 Nov 2026 09:12:00 +0800\r\n'
    'Message-ID: <ransom-1@example.invalid>\r\n'
    'Content-Type: text/plain; charset=utf-8\r\n'
    '\r\n'
    'Your phone is locked. Pay 500 USDT to the wallet below within 48 hours or it stays locked forever.\r\n'
    '<script>document.title = "pwned"</script><b>not bold</b>\r\n').encode()
CHAT = '对方：付 5000 元给我，就帮你解锁。\n我：我不会付钱。\n'.encode()


class LanguagesTest(BrowserTestCase):

    def look_up(self, browser, case):
        browser.fill('#case-number', case['case_number'])
        browser.fill('#access-code', case['access_code'])
        browser.click('#lookup-submit')
        return browser.wait_for('#stage')

    def set_case_language(self, case, language):
        # The demo cases are opened without a language; a case opened for a Chinese-speaking victim carries its language.
        self.service.psql("UPDATE cases SET language = '%s' WHERE case_number = '%s'" % (language, case['case_number']))

    def page_language(self, browser):
        return browser.driver.execute_script('return document.documentElement.lang')

    def assert_dates_in_one_named_zone(self, browser, zone):
        self.assertIn(zone, browser.find('#zone').text, 'the zone is named')
        dates = [browser.find(css).text for css in ('#updated', '#checked')]
        dates += [e.text for e in browser.find_all('#evidence .muted')]
        if browser.find('#due-fact').is_displayed():
            dates.append(browser.find('#due').text)
        token = browser.driver.execute_script(
            "const locale = {en: 'en-GB', 'zh-Hans': 'zh-CN', 'zh-Hant': 'zh-TW'}[document.documentElement.lang];"
            "return new Intl.DateTimeFormat(locale, {timeZoneName: 'short'}).formatToParts(new Date())"
            ".find((p) => p.type === 'timeZoneName').value")
        self.assertTrue(dates and all(token in d for d in dates), 'every date names the zone %r: %r' % (token, dates))

    def switch(self, browser, language):
        browser.click('[data-language="%s"]' % language)
        browser.driver.execute_script('return 1')

    def test_switching_language_translates_the_page_and_the_services_sentences_and_is_kept(self):
        case = self.service.case(state='awaiting_documents', path='documents')
        browser = self.browser(1100, 1000, time_zone='Asia/Shanghai').open('/status')
        self.assertEqual(self.page_language(browser), 'en')
        self.switch(browser, 'zh-Hans')
        browser.wait_for_text('h1', '查询您的案件')
        self.assertEqual(self.page_language(browser), 'zh-Hans')
        self.assertEqual(browser.find('[data-language="zh-Hans"]').get_attribute('aria-pressed'), 'true')
        self.assert_accessible(browser)
        # The choice is kept: a reload is still in Chinese.
        browser.open('/status')
        browser.wait_for_text('h1', '查询您的案件')
        self.look_up(browser, case)
        browser.wait_for_text('#stage', '请提供您的所有权证明')
        self.assertIn('购买凭证', browser.find('#missing').text)
        self.assertIn('切勿向锁定您设备或账户的人付款', browser.find('#notices').text)
        self.assertIn('我们还需要', browser.find('#missing-block').text)
        self.assert_dates_in_one_named_zone(browser, 'Asia/Shanghai')
        self.assert_accessible(browser)
        browser.driver.execute_script('window.scrollTo(0, 0); document.activeElement.blur()')
        self.readme_screenshot(browser, 'status-zh-Hans.png')
        # Switching with a case on screen asks the service again, in the new language.
        self.switch(browser, 'zh-Hant')
        browser.wait_for_text('#stage', '請提供您的所有權證明')
        self.assertIn('購買證明', browser.find('#missing').text)
        self.assertIn('我們還需要', browser.find('#missing-block').text)
        self.assert_accessible(browser)
        browser.driver.execute_script('window.scrollTo(0, 0); document.activeElement.blur()')
        self.readme_screenshot(browser, 'status-zh-Hant.png')
        self.switch(browser, 'en')
        browser.wait_for_text('#stage', 'We need your proof of ownership')
        self.assertIn('Never pay', browser.find('#notices').text)
        self.assert_accessible(browser)
        self.readme_screenshot(browser, 'status-en.png')
        stored = browser.driver.execute_script('return JSON.stringify(localStorage)')
        self.assertEqual(stored, '{"reclaim.language":"en"}', 'only the language is stored, never the code')

    def test_a_chinese_browser_gets_chinese_by_its_locale(self):
        for lang, zone, language, heading, stage_word in (
                ('zh-CN', 'Asia/Shanghai', 'zh-Hans', '查询您的案件', '我们'),
                ('zh-TW', 'Asia/Taipei', 'zh-Hant', '查詢您的案件', '我們')):
            case = self.service.case(state='identity_check', path='undetermined')
            self.set_case_language(case, language)
            browser = self.browser(1100, 1000, lang=lang, time_zone=zone).open('/status')
            self.assertEqual(browser.driver.execute_script('return navigator.language'), lang)
            browser.wait_for_text('h1', heading)
            self.assertEqual(self.page_language(browser), language)
            self.assert_accessible(browser)
            self.look_up(browser, case)
            browser.wait_for_text('#stage', stage_word)
            self.assertEqual(self.page_language(browser), language)
            self.assert_dates_in_one_named_zone(browser, zone)
            # Answers, card and serial are told to an agent: the page says so and where, and never "nothing to do".
            self.assertTrue(browser.find('#missing-block').is_displayed())
            self.assertIn('support@reclaim.example', browser.find('#next-step').text)
            self.assert_accessible(browser)
            browser.driver.execute_script('window.scrollTo(0, 0); document.activeElement.blur()')
            self.readme_screenshot(browser, 'status-locale-%s.png' % language)

    def test_the_case_language_decides_when_the_reader_chose_none(self):
        case = self.service.case(state='engineering')
        self.set_case_language(case, 'zh-Hant')
        browser = self.browser(lang='en-GB').open('/status')
        browser.wait_for_text('h1', 'Check your case')
        self.look_up(browser, case)
        browser.wait_for_text('#stage', '我們的工程師')
        self.assertEqual(self.page_language(browser), 'zh-Hant', 'the page follows the language of the answer')
        self.assertIn('重新整理狀態', browser.find('#refresh').text)
        self.assert_accessible(browser)

    def test_the_ransom_conversation_uploads_from_the_page_and_tier3_reads_it_as_text(self):
        case = self.service.case(state='awaiting_documents')
        browser = self.browser(1100, 1000).open('/status')
        self.look_up(browser, case)
        before = len(browser.find_all('#evidence li'))
        files = (('ransom.eml', RANSOM_MAIL), ('chat.png', png_bytes(40, 30)), ('chat.txt', CHAT))
        for index, (name, data) in enumerate(files, start=1):
            Select(browser.find('#doc-type')).select_by_value('transcript')
            self.assertIn('saved e-mail', browser.find('#doc-file-hint').text)
            browser.find('#doc-file').send_keys(self.file_with(data, '.' + name.split('.')[-1]))
            browser.click('#upload-submit')
            browser.wait_for_text('#upload-message', 'Thank you')
            self.assertEqual(browser.find('#upload-message').get_attribute('data-kind'), 'ok', name)
            items = browser.find_all('#evidence li')
            self.assertEqual(len(items), before + index, name)
        transcripts = [e.text for e in browser.find_all('#evidence li') if 'Conversation with whoever locked the device' in e.text]
        self.assertEqual(len(transcripts), 3)
        self.assertTrue(all('Received' in t for t in transcripts), 'shown as received, never waiting for a match')
        self.assert_accessible(browser)

        # Tier 3 sees the three on the case and reads the e-mail and the text as text, never as HTML.
        agent = self.browser(1280, 1000)
        self.sign_in(agent, 'tier3')
        agent.open('/#/cases/' + case['case_number'])
        agent.wait_for('#evidence-list li[data-type="transcript"]')
        items = agent.find_all('#evidence-list li[data-type="transcript"]')
        self.assertEqual(len(items), 3)
        # The customer's conversation with the thief is named as such (not "Call transcript"), with its type and size once.
        for item, kind in zip(items, ('saved e-mail', 'PNG image', 'text')):
            self.assertIn('Ransom conversation', item.text)
            self.assertNotIn('Call transcript', item.text)
            self.assertIn(kind, item.text)
            self.assertEqual(sum(item.text.count(unit) for unit in ('bytes', 'kB', 'KiB', 'MB')), 1, item.text)
        agent.wait_for_text('#timeline-list', 'Evidence filed: Ransom conversation')
        previews = agent.find_all('#evidence-list li[data-type="transcript"] button.preview')
        self.assertEqual(len(previews), 3, 'a screenshot and two texts can each be previewed')
        for button in previews:
            button.click()
        # Each preview arrives on its own request: wait for both texts, not the first.
        WebDriverWait(agent.driver, 10, POLL).until(lambda _: len(agent.find_all('#evidence-list pre.preview.text')) >= 2)
        texts = [e.text for e in agent.find_all('#evidence-list pre.preview.text')]
        self.assertEqual(len(texts), 2)
        mail = next(t for t in texts if 'USDT' in t)
        self.assertIn('<script>document.title = "pwned"</script>', mail, 'the markup is shown as text')
        self.assertIn('From: "Device Unlock Service"', mail)
        self.assertTrue(any('我不会付钱' in t for t in texts), 'Chinese text decoded as UTF-8')
        self.assertEqual(agent.find_all('#evidence-list script, #evidence-list b'), [], 'nothing was rendered')
        self.assertNotEqual(agent.driver.title, 'pwned')
        agent.wait_for('#evidence-list li[data-type="transcript"] img.preview')
        self.assert_accessible(agent)
