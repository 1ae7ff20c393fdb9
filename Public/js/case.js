// One case: facts, devices, path and due date; the actions this agent may take now (allowed_actions), each
// asking for what the API needs; verification; evidence with previews for tier3+; notes; the messages sent (what,
// to whom, when, never a body); the timeline with
// a mark saying whether its hash chain verifies. Every change sends If-Match with the version shown; a 412
// says someone else changed the case and reloads it.
import { ApiError, MAX_UPLOAD_BYTES } from './api.js';
import { announce, byId, h, replace, show, whileBusy } from './dom.js';
import { formatBytes, formatDateTime, timeLeft, words } from './format.js';
import { groupCaseNumber } from './identifiers.js';
import {
  ACTIONS, DOCUMENT_TYPES, EVIDENCE_TYPES, FACTORS, FACTS, FINISHED_STATES, MESSAGE_KINDS, PATHS, REQUIREMENTS, STATES, TIERS, UNLOCKS, label,
  outstandingUnlocks, tierCovers, unlocksFor,
} from './labels.js';
import { verifyChain } from './chain.js';

let app = null;
let current = null; // { number, data, version }

const message = () => byId('case-message');

function say(text, kind = 'error') {
  announce(message(), text, kind);
  if (text && kind === 'error') message().focus();
}

/** The words for a refused request, field errors included. */
function problemWords(error) {
  if (!(error instanceof ApiError)) return String(error?.message ?? error);
  const fields = error.fieldMessages;
  switch (error.code) {
    case 'verification_failed': {
      const factors = error.problem.factors ?? {};
      const list = Object.entries(factors).map(([name, outcome]) => `${label(FACTORS, name)}: ${outcome}`).join(', ');
      return `Not verified: two of three factors must match${list ? ` (${list})` : ''}.`;
    }
    case 'documents_missing':
      return `Not yet: no accepted document for ${(error.problem.missing ?? []).map((m) => label(REQUIREMENTS, m)).join(', ')}. Review or request the documents first.`;
    case 'documents_pending':
      return 'Not yet: a document is still waiting for review. Accept or reject every document first.';
    case 'unlocks_outstanding':
      return `Not complete yet. Still to do: ${(error.problem.outstanding ?? []).map((u) => label(UNLOCKS, u).toLowerCase()).join('; ')}. Any step you gave with Complete was recorded.`;
    case 'insufficient_tier':
    case 'forbidden':
      return `Not allowed for your tier. ${error.message}`;
    default:
      return fields ? `${error.message} ${fields}` : error.message;
  }
}

// Agents' names by actor ("agent:<uuid>"), from the `actors` the service sends beside events, notes and evidence.
const agentNames = new Map();

function learnNames(data) {
  for (const [actor, name] of Object.entries(data?.actors ?? {})) agentNames.set(actor, name);
}

function actorWords(actor) {
  if (!actor) return '—';
  if (actor === `agent:${app.agent.id}`) return 'you';
  if (actor === 'customer') return 'the customer';
  if (actor === 'system') return 'the service';
  if (agentNames.has(actor)) return agentNames.get(actor);
  const [kind, id] = actor.split(':');
  if (kind === 'agent') return `agent ${id.slice(0, 8)}`;
  if (kind === 'client') return `partner ${id.slice(0, 8)}`;
  return actor;
}

function dl(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(Boolean).map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
}

// MARK: Loading

/** Shows case `number`, loading everything this agent may read. */
export async function showCase(appState, number) {
  app = appState;
  show(byId('case'));
  announce(message(), '');
  await reload(number);
  // A new page for screen readers: start at its heading (unless a message took the focus).
  if (message().hidden) byId('case-title').focus();
}

// Only the newest load may draw (a case opened after another must not be painted over by the first).
let generation = 0;

async function reload(number = current?.number) {
  const mine = ++generation;
  try {
    const { data, etag } = await app.api.call('GET', `/api/v1/cases/${number}`);
    if (mine !== generation) return;
    current = { number, data, version: etag ?? String(data.version) };
    document.title = `Reclaim — case ${number}`;
    render();
  } catch (error) {
    if (mine !== generation) return;
    current = null;
    replace(byId('case-body'), h('h1', { id: 'case-title' }, `Case ${groupCaseNumber(number)}`));
    say(error.status === 404 ? 'There is no case with this number.' : problemWords(error));
  }
}

function render() {
  const c = current.data;
  const left = timeLeft(c.due_at);
  const open = !FINISHED_STATES.includes(c.state);
  replace(byId('case-body'),
    h('div', { class: 'case-head' },
      h('h1', { id: 'case-title', tabindex: -1 }, 'Case ', h('span', { class: 'mono' }, groupCaseNumber(c.case_number))),
      h('p', { class: 'summary' }, c.summary),
      c.state === 'merged' ? h('p', { class: 'message', dataset: { kind: 'info' }, id: 'merged-banner' }, 'Merged into case ',
        h('a', { href: `#/cases/${c.merged_into}`, class: 'mono', id: 'merged-link' }, groupCaseNumber(c.merged_into)),
        ': its evidence and notes count there.') : null,
      h('p', { class: 'badges' },
        h('span', { class: `badge state ${c.state}`, id: 'case-state' }, label(STATES, c.state)), ' ',
        c.overdue ? h('span', { class: 'badge overdue' }, 'Overdue') : null, ' ',
        c.frozen ? h('span', { class: 'badge frozen', id: 'case-frozen' }, 'Account frozen') : null, ' ',
        c.unreviewed_documents ? h('span', { class: 'badge unreviewed', id: 'case-unreviewed' },
          `${c.unreviewed_documents} unreviewed document${c.unreviewed_documents === 1 ? '' : 's'}`) : null)),
    h('div', { class: 'case-grid' },
      h('div', { class: 'case-main' },
        section('Actions', 'actions', actionsPanel(c, open)),
        c.unlocks?.required?.length ? section('Unlock checklist', 'unlocks', unlockChecklist(c)) : null,
        app.can('evidence.file') && ['new', 'identity_check'].includes(c.state) ? section('Security answers', 'answers', h('div', { id: 'answers-body' }, h('p', { class: 'muted' }, 'Loading…'))) : null,
        section('Timeline', 'timeline', h('div', { id: 'timeline-body' }, h('p', { class: 'muted' }, 'Loading…'))),
        app.can('case.events') ? section('Messages', 'messages', h('div', { id: 'messages-body' }, h('p', { class: 'muted' }, 'Loading…'))) : null,
        app.can('evidence.list') ? section('Evidence', 'evidence', h('div', { id: 'evidence-body' }, h('p', { class: 'muted' }, 'Loading…'))) : null,
        section('Notes', 'notes', h('div', { id: 'notes-body' }, h('p', { class: 'muted' }, 'Loading…')))),
      h('section', { class: 'case-side', 'aria-label': 'Case facts' },
        section('Case', 'facts', dl([
          ['Path', label(PATHS, c.path)],
          ['Tier', label(TIERS, c.tier)],
          ['Due', dueWords(c, open, left)],
          ['Assignee', c.assignee ? `${c.assignee.name} (${label(TIERS, c.assignee.tier)})` : 'nobody'],
          ['Kind', c.kind === 'activation_lock' ? 'Activation lock' : 'Account takeover'],
          ['Opened', formatDateTime(c.created_at)],
          ['Updated', formatDateTime(c.updated_at)],
          ['Version', h('span', { id: 'case-version' }, String(c.version))],
        ])),
        section('Customer', 'customer', dl([
          ['Name', c.customer?.name ?? '—'],
          ['Contact', c.customer?.contact_email ?? '—'],
          ['Account', c.account_email],
        ])),
        section('What the thief changed', 'thief', h('ul', { class: 'plain' },
          Object.entries(FACTS).map(([key, words]) => h('li', {}, h('span', { class: c.facts?.[key] ? 'yes' : 'no' }, c.facts?.[key] ? 'Yes' : 'No'), ' ', words)))),
        section('Devices', 'devices', c.devices.length === 0 ? h('p', { class: 'muted' }, 'None given.') : h('ul', { class: 'plain devices' },
          c.devices.map((d) => h('li', {}, h('strong', {}, d.model ?? 'Device'), d.serial ? [h('br'), 'Serial ', h('span', { class: 'mono' }, d.serial)] : null,
            d.imei ? [h('br'), 'IMEI ', h('span', { class: 'mono' }, d.imei)] : null)))),
        app.can('case.verification') ? section('Verification', 'verification', h('div', { id: 'verification-body' }, h('p', { class: 'muted' }, 'Loading…'))) : null)));
  loadTimeline();
  if (app.can('evidence.file') && ['new', 'identity_check'].includes(c.state)) loadAnswers();
  if (app.can('evidence.list')) loadEvidence();
  loadNotes();
  if (app.can('case.verification')) loadVerification();
  // Last: the panels the agent works in are asked for first.
  if (app.can('case.events')) loadMessages();
}

function dueWords(c, open, left) {
  if (!open) return 'finished';
  if (!c.due_at) return c.state === 'awaiting_documents' ? 'paused until the customer sends documents' : 'no due date';
  return [formatDateTime(c.due_at), h('span', { class: `block ${left.overdue ? 'overdue-text' : 'muted'}` }, left.text)];
}

function section(title, id, ...content) {
  return h('section', { class: 'panel', id: `panel-${id}`, 'aria-labelledby': `heading-${id}` }, h('h2', { id: `heading-${id}` }, title), content);
}

// MARK: Actions

function actionsPanel(c, open) {
  const buttons = c.allowed_actions.map((action) => h('button', {
    type: 'button', class: action === 'reject' ? 'danger' : null, dataset: { action }, onclick: () => openAction(action),
  }, label(ACTIONS, action)));
  const mine = c.assignee?.id === app.agent.id;
  if (app.can('case.assign') && tierCovers(app.agent.tier, c.tier)) {
    if (!mine) buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'take' }, onclick: takeCase }, 'Take this case'));
    buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'hand-over' }, onclick: openHandOver }, 'Hand over…'));
  }
  if (app.can('case.freeze') && open && !c.frozen) {
    buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'freeze' }, onclick: () => openAction('freeze') }, 'Freeze account'));
  }
  if (app.can('case.merge') && open) {
    buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'merge' }, onclick: openMerge }, 'Merge into another case…'));
  }
  if (app.can('case.merge') && c.state === 'merged') {
    buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'unmerge' }, onclick: openUnmerge }, 'Undo the merge…'));
  }
  if (app.can('case.access_code')) {
    buttons.push(h('button', { type: 'button', class: 'secondary', dataset: { action: 'access-code' }, onclick: openAccessCode }, 'New access code…'));
  }
  if (app.can('case.unfreeze') && c.frozen) {
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

function openAction(action) {
  const info = CASE_ACTIONS[action] ?? ACTIONS[action] ?? { label: action, help: '' };
  const fields = [];
  if (info.unlock) {
    const choices = unlocksFor(current.data);
    // With a checklist whose steps are all recorded, complete needs no further unlock.
    const optional = (current.data.unlocks?.required ?? []).length > 0;
    if (choices.length) {
      fields.push(h('label', { for: 'action-unlock' }, optional ? 'Also record this step (optional)' : 'What was unlocked'),
        h('select', { id: 'action-unlock', required: optional ? null : true },
          optional ? h('option', { value: '' }, 'No further step') : null,
          choices.map((u) => h('option', { value: u }, UNLOCKS[u]))));
    }
  }
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
  const unlock = form.querySelector('#action-unlock');
  if (unlock?.value) body.unlock = unlock.value;
  const own = CASE_ACTIONS[action];
  const path = `/api/v1/cases/${current.number}/${own ? own.path : 'transitions'}`;
  await change(form, path, own ? {} : body, `${info.label}: done.`);
}

// MARK: Merge

/** Merge this duplicate into another open case on the same account: pick it from the open cases found for the
 *  account e-mail, or type its number. */
async function openMerge() {
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

function openUnmerge() {
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

// MARK: Access code

/** A new access code for a customer who lost theirs: shown once here, grouped for reading aloud. */
function openAccessCode() {
  const slot = byId('action-form-slot');
  const error = h('p', { class: 'field-error', role: 'alert', hidden: true });
  const form = h('form', { id: 'action-form', class: 'action-form', novalidate: true, dataset: { action: 'access-code' } },
    h('h3', {}, 'Issue a new access code'),
    h('p', { class: 'muted' }, 'For a customer who lost theirs. The old code stops working at once, and the lock after wrong tries is lifted.'),
    error,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'action-confirm' }, 'Confirm: issue a new code'),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Cancel')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    let code;
    await send(form, error, async () => {
      ({ data: { access_code: code } } = await app.api.call('POST', `/api/v1/cases/${current.number}/access-code`));
    }, () => {
      replace(slot, h('div', { class: 'action-form', id: 'new-code' },
        h('h3', {}, 'New access code'),
        h('p', {}, 'Read it to the customer now: it is shown only this once.'),
        h('p', {}, h('span', { class: 'mono big', id: 'new-code-value' }, code.replace(/-/g, ' ')), ' ',
          h('button', { type: 'button', class: 'secondary', id: 'new-code-copy', onclick: async () => {
            try { await navigator.clipboard.writeText(code); say('Access code copied.', 'ok'); } catch { say('Select the code and press Ctrl+C to copy it.', 'info'); }
          } }, 'Copy')),
        h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Done'))));
      loadTimeline();
      if (app.can('case.events')) loadMessages();
      byId('new-code-value').focus?.();
    });
  });
  replace(slot, form);
  byId('action-confirm').focus();
}

// MARK: Unlock checklist

/** Every step the thief's changes need undone, done or not; engineering records each on its own. */
function unlockChecklist(c) {
  const done = new Set(c.unlocks.done);
  const canRecord = app.can('case.unlock') && tierCovers(app.agent.tier, 'engineering') && c.state === 'engineering';
  const outstanding = outstandingUnlocks(c);
  return [
    h('p', { id: 'unlocks-summary', class: outstanding.length ? null : 'yes' },
      outstanding.length ? `${outstanding.length} of ${c.unlocks.required.length} still to do: the case can be completed when none is left.`
        : '✓ Every step is done: the case can be completed.'),
    h('ul', { class: 'plain checklist', id: 'unlock-list' }, c.unlocks.required.map((step) => h('li', { dataset: { step, done: String(done.has(step)) } },
      h('span', { class: done.has(step) ? 'yes' : 'no' }, done.has(step) ? '✓ Done' : 'To do'), ' ', UNLOCKS[step] ?? words(step),
      canRecord && !done.has(step)
        ? [' ', h('button', { type: 'button', class: 'secondary small', dataset: { unlock: step }, onclick: () => openUnlock(step) }, 'Record as done')]
        : null))),
    h('div', { id: 'unlock-form-slot' }),
  ];
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

/** Sends a change with If-Match; shows the result, or why not. 412: someone else changed the case, reload it. */
async function change(container, path, json, done) {
  await whileBusy(container, async () => {
    try {
      await app.api.call('POST', path, { json, headers: { 'If-Match': current.version } });
      await reload();
      say(done, 'ok');
    } catch (error) {
      if (error.code === 'stale_version' || error.status === 412) {
        await reload();
        say('Someone else changed this case while you had it open. It has been reloaded: check what changed before you act again.', 'warn');
        message().focus();
      } else if (error.code === 'unlocks_outstanding') {
        // The step given with Complete was recorded: show the checklist as it is now.
        await reload();
        say(problemWords(error));
      } else {
        say(problemWords(error));
      }
    }
  });
}

/** Fills a panel's body with what `draw` resolves to, or with why it could not be loaded. The body is looked up
 *  first, so an answer arriving after the case was redrawn lands in the old, detached body and is not shown. */
async function fill(id, draw) {
  const body = byId(id);
  try {
    replace(body, await draw());
  } catch (error) {
    replace(body, h('p', { class: 'field-error' }, problemWords(error)));
  }
}

/** Sends a panel form's request with its controls disabled; then `after`, or why it was refused in `error`. */
async function send(form, error, request, after) {
  await whileBusy(form, async () => {
    try {
      await request();
    } catch (e) {
      error.textContent = problemWords(e);
      show(error);
      return;
    }
    after();
  });
}

/** Evidence filed or reviewed: its list, the timeline and the verification change together. */
function evidenceChanged() {
  loadEvidence();
  loadTimeline();
  if (app.can('case.events')) loadMessages();
  if (app.can('case.verification')) loadVerification();
}

// MARK: Timeline

async function allPages(path) {
  const items = [];
  let cursor = null;
  do {
    const { data } = await app.api.call('GET', cursor ? `${path}${path.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}` : path);
    items.push(...data.items);
    learnNames(data);
    cursor = data.next_cursor;
  } while (cursor);
  return items;
}

/** An event's words on the timeline (exported for the test that every event type of the service has its own). */
export function eventWords(event) {
  const d = event.data ?? {};
  switch (event.type) {
    case 'case_opened': return 'Case opened';
    case 'transition': return `${label(ACTIONS, d.action)}: ${label(STATES, d.from)} → ${label(STATES, d.to)}${d.reason ? ` — “${d.reason}”` : ''}${d.unlock ? ` (${label(UNLOCKS, d.unlock)})` : ''}`;
    case 'reset_sent': return `Reset sent to the verified primary address${d.to ? ` ${d.to}` : ''}`;
    case 'note_added': return d.visibility === 'customer' ? 'Note for the customer added' : 'Internal note added';
    case 'evidence_filed': return `Evidence filed: ${label(EVIDENCE_TYPES, d.type)}`;
    case 'evidence_reviewed': return `Evidence ${d.decision ?? 'reviewed'}: ${label(EVIDENCE_TYPES, d.type)}${d.reason ? ` — “${d.reason}”` : ''}`;
    case 'evidence_content_read': return `Document opened: ${label(EVIDENCE_TYPES, d.type)}`;
    case 'assigned': return `Assigned to ${actorWords(`agent:${d.agent_id}`)}`;
    case 'frozen': return 'Account frozen';
    case 'unfrozen': return d.cause === 'lifted' ? 'Freeze lifted' : `Freeze lifted: the case is ${label(STATES, d.state ?? d.cause).toLowerCase()}`;
    case 'unlock_done': return `Unlock step done: ${label(UNLOCKS, d.step)}${d.reason ? ` — “${d.reason}”` : ''}`;
    case 'unassigned': return `No longer assigned to ${actorWords(`agent:${d.previous}`)}: the case moved to ${label(STATES, d.state)}`;
    case 'merged': return `Merged into case ${groupCaseNumber(d.into)}${d.reason ? ` — “${d.reason}”` : ''}`;
    case 'merge_received': return `Case ${groupCaseNumber(d.from_case)} merged into this one${d.reason ? ` — “${d.reason}”` : ''}`;
    case 'unmerged': return `Merge undone: back to ${label(STATES, d.to_state)}${d.reason ? ` — “${d.reason}”` : ''}`;
    case 'unmerge_left': return `Case ${groupCaseNumber(d.case_number)} unmerged: its items left this case`;
    case 'access_code_reissued': return 'New access code issued (the old one no longer works)';
    case 'document_arrived': return `Document arrived: ${label(EVIDENCE_TYPES, d.type)} (${d.unreviewed_documents} to review)`;
    case 'mail_refused': return `Mail not sent (${words(d.reason ?? 'refused')}): ${label(MESSAGE_KINDS, d.mail)}`;
    case 'denied': return `Refused: ${words(d.attempted ?? d.action ?? 'an action')}`;
    default: return words(event.type);
  }
}

function loadTimeline() {
  return fill('timeline-body', async () => {
    const events = await allPages(`/api/v1/cases/${current.number}/events`);
    const check = await verifyChain(events);
    const mark = check.ok === true
      ? h('p', { class: 'chain ok', id: 'chain-mark' }, '✓ Hash chain verified in this browser: no event was changed or removed.')
      : check.ok === false
        ? h('p', { class: 'chain broken', id: 'chain-mark', role: 'alert' }, `✗ Hash chain broken at event ${check.seq}: ${check.reason}.`)
        : h('p', { class: 'chain unknown', id: 'chain-mark' }, check.reason);
    return [mark, h('ol', { class: 'timeline', id: 'timeline-list' }, events.map((event) => h('li', { dataset: { type: event.type, seq: event.seq } },
      h('span', { class: 'when' }, formatDateTime(event.at)),
      h('span', { class: 'what' }, eventWords(event)),
      h('span', { class: 'who muted' }, ` by ${actorWords(event.actor)}`))))];
  });
}

// MARK: Messages

/** Where a message went: the customer's address, or the partner's name and its endpoint. */
function recipientWords(message) {
  const to = message.to ?? {};
  return message.channel === 'mail' ? to.email ?? '—' : `${to.client ?? 'a partner'} (${to.url ?? '—'})`;
}

/** Where a message stands, in words: sent when, waiting (to retry) until when and why, failed and why, or refused. */
function messageStateWords(message) {
  const tries = message.attempts === 1 ? '1 attempt' : `${message.attempts} attempts`;
  switch (message.state) {
    case 'sent': return `Sent ${formatDateTime(message.sent_at)}`;
    case 'queued': return message.attempts === 0 || !message.last_error
      ? `Waiting to be sent (due ${formatDateTime(message.next_attempt_at)})`
      : `Waiting to retry at ${formatDateTime(message.next_attempt_at)} after ${tries}: ${message.last_error}`;
    case 'failed': return `Failed after ${tries}: ${message.last_error ?? 'no reason recorded'}`;
    case 'refused': return message.reason === 'rescue_address' ? 'Not sent: the contact address is the rescue address the thief added' : `Not sent: ${words(message.reason)}`;
    default: return words(message.state);
  }
}

// While a message waits, the panel looks again a few times (the worker delivers within seconds); bounded per case view.
const MESSAGE_POLL_MS = 4000;
const MESSAGE_POLLS = 15;
let messagePoll = { timer: null, left: 0, number: null };

/** What the case sent to whom and when (never a body): mails to the customer and webhooks to partners. */
function loadMessages({ polled = false } = {}) {
  clearTimeout(messagePoll.timer);
  if (!polled || messagePoll.number !== current?.number) messagePoll = { timer: null, left: MESSAGE_POLLS, number: current?.number };
  const number = current?.number;
  return fill('messages-body', async () => {
    const { data } = await app.api.call('GET', `/api/v1/cases/${number}/messages`);
    const items = data.items ?? [];
    if (items.some((m) => m.state === 'queued') && messagePoll.left > 0) {
      messagePoll.left -= 1;
      messagePoll.timer = setTimeout(() => {
        // Only while this case is still the one on screen.
        if (current?.number === number && !byId('case').hidden && document.getElementById('messages-body') && document.visibilityState === 'visible') loadMessages({ polled: true });
      }, MESSAGE_POLL_MS);
    }
    if (items.length === 0) return h('p', { class: 'muted' }, 'Nothing sent yet.');
    return h('ol', { class: 'messages', id: 'messages-list' }, items.map((m) => h('li', { dataset: { channel: m.channel, kind: m.kind, state: m.state } },
      h('span', { class: 'when' }, formatDateTime(m.created_at)),
      h('span', { class: 'what' }, m.channel === 'mail' ? 'Mail to ' : 'Webhook to ', h('span', { class: 'mono to' }, recipientWords(m)), ': ',
        h('span', { class: m.channel === 'mail' ? 'kind' : 'kind mono' }, label(MESSAGE_KINDS, m.kind))),
      h('span', { class: `message-state ${m.state}` }, messageStateWords(m)))));
  });
}

// MARK: Security answers

/** The questions on file, one field each (any may be left empty: tier 1 may skip the birthday question); filed as
 *  evidence; each question says whether a filed answer matched; the reset is offered here once every one has. */
function loadAnswers() {
  return fill('answers-body', async () => {
    let questions;
    try {
      ({ data: { items: questions } } = await app.api.call('GET', `/api/v1/cases/${current.number}/questions`));
    } catch (error) {
      if (error.code === 'no_account_on_file') return h('p', { class: 'muted', id: 'answers-none' }, 'The account is not on file: there are no questions to ask. Use the card, the device or documents.');
      throw error;
    }
    if (questions.length === 0) return h('p', { class: 'muted', id: 'answers-none' }, 'No security questions are on file for this account.');
    const allMatched = questions.every((q) => q.matched);
    const error = h('p', { class: 'field-error', id: 'answers-error', role: 'alert', hidden: true });
    const form = h('form', { id: 'answers-form', novalidate: true },
      h('p', { class: 'muted' }, 'Type what the customer says. Answers are compared on the server and never stored; each wrong one counts against the account.'),
      questions.map((q) => h('div', { class: 'field', dataset: { question: q.id } },
        h('label', { for: `answer-${q.id}` }, q.question, ' ',
          h('span', { class: `badge factor ${q.matched ? 'matched' : 'missing'}` }, q.matched ? 'matched' : 'not matched yet')),
        h('input', { type: 'text', id: `answer-${q.id}`, autocomplete: 'off', spellcheck: 'false' }))),
      error,
      h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'answers-submit' }, 'Check the answers')));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const answers = questions.map((q) => ({ question_id: q.id, answer: form.querySelector(`#answer-${q.id}`).value.trim() })).filter((a) => a.answer);
      if (!answers.length) { error.textContent = 'Type at least one answer.'; show(error); return; }
      await send(form, error, () => app.api.call('POST', `/api/v1/cases/${current.number}/evidence`, { json: { type: 'security_answers', answers } }), () => {
        say(`${answers.length === 1 ? 'The answer was' : 'The answers were'} checked and filed.`, 'ok');
        loadAnswers();
        evidenceChanged();
      });
    });
    const canReset = allMatched && current.data.allowed_actions.includes('send_reset');
    return [
      h('p', { id: 'answers-outcome', class: allMatched ? 'yes' : null },
        allMatched ? '✓ Every answer on file matched.' : `${questions.filter((q) => q.matched).length} of ${questions.length} answers on file matched.`),
      canReset ? h('div', { class: 'actions' }, h('button', { type: 'button', id: 'answers-reset', onclick: () => openAction('send_reset') },
        'Send a reset to the verified address')) : null,
      form];
  });
}

// MARK: Verification

function loadVerification() {
  return fill('verification-body', async () => {
    const { data } = await app.api.call('GET', `/api/v1/cases/${current.number}/verification`);
    return [
      h('p', { id: 'verification-outcome', class: data.verified ? 'yes' : 'no' }, data.verified ? '✓ Identity verified (two of three factors match).' : 'Not verified yet: two of three factors must match.'),
      h('ul', { class: 'plain' }, Object.entries(FACTORS).map(([key, words]) => h('li', {}, `${words}: `, h('span', { class: `badge factor ${data.factors[key]}` }, data.factors[key]))))];
  });
}

// MARK: Evidence

function loadEvidence() {
  return fill('evidence-body', async () => {
    const { data } = await app.api.call('GET', `/api/v1/cases/${current.number}/evidence`);
    learnNames(data);
    return [
      data.missing.length
        ? h('p', { id: 'evidence-missing' }, 'Still missing: ', data.missing.map((m) => label(REQUIREMENTS, m)).join(', '), '.')
        : h('p', { id: 'evidence-missing', class: 'muted' }, 'Nothing missing for this path.'),
      data.items.length === 0 ? h('p', { class: 'muted' }, 'No evidence filed yet.')
        : h('ul', { class: 'evidence', id: 'evidence-list' }, data.items.map(evidenceItem)),
      app.can('evidence.file') ? fileEvidenceForm() : null];
  });
}

function evidenceItem(item) {
  const previewable = app.can('evidence.content') && item.media_type && (item.media_type.startsWith('image/') && item.media_type !== 'image/heic'
    || item.media_type === 'application/pdf' || isTextual(item.media_type));
  const slot = h('div', { class: 'preview-slot' });
  const reviewable = app.can('evidence.review') && item.status === 'pending';
  return h('li', { dataset: { evidence: item.id, type: item.type } },
    h('div', { class: 'evidence-head' },
      h('strong', {}, label(EVIDENCE_TYPES, item.type)), ' ',
      h('span', { class: `badge ${item.status}` }, item.status)),
    h('p', {}, item.summary),
    h('p', { class: 'muted small' }, `Filed ${formatDateTime(item.filed_at)} by ${actorWords(item.filed_by)}`, item.size ? ` · ${formatBytes(item.size)}` : '',
      item.from_case ? [' · from case ', h('a', { href: `#/cases/${item.from_case}`, class: 'mono' }, groupCaseNumber(item.from_case))] : null),
    h('div', { class: 'actions' },
      previewable ? h('button', { type: 'button', class: 'secondary preview', onclick: (e) => preview(item, slot, e.target) }, 'Preview') : null,
      reviewable ? h('button', { type: 'button', class: 'secondary', onclick: () => reviewForm(item, slot) }, 'Review') : null),
    slot);
}

/** Shows a document inline. The bytes come from the content endpoint with the session cookie (same origin, so the
 *  CSP's 'self' covers it); every opening is recorded on the timeline, so it only happens on request. */
function preview(item, slot, button) {
  const source = `/api/v1/evidence/${item.id}/content?disposition=inline`;
  const alt = `${label(EVIDENCE_TYPES, item.type)} filed ${formatDateTime(item.filed_at)}`;
  if (isTextual(item.media_type)) {
    previewText(source, alt, slot, button);
    return;
  }
  const element = item.media_type === 'application/pdf'
    ? h('iframe', { src: source, title: alt, class: 'preview pdf' })
    : h('img', { src: source, alt, class: 'preview' });
  if (element.tagName === 'IMG') element.addEventListener('error', () => replace(slot, h('p', { class: 'field-error' }, 'The document could not be shown.')));
  // The opening is on the timeline once the bytes came.
  element.addEventListener('load', () => loadTimeline(), { once: true });
  replace(slot, element);
  button.remove();
}

/** Text and saved e-mails (a transcript of the conversation with the thief). */
function isTextual(mediaType) {
  return mediaType.startsWith('text/plain') || mediaType === 'message/rfc822';
}

/** Shows a text or e-mail transcript as text: fetched, decoded and put in a <pre> with textContent, so a message
 *  holding HTML or script is read, never rendered (the endpoint also serves it as an attachment with nosniff). */
async function previewText(source, alt, slot, button) {
  button.disabled = true;
  try {
    const response = await fetch(source, { credentials: 'same-origin', headers: { Accept: 'text/plain, message/rfc822' } });
    if (!response.ok) throw new Error(String(response.status));
    const words = new TextDecoder('utf-8').decode(await response.arrayBuffer());
    replace(slot, h('pre', { class: 'preview text', tabindex: '0', 'aria-label': alt, text: words }));
    button.remove();
    loadTimeline();
  } catch {
    replace(slot, h('p', { class: 'field-error' }, 'The document could not be shown.'));
    button.disabled = false;
  }
}

function reviewForm(item, slot) {
  const error = h('p', { class: 'field-error', role: 'alert', hidden: true });
  const form = h('form', { class: 'review-form', novalidate: true },
    h('fieldset', {}, h('legend', {}, 'Decision'),
      h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'decision', value: 'accepted', checked: true }), 'Accept'),
      h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'decision', value: 'rejected' }), 'Reject')),
    h('label', { for: `review-reason-${item.id}` }, 'Reason (required)'),
    h('textarea', { id: `review-reason-${item.id}`, rows: 2, maxlength: 2000, required: true }),
    error,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save review'),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Cancel')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const reason = form.querySelector('textarea').value.trim();
    if (!reason) { error.textContent = 'Give a reason for the decision.'; show(error); return; }
    const decision = form.querySelector('input[name="decision"]:checked').value;
    await send(form, error, () => app.api.call('POST', `/api/v1/evidence/${item.id}/review`, { json: { decision, reason } }), () => {
      say(`Evidence ${decision}.`, 'ok');
      evidenceChanged();
    });
  });
  replace(slot, form);
  form.querySelector('input').focus();
}

function fileEvidenceForm() {
  const kinds = { card: 'Payment card', device: 'Device serial or IMEI', transcript: 'Call transcript', document: 'Document (upload)' };
  const fields = h('div', { id: 'evidence-fields' });
  const error = h('p', { class: 'field-error', id: 'evidence-error', role: 'alert', hidden: true });
  const select = h('select', { id: 'evidence-kind' }, Object.entries(kinds).map(([value, words]) => h('option', { value }, words)));
  const form = h('form', { id: 'evidence-form', class: 'evidence-form', novalidate: true },
    h('h3', {}, 'File evidence'),
    h('label', { for: 'evidence-kind' }, 'What'), select, fields, error,
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'evidence-submit' }, 'File')));
  const draw = () => replace(fields, evidenceFields(select.value));
  select.addEventListener('change', draw);
  draw();
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    show(error, false);
    let request;
    try {
      request = evidenceRequest(select.value, form);
    } catch (problem) {
      error.textContent = problem.message;
      show(error);
      return;
    }
    await send(form, error, () => app.api.call('POST', `/api/v1/cases/${current.number}/evidence`, request), () => {
      say(`${kinds[select.value]} filed.`, 'ok');
      evidenceChanged();
    });
  });
  return form;
}

function evidenceFields(kind) {
  switch (kind) {
    case 'card': return [
      h('label', { for: 'ev-card-number' }, 'Card number', h('span', { class: 'hint' }, 'Never the security code: it is refused and not stored.')),
      h('input', { type: 'text', id: 'ev-card-number', inputmode: 'numeric', autocomplete: 'off' }),
      h('div', { class: 'inline-fields' },
        h('div', {}, h('label', { for: 'ev-card-month' }, 'Expiry month'), h('input', { type: 'text', id: 'ev-card-month', inputmode: 'numeric', maxlength: 2 })),
        h('div', {}, h('label', { for: 'ev-card-year' }, 'Expiry year'), h('input', { type: 'text', id: 'ev-card-year', inputmode: 'numeric', maxlength: 4 })))];
    case 'device': return [
      h('label', { for: 'ev-imei' }, 'IMEI', h('span', { class: 'hint' }, '15 digits; or give the serial')),
      h('input', { type: 'text', id: 'ev-imei', inputmode: 'numeric', autocomplete: 'off' }),
      h('label', { for: 'ev-serial' }, 'Serial number'),
      h('input', { type: 'text', id: 'ev-serial', autocomplete: 'off' })];
    case 'transcript': return [
      h('label', { for: 'ev-transcript' }, 'Transcript', h('span', { class: 'hint' }, 'Stored encrypted; readable by tier 3 and engineering.')),
      h('textarea', { id: 'ev-transcript', rows: 5 })];
    default: return [
      h('label', { for: 'ev-doc-type' }, 'Document type'),
      h('select', { id: 'ev-doc-type' }, DOCUMENT_TYPES.map((t) => h('option', { value: t }, EVIDENCE_TYPES[t]))),
      h('label', { for: 'ev-file' }, 'File', h('span', { class: 'hint' }, 'PDF, JPEG, PNG or HEIC; 10 MB at most.')),
      h('input', { type: 'file', id: 'ev-file', accept: 'application/pdf,image/jpeg,image/png,image/heic,.heic' })];
  }
}

function evidenceRequest(kind, form) {
  const value = (id) => form.querySelector(`#${id}`)?.value.trim() ?? '';
  switch (kind) {
    case 'card': {
      const number = value('ev-card-number').replace(/[\s-]/g, '');
      const month = Number(value('ev-card-month'));
      const year = Number(value('ev-card-year'));
      if (!/^[0-9]{13,19}$/.test(number)) throw new Error('A card number has 13 to 19 digits.');
      if (!(month >= 1 && month <= 12) || !(year >= 2000)) throw new Error('Give the expiry month (1–12) and the four-digit year.');
      return { json: { type: 'card', number, exp_month: month, exp_year: year } };
    }
    case 'device': {
      const imei = value('ev-imei').replace(/[\s-]/g, '');
      const serial = value('ev-serial');
      if (!imei && !serial) throw new Error('Give the IMEI or the serial number.');
      return { json: { type: 'device', ...(imei ? { imei } : {}), ...(serial ? { serial } : {}) } };
    }
    case 'transcript': {
      const text = value('ev-transcript');
      if (!text) throw new Error('The transcript is empty.');
      return { json: { type: 'transcript', text } };
    }
    default: {
      const file = form.querySelector('#ev-file').files[0];
      if (!file) throw new Error('Choose a file to upload.');
      if (file.size > MAX_UPLOAD_BYTES) throw new Error('The file is larger than 10 MB.');
      const body = new FormData();
      body.append('type', value('ev-doc-type'));
      body.append('file', file);
      return { body };
    }
  }
}

// MARK: Notes

function loadNotes() {
  return fill('notes-body', async () => {
    const notes = await allPages(`/api/v1/cases/${current.number}/notes`);
    return [
      notes.length === 0 ? h('p', { class: 'muted' }, 'No notes yet.') : h('ol', { class: 'notes', id: 'notes-list' }, notes.map((note) => h('li', {},
        h('p', { class: 'muted small' }, formatDateTime(note.created_at), ` · ${actorWords(note.author)} · `,
          h('span', { class: `badge ${note.visibility}` }, note.visibility === 'customer' ? 'shown to the customer' : 'internal'),
          note.from_case ? [' · from case ', h('a', { href: `#/cases/${note.from_case}`, class: 'mono' }, groupCaseNumber(note.from_case))] : null),
        h('p', { class: 'note-body' }, note.body)))),
      app.can('case.note') ? noteForm() : null];
  });
}

// The note being typed survives reloads of the notes list (and a sign-in in between), per case.
const draftNotes = new Map();

/** Drops what one agent typed or saw, when they sign out or someone else signs in. */
export function forgetCase() {
  draftNotes.clear();
  agentNames.clear();
  current = null;
  replace(byId('case-body'));
}

function noteForm() {
  const error = h('p', { class: 'field-error', role: 'alert', hidden: true });
  const text = h('textarea', { id: 'note-body', rows: 3, maxlength: 10000 });
  const number = current.number;
  text.value = draftNotes.get(number) ?? '';
  text.addEventListener('input', () => { draftNotes.set(number, text.value); });
  const form = h('form', { id: 'note-form', novalidate: true },
    h('label', { for: 'note-body' }, 'Add a note'), text,
    h('fieldset', {}, h('legend', {}, 'Who sees it'),
      h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'visibility', value: 'internal', checked: true, id: 'note-internal' }), 'Agents only'),
      h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'visibility', value: 'customer', id: 'note-customer' }), 'Also the customer, on the status page')),
    error,
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'note-submit' }, 'Add note')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const note = text.value.trim();
    if (!note) { error.textContent = 'The note is empty.'; show(error); return; }
    const visibility = form.querySelector('input[name="visibility"]:checked').value;
    await send(form, error, () => app.api.call('POST', `/api/v1/cases/${current.number}/notes`, { json: { body: note, visibility } }), () => {
      draftNotes.delete(number);
      loadNotes();
      loadTimeline();
      if (app.can('case.events')) loadMessages();
    });
  });
  return form;
}
