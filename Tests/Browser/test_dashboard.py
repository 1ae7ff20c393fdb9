"""The agents' dashboard in real headless Chromium against the real service and database."""
from urllib.parse import quote

from selenium.webdriver.common.by import By
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from harness import BrowserTestCase, png_bytes


class DashboardTests(BrowserTestCase):

    def imei_of(self, case_number):
        return self.service.psql("SELECT devices->0->>'imei' FROM cases WHERE case_number = '%s'" % case_number)

    def open_case(self, browser, case_number):
        browser.open('/#/cases/' + case_number)
        browser.wait_for_text('#case-title', case_number[:4])
        browser.wait_for('#chain-mark')

    def test_agent_signs_in_finds_case_by_imei_escalates_and_sees_the_event_on_the_timeline(self):
        case = self.service.case(state='new', kind='account_takeover')
        imei = self.imei_of(case['case_number'])
        browser = self.browser()
        self.sign_in(browser, 'tier1', self.service.agent('tier1'))  # the demo agent, for the README screenshot
        self.assertEqual(browser.find('#agent-tier').text, 'Tier 1')
        browser.wait_for('#queue-rows tr')
        self.assert_accessible(browser)
        self.readme_screenshot(browser, 'dashboard-queue.png')

        browser.fill('#filter-q', imei)
        browser.click('#filter-apply')
        browser.wait_for_text('#queue-title', imei)
        self.wait_for_queue(browser, 'q=' + imei)
        row = browser.wait_for('#queue-rows tr[data-case="%s"]' % case['case_number'])
        numbers = [r.get_attribute('data-case') for r in browser.find_all('#queue-rows tr')]
        for number in numbers:  # every hit carries that IMEI
            self.assertEqual(self.imei_of(number), imei)
        row.find_element(By.CSS_SELECTOR, 'a.case-link').click()

        browser.wait_for_text('#case-state', 'New')
        self.assertIn('Hash chain verified', browser.wait_for('#chain-mark').text)
        browser.click('button[data-action="escalate"]')
        browser.click('#action-confirm')
        browser.wait_for_text('#case-state', 'Identity check')
        browser.wait_for_text('#case-message', 'done')
        event = browser.wait_for('#timeline-list li[data-type="transition"]:last-child')
        self.assertIn('Escalate to tier 2', event.text)
        self.assertIn('by you', event.text)
        self.assertIn('Hash chain verified', browser.wait_for('#chain-mark').text)
        self.assertEqual(self.service.psql("SELECT state FROM cases WHERE case_number = '%s'" % case['case_number']), 'identity_check')
        self.assertEqual(browser.unlabelled_controls(), [])
        self.assert_accessible(browser)

    def test_a_caller_without_a_case_number_is_found_by_two_characters_of_a_chinese_name_or_a_word(self):
        wanted = set(self.service.psql("SELECT string_agg(case_number, ',') FROM cases WHERE customer_name = '王小明'").split(','))
        self.assertTrue(wanted, 'the demo has a customer named 王小明')
        browser = self.browser()
        self.sign_in(browser, 'tier1')
        browser.wait_for('#queue-rows tr')
        for query in ('小明', 'wang xiao', 'NWOSU'):
            browser.fill('#filter-q', query)
            if query == 'wang xiao':  # no such words: an empty queue that says so
                browser.click('#filter-apply')
                self.wait_for_queue(browser, 'q=wang')
                self.assertEqual(browser.find_all('#queue-rows tr[data-case]'), [])
                continue
            browser.click('#filter-apply')
            self.wait_for_queue(browser, 'q=' + quote(query))
            browser.wait_for('#queue-rows tr[data-case]')
            numbers = {r.get_attribute('data-case') for r in browser.find_all('#queue-rows tr[data-case]')}
            column = "customer_name = '王小明'" if query == '小明' else "customer_name ILIKE '%nwosu%'"
            # A search looks in every tier and state: the caller's case may sit with another tier, or be finished.
            expected = set(self.service.psql("SELECT string_agg(case_number, ',') FROM cases WHERE %s" % column).split(','))
            self.assertEqual(numbers, expected, query)
            self.assertEqual(browser.find('#filter-tier').get_attribute('value'), '')
        self.assertEqual(browser.unlabelled_controls(), [])

    def test_tier1_does_not_see_engineering_actions_or_document_previews(self):
        case = self.service.case(state='engineering')
        tier1 = self.browser()
        self.sign_in(tier1, 'tier1')
        self.open_case(tier1, case['case_number'])
        self.assertEqual(tier1.find_all('button[data-action="complete"]'), [])
        self.assertEqual(tier1.find_all('button[data-action="freeze"]'), [])
        # Only what any agent may do on any case: issue a new access code for a caller who lost theirs.
        self.assertEqual([b.get_attribute('data-action') for b in tier1.find_all('#action-buttons button')], ['access-code'])
        self.assertEqual(tier1.find_all('button[data-unlock]'), [])
        self.assertEqual(tier1.find_all('button.preview'), [])

        engineer = self.browser()
        self.sign_in(engineer, 'engineering', self.service.agent('engineering'))
        self.open_case(engineer, case['case_number'])
        # The timeline names the agents who acted (here the demo tier 1 agent opened the case).
        self.assertIn('by ' + self.service.agent('tier1')['name'], engineer.find('#timeline-list li[data-seq="1"]').text)
        engineer.wait_for('button[data-action="complete"]')
        self.assert_accessible(engineer)
        engineer.open('/')
        engineer.wait_for('#queue-rows tr')
        self.assert_accessible(engineer)
        engineer.open('/#/cases/' + case['case_number'])
        engineer.wait_for('#chain-mark')
        self.readme_screenshot(engineer, 'dashboard-case.png')

    def test_a_stale_version_tells_the_second_agent_and_reloads_the_case(self):
        case = self.service.case(state='identity_check', path='undetermined')
        first, second = self.browser(), self.browser()
        self.sign_in(first, 'tier2')
        self.sign_in(second, 'tier3')
        self.open_case(first, case['case_number'])
        self.open_case(second, case['case_number'])
        version = second.find('#case-version').text

        first.click('button[data-action="request_documents"]')
        first.fill('#action-reason', 'Answers did not match; proof of ownership needed.')
        first.click('#action-confirm')
        first.wait_for_text('#case-state', 'Awaiting documents')

        # The second agent still sees the old version and tries the same.
        self.expect_http_errors(412)
        second.click('button[data-action="request_documents"]')
        second.click('#action-confirm')
        second.wait_for_text('#action-error', 'reason')  # a reason is asked for before anything is sent
        second.fill('#action-reason', 'Sending for documents too.')
        second.click('#action-confirm')
        second.wait_for_text('#case-message', 'Someone else changed this case')
        self.assert_accessible(second)
        second.wait_for_text('#case-state', 'Awaiting documents')
        self.assertNotEqual(second.find('#case-version').text, version)
        transitions = self.service.psql(
            "SELECT count(*) FROM case_events e JOIN cases c ON c.id = e.case_id "
            "WHERE c.case_number = '%s' AND e.type = 'transition' AND e.data::jsonb->>'action' = 'request_documents'" % case['case_number'])
        self.assertEqual(transitions, '1')

    def test_an_agent_takes_a_case_then_hands_it_to_a_colleague(self):
        case = self.service.case(state='document_review')
        colleague = self.service.new_agent('engineering')
        browser = self.browser()
        agent = self.sign_in(browser, 'tier3')
        self.open_case(browser, case['case_number'])
        browser.click('button[data-action="take"]')
        browser.wait_for_text('#case-message', 'The case is yours')
        self.assertIn(agent['name'], browser.find('#panel-facts').text)
        self.assertEqual(browser.find_all('button[data-action="take"]'), [])
        browser.click('button[data-action="hand-over"]')
        browser.wait_for('#hand-over-agent')
        self.assert_accessible(browser)
        options = [o.text for o in browser.find_all('#hand-over-agent option')]
        self.assertIn('%s (Engineering)' % colleague['name'], options)
        self.assertFalse(any('Tier 1' in o or 'Tier 2' in o for o in options), options)  # they could not hold a tier 3 case
        browser.driver.find_element(By.CSS_SELECTOR, '#hand-over-agent option[value="%s"]' % colleague['id']).click()
        browser.click('#action-confirm')
        browser.wait_for_text('#case-message', 'Handed over to ' + colleague['name'])
        self.assertIn(colleague['name'], browser.find('#panel-facts').text)
        browser.wait_for_text('#timeline-list li:last-child', 'Assigned to %s by you' % colleague['name'])

    def test_signing_out_forgets_what_was_typed(self):
        case = self.service.case(state='identity_check')
        browser = self.browser()
        self.sign_in(browser, 'tier2')
        self.open_case(browser, case['case_number'])
        browser.fill('#note-body', 'Half-written note about the caller.')
        browser.click('#signout')
        browser.wait_for('#signin')
        self.fill_sign_in(browser, self.service.new_agent('tier2'))
        self.open_case(browser, case['case_number'])
        self.assertEqual(browser.wait_for('#note-body').get_attribute('value'), '')

    def test_session_expiry_brings_back_sign_in_and_keeps_the_typed_note(self):
        case = self.service.case(state='identity_check')
        browser = self.browser()
        agent = self.sign_in(browser, 'tier2')
        self.open_case(browser, case['case_number'])
        note = 'Customer called back at 14:05; confirmed the rescue address is not theirs.'
        browser.fill('#note-body', note)
        self.service.psql('DELETE FROM sessions')  # the session ends on the server (expiry, or signed out elsewhere)

        self.expect_http_errors(401)
        browser.click('#note-submit')
        browser.wait_for('#signin')
        self.assertIn('session has ended', browser.find('#signin-reason').text)
        self.assertEqual(browser.find('#signin-email').get_attribute('value'), agent['email'])
        self.fill_sign_in(browser, agent)
        # The note was sent once signed in again, and nothing typed was lost.
        browser.wait_for_text('#notes-list', note)
        self.assertEqual(browser.find('#note-body').get_attribute('value'), '')
        count = self.service.psql(
            "SELECT count(*) FROM case_notes n JOIN cases c ON c.id = n.case_id WHERE c.case_number = '%s' AND n.visibility = 'internal'" % case['case_number'])
        self.assertGreaterEqual(int(count), 1)

    def test_tier3_uploads_a_photo_previews_it_inline_and_the_read_is_on_the_timeline(self):
        case = self.service.case(state='document_review')
        # The demo's review cases already hold an IMEI photo (the arrival that moved them to review): upload another kind.
        browser = self.browser()
        self.sign_in(browser, 'tier3')
        self.open_case(browser, case['case_number'])
        browser.wait_for('#evidence-kind')  # the evidence panel loads on its own, after the timeline
        browser.driver.find_element(By.CSS_SELECTOR, '#evidence-kind option[value="document"]').click()
        browser.driver.find_element(By.CSS_SELECTOR, '#ev-doc-type option[value="warranty_card"]').click()
        browser.find('#ev-file').send_keys(self.file_with(png_bytes(24, 16), '.png'))
        browser.click('#evidence-submit')
        item = browser.wait_for('#evidence-list li[data-type="warranty_card"]')
        self.assertIn('PNG', item.text)
        item.find_element(By.CSS_SELECTOR, 'button.preview').click()
        image = browser.wait_for('#evidence-list li[data-type="warranty_card"] img.preview')
        browser.driver.execute_script('return arguments[0].decode()', image)
        self.assertEqual(browser.driver.execute_script('return arguments[0].naturalWidth', image), 24)
        browser.wait_for_text('#timeline-list', 'Document opened: Warranty card')
        # Reviewing it asks for a reason, then the decision shows and is on the timeline.
        item = browser.find('#evidence-list li[data-type="warranty_card"]')
        [button for button in item.find_elements(By.CSS_SELECTOR, 'button') if button.text == 'Review'][0].click()
        form = browser.wait_for('#evidence-list li[data-type="warranty_card"] form.review-form')
        form.find_element(By.CSS_SELECTOR, 'button[type="submit"]').click()
        browser.wait_for_text('#evidence-list li[data-type="warranty_card"] .field-error', 'reason')
        form.find_element(By.CSS_SELECTOR, 'textarea').send_keys('Warranty card names the device on file.')
        form.find_element(By.CSS_SELECTOR, 'button[type="submit"]').click()
        browser.wait_for_text('#evidence-list li[data-type="warranty_card"] .badge', 'accepted')
        browser.wait_for_text('#timeline-list', 'Evidence accepted')
        # A PDF from the demo data opens in the page as well.
        pdf = browser.find('#evidence-list li[data-type]:not([data-type="warranty_card"]) button.preview')
        pdf.click()
        browser.wait_for('iframe.preview.pdf')

    def test_uploads_are_named_as_agents_read_them_with_type_and_size_once(self):
        case = self.service.case(state='document_review')
        browser = self.browser()
        self.sign_in(browser, 'tier3')
        self.open_case(browser, case['case_number'])
        photo = browser.wait_for('#evidence-list li[data-type="imei_photo"]')
        # The kind in the page's words, never the service's summary ("Imei photo, PDF, 646 bytes").
        self.assertIn('Photo of the IMEI', photo.text)
        self.assertNotIn('Imei', photo.text)
        size = self.service.psql(
            "SELECT e.size FROM evidence e JOIN cases c ON c.id = e.case_id WHERE c.case_number = '%s' AND e.kind = 'imei_photo'"
            % case['case_number'])
        self.assertIn('PDF, %s bytes' % size, photo.text)
        self.assertEqual(photo.text.count('bytes'), 1, 'the size once: %r' % photo.text)
        self.assertNotIn('KiB', photo.text)
        # A transcript an agent typed is a call transcript, read by its summary.
        typed = self.service.psql(
            "SELECT c.case_number FROM cases c JOIN evidence e ON e.case_id = c.id "
            "WHERE e.kind = 'transcript' AND e.filed_by <> 'customer' ORDER BY c.case_number LIMIT 1")
        self.open_case(browser, typed)
        typed = browser.wait_for('#evidence-list li[data-type="transcript"]')
        self.assertIn('Call transcript', typed.text)
        self.assertIn('characters', typed.text)
        self.assertNotIn('bytes', typed.text)
        self.assert_accessible(browser)

    def test_typed_evidence_is_filed_and_the_verification_follows(self):
        case = self.service.case(state='identity_check', path='undetermined')
        imei = self.imei_of(case['case_number'])
        browser = self.browser()
        self.sign_in(browser, 'tier2')
        self.open_case(browser, case['case_number'])
        browser.wait_for('#verification-outcome')
        cards = "SELECT count(*) FROM evidence e JOIN cases c ON c.id = e.case_id WHERE c.case_number = '%s' AND e.kind = 'card'" % case['case_number']
        before = self.service.psql(cards)
        # A card number failing its check digit is refused by the service and the form says why.
        self.expect_http_errors(422)
        browser.fill('#ev-card-number', '4111111111111112')
        browser.fill('#ev-card-month', '12')
        browser.fill('#ev-card-year', '2030')
        browser.click('#evidence-submit')
        browser.wait_for_text('#evidence-error', 'number')
        self.assertEqual(self.service.psql(cards), before)
        # The device on the account matches.
        browser.driver.find_element(By.CSS_SELECTOR, '#evidence-kind option[value="device"]').click()
        browser.fill('#ev-imei', imei)
        browser.click('#evidence-submit')
        browser.wait_for_text('#case-message', 'filed')
        browser.wait_for('#evidence-list li[data-type="device"]')
        browser.wait_for_text('#panel-verification', 'Device: matched')

    def test_queue_filters_show_only_matching_cases(self):
        browser = self.browser()
        self.sign_in(browser, 'tier3')
        browser.driver.find_element(By.CSS_SELECTOR, '#filter-tier option[value=""]').click()
        browser.find('#filter-overdue').click()
        browser.click('#filter-apply')
        self.wait_for_queue(browser, 'overdue=true')
        rows = browser.find_all('#queue-rows tr')
        self.assertTrue(all('overdue' in r.get_attribute('class') for r in rows))
        self.assertTrue(all('Overdue' in r.text for r in rows))
        browser.driver.find_element(By.CSS_SELECTOR, '#filter-state option[value="engineering"]').click()
        browser.find('#filter-overdue').click()
        browser.click('#filter-apply')
        self.wait_for_queue(browser, 'state=engineering')
        browser.wait_for_text('#queue-rows tr:first-child', 'Engineering')
        self.assertTrue(all('Engineering' in r.text for r in browser.find_all('#queue-rows tr')))
        # The filters live in the address, so a reload keeps them.
        browser.driver.refresh()
        browser.wait_for_text('#queue-rows tr:first-child', 'Engineering')
        self.assertEqual(browser.find('#filter-state').get_attribute('value'), 'engineering')

    def test_the_queue_starts_with_open_cases_and_my_cases_lists_mine(self):
        finished = self.service.case(state='resolved')
        mine, finished_mine = self.service.case(state='identity_check'), self.service.case(state='rejected')
        browser = self.browser()
        agent = self.sign_in(browser, 'tier2')
        agent_id = self.service.psql("SELECT id FROM agents WHERE email = '%s'" % agent['email'])
        self.service.psql("UPDATE cases SET assignee_id = '%s' WHERE case_number IN ('%s', '%s')"
                          % (agent_id, mine['case_number'], finished_mine['case_number']))
        # The default: open cases, said so in full (not clipped at 1280 px), no finished row among any tier's.
        state = browser.find('#filter-state')
        self.assertEqual(state.get_attribute('value'), '')
        self.assertEqual(browser.find('#filter-state option:checked').text, 'Open cases')
        clipped = browser.driver.execute_script(
            "const s = arguments[0], c = document.createElement('canvas').getContext('2d');"
            "c.font = getComputedStyle(s).font; const w = c.measureText(s.selectedOptions[0].text).width;"
            "return s.getBoundingClientRect().width < w + 24;", state)
        self.assertFalse(clipped)
        browser.driver.find_element(By.CSS_SELECTOR, '#filter-tier option[value=""]').click()
        browser.click('#filter-apply')
        browser.wait_for('#queue[aria-busy="false"]:not([data-query*="tier="])')
        texts = [r.find_element(By.CSS_SELECTOR, 'td[data-label="State"]').text for r in browser.find_all('#queue-rows tr')]
        self.assertTrue(texts)
        for word in ('Resolved', 'Rejected', 'Closed', 'Merged'):
            self.assertFalse([t for t in texts if t.startswith(word)], texts)
        # "Open or finished" shows finished ones again; a search finds a finished case by its number.
        browser.driver.find_element(By.CSS_SELECTOR, '#filter-state option[value="any"]').click()
        browser.click('#filter-apply')
        self.wait_for_queue(browser, 'state=any')
        browser.fill('#filter-q', finished['case_number'])
        browser.driver.find_element(By.CSS_SELECTOR, '#filter-state option[value=""]').click()
        browser.click('#filter-apply')
        browser.wait_for('#queue-rows tr[data-case="%s"]' % finished['case_number'])
        # My cases (in the agent's own tier, as the form starts): the open case assigned to this agent, not the
        # finished one, and it survives a reload.
        browser.click('#filter-reset')
        self.wait_for_queue(browser, 'tier=tier2')
        browser.find('#filter-mine').click()
        browser.click('#filter-apply')
        self.wait_for_queue(browser, 'assignee=me')
        rows = browser.find_all('#queue-rows tr')
        self.assertEqual([r.get_attribute('data-case') for r in rows], [mine['case_number']])
        self.assertIn(agent['name'], rows[0].text)
        browser.driver.refresh()
        browser.wait_for('#queue-rows tr[data-case="%s"]' % mine['case_number'])
        self.assertTrue(browser.find('#filter-mine').is_selected())
        self.assert_accessible(browser)

    def test_the_queue_refreshes_itself_when_the_agent_comes_back(self):
        case = self.service.case(state='new')
        browser = self.browser()
        self.sign_in(browser, 'tier1')
        row = '#queue-rows tr[data-case="%s"]' % case['case_number']
        browser.wait_for(row)
        self.assertIn('Updated', browser.find('#queue-updated').text)
        # Someone else escalates it meanwhile; coming back to the tab shows the queue as it is now.
        self.service.psql("UPDATE cases SET state = 'identity_check', tier = 'tier2', version = version + 1 "
                          "WHERE case_number = '%s'" % case['case_number'])
        browser.driver.execute_script("document.dispatchEvent(new Event('visibilitychange'))")
        browser.wait_until_gone(row)
        # Not while the agent is working in it: with focus in the filters nothing moves.
        browser.find('#filter-q').click()
        self.service.psql("UPDATE cases SET state = 'new', tier = 'tier1', version = version + 1 "
                          "WHERE case_number = '%s'" % case['case_number'])
        browser.driver.execute_script("document.dispatchEvent(new Event('visibilitychange'))")
        self.wait_for_queue(browser)
        self.assertEqual(browser.find_all(row), [])

    def test_wrong_code_is_refused_with_a_message_and_sign_out_ends_the_session(self):
        agent = self.service.agent('tier2')
        browser = self.browser()
        browser.open('/')
        self.expect_http_errors(401)
        browser.fill('#signin-email', agent['email'])
        browser.fill('#signin-password', agent['password'])
        browser.fill('#signin-totp', '000000' if self.service.totp(agent) != '000000' else '111111')
        browser.find('#signin-totp').send_keys(Keys.ENTER)  # keyboard only
        browser.wait_for_text('#signin-message', 'not right')
        self.assertTrue(browser.find('#signin').is_displayed())
        self.assert_accessible(browser)
        self.fill_sign_in(browser, agent)
        browser.wait_for('#queue')
        browser.click('#signout')
        browser.wait_for('#signin')
        self.assertIn('signed out', browser.find('#signin-reason').text)
        status = browser.driver.execute_async_script(
            "const done = arguments[0]; fetch('/api/v1/session').then((r) => done(r.status));")
        self.assertEqual(status, 401)

    def test_a_tampered_timeline_is_marked_broken(self):
        case = self.service.case(state='resolved')
        # The schema's owner switches the guard off (the service's own role may not).
        self.service.psql(
            "ALTER TABLE case_events DISABLE TRIGGER case_events_append_only;"
            "UPDATE case_events SET actor = 'agent:00000000-0000-0000-0000-000000000000' "
            "WHERE seq = 2 AND case_id = (SELECT id FROM cases WHERE case_number = '%s');"
            "ALTER TABLE case_events ENABLE TRIGGER case_events_append_only;" % case['case_number'], self.service.owner_conninfo)
        browser = self.browser()
        self.sign_in(browser, 'tier2')
        self.open_case(browser, case['case_number'])
        self.assertIn('Hash chain broken at event 2', browser.find('#chain-mark').text)

    def test_dashboard_works_at_phone_width(self):
        case = self.service.case(state='awaiting_documents')
        browser = self.browser(width=360, height=780)
        self.sign_in(browser, 'tier3')
        browser.wait_for('#queue-rows tr')
        self.assertLessEqual(browser.overflow(), 0)
        self.open_case(browser, case['case_number'])
        self.assertLessEqual(browser.overflow(), 0)
        self.assertEqual(browser.driver.execute_script('return document.documentElement.lang'), 'en')
        self.readme_screenshot(browser, 'dashboard-phone.png')
        # A case page starts focus at its heading; on a fresh page the first Tab reaches the skip link.
        self.assertEqual(browser.driver.execute_script('return document.activeElement.id'), 'case-title')
        browser.open('/#/')
        browser.driver.refresh()
        self.wait_for_queue(browser)
        ActionChains(browser.driver).send_keys(Keys.TAB).perform()
        self.assertEqual(browser.driver.execute_script('return document.activeElement.className'), 'skip-link')
