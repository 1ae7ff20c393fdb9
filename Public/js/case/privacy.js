// Personal data has an end: an admin erases a finished case's personal data (after a confirmation naming what goes and
// what stays) or exports everything held about the customer as a ZIP (case.json and the documents).
import { byId, h, replace } from '../dom.js';
import { groupCaseNumber } from '../identifiers.js';
import { FINISHED_STATES } from '../labels.js';
import { app, change, current, problemWords, say } from './common.js';

/** What erasure removes, as the confirmation names it (the service's CaseErasure steps). */
export const ERASED_ITEMS = [
  'the customer’s name and contact address',
  'the account address and the rescue address',
  'the devices (serials and IMEIs) and the summary',
  'every note’s text',
  'the evidence details and summaries, and every document’s content',
  'the addresses and bodies of the messages sent, and received mail',
  'the addresses and reasons written on the timeline, and the search terms',
];

/** The panel: shown to admins on a finished case; on an erased case, when it was erased. */
export function privacyPanel(c) {
  if (c.erased_at) {
    return h('p', { id: 'erased-banner', class: 'message', dataset: { kind: 'info' } },
      `The customer’s personal data was erased on ${new Date(c.erased_at).toLocaleString()}. `
        + 'The case keeps its number, states, times and actors; its timeline still verifies.');
  }
  if (!FINISHED_STATES.includes(c.state)) return null;
  const buttons = [];
  if (app.can('case.export')) {
    buttons.push(h('button', { type: 'button', class: 'secondary', id: 'export-case', onclick: exportCase }, 'Export personal data (ZIP)'));
  }
  if (app.can('case.erase')) {
    buttons.push(h('button', { type: 'button', class: 'danger', id: 'erase-case', onclick: openErasure }, 'Erase personal data…'));
  }
  if (!buttons.length) return null;
  return [h('div', { class: 'actions' }, buttons), h('div', { id: 'privacy-form-slot' })];
}

function openErasure() {
  const slot = byId('privacy-form-slot');
  const error = h('p', { class: 'field-error', role: 'alert', hidden: true });
  const form = h('form', { id: 'erasure-form', class: 'action-form', novalidate: true },
    h('h3', {}, `Erase the personal data of case ${groupCaseNumber(current.number)}`),
    h('p', {}, 'This cannot be undone. It erases:'),
    h('ul', { id: 'erasure-items' }, ERASED_ITEMS.map((item) => h('li', {}, item))),
    h('p', { class: 'muted' }, 'What stays: the case number, kind, path, states, times and who acted; every timeline event (its hash chain and the signed checkpoints still verify).'),
    h('label', { for: 'erasure-reason' }, 'Reason (required, kept in the admin log)'),
    h('textarea', { id: 'erasure-reason', rows: 2, maxlength: 2000 }),
    error,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'danger', id: 'erasure-confirm' }, 'Confirm: erase'),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Cancel')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const reason = form.querySelector('#erasure-reason').value.trim();
    if (!reason) {
      error.textContent = 'Say why (a data-subject request and its reference).';
      error.hidden = false;
      form.querySelector('#erasure-reason').focus();
      return;
    }
    change(form, `/api/v1/cases/${current.number}/erasure`, { reason }, 'The customer’s personal data was erased.');
  });
  replace(slot, form);
  form.querySelector('textarea').focus();
}

async function exportCase() {
  try {
    const response = await fetch(`/api/v1/cases/${current.number}/export`, { credentials: 'same-origin' });
    if (!response.ok) throw Object.assign(new Error('export'), { status: response.status });
    const blob = await response.blob();
    const link = h('a', { href: URL.createObjectURL(blob), download: `case-${current.number}.zip`, id: 'export-link', class: 'secondary' }, 'Download the export');
    replace(byId('privacy-form-slot'), h('p', {}, 'The export is ready: ', link));
    say('The export is ready (recorded in the admin log).', 'ok');
  } catch (error) {
    say(problemWords(error));
  }
}
