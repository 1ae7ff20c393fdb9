"""The signed checkpoint on /admin in real headless Chromium: the server's verdict and the checkpoint text as partners
receive it; after the stored tree is altered in the database (as its owner), the page says it no longer verifies."""
import urllib.request

from harness import BrowserTestCase


class CheckpointTests(BrowserTestCase):

    def open_admin(self):
        browser = self.browser()
        self.sign_in(browser, 'tier1', self.service.new_agent('tier1', admin=True))
        browser.wait_for('#admin-link').click()
        browser.wait_for('#admin-body')
        return browser

    def test_the_admin_page_shows_the_latest_checkpoint_and_whether_the_tree_extends_it(self):
        browser = self.open_admin()
        browser.wait_for_text('#checkpoint-verdict', 'extends its latest checkpoint')
        self.assertIn('ok', browser.find('#checkpoint-verdict').get_attribute('class'))
        with urllib.request.urlopen(self.service.origin + '/api/v1/audit/checkpoint', timeout=10) as response:
            note = response.read().decode()
        with urllib.request.urlopen(self.service.origin + '/api/v1/audit/key', timeout=10) as response:
            key = response.read().decode()
        origin, size, root = note.split('\n')[:3]
        self.assertEqual(browser.find('#checkpoint-note').text.strip(), note.strip(), 'the checkpoint exactly as served')
        self.assertEqual(browser.find('#checkpoint-size').text, size)
        self.assertEqual(browser.find('#checkpoint-root').text, root)
        self.assertEqual(browser.find('#checkpoint-key').text, key)
        self.assertTrue(key.startswith(origin + '+'))
        self.assertNotEqual(browser.find('#checkpoint-time').text, '—')
        self.assert_accessible(browser)

        # The database's owner changes the stored tree: the server's verdict, shown as it is, turns.
        self.service.psql("""
            ALTER TABLE log_nodes DISABLE TRIGGER USER;
            UPDATE log_nodes SET hash = sha256('rewritten') WHERE (level, idx) = (SELECT level, idx FROM log_nodes ORDER BY level DESC, idx LIMIT 1);
            ALTER TABLE log_nodes ENABLE TRIGGER USER;""", self.service.owner_conninfo)
        browser.driver.refresh()
        browser.wait_for_text('#checkpoint-verdict', 'does not verify')
        self.assertIn('broken', browser.find('#checkpoint-verdict').get_attribute('class'))
        self.assertIn('not an extension', browser.find('#checkpoint-verdict').text)
        self.assert_accessible(browser)
