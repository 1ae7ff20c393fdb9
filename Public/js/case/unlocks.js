// The unlock checklist: every step the thief's changes need undone; engineering records each on its own, and each
// recorded step waits out the cooling-off (RECLAIM_UNLOCK_DELAY) before the service does it.
import { reload } from '../case.js';
import { byId, h, replace } from '../dom.js';
import { formatDateTime, timeLeft } from '../format.js';
import { FINISHED_STATES, UNLOCKS, label, outstandingUnlocks, schedulableUnlocks } from '../labels.js';
import { allows, change, current } from './common.js';

// The one pending look-again: when the soonest scheduled step falls due, the case is read again to show it done.
let dueTimer = null;

// MARK: Unlock checklist

/** Every step the thief's changes need undone, done or not; engineering records each on its own. */
export function unlockChecklist(c) {
  const done = new Set(c.unlocks.done);
  const scheduled = new Map((c.unlocks.scheduled ?? []).map((item) => [item.step, item.effective_at]));
  const canRecord = allows('record_unlock');
  const outstanding = outstandingUnlocks(c);
  const finished = FINISHED_STATES.includes(c.state);
  lookAgainWhenDue(current?.number, [...scheduled.values()]);
  return [
    h('p', { id: 'unlocks-summary', class: outstanding.length ? null : 'yes' }, summaryWords(c, outstanding, finished)),
    scheduled.size ? h('p', { id: 'unlocks-cooling', class: 'hint' },
      'Each recorded step waits out the cooling-off: every address on file for the account has been told, and may stop it. '
        + 'The service does the step when its time comes.') : null,
    h('ul', { class: 'plain checklist', id: 'unlock-list' }, schedulableUnlocks(c).map((step) => h('li', {
      dataset: { step, done: String(done.has(step)), scheduled: String(scheduled.has(step)) },
    },
      done.has(step) ? [h('span', { class: 'yes' }, '✓ Done:'), ' ']
        : scheduled.has(step) ? [h('span', { class: 'no' }, 'Scheduled:'), ' ']
          : finished ? [h('span', { class: 'no' }, 'Not done:'), ' '] : null,
      stepWords(step, c),
      scheduled.has(step) ? [' ', h('span', { class: 'muted unlock-when' },
        `takes effect ${formatDateTime(scheduled.get(step))} (${timeLeft(scheduled.get(step)).text.replace('overdue by', 'due')})`)] : null,
      canRecord && scheduled.has(step)
        ? [' ', h('button', { type: 'button', class: 'secondary small', dataset: { cancelUnlock: step }, onclick: () => openCancel(step) }, 'Cancel')]
        : null,
      canRecord && !done.has(step) && !scheduled.has(step)
        ? [' ', h('button', { type: 'button', class: 'secondary small', dataset: { unlock: step }, onclick: () => openUnlock(step) }, 'Schedule…')]
        : null))),
    h('div', { id: 'unlock-form-slot' }),
  ];
}

/** Reads the case again shortly after its soonest scheduled step falls due (if it is still the case on screen). */
function lookAgainWhenDue(number, times) {
  clearTimeout(dueTimer);
  dueTimer = null;
  if (!times.length) return;
  const soonest = Math.min(...times.map((iso) => new Date(iso).getTime()));
  const wait = Math.max(1000, soonest - Date.now() + 1500);
  if (wait > 2 ** 31 - 1) return;  // beyond setTimeout's reach: the next visit shows it
  dueTimer = setTimeout(() => { if (current?.number === number) reload(); }, wait);
}

function openCancel(step) {
  const slot = byId('unlock-form-slot');
  const form = h('form', { id: 'unlock-cancel-form', class: 'action-form', novalidate: true, dataset: { step } },
    h('h3', {}, `Cancel: ${UNLOCKS[step]}`),
    h('label', { for: 'unlock-cancel-reason' }, 'Reason (required)', h('span', { class: 'hint' }, 'Recorded on the timeline; the case stays frozen.')),
    h('textarea', { id: 'unlock-cancel-reason', rows: 2, maxlength: 2000, required: true }),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'unlock-cancel-confirm' }, 'Cancel the scheduled step'),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Keep it')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const reason = form.querySelector('#unlock-cancel-reason').value.trim();
    change(form, `/api/v1/cases/${current.number}/unlocks/${step}`, { reason }, `${UNLOCKS[step]}: cancelled.`, 'DELETE');
  });
  replace(slot, form);
  form.querySelector('textarea').focus();
}

// A finished case is not completed again: it says what became of its steps instead (a merged one's are followed on
// the case it went into).
function summaryWords(c, outstanding, finished) {
  if (c.state === 'merged') return 'Merged: these steps are followed on the case it went into.';
  if (finished) {
    if (!outstanding.length) return '✓ Every step was done.';
    return c.state === 'rejected' ? 'Rejected: nothing is unlocked on this case.' : 'Finished: no further step is taken on this case.';
  }
  if (!c.unlocks.required.length) {
    return outstanding.length ? 'Nothing the thief changed is known to need undoing: schedule the step that was needed; the case can be completed once one is done.'
      : '✓ A step is done: the case can be completed.';
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
    change(form, `/api/v1/cases/${current.number}/unlocks`, reason ? { step, reason } : { step },
      `${UNLOCKS[step]}: scheduled. Every address on file has been told; the service does it when the cooling-off ends.`);
  });
  replace(slot, form);
  form.querySelector('textarea').focus();
}
