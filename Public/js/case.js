// One case: facts, devices, path and due date; the actions this agent may take now (allowed_actions), each
// asking for what the API needs; verification; evidence with previews for tier3+; notes; the messages sent (what,
// to whom, when, never a body); the timeline with
// a mark saying whether its hash chain verifies. Every change sends If-Match with the version shown; a 412
// says someone else changed the case and reloads it.
// The panels live in case/ (one module per panel, shared helpers in case/common.js); this module loads the case
// and draws them all.
import { announce, byId, h, replace, show } from './dom.js';
import { formatDateTime, timeLeft } from './format.js';
import { groupCaseNumber } from './identifiers.js';
import { FACTS, FINISHED_STATES, LANGUAGES, PATHS, STATES, TIERS, label } from './labels.js';
import { actionsPanel } from './case/actions.js';
import { callPanel } from './case/call.js';
import { loadAnswers } from './case/answers.js';
import { agentNames, allows, app, current, dl, message, problemWords, say, setApp, setCurrent } from './case/common.js';
import { openEdit } from './case/edit.js';
import { privacyPanel } from './case/privacy.js';
import { relatedPanel } from './case/related.js';
import { riskPanel } from './case/risk.js';
import { loadEvidence } from './case/evidence.js';
import { loadMessages } from './case/messages.js';
import { draftNotes, loadNotes } from './case/notes.js';
import { loadTimeline } from './case/timeline.js';
import { unlockChecklist } from './case/unlocks.js';
import { loadVerification } from './case/verification.js';

// MARK: Loading

/** Shows case `number`, loading everything this agent may read. */
export async function showCase(appState, number) {
  setApp(appState);
  show(byId('case'));
  announce(message(), '');
  await reload(number);
  // A new page for screen readers: start at its heading (unless a message took the focus).
  if (message().hidden) byId('case-title').focus();
}

// Only the newest load may draw (a case opened after another must not be painted over by the first).
let generation = 0;

export async function reload(number = current?.number) {
  const mine = ++generation;
  try {
    const { data, etag } = await app.api.call('GET', `/api/v1/cases/${number}`);
    if (mine !== generation) return;
    setCurrent({ number, data, version: etag ?? String(data.version) });
    document.title = `Reclaim — case ${number}`;
    render();
  } catch (error) {
    if (mine !== generation) return;
    setCurrent(null);
    replace(byId('case-body'), h('h1', { id: 'case-title' }, `Case ${groupCaseNumber(number)}`));
    say(error.status === 404 ? 'There is no case with this number.' : problemWords(error));
  }
}

function render() {
  const c = current.data;
  const left = timeLeft(c.due_at);
  const open = !FINISHED_STATES.includes(c.state);
  const privacy = privacyPanel(c);
  replace(byId('case-body'),
    h('div', { class: 'case-head' },
      h('h1', { id: 'case-title', tabindex: -1 }, 'Case ', h('span', { class: 'mono' }, groupCaseNumber(c.case_number))),
      h('p', { class: 'summary' }, c.summary ?? ''),
      c.state === 'merged' ? h('p', { class: 'message', dataset: { kind: 'info' }, id: 'merged-banner' }, 'Merged into case ',
        h('a', { href: `#/cases/${c.merged_into}`, class: 'mono', id: 'merged-link' }, groupCaseNumber(c.merged_into)),
        ': its evidence and notes count there.') : null,
      h('p', { class: 'badges' },
        h('span', { class: `badge state ${c.state}`, id: 'case-state' }, label(STATES, c.state)), ' ',
        c.overdue ? h('span', { class: 'badge overdue' }, 'Overdue') : null, ' ',
        c.frozen ? h('span', { class: 'badge frozen', id: 'case-frozen' }, 'Account frozen') : null, ' ',
        c.unreviewed_documents ? h('span', { class: 'badge unreviewed', id: 'case-unreviewed' },
          `${c.unreviewed_documents} unreviewed document${c.unreviewed_documents === 1 ? '' : 's'}`) : null, ' ',
        c.risk ? h('span', { class: 'badge risk', id: 'case-risk' }, 'At risk') : null),
      // Correcting the case's details: any agent, while the case is open (the service checks both again).
      open && app.can('case.correct') ? h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', id: 'edit-case', onclick: openEdit }, 'Edit case…')) : null,
      h('div', { id: 'edit-form-slot' })),
    h('div', { class: 'case-grid' },
      h('div', { class: 'case-main' },
        c.risk || c.risk_signals?.length || app.can('case.flag') ? section('Risk', 'risk', riskPanel(c)) : null,
        c.related?.length ? section('Related cases', 'related', relatedPanel(c)) : null,
        'call_codes' in c ? section('The call', 'call', callPanel(c)) : null,
        section('Actions', 'actions', actionsPanel(c)),
        privacy ? section('Personal data', 'privacy', privacy) : null,
        c.unlocks?.required?.length || c.state === 'engineering' ? section('Unlock checklist', 'unlocks', unlockChecklist(c)) : null,
        answersTaken(c) ? section('Security answers', 'answers', h('div', { id: 'answers-body' }, h('p', { class: 'muted' }, 'Loading…'))) : null,
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
          ['Phone', h('span', { id: 'case-phone', class: c.customer?.phone ? 'mono' : 'muted' }, c.customer?.phone ?? 'None on file')],
          ['Language', h('span', { id: 'case-language' }, c.language ? label(LANGUAGES, c.language) : 'Not known')],
          ['Account', c.account_email ?? '—'],
        ])),
        section('What the thief changed', 'thief', h('ul', { class: 'plain' },
          Object.entries(FACTS).map(([key, words]) => h('li', { dataset: { fact: key } },
            h('span', { class: c.facts?.[key] ? 'yes' : 'no' }, c.facts?.[key] ? 'Yes' : 'No'), ' ', words,
            key === 'rescue_email_added' && c.facts?.[key] ? rescueWords(c.facts.rescue_email) : null)),
          c.facts?.former_rescue_emails?.length ? h('li', { id: 'case-former-rescue' }, 'Earlier rescue addresses (still the thief’s: never written to): ',
            c.facts.former_rescue_emails.map((a, i) => [i ? ', ' : '', h('span', { class: 'mono' }, a)])) : null)),
        section('Devices', 'devices', !c.devices?.length ? h('p', { class: 'muted' }, c.erased_at ? 'Erased.' : 'None given.') : h('ul', { class: 'plain devices' },
          c.devices.map((d) => h('li', {}, h('strong', {}, d.model ?? 'Device'), d.serial ? [h('br'), 'Serial ', h('span', { class: 'mono' }, d.serial)] : null,
            d.imei ? [h('br'), 'IMEI ', h('span', { class: 'mono' }, d.imei)] : null)))),
        app.can('case.verification') ? section('Verification', 'verification', h('div', { id: 'verification-body' }, h('p', { class: 'muted' }, 'Loading…'))) : null)));
  loadTimeline();
  if (answersTaken(c)) loadAnswers();
  if (app.can('evidence.list')) loadEvidence();
  loadNotes();
  if (app.can('case.verification')) loadVerification();
  // Last: the panels the agent works in are asked for first.
  if (app.can('case.events')) loadMessages();
}

// Security answers are asked while the case is at triage or the identity check, and only while it takes evidence.
function answersTaken(c) {
  return app.can('evidence.file') && allows('file_evidence') && ['new', 'identity_check'].includes(c.state);
}

// The address engineering removes from the account: the one thing the checklist's first step needs.
function rescueWords(address) {
  return address ? [': ', h('span', { class: 'mono', id: 'case-rescue-email' }, address)]
    : h('span', { class: 'muted', id: 'case-rescue-email' }, ' (the address is not known)');
}

function dueWords(c, open, left) {
  if (!open) return 'finished';
  if (!c.due_at) return c.state === 'awaiting_documents' ? 'paused until the customer sends documents' : 'no due date';
  return [formatDateTime(c.due_at), h('span', { class: `block ${left.overdue ? 'overdue-text' : 'muted'}` }, left.text)];
}

function section(title, id, ...content) {
  return h('section', { class: 'panel', id: `panel-${id}`, 'aria-labelledby': `heading-${id}` }, h('h2', { id: `heading-${id}` }, title), content);
}

/** Drops what one agent typed or saw, when they sign out or someone else signs in. */
export function forgetCase() {
  draftNotes.clear();
  agentNames.clear();
  setCurrent(null);
  replace(byId('case-body'));
}
