// The queue: the agent's open cases, oldest due first, with filters (state, tier, mine, overdue), a search box
// (case number, account email, serial, IMEI) and "Show more" over the keyset cursor. Filters live in the
// hash (#/?state=new&overdue=true), so the back button and a reload keep them.
import { announce, byId, h, replace, show } from './dom.js';
import { formatDateTime, formatSpan, timeLeft } from './format.js';
import { FINISHED_STATES, label, STATES, TIERS } from './labels.js';
import { groupCaseNumber } from './identifiers.js';
import { VOCABULARY } from './vocabulary.js';
import { loadInbound } from './inbound.js';

const PAGE = 50;
const filtersForm = byId('queue-filters');
// The filters offer the service's states and tiers, in its order.
byId('filter-state').append(...VOCABULARY.case_states.map((state) => h('option', { value: state }, label(STATES, state))));
byId('filter-tier').append(...VOCABULARY.tiers.map((tier) => h('option', { value: tier }, label(TIERS, tier))));
let nextCursor = null;
let currentQuery = null;
let appRef = null;

function filtersFromForm() {
  const params = new URLSearchParams();
  const q = byId('filter-q').value.trim();
  if (q) params.set('q', q);
  for (const name of ['state', 'tier']) {
    const value = byId(`filter-${name}`).value;
    if (value) params.set(name, value);
  }
  if (byId('filter-mine').checked) params.set('assignee', 'me');
  if (byId('filter-overdue').checked) params.set('overdue', 'true');
  if (byId('filter-unreviewed').checked) params.set('unreviewed', 'true');
  if (byId('filter-awaiting-reply').checked) params.set('awaiting_reply', 'true');
  if (byId('filter-risk').checked) params.set('risk', 'true');
  return params;
}

function formFromFilters(params) {
  byId('filter-q').value = params.get('q') ?? '';
  byId('filter-state').value = params.get('state') ?? '';
  byId('filter-tier').value = params.get('tier') ?? '';
  byId('filter-mine').checked = params.get('assignee') === 'me';
  byId('filter-overdue').checked = params.get('overdue') === 'true';
  byId('filter-unreviewed').checked = params.get('unreviewed') === 'true';
  byId('filter-awaiting-reply').checked = params.get('awaiting_reply') === 'true';
  byId('filter-risk').checked = params.get('risk') === 'true';
}

// True while the tier shown is the one the page chose (the agent's own), not one the agent picked.
let tierIsDefault = false;
byId('filter-tier').addEventListener('change', () => {
  tierIsDefault = false;
});

filtersForm.addEventListener('submit', (event) => {
  event.preventDefault();
  // A case number typed with spaces or dashes is still a case number.
  const q = byId('filter-q').value.trim();
  if (/^[0-9][0-9\s-]{10,}$/.test(q)) byId('filter-q').value = q.replace(/[\s-]/g, '');
  const params = filtersFromForm();
  // A search looks in every tier unless the agent chose one: the caller's case may sit with another tier.
  if (params.has('q') && tierIsDefault) params.delete('tier');
  // An explicit "any tier" is kept in the hash so it is not replaced by the agent's own tier.
  if (!params.has('tier')) params.set('tier', 'any');
  window.location.hash = `#/?${params}`;
});

byId('filter-reset').addEventListener('click', () => {
  window.location.hash = '#/';
});

byId('queue-more').addEventListener('click', () => load(false));

function row(item) {
  const left = timeLeft(item.due_at);
  const due = FINISHED_STATES.includes(item.state) ? h('span', { class: 'muted' }, 'finished')
    : !item.due_at && item.state === 'awaiting_documents' ? h('span', { class: 'muted' }, 'paused: waiting for documents')
    : left.overdue ? h('span', { class: 'badge overdue' }, `Overdue · ${formatSpan(Date.parse(item.due_at) - Date.now())}`)
    : h('span', { class: 'due' }, left.text);
  return h('tr', { dataset: { case: item.case_number }, class: item.overdue ? 'overdue' : null },
    h('td', { 'data-label': 'Case' }, h('a', { href: `#/cases/${item.case_number}`, class: 'mono case-link' }, groupCaseNumber(item.case_number))),
    h('td', { 'data-label': 'Summary' }, item.risk ? [h('span', { class: 'badge risk queue-risk' }, 'At risk'), ' '] : null, item.summary,
      h('span', { class: 'muted block' }, item.account_email)),
    h('td', { 'data-label': 'State' }, label(STATES, item.state),
      item.awaiting_reply ? h('span', { class: 'badge awaiting-reply block-badge' }, 'Customer replied') : null,
      item.unreviewed_documents ? h('span', { class: 'badge unreviewed block-badge' },
        `${item.unreviewed_documents} unreviewed document${item.unreviewed_documents === 1 ? '' : 's'}`) : null),
    h('td', { 'data-label': 'Tier' }, label(TIERS, item.tier)),
    h('td', { 'data-label': 'Due' }, due),
    h('td', { 'data-label': 'Assignee' }, item.assignee?.name ?? h('span', { class: 'muted' }, 'nobody')));
}

// Only the newest load may draw: an older answer arriving late (the first page, after a search) is dropped.
let generation = 0;

// Tier 3's own queue shows the cases with unreviewed documents first (up to 200), then the rest in due order.
let unreviewedFirst = false;

async function load(fresh) {
  const mine = ++generation;
  const params = new URLSearchParams(currentQuery);
  params.set('limit', String(PAGE));
  if (unreviewedFirst) params.set('unreviewed', 'false');
  if (!fresh && nextCursor) params.set('cursor', nextCursor);
  const message = byId('queue-message');
  byId('queue').setAttribute('aria-busy', 'true');
  try {
    let first = [];
    if (fresh && unreviewedFirst) {
      const top = new URLSearchParams(currentQuery);
      top.set('unreviewed', 'true');
      top.set('limit', '200');
      first = (await appRef.api.call('GET', `/api/v1/cases?${top}`)).data.items;
    }
    const { data } = await appRef.api.call('GET', `/api/v1/cases?${params}`);
    if (mine !== generation) return;
    const rows = [...first, ...data.items].map(row);
    if (fresh) replace(byId('queue-rows'), rows);
    else byId('queue-rows').append(...rows);
    nextCursor = data.next_cursor;
    show(byId('queue-more'), Boolean(nextCursor));
    const count = byId('queue-rows').children.length;
    show(byId('queue-empty'), count === 0);
    show(byId('queue-table'), count > 0);
    if (fresh) byId('queue-updated').textContent = `Updated ${clock.format(new Date())}`;
    announce(message, '');
  } catch (error) {
    if (mine !== generation) return;
    announce(message, error.code === 'validation_failed' ? `Check the filters: ${error.fieldMessages}` : error.message, 'error');
  } finally {
    if (mine === generation) byId('queue').setAttribute('aria-busy', 'false');
  }
}

// The queue keeps itself current while it is on screen: every minute, and when the agent comes back to the tab,
// the first page is fetched again — unless the agent is in the middle of it (more pages loaded, or focus inside),
// so nothing moves under their hands.
const REFRESH_MS = 60 * 1000;
const clock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit' });

function refreshIfIdle() {
  const queue = byId('queue');
  if (!appRef?.agent || queue.hidden || document.visibilityState !== 'visible') return;
  if (byId('queue-rows').children.length > PAGE || queue.contains(document.activeElement)) return;
  if (document.querySelector('dialog[open]')) return;
  load(true);
}

setInterval(refreshIfIdle, REFRESH_MS);
document.addEventListener('visibilitychange', refreshIfIdle);

/** The filters a link from the reports may carry that the form has no control for: one agent's cases, an age. */
function extraFilterWords(query) {
  const parts = [];
  const assignee = query.get('assignee');
  if (assignee && assignee !== 'me') parts.push('held by one agent');
  if (query.get('opened_after')) parts.push(`opened since ${formatDateTime(query.get('opened_after'))}`);
  if (query.get('opened_before')) parts.push(`opened before ${formatDateTime(query.get('opened_before'))}`);
  return parts;
}

/** Shows the queue for the filters in `params`; with none, the agent's own tier. */
export async function showQueue(app, params) {
  appRef = app;
  const query = new URLSearchParams(params);
  tierIsDefault = !query.has('tier') && !query.has('q') && !query.has('assignee');
  if (tierIsDefault) query.set('tier', app.agent.tier);
  // The service lists open cases only unless asked; a search looks for finished cases too (a caller's old case number).
  if (query.has('q') && !query.has('state')) query.set('state', 'any');
  if (query.get('tier') === 'any') query.delete('tier');
  formFromFilters(query);
  unreviewedFirst = app.agent.tier === 'tier3' && query.get('tier') === 'tier3' && !query.has('q') && !query.has('unreviewed')
    && !query.has('state') && !query.has('overdue') && !query.has('assignee');
  currentQuery = query.toString();
  // What is shown, for tests and scripts that wait for a search to land.
  byId('queue').dataset.query = currentQuery;
  nextCursor = null;
  show(byId('queue'));
  const extra = extraFilterWords(query);
  byId('queue-title').textContent = query.get('q') ? `Search: ${query.get('q')}` : extra.length ? `Queue: cases ${extra.join(', ')}` : 'Queue';
  document.title = 'Reclaim — queue';
  loadInbound(app);
  await load(true);
}
