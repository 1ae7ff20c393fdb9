// The risk panel (api.md v1.2, "The thief on the phone"): each signal raised on the case, what the service noticed and
// links to the other cases it names; flag the case (any agent) and clear its signals with a reason (tier 3 and
// engineering). While a signal stands the service refuses approve and unlock steps; whoever clears may not then do
// them (four eyes). Agents only: the customer's page never shows a signal.
import { byId, h, replace, show } from '../dom.js';
import { formatDateTime } from '../format.js';
import { groupCaseNumber } from '../identifiers.js';
import { RISK_SIGNALS, label } from '../labels.js';
import { reload } from '../case.js';
import { actorWords, app, current, say, send } from './common.js';
import { loadTimeline } from './timeline.js';

/** The panel's body: the signals (uncleared first), then the flag and clear buttons this agent may use. */
export function riskPanel(c) {
  const signals = c.risk_signals ?? [];
  const standing = signals.filter((s) => !s.cleared_at);
  const cleared = signals.filter((s) => s.cleared_at);
  return h('div', { id: 'risk-body' },
    standing.length
      ? h('p', { class: 'message', dataset: { kind: 'warn' }, id: 'risk-warning' },
        'At risk: approve and unlock steps are refused until a tier 3 or engineering agent clears these signals; whoever clears them does not then approve or unlock.')
      : h('p', { class: 'muted', id: 'risk-none' }, signals.length ? 'Every signal was cleared.' : 'No risk signal.'),
    standing.length ? h('ul', { class: 'plain risk-signals', id: 'risk-standing' }, standing.map(signalItem)) : null,
    cleared.length ? h('details', { id: 'risk-cleared' }, h('summary', {}, `Cleared (${cleared.length})`),
      h('ul', { class: 'plain risk-signals' }, cleared.map(signalItem))) : null,
    h('div', { class: 'actions' },
      app.can('case.flag') ? h('button', { type: 'button', class: 'secondary', id: 'risk-flag', onclick: () => openReason('flag') }, 'Flag…') : null,
      standing.length && app.can('case.clear_risk')
        ? h('button', { type: 'button', class: 'secondary', id: 'risk-clear', onclick: () => openReason('clear') }, 'Clear with a reason…') : null),
    h('div', { id: 'risk-form-slot' }));
}

function signalItem(s) {
  return h('li', { dataset: { signal: s.signal }, class: 'risk-signal' },
    h('strong', {}, label(RISK_SIGNALS, s.signal)),
    s.detail ? h('span', { class: 'block' }, s.detail) : null,
    s.other_cases?.length ? h('span', { class: 'block' }, 'Other cases: ',
      s.other_cases.map((n, i) => [i ? ', ' : '', h('a', { href: `#/cases/${n}`, class: 'mono risk-other-case' }, groupCaseNumber(n))])) : null,
    h('span', { class: 'muted block' }, `Raised ${formatDateTime(s.raised_at)} by ${actorWords(s.raised_by)}`),
    s.cleared_at ? h('span', { class: 'muted block' },
      `Cleared ${formatDateTime(s.cleared_at)} by ${actorWords(s.cleared_by)}${s.clear_reason ? ` — “${s.clear_reason}”` : ''}`) : null);
}

const FORMS = {
  flag: {
    title: 'Flag this case', path: 'flags', button: 'Confirm: flag', done: 'Flagged: approve and unlock steps wait until tier 3 clears it.',
    hint: 'What does not hold: suspected impersonation, a caller under pressure, a story that changes. Agents only; recorded on the timeline.',
  },
  clear: {
    title: 'Clear the risk signals', path: 'risk/clear', button: 'Confirm: clear', done: 'Cleared. A second agent approves the case and records its unlock steps.',
    hint: 'What you checked (for example: called the number on file, the owner confirmed). You then may not approve this case or record its unlock steps.',
  },
};

function openReason(kind) {
  const words = FORMS[kind];
  const slot = byId('risk-form-slot');
  const error = h('p', { class: 'field-error', id: 'risk-error', role: 'alert', hidden: true });
  const reason = h('textarea', { id: 'risk-reason', rows: 3, maxlength: 2000, 'aria-describedby': 'risk-reason-hint' });
  const form = h('form', { id: 'risk-form', class: 'action-form', novalidate: true, dataset: { kind } },
    h('h3', {}, words.title),
    h('div', { class: 'field' },
      h('label', { for: 'risk-reason' }, 'Reason (required)', h('span', { class: 'hint', id: 'risk-reason-hint' }, words.hint)), reason),
    error,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'risk-confirm' }, words.button),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Cancel')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = reason.value.trim();
    if (!text) {
      error.textContent = 'Say why.';
      show(error);
      reason.focus();
      return;
    }
    await send(form, error, async () => {
      await app.api.call('POST', `/api/v1/cases/${current.number}/${words.path}`, { json: { reason: text } });
    }, async () => {
      await reload();
      say(words.done, 'ok');
      loadTimeline();
    });
  });
  replace(slot, form);
  reason.focus();
}
