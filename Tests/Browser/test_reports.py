"""The reports page (/reports) in real headless Chromium: the figures equal the rows in the database."""
from harness import BrowserTestCase


class ReportsTests(BrowserTestCase):

    def test_the_reports_page_shows_the_rows_in_the_database_as_charts_tables_and_csv(self):
        # Rows made here, on top of the demo data: two cases resolved yesterday on the reset path, one in a day
        # (within its 3-day target) and one in five (not).
        numbers = self.service.psql("SELECT string_agg(case_number, ' ') FROM (SELECT case_number FROM cases WHERE state = 'new' ORDER BY case_number LIMIT 2) c").split()
        self.service.psql("UPDATE cases SET state = 'resolved', path = 'reset', due_at = NULL, paused_seconds = 0, "
                          "opened_at = now() - interval '2 days', state_entered_at = now() - interval '1 day' WHERE case_number = '%s'" % numbers[0])
        self.service.psql("UPDATE cases SET state = 'resolved', path = 'reset', due_at = NULL, paused_seconds = 0, "
                          "opened_at = now() - interval '6 days', state_entered_at = now() - interval '1 day' WHERE case_number = '%s'" % numbers[1])
        open_cases = self.service.psql("SELECT count(*) FROM cases WHERE state NOT IN ('resolved', 'rejected', 'closed', 'merged')")
        overdue = self.service.psql('SELECT count(*) FROM cases WHERE due_at < now()')
        reset_resolved = self.service.psql("SELECT count(*) FROM cases WHERE state = 'resolved' AND path = 'reset' AND state_entered_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '29 days'")
        new_tier1 = self.service.psql("SELECT count(*) FROM cases WHERE state = 'new' AND tier = 'tier1'")

        browser = self.browser()
        self.sign_in(browser, 'tier2')
        browser.click('#reports-link')
        browser.wait_for('#reports-body')
        browser.wait_for_text('#figure-open', open_cases)
        self.assertEqual(browser.find('#figure-overdue').text, overdue)
        row = browser.wait_for('#paths-rows tr[data-path="reset"]')
        self.assertEqual(row.find_elements('css selector', 'td')[1].text, reset_resolved)
        self.assertEqual(browser.find('#backlog-rows tr[data-state="new"] td:nth-of-type(1)').text, new_tier1)
        self.assertEqual(len(browser.find_all('#trend-rows tr')), 30)
        self.assertEqual(len(browser.find_all('#trend-chart svg rect.bar')), 30 * 2 + 2)  # two columns a day, and the legend
        self.assertEqual(browser.find('#backlog-chart').get_attribute('aria-hidden'), 'true')
        self.assert_accessible(browser)
        self.readme_screenshot(browser, 'reports.png')

        # The CSV download holds the same numbers.
        csv = browser.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(document.getElementById('csv-link').getAttribute('href')).then((r) => r.text()).then(done);")
        self.assertIn('overdue,,,,,%s\r\n' % overdue, csv)
        self.assertIn('resolved,,,reset,,%s\r\n' % reset_resolved, csv)

        # Another window, and a phone.
        browser.driver.find_element('css selector', '#window-days option[value="7"]').click()
        browser.click('#window-apply')
        browser.wait_for('#reports-body[data-days="7"]')
        self.assertEqual(len(browser.find_all('#trend-rows tr')), 7)
        phone = self.browser(width=360)
        self.sign_in(phone, 'tier3')
        phone.open('/reports')
        phone.wait_for('#reports-body')
        self.assertLessEqual(phone.overflow(), 0, 'the page scrolls sideways at 360 px')

    def test_tier1_is_told_reports_are_not_for_them(self):
        self.expect_http_errors(403)
        browser = self.browser()
        self.sign_in(browser, 'tier1')
        self.assertFalse(browser.find('#reports-link').is_displayed())
        browser.open('/reports')
        browser.wait_for_text('#reports-denied', 'tier 2 and above')
        self.assert_accessible(browser)

    def test_each_figure_links_to_the_queue_that_lists_it(self):
        overdue = self.service.psql('SELECT count(*) FROM cases WHERE due_at < now()')
        held = self.service.psql(
            "SELECT a.id || ' ' || a.name || ' ' || count(*) FROM cases c JOIN agents a ON a.id = c.assignee_id "
            "WHERE c.state NOT IN ('resolved', 'rejected', 'closed', 'merged') GROUP BY a.id, a.name ORDER BY count(*) DESC, a.name LIMIT 1")
        agent_id, held_count = held.split(' ')[0], held.split(' ')[-1]
        week_old = self.service.psql(
            "SELECT count(*) FROM cases WHERE state NOT IN ('resolved', 'rejected', 'closed', 'merged') "
            "AND opened_at < now() - interval '3 days' AND opened_at >= now() - interval '7 days'")
        browser = self.browser()
        self.sign_in(browser, 'tier2')
        browser.open('/reports')
        browser.wait_for('#reports-body')
        browser.wait_for_text('#figure-overdue', overdue)
        # Per agent: workload now and throughput in the window; by age; the first response.
        row = browser.wait_for('#agents-rows tr[data-agent="%s"]' % agent_id)
        self.assertEqual(row.find_elements('css selector', 'td')[1].text, held_count)
        self.assertEqual(browser.find('#age-rows tr[data-from-days="3"] td').text, week_old)
        self.assertIn('median', browser.find('#figure-first-response').text)
        self.assert_accessible(browser)

        # "Overdue 9" opens the queue filtered to overdue cases, all tiers: as many rows as the figure.
        browser.click('#figure-overdue')
        self.wait_for_queue(browser, 'overdue=true')
        self.assertTrue(browser.find('#filter-overdue').is_selected())
        self.assertEqual(str(len(browser.find_all('#queue-rows tr[data-case]'))), overdue)
        # An agent's open cases: the queue of that agent.
        browser.open('/reports')
        browser.wait_for('#agents-rows tr[data-agent="%s"] td a' % agent_id).click()
        self.wait_for_queue(browser, 'assignee=' + agent_id)
        browser.wait_for_text('#queue-title', 'held by one agent')
        self.assertEqual(str(len(browser.find_all('#queue-rows tr[data-case]'))), held_count)
        # A bucket of the backlog by age: the cases opened 3 to 7 days ago.
        browser.open('/reports')
        browser.wait_for('#age-rows tr[data-from-days="3"] td a').click()
        self.wait_for_queue(browser, 'opened_before=')
        browser.wait_for_text('#queue-title', 'opened since')
        self.assertEqual(str(len(browser.find_all('#queue-rows tr[data-case]'))), week_old)
        self.assert_accessible(browser)
