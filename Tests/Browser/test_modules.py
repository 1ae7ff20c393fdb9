"""The page modules' pure functions, run in Chromium itself (the code under test is the code served)."""
import json
import urllib.request

from harness import BrowserTestCase

# WebDriver's scripts are not subject to the page's CSP (which refuses eval and new Function, as it should).
IMPORT = """
const done = arguments[arguments.length - 1];
import('%s').then((m) => done((() => { %s })())).catch((e) => done('ERROR ' + e));
"""


class ModuleTests(BrowserTestCase):

    def run_module(self, browser, path, body):
        result = browser.driver.execute_async_script(IMPORT % (path, body))
        self.assertFalse(isinstance(result, str) and result.startswith('ERROR'), result)
        return result

    def test_case_numbers_are_checked_as_the_service_checks_them(self):
        browser = self.browser()
        browser.open('/')
        numbers = [c['case_number'] for c in self.service.seed['cases']]
        # Every issued number passes, grouped or not; every single-digit change and adjacent swap fails.
        result = self.run_module(browser, '/js/identifiers.js', """
            const numbers = %s;
            const out = { valid: 0, invalid: 0, wronglyValid: [], wronglyInvalid: [] };
            for (const n of numbers) {
              for (const typed of [n, n.replace(/(\\d{4})(?=\\d)/g, '$1 '), n.replace(/(\\d{4})(?=\\d)/g, '$1-'), ' ' + n + ' ']) {
                if (m.parseCaseNumber(typed).digits === n) out.valid++; else out.wronglyInvalid.push(typed);
              }
              for (let i = 0; i < 12; i++) {
                for (let d = 0; d < 10; d++) {
                  if (String(d) === n[i]) continue;
                  const typo = n.slice(0, i) + d + n.slice(i + 1);
                  if (m.parseCaseNumber(typo).error) out.invalid++; else out.wronglyValid.push(typo);
                }
                if (i < 11 && n[i] !== n[i + 1]) {
                  const swap = n.slice(0, i) + n[i + 1] + n[i] + n.slice(i + 2);
                  if (m.parseCaseNumber(swap).error) out.invalid++; else out.wronglyValid.push(swap);
                }
              }
            }
            out.words = ['', '12345', 'abcdefghijkl', '012345678901'].map((t) => m.parseCaseNumber(t).error);
            return out;""" % json.dumps(numbers))
        self.assertEqual(result['wronglyInvalid'], [])
        self.assertEqual(result['wronglyValid'], [])
        self.assertEqual(result['valid'], 4 * len(numbers))
        self.assertTrue(all(result['words']), result['words'])

    def test_access_codes_normalise_as_the_service_does(self):
        browser = self.browser()
        browser.open('/')
        codes = [c['access_code'] for c in self.service.seed['cases']]
        result = self.run_module(browser, '/js/identifiers.js', """
            const codes = %s;
            return {
              same: codes.every((c) => m.normalizeAccessCode(c.toLowerCase().replaceAll('-', ' ')) === c.replaceAll('-', '')),
              readAs: m.normalizeAccessCode('ilo0-ILO0-abcd-efgh'),
              tooShort: m.normalizeAccessCode('ABCD-EFGH'),
              badSymbol: m.normalizeAccessCode('ABCD-EFGH-JKMN-PQRU'),
            };""" % json.dumps(codes))
        self.assertTrue(result['same'])
        self.assertEqual(result['readAs'], '1100110 0ABCDEFGH'.replace(' ', ''))
        self.assertIsNone(result['tooShort'])
        self.assertIsNone(result['badSymbol'])  # U is not in Crockford's alphabet

    def test_canonical_json_is_rfc_8785(self):
        browser = self.browser()
        browser.open('/')
        result = self.run_module(browser, '/js/chain.js', r"""
            return [
              m.canonicalJSON({ b: [1, 2.5, null, true], a: { d: 'é\u2028"\n', c: -0 }, '€': 1e21, '\u00e9': 1e-7 }),
              m.canonicalJSON({ '\ud83d\ude00': 1, '\ufb33': 2 }),
            ];""")
        # Keys sorted by UTF-16 code units; numbers in ECMAScript form; strings escaped as JSON.stringify does.
        self.assertEqual(result[0], '{"a":{"c":0,"d":"é\u2028\\"\\n"},"b":[1,2.5,null,true],"é":1e-7,"€":1e+21}')
        self.assertEqual(result[1], '{"\U0001F600":1,"\ufb33":2}')  # U+D83D sorts before U+FB33

    def test_time_left_reads_as_words(self):
        browser = self.browser()
        browser.open('/')
        result = self.run_module(browser, '/js/format.js', """
            const now = Date.parse('2026-11-30T12:00:00Z');
            return [m.timeLeft('2026-12-02T16:30:00Z', now), m.timeLeft('2026-11-30T09:00:00Z', now),
                    m.timeLeft('2026-11-30T12:05:00Z', now), m.timeLeft(null, now)];""")
        self.assertEqual(result, [
            {'overdue': False, 'text': '2 d 4 h left'}, {'overdue': True, 'text': 'overdue by 3 h'},
            {'overdue': False, 'text': '5 min left'}, {'overdue': False, 'text': 'no due date'}])

    def test_every_page_sentence_exists_in_every_language_with_the_same_placeholders(self):
        browser = self.browser()
        browser.open('/status')
        result = self.run_module(browser, '/js/status-text.js', """
            const names = (s) => [...s.matchAll(/\\{(\\w+)\\}/g)].map((x) => x[1]).sort().join(',');
            const en = m.CATALOGUES.en;
            const out = { languages: Object.keys(m.CATALOGUES), missing: [], extra: [], placeholders: [], untranslated: [] };
            for (const language of m.LANGUAGES) {
              const catalogue = m.CATALOGUES[language];
              for (const key of Object.keys(en)) {
                if (!(key in catalogue)) out.missing.push(language + ' ' + key);
                else if (names(catalogue[key]) !== names(en[key])) out.placeholders.push(language + ' ' + key);
                else if (language !== 'en' && !/[\\u4e00-\\u9fff]/.test(catalogue[key])) out.untranslated.push(language + ' ' + key);
              }
              for (const key of Object.keys(catalogue)) if (!(key in en)) out.extra.push(language + ' ' + key);
            }
            out.filled = m.text('zh-Hant', 'upload.too_big', { size: '12 MB' });
            out.locales = [m.languageFromLocales(['zh-CN']), m.languageFromLocales(['zh-TW']), m.languageFromLocales(['zh-HK']),
                           m.languageFromLocales(['fr', 'zh-Hant']), m.languageFromLocales(['fr']), m.languageFromLocales(['en-US', 'zh'])];
            return out;
        """)
        self.assertEqual(result['languages'], ['en', 'zh-Hans', 'zh-Hant'])
        self.assertEqual(result['missing'], [])
        self.assertEqual(result['extra'], [])
        self.assertEqual(result['placeholders'], [])
        # Every Chinese entry is written in Chinese (brand names and formats aside, each has Han characters).
        self.assertEqual([k for k in result['untranslated'] if not k.endswith(('page.title',))], [])
        self.assertIn('12 MB', result['filled'])
        self.assertNotIn('{size}', result['filled'])
        self.assertEqual(result['locales'], ['zh-Hans', 'zh-Hant', 'zh-Hant', 'zh-Hant', 'en', 'en'])

    def test_the_status_page_never_glues_translated_pieces_together(self):
        """Whole sentences only: a translated text is never concatenated with another string or put into a
        template literal; values go in through the catalogue's {placeholders}."""
        import os
        import re
        source = open(os.path.join(os.path.dirname(__file__), '..', '..', 'Public', 'js', 'status.js'), encoding='utf-8').read()
        call = r"\bt\([^()]*(?:\([^()]*\)[^()]*)*\)"
        glued = re.findall(r"(?:" + call + r"\s*\+)|(?:\+\s*" + call + r")|(?:\$\{\s*" + call + r"\s*\})", source)
        self.assertEqual(glued, [])
        # And the page shows no English sentence of its own outside the catalogue (messages are keys).
        self.assertEqual(re.findall(r"announce\([^,]+,\s*'[A-Z]", source), [])

    # The vocabularies: each list comes from the service (GET /api/v1/vocabulary, declared once in ReclaimCore and
    # ReclaimOperations); each word has its words in the pages' catalogues, in every language, and no catalogue keeps
    # words for a word the service no longer has.
    VOCABULARY = """
        const done = arguments[arguments.length - 1];
        Promise.all([%s, fetch('/api/v1/vocabulary').then((r) => r.json())])
          .then((loaded) => done(((vocabulary, ...m) => { %s })(loaded.pop(), ...loaded))).catch((e) => done('ERROR ' + e));
    """

    def test_every_word_of_the_service_has_its_words_on_the_dashboard(self):
        browser = self.browser()
        browser.open('/')
        # The timeline's words name the reader ("you"): a case is open for someone.
        self.sign_in(browser, 'tier1')
        browser.open('/#/cases/' + self.service.case()['case_number'])
        browser.wait_for('#chain-mark')
        result = browser.driver.execute_async_script(self.VOCABULARY % ("import('/js/labels.js'), import('/js/case/timeline.js'), import('/js/format.js')", """
            const [labels, kase, format] = m;
            const out = { unknown: [], missing: [], extra: [], events: [] };
            const tables = new Map();
            for (const [name, table] of Object.entries(labels.WORDS)) {
              if (!(name in vocabulary)) { out.unknown.push(name); continue; }
              tables.set(table, [...(tables.get(table) ?? []), name]);
            }
            for (const [table, names] of tables) {
              const words = new Set(names.flatMap((name) => vocabulary[name]));
              for (const word of words) if (!(word in table)) out.missing.push(`${names.join('+')}: ${word}`);
              for (const key of Object.keys(table)) if (!words.has(key)) out.extra.push(`${names.join('+')}: ${key}`);
            }
            // Every event type has its own sentence on the timeline, not the fallback that spells the type.
            for (const type of vocabulary.event_types) if (kase.eventWords({ type, data: {} }) === format.words(type)) out.events.push(type);
            const options = (id) => [...document.querySelectorAll(`#${id} option`)].map((o) => o.value).filter(Boolean);
            out.filters = { state: options('filter-state'), tier: options('filter-tier') };
            out.lists = { finished: labels.FINISHED_STATES, documents: labels.DOCUMENT_TYPES };
            return out;"""))
        self.assertFalse(isinstance(result, str), result)
        self.assertEqual(result['unknown'], [], 'labels.js WORDS names a vocabulary the service does not have')
        self.assertEqual(result['missing'], [], 'words of the service without words in labels.js')
        self.assertEqual(result['extra'], [], 'words in labels.js for words the service does not have')
        self.assertEqual(result['events'], [], 'event types without their own words in eventWords (case/timeline.js)')
        vocabulary = json.loads(urllib.request.urlopen(self.service.origin + '/api/v1/vocabulary', timeout=5).read())
        # The queue's state filter offers every state, after "Open or finished" (`any`, the query's own word).
        self.assertEqual(result['filters'], {'state': ['any'] + vocabulary['case_states'], 'tier': vocabulary['tiers']})
        self.assertEqual(result['lists'], {'finished': vocabulary['finished_states'], 'documents': vocabulary['document_kinds']})

    def test_every_word_of_the_service_has_its_words_on_the_status_page_in_every_language(self):
        browser = self.browser()
        browser.open('/status')
        browser.wait_for('#lookup')
        result = browser.driver.execute_async_script(self.VOCABULARY % ("import('/js/status-text.js')", """
            const [text] = m;
            const out = { languages: text.LANGUAGES, catalogues: [], unknown: [], missing: [], extra: [] };
            const prefixes = new Map();
            for (const [name, prefix] of Object.entries(text.VOCABULARY_KEYS)) {
              if (!(name in vocabulary)) { out.unknown.push(name); continue; }
              prefixes.set(prefix, new Set([...(prefixes.get(prefix) ?? []), ...vocabulary[name]]));
            }
            for (const language of vocabulary.languages) {
              const catalogue = text.CATALOGUES[language];
              if (!catalogue) { out.catalogues.push(language); continue; }
              for (const [prefix, words] of prefixes) {
                for (const word of words) if (!(`${prefix}.${word}` in catalogue)) out.missing.push(`${language} ${prefix}.${word}`);
                for (const key of Object.keys(catalogue)) {
                  if (key.startsWith(`${prefix}.`) && !words.has(key.slice(prefix.length + 1))) out.extra.push(`${language} ${key}`);
                }
              }
            }
            out.uploads = [...document.querySelectorAll('#doc-type option')].map((o) => [o.value, o.textContent]);
            return out;"""))
        self.assertFalse(isinstance(result, str), result)
        vocabulary = json.loads(urllib.request.urlopen(self.service.origin + '/api/v1/vocabulary', timeout=5).read())
        self.assertEqual(result['languages'], vocabulary['languages'])
        self.assertEqual(result['catalogues'], [], 'languages of the service without a catalogue in status-text.js')
        self.assertEqual(result['unknown'], [], 'VOCABULARY_KEYS names a vocabulary the service does not have')
        self.assertEqual(result['missing'], [], 'words of the service without their key in status-text.js')
        self.assertEqual(result['extra'], [], 'keys in status-text.js for words the service does not have')
        # The upload form offers the service's kinds, each in the page's words.
        self.assertEqual([value for value, _ in result['uploads']], vocabulary['upload_kinds'])
        self.assertEqual(dict(result['uploads'])['warranty_card'], 'Warranty card')
