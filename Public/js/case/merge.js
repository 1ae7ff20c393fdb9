// Merge a duplicate into another open case on the same account, and undo it (opened from the Actions panel).
import { byId, h, replace, show } from '../dom.js';
import { groupCaseNumber } from '../identifiers.js';
import { FINISHED_STATES, STATES, label } from '../labels.js';
import { app, change, current } from './common.js';

// MARK: Merge

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
  const form = h('form', { id: 'action-form', class: 'action-form', novalidate: true, dataset: { action: 'merge' } },
    h('h3', {}, 'Merge into another case'),
    h('p', { class: 'muted' }, 'This case ends as merged; its evidence and notes count and show on the other one. It can be undone.'),
    others.length ? h('fieldset', { id: 'merge-choices' }, h('legend', {}, 'Open cases for the same account'),
      others.map((item) => h('label', { class: 'choice' },
        h('input', { type: 'radio', name: 'merge-into', value: item.case_number, dataset: { case: item.case_number } }),
        `${groupCaseNumber(item.case_number)} — ${label(STATES, item.state)}`))) : null,
    h('label', { for: 'merge-number' }, others.length ? 'Or type its case number' : 'Case number to merge into'),
    h('input', { type: 'text', id: 'merge-number', inputmode: 'numeric', autocomplete: 'off' }),
    h('label', { for: 'merge-reason' }, 'Reason (optional)'),
    h('textarea', { id: 'merge-reason', rows: 2, maxlength: 2000 }),
    error,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'action-confirm' }, 'Confirm: merge'),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Cancel')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const typed = form.querySelector('#merge-number').value.replace(/[\s-]/g, '');
    const into = typed || form.querySelector('input[name="merge-into"]:checked')?.value;
    if (!into) { error.textContent = 'Choose the case to merge into, or type its number.'; show(error); return; }
    const reason = form.querySelector('#merge-reason').value.trim();
    change(form, `/api/v1/cases/${current.number}/merge`, reason ? { into, reason } : { into }, `Merged into case ${groupCaseNumber(into)}.`);
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
