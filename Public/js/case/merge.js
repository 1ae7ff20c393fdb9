// Merge a duplicate into another open case on the same account, and undo it (opened from the Actions panel).
import { byId, h, replace, show } from '../dom.js';
import { groupCaseNumber } from '../identifiers.js';
import { FINISHED_STATES, STATES, label } from '../labels.js';
import { app, change, current } from './common.js';

// MARK: Merge

/** The customer fields in which two cases differ, as the service compares them (CaseMerge.differingFields): names
 *  folded for case, spacing, accents and width; contact addresses whole, ignoring case. The service decides (409
 *  different_customer); this only warns before it has to. */
export function differingCustomer(one, other) {
  const name = (text) => (text ?? '').normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().split(/\s+/).filter(Boolean).join(' ');
  const address = (text) => (text ?? '').trim().toLowerCase();
  const fields = [];
  if (name(one?.name) !== name(other?.name)) fields.push('customer.name');
  if (address(one?.contact_email) !== address(other?.contact_email)) fields.push('customer.contact_email');
  return fields;
}

const CUSTOMER_FIELDS = { 'customer.name': ['Name', 'name'], 'customer.contact_email': ['Contact address', 'contact_email'] };

/** The warning that two cases look like different people: what differs, side by side, and the confirmation the
 *  service asks for (`same_customer_confirmed`). */
function customerWarning(fields, here, there, number) {
  return h('div', { id: 'merge-warning', class: 'merge-warning', role: 'alert' },
    h('p', {}, h('strong', {}, 'These cases look like different people.'),
      ` Merging shows this customer the status of case ${groupCaseNumber(number)}. Merge only if both are the same person.`),
    h('ul', {}, fields.map((field) => {
      const [words, key] = CUSTOMER_FIELDS[field] ?? [field, null];
      return h('li', { dataset: { field } }, `${words}: “${here?.[key] ?? ''}” on this case, “${there?.[key] ?? ''}” on ${groupCaseNumber(number)}`);
    })),
    h('label', { class: 'choice' }, h('input', { type: 'checkbox', id: 'merge-confirm' }),
      'I have checked that both cases are the same person (say how in the reason)'));
}

/** Merge this duplicate into another open case on the same account: pick it from the open cases found for the
 *  account e-mail, or type its number. */
export async function openMerge() {
  const slot = byId('action-form-slot');
  replace(slot, h('p', { class: 'muted' }, 'Looking for the other cases…'));
  let others = [];
  try {
    const { data } = await app.api.call('GET', `/api/v1/cases?q=${encodeURIComponent(current.data.account_email)}&limit=50`);
    others = data.items.filter((item) => item.case_number !== current.number && !FINISHED_STATES.includes(item.state));
  } catch {
    others = [];  // the number can still be typed
  }
  const error = h('p', { class: 'field-error', role: 'alert', hidden: true });
  const warningSlot = h('div', { id: 'merge-warning-slot' });
  const form = h('form', { id: 'action-form', class: 'action-form', novalidate: true, dataset: { action: 'merge' } },
    h('h3', {}, 'Merge into another case'),
    h('p', { class: 'muted' }, 'This case ends as merged; its evidence and notes count and show on the other one. It can be undone.'),
    others.length ? h('fieldset', { id: 'merge-choices' }, h('legend', {}, 'Open cases for the same account'),
      others.map((item) => h('label', { class: 'choice' },
        h('input', { type: 'radio', name: 'merge-into', value: item.case_number, dataset: { case: item.case_number } }),
        `${groupCaseNumber(item.case_number)} — ${label(STATES, item.state)}`))) : null,
    h('label', { for: 'merge-number' }, others.length ? 'Or type its case number' : 'Case number to merge into'),
    h('input', { type: 'text', id: 'merge-number', inputmode: 'numeric', autocomplete: 'off' }),
    warningSlot,
    h('label', { for: 'merge-reason' }, 'Reason (optional)'),
    h('textarea', { id: 'merge-reason', rows: 2, maxlength: 2000 }),
    error,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'action-confirm' }, 'Confirm: merge'),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Cancel')));
  const chosen = () => form.querySelector('#merge-number').value.replace(/[\s-]/g, '') || form.querySelector('input[name="merge-into"]:checked')?.value;
  // Whose case the chosen one is: looked up when it is chosen, so the warning shows before anything is sent.
  let checked = { into: null, fields: [] };
  async function checkCustomer(into) {
    if (checked.into === into) return checked.fields;
    let fields = [];
    let there = null;
    try {
      ({ data: there } = await app.api.call('GET', `/api/v1/cases/${into}`));
      fields = differingCustomer(current.data.customer, there.customer);
    } catch {
      fields = [];  // an unknown number: the service says so when the merge is sent
    }
    if (chosen() !== into) return fields;  // another case was chosen meanwhile
    checked = { into, fields };
    form.dataset.customerChecked = into;  // for the browser tests: the look-up for this case is done
    replace(warningSlot, fields.length ? customerWarning(fields, current.data.customer, there?.customer, into) : null);
    return fields;
  }
  form.addEventListener('change', (event) => {
    if (event.target.name === 'merge-into' || event.target.id === 'merge-number') {
      const into = chosen();
      if (/^\d{12}$/.test(into ?? '')) checkCustomer(into);
      else { checked = { into: null, fields: [] }; replace(warningSlot); }
    }
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const into = chosen();
    if (!into) { error.textContent = 'Choose the case to merge into, or type its number.'; show(error); return; }
    const fields = await checkCustomer(into);
    const confirmed = form.querySelector('#merge-confirm')?.checked === true;
    if (fields.length && !confirmed) {
      error.textContent = 'These cases look like different people: tick the confirmation if they are one person, or choose another case.';
      show(error);
      form.querySelector('#merge-confirm')?.focus();
      return;
    }
    const reason = form.querySelector('#merge-reason').value.trim();
    const body = { into, ...(reason ? { reason } : {}), ...(fields.length ? { same_customer_confirmed: true } : {}) };
    change(form, `/api/v1/cases/${current.number}/merge`, body, `Merged into case ${groupCaseNumber(into)}.`);
  });
  replace(slot, form);
  (form.querySelector('input') ?? byId('merge-number')).focus();
}

export function openUnmerge() {
  const slot = byId('action-form-slot');
  const form = h('form', { id: 'action-form', class: 'action-form', novalidate: true, dataset: { action: 'unmerge' } },
    h('h3', {}, 'Undo the merge'),
    h('p', { class: 'muted' }, 'The case returns to where it was; its evidence and notes leave the other case.'),
    h('label', { for: 'unmerge-reason' }, 'Reason (optional)'),
    h('textarea', { id: 'unmerge-reason', rows: 2, maxlength: 2000 }),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'action-confirm' }, 'Confirm: undo the merge'),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Cancel')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const reason = form.querySelector('#unmerge-reason').value.trim();
    change(form, `/api/v1/cases/${current.number}/unmerge`, reason ? { reason } : {}, 'The merge was undone.');
  });
  replace(slot, form);
  form.querySelector('textarea').focus();
}
