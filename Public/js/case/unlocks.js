// The unlock checklist: every step the thief's changes need undone; engineering records each on its own.
import { byId, h, replace } from '../dom.js';
import { FINISHED_STATES, UNLOCKS, label, outstandingUnlocks } from '../labels.js';
import { allows, change, current } from './common.js';

// MARK: Unlock checklist

/** Every step the thief's changes need undone, done or not; engineering records each on its own. */
export function unlockChecklist(c) {
  const done = new Set(c.unlocks.done);
  const canRecord = allows('record_unlock');
  const outstanding = outstandingUnlocks(c);
  const finished = FINISHED_STATES.includes(c.state);
  return [
    h('p', { id: 'unlocks-summary', class: outstanding.length ? null : 'yes' }, summaryWords(c, outstanding, finished)),
    h('ul', { class: 'plain checklist', id: 'unlock-list' }, c.unlocks.required.map((step) => h('li', { dataset: { step, done: String(done.has(step)) } },
      done.has(step) ? [h('span', { class: 'yes' }, '✓ Done:'), ' '] : finished ? [h('span', { class: 'no' }, 'Not done:'), ' '] : null, stepWords(step, c),
      canRecord && !done.has(step)
        ? [' ', h('button', { type: 'button', class: 'secondary small', dataset: { unlock: step }, onclick: () => openUnlock(step) }, 'Record as done')]
        : null))),
    h('div', { id: 'unlock-form-slot' }),
  ];
}

// A finished case is not completed again: it says what became of its steps instead (a merged one's are followed on
// the case it went into).
function summaryWords(c, outstanding, finished) {
  if (c.state === 'merged') return 'Merged: these steps are followed on the case it went into.';
  if (finished) {
    if (!outstanding.length) return '✓ Every step was done.';
    return c.state === 'rejected' ? 'Rejected: nothing is unlocked on this case.' : 'Finished: no further step is taken on this case.';
  }
  return outstanding.length ? `${outstanding.length} of ${c.unlocks.required.length} still to do: the case can be completed when none is left.`
    : '✓ Every step is done: the case can be completed.';
}

/** A step as a thing to do, naming what engineering acts on: the rescue address to remove, when the case knows it. */
function stepWords(step, c) {
  const words = label(UNLOCKS, step);
  if (step !== 'remove_rescue_email') return words;
  const address = c.facts?.rescue_email;
  return address ? [words, ' ', h('span', { class: 'mono', id: 'unlock-rescue-email' }, address), ' from the account']
    : `${words} the thief added (the case does not know it: ask the customer, or correct the case when they tell you)`;
}

function openUnlock(step) {
  const slot = byId('unlock-form-slot');
  const form = h('form', { id: 'unlock-form', class: 'action-form', novalidate: true, dataset: { step } },
    h('h3', {}, UNLOCKS[step]),
    h('label', { for: 'unlock-reason' }, 'Note (optional)', h('span', { class: 'hint' }, 'Recorded on the timeline with the step.')),
    h('textarea', { id: 'unlock-reason', rows: 2, maxlength: 2000 }),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'unlock-confirm' }, `Confirm: ${UNLOCKS[step]}`),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Cancel')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const reason = form.querySelector('#unlock-reason').value.trim();
    change(form, `/api/v1/cases/${current.number}/unlocks`, reason ? { step, reason } : { step }, `${UNLOCKS[step]}: recorded.`);
  });
  replace(slot, form);
  form.querySelector('textarea').focus();
}
