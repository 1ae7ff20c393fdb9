// Editing a case (PATCH /api/v1/cases/{n}, tier 1+, open cases): every field an agent may correct, filled with what
// the case says now. Only the fields changed are sent, as a merge patch with If-Match; the service records one
// case_corrected event naming them, tells the previous contact address of a new one, and refuses a contact address
// that reaches the rescue address's mailbox (422) or a change of path once engineering has the case (409).
import { byId, h, replace } from '../dom.js';
import { FACTS, LANGUAGES, label } from '../labels.js';
import { deviceRow, devicesOf, field } from '../open-case.js';
import { VOCABULARY } from '../vocabulary.js';
import { change, current, say } from './common.js';

// MARK: Edit case

/** Opens the edit form in its slot, filled from the case on screen. */
export function openEdit() {
  const c = current.data;
  const slot = byId('edit-form-slot');
  const devices = h('div', { id: 'edit-devices' },
    (c.devices.length ? c.devices : [{}]).map((device, index) => deviceRow(index, 'edit', device)));
  const summary = h('textarea', { id: 'edit-summary', rows: 4, maxlength: 5000 });
  summary.value = c.summary ?? '';
  const form = h('form', { id: 'edit-form', class: 'action-form', novalidate: true, 'aria-labelledby': 'edit-title' },
    h('h2', { id: 'edit-title' }, 'Edit case'),
    h('p', { class: 'muted' }, 'Correct what was taken down wrong. Only what you change is sent; the timeline records which fields changed.'),
    h('div', { class: 'inline-fields' },
      field('edit-name', 'Customer name', h('input', { type: 'text', id: 'edit-name', autocomplete: 'off', value: c.customer?.name ?? '' })),
      field('edit-contact', 'Contact e-mail', h('input', { type: 'email', id: 'edit-contact', autocomplete: 'off', value: c.customer?.contact_email ?? '' }),
        'The customer\'s own address; the previous one is told of the change'),
      field('edit-phone', 'Phone', h('input', { type: 'tel', id: 'edit-phone', autocomplete: 'off', value: c.customer?.phone ?? '' }),
        'E.164: + and 8 to 15 digits; empty: none on file')),
    field('edit-language', 'Customer\'s language', h('select', { id: 'edit-language' },
      h('option', { value: '', selected: c.language == null }, 'Not known'),
      VOCABULARY.languages.map((value) => h('option', { value, selected: c.language === value }, label(LANGUAGES, value))))),
    h('fieldset', {}, h('legend', {}, 'What the thief changed'),
      Object.entries(FACTS).map(([key, words]) => h('label', { class: 'choice' },
        h('input', { type: 'checkbox', id: `edit-fact-${key}`, dataset: { fact: key }, checked: Boolean(c.facts?.[key]) }), words))),
    field('edit-rescue', 'Rescue address the thief added', h('input', { type: 'email', id: 'edit-rescue', autocomplete: 'off', value: c.facts?.rescue_email ?? '' }),
      'Empty: not known. Nothing is ever sent to it'),
    h('p', { class: 'hint' }, 'Devices: clear a device\'s serial and IMEI to remove it.'),
    devices,
    h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', id: 'edit-add-device', onclick: () => {
      const count = devices.children.length;
      if (count < 10) devices.append(deviceRow(count, 'edit'));
      devices.lastElementChild.querySelector('input').focus();
    } }, 'Add another device')),
    field('edit-summary', 'What happened', summary),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'edit-confirm' }, 'Save the corrections'),
      h('button', { type: 'button', class: 'secondary', id: 'edit-cancel', onclick: () => replace(slot) }, 'Cancel')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const patch = correction(form, current.data);
    if (Object.keys(patch).length === 0) {
      say('Nothing to save: the form says what the case already says.', 'info');
      return;
    }
    change(form, `/api/v1/cases/${current.number}`, patch, 'Case corrected: the timeline records what changed.', 'PATCH');
  });
  replace(slot, form);
  form.querySelector('#edit-name').focus();
}

const text = (form, id) => form.querySelector(`#${id}`).value.trim();
const sameDevices = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** The merge patch from the form: each member only when it differs from what the case says (exported for the
 *  module test). */
export function correction(form, c) {
  const patch = {};
  const customer = {};
  if (text(form, 'edit-name') !== (c.customer?.name ?? '')) customer.name = text(form, 'edit-name');
  if (text(form, 'edit-contact') !== (c.customer?.contact_email ?? '')) customer.contact_email = text(form, 'edit-contact');
  const phone = text(form, 'edit-phone') || null;
  if (phone !== (c.customer?.phone ?? null)) customer.phone = phone;
  if (Object.keys(customer).length) patch.customer = customer;
  const language = text(form, 'edit-language') || null;
  if (language !== (c.language ?? null)) patch.language = language;
  const facts = {};
  for (const box of form.querySelectorAll('input[data-fact]')) {
    if (box.checked !== Boolean(c.facts?.[box.dataset.fact])) facts[box.dataset.fact] = box.checked;
  }
  const rescue = text(form, 'edit-rescue') || null;
  if (rescue !== (c.facts?.rescue_email ?? null)) facts.rescue_email = rescue;
  if (Object.keys(facts).length) patch.facts = facts;
  const devices = devicesOf(form);
  const before = c.devices.map((d) => ({ serial: d.serial ?? null, imei: d.imei ?? null, model: d.model ?? null }));
  if (!sameDevices(devices, before)) patch.devices = devices;
  if (text(form, 'edit-summary') !== (c.summary ?? '')) patch.summary = text(form, 'edit-summary');
  return patch;
}
