// The Actions panel: the workflow's actions this agent may take now (allowed_actions), each asking for what the
// API needs; freeze and lift; take the case or hand it to a colleague whose tier can hold it. Every button is a word
// of allowed_actions: a finished case offers none of the work it would refuse.
import { byId, h, replace, show } from '../dom.js';
import { ACTIONS, TIERS, label, tierCovers } from '../labels.js';
import { openAccessCode } from './access-code.js';
import { allows, app, change, current, problemWords } from './common.js';
import { openMerge, openUnmerge } from './merge.js';

// MARK: Actions

export function actionsPanel(c) {
  // The transitions first (the words with an ACTIONS entry), then the case's other work.
  const buttons = c.allowed_actions.filter((action) => ACTIONS[action]).map((action) => h('button', {
    type: 'button', class: action === 'reject' ? 'danger' : null, dataset: { action }, onclick: () => openAction(action),
  }, label(ACTIONS, action)));
  const mine = c.assignee?.id === app.agent.id;
  if (app.can('case.assign') && allows('assign') && tierCovers(app.agent.tier, c.tier)) {
    if (!mine) buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'take' }, onclick: takeCase }, 'Take this case'));
    buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'hand-over' }, onclick: openHandOver }, 'Hand over…'));
  }
  if (app.can('case.freeze') && allows('freeze')) {
    buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'freeze' }, onclick: () => openAction('freeze') }, 'Freeze account'));
  }
  if (app.can('case.merge') && allows('merge')) {
    buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'merge' }, onclick: openMerge }, 'Merge into another case…'));
  }
  if (app.can('case.merge') && allows('unmerge')) {
    buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'unmerge' }, onclick: openUnmerge }, 'Undo the merge…'));
  }
  if (app.can('case.access_code') && allows('reissue_access_code')) {
    buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'access-code' }, onclick: openAccessCode }, 'New access code…'));
  }
  if (app.can('case.unfreeze') && allows('unfreeze')) {
    buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'unfreeze' }, onclick: () => openAction('unfreeze') }, 'Lift the freeze'));
  }
  return [
    buttons.length ? h('div', { class: 'actions', id: 'action-buttons' }, buttons) : h('p', { class: 'muted', id: 'action-buttons' }, 'Nothing for your tier to do on this case now.'),
    h('div', { id: 'action-form-slot' }),
  ];
}

// The case's own actions beside the workflow's: freeze and lift it (no reason field, their own paths).
const CASE_ACTIONS = {
  freeze: { label: 'Freeze account', help: 'Stop purchases and cloud operations on the account while the case is open.', path: 'actions/freeze' },
  unfreeze: { label: 'Lift the freeze', help: 'Allow purchases and cloud operations on the account again. Finishing the case lifts it by itself.', path: 'actions/unfreeze' },
};

export function openAction(action) {
  const info = CASE_ACTIONS[action] ?? ACTIONS[action] ?? { label: action, help: '' };
  const fields = [];
  if (!CASE_ACTIONS[action]) {
    fields.push(h('label', { for: 'action-reason' }, info.reason ? 'Reason (required)' : 'Reason (optional)',
      h('span', { class: 'hint' }, 'Recorded on the timeline.')),
    h('textarea', { id: 'action-reason', rows: 3, maxlength: 2000, required: info.reason ? true : null }));
  }
  const error = h('p', { class: 'field-error', id: 'action-error', role: 'alert', hidden: true });
  const form = h('form', { id: 'action-form', class: 'action-form', novalidate: true, dataset: { action } },
    h('h3', {}, info.label),
    h('p', { class: 'muted' }, info.help),
    fields, error,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'action-confirm' }, `Confirm: ${info.label}`),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(byId('action-form-slot')) }, 'Cancel')));
  form.addEventListener('submit', (event) => { event.preventDefault(); submitAction(form, action, info, error); });
  replace(byId('action-form-slot'), form);
  (form.querySelector('select, textarea') ?? byId('action-confirm')).focus();
}

async function submitAction(form, action, info, error) {
  const reason = form.querySelector('#action-reason')?.value.trim() ?? '';
  if (info.reason && !reason) {
    error.textContent = 'Give a reason: it is recorded on the timeline and may be shown to the customer.';
    show(error);
    form.querySelector('#action-reason').focus();
    return;
  }
  const body = { action };
  if (reason) body.reason = reason;
  const own = CASE_ACTIONS[action];
  const path = `/api/v1/cases/${current.number}/${own ? own.path : 'transitions'}`;
  await change(form, path, own ? {} : body, `${info.label}: done.`);
}

/** The hand-over form: colleagues whose tier can hold the case (the service checks it again). */
async function openHandOver() {
  const slot = byId('action-form-slot');
  replace(slot, h('p', { class: 'muted' }, 'Loading colleagues…'));
  let agents;
  try {
    ({ data: { items: agents } } = await app.api.call('GET', `/api/v1/agents?tier=${current.data.tier}`));
  } catch (error) {
    replace(slot, h('p', { class: 'field-error', role: 'alert' }, problemWords(error)));
    return;
  }
  const others = agents.filter((agent) => agent.id !== app.agent.id && agent.id !== current.data.assignee?.id);
  if (others.length === 0) {
    replace(slot, h('p', { class: 'muted', role: 'status' }, `Nobody else of ${label(TIERS, current.data.tier)} or above can take this case.`));
    return;
  }
  const form = h('form', { id: 'action-form', class: 'action-form', novalidate: true, dataset: { action: 'hand-over' } },
    h('h3', {}, 'Hand over'),
    h('label', { for: 'hand-over-agent' }, 'To', h('span', { class: 'hint' }, `Colleagues of ${label(TIERS, current.data.tier)} or above`)),
    h('select', { id: 'hand-over-agent' }, others.map((agent) => h('option', { value: agent.id }, `${agent.name} (${label(TIERS, agent.tier)})`))),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'action-confirm' }, 'Hand over'),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Cancel')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const select = form.querySelector('#hand-over-agent');
    const name = select.selectedOptions[0].textContent;
    change(form, `/api/v1/cases/${current.number}/assign`, { agent_id: select.value }, `Handed over to ${name}.`);
  });
  replace(slot, form);
  form.querySelector('select').focus();
}

function takeCase(event) {
  change(event.target.closest('div'), `/api/v1/cases/${current.number}/assign`, { agent_id: app.agent.id }, 'The case is yours.');
}
