// Opening a case on the phone (tier 1+): every field of the contract, the open cases for the same account
// e-mail, serial or IMEI shown while typing (from the queue's search), then the case number and access code
// shown once, grouped for reading aloud, with copy buttons. The code exists in clear only in this answer.
import { ApiError } from './api.js';
import { announce, byId, h, replace, show, whileBusy } from './dom.js';
import { groupCaseNumber } from './identifiers.js';
import { CASE_KINDS, FACTS, FINISHED_STATES, LANGUAGES, STATES, fieldProblemWords, label } from './labels.js';
import { VOCABULARY } from './vocabulary.js';
let app = null;

/** A labelled input (with a hint under the label); the edit form of the case page uses it too. */
export function field(id, words, input, hint) {
  return h('div', { class: 'field' }, h('label', { for: id }, words, hint ? h('span', { class: 'hint' }, hint) : null), input);
}

/** One device's serial, IMEI and model, ids prefixed with `prefix` (`open`, `edit`), filled from `device`. */
export function deviceRow(index, prefix = 'open', device = {}) {
  const input = (part, attrs) => h('input', { type: 'text', id: `${prefix}-${part}-${index}`, autocomplete: 'off', value: device[part] ?? '', ...attrs });
  return h('fieldset', { class: 'device-row', dataset: { device: String(index) } },
    h('legend', {}, `Device ${index + 1}`),
    h('div', { class: 'inline-fields' },
      field(`${prefix}-serial-${index}`, 'Serial', input('serial', { class: 'dup-term', spellcheck: 'false' })),
      field(`${prefix}-imei-${index}`, 'IMEI', input('imei', { class: 'dup-term', inputmode: 'numeric' })),
      field(`${prefix}-model-${index}`, 'Model', input('model', {}))));
}

/** Shows the form to open a case. */
export function showOpenCase(appState) {
  app = appState;
  document.title = 'Reclaim — open a case';
  const section = byId('open-case');
  show(section);
  const devices = h('div', { id: 'open-devices' }, deviceRow(0));
  const error = h('div', { id: 'open-error', class: 'message', role: 'alert', tabindex: -1, hidden: true });
  const duplicates = h('div', { id: 'open-duplicates', role: 'status' });
  const form = h('form', { id: 'open-form', novalidate: true },
    h('fieldset', {}, h('legend', {}, 'What was taken'),
      VOCABULARY.case_kinds.map((kind, index) => h('label', { class: 'choice' },
        h('input', { type: 'radio', name: 'kind', value: kind, id: `open-kind-${kind}`, checked: index === 0 }), label(CASE_KINDS, kind)))),
    field('open-account', 'Account e-mail', h('input', { type: 'email', id: 'open-account', class: 'dup-term', autocomplete: 'off', required: true }),
      'The account that was taken over'),
    h('div', { class: 'inline-fields' },
      field('open-name', 'Customer name', h('input', { type: 'text', id: 'open-name', autocomplete: 'off', required: true })),
      field('open-contact', 'Contact e-mail', h('input', { type: 'email', id: 'open-contact', autocomplete: 'off', required: true }),
        'Where the customer reads our mail; never the thief\'s address')),
    field('open-phone', 'Phone', h('input', { type: 'tel', id: 'open-phone', autocomplete: 'off', placeholder: '+8613800138000' }),
      'Optional: the customer\'s own number, + and 8 to 15 digits, no spaces'),
    // Not known unless the agent picks one: the customer's browser then decides their status page, mail goes in English.
    field('open-language', 'Customer\'s language', h('select', { id: 'open-language' },
      h('option', { value: '', selected: true }, 'Not known'),
      VOCABULARY.languages.map((value) => h('option', { value }, label(LANGUAGES, value))))),
    h('fieldset', {}, h('legend', {}, 'What the thief changed'),
      Object.entries(FACTS).map(([key, words]) => h('label', { class: 'choice' },
        h('input', { type: 'checkbox', id: `open-fact-${key}`, dataset: { fact: key } }), words))),
    field('open-rescue', 'Rescue address the thief added', h('input', { type: 'email', id: 'open-rescue', autocomplete: 'off' }),
      'If known; nothing is ever sent to it'),
    devices,
    h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', id: 'open-add-device', onclick: () => {
      const count = devices.children.length;
      if (count < 10) devices.append(deviceRow(count));
      devices.lastElementChild.querySelector('input').focus();
    } }, 'Add another device')),
    field('open-summary', 'What happened', h('textarea', { id: 'open-summary', rows: 4, maxlength: 5000 })),
    duplicates, error,
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'open-submit' }, 'Open the case'),
      h('a', { href: '#/', class: 'button secondary' }, 'Cancel')));
  form.addEventListener('change', (event) => { if (event.target.classList.contains('dup-term')) checkDuplicates(form, duplicates); });
  form.addEventListener('submit', (event) => { event.preventDefault(); submit(form, error); });
  replace(byId('open-body'), form);
  byId('open-title').textContent = 'Open a case';
  byId('open-title').focus();
}

const value = (form, id) => form.querySelector(`#${id}`)?.value.trim() ?? '';

/** The devices of a form's device rows, those with neither serial nor IMEI left out. */
export function devicesOf(form) {
  return [...form.querySelectorAll('.device-row')].map((row) => {
    const [serial, imei, model] = [...row.querySelectorAll('input')].map((i) => i.value.trim());
    return { serial: serial || null, imei: imei.replace(/[\s-]/g, '') || null, model: model || null };
  }).filter((d) => d.serial || d.imei);
}

// Only the newest check may draw.
let checkGeneration = 0;

/** The open cases the queue's search finds for the account e-mail, serials and IMEIs typed so far. */
async function checkDuplicates(form, region) {
  const mine = ++checkGeneration;
  const terms = [value(form, 'open-account'), ...devicesOf(form).flatMap((d) => [d.serial, d.imei])].filter(Boolean);
  if (!terms.length) { replace(region); return; }
  const found = new Map();
  try {
    for (const term of terms) {
      const { data } = await app.api.call('GET', `/api/v1/cases?q=${encodeURIComponent(term)}&limit=50`);
      for (const item of data.items) if (!FINISHED_STATES.includes(item.state) && item.state !== 'merged') found.set(item.case_number, item);
    }
  } catch {
    return;  // a search that fails leaves the warning as it was; opening is never refused for duplicates
  }
  if (mine !== checkGeneration) return;
  replace(region, found.size === 0 ? null : duplicateList('Open cases for the same account or device', [...found.values()]));
}

function duplicateList(title, items) {
  return h('div', { class: 'duplicates', id: 'duplicate-list' },
    h('p', {}, h('strong', {}, title), ': check whether this caller already has a case before opening another.'),
    h('ul', { class: 'plain' }, items.map((item) => h('li', { dataset: { case: item.case_number } },
      h('a', { href: `#/cases/${item.case_number}`, class: 'mono' }, groupCaseNumber(item.case_number)), ` — ${label(STATES, item.state)}`,
      item.account_email ? h('span', { class: 'muted' }, ` · ${item.account_email}`) : null))));
}

async function submit(form, error) {
  show(error, false);
  const facts = {};
  for (const box of form.querySelectorAll('input[data-fact]')) facts[box.dataset.fact] = box.checked;
  const rescue = value(form, 'open-rescue');
  if (rescue) facts.rescue_email = rescue;
  const body = {
    kind: form.querySelector('input[name="kind"]:checked').value,
    account_email: value(form, 'open-account'),
    customer: { name: value(form, 'open-name'), contact_email: value(form, 'open-contact') },
    facts, devices: devicesOf(form), summary: value(form, 'open-summary'),
  };
  const phone = value(form, 'open-phone');
  if (phone) body.customer.phone = phone;
  const language = value(form, 'open-language');
  if (language) body.language = language;
  await whileBusy(form, async () => {
    try {
      const { data } = await app.api.call('POST', '/api/v1/cases', { json: body });
      opened(data);
    } catch (e) {
      const words = e instanceof ApiError && e.errors.length
        ? `Check these: ${fieldProblemWords(e.errors)}`
        : String(e?.message ?? e);
      announce(error, words, 'error');
      error.focus();
    }
  });
}

async function copy(text, button, what) {
  try {
    await navigator.clipboard.writeText(text);
    announce(byId('opened-copied'), `${what} copied.`, 'ok');
  } catch {
    // No clipboard (permissions): select the text so Ctrl+C works.
    const range = document.createRange();
    range.selectNodeContents(button.previousElementSibling);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    announce(byId('opened-copied'), `${what} selected: press Ctrl+C to copy.`, 'info');
  }
}

/** The case number and access code, once, for reading aloud; then the duplicates the service found. */
function opened(data) {
  const code = data.access_code;
  const number = groupCaseNumber(data.case_number);
  byId('open-title').textContent = 'Case opened';
  replace(byId('open-body'),
    h('p', { class: 'message', dataset: { kind: 'warn' } },
      'Read both to the customer now. The access code is shown only this once: it cannot be shown again (a new one can be issued).'),
    h('dl', { class: 'readout' },
      h('dt', {}, 'Case number'),
      h('dd', {}, h('span', { class: 'mono big', id: 'opened-number' }, number), ' ',
        h('button', { type: 'button', class: 'secondary', id: 'copy-number', onclick: (e) => copy(data.case_number, e.target, 'Case number') }, 'Copy')),
      h('dt', {}, 'Access code'),
      h('dd', {}, h('span', { class: 'mono big', id: 'opened-code' }, code.replace(/-/g, ' ')), ' ',
        h('button', { type: 'button', class: 'secondary', id: 'copy-code', onclick: (e) => copy(code, e.target, 'Access code') }, 'Copy'))),
    h('p', { id: 'opened-copied', class: 'message', role: 'status', hidden: true }),
    data.possible_duplicates?.length ? duplicateList('Possible duplicates', data.possible_duplicates) : null,
    h('p', {}, h('a', { href: `#/cases/${data.case_number}`, id: 'opened-link' }, 'Go to the case')));
  byId('open-title').focus();
}
