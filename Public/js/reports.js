// The reports page (/reports, tier2+ and admins): GET /api/v1/reports/summary drawn as SVG built with DOM calls
// (no markup strings, no script or font from elsewhere), each chart with a table of the same numbers for screen
// readers (the charts themselves are aria-hidden), and the same figures as a CSV download.
import { ApiError, request } from './api.js';
import { byId, h, replace, show } from './dom.js';
import { formatDateTime, formatSpan } from './format.js';
import { PATHS, STATES, TIERS, label } from './labels.js';
import { VOCABULARY } from './vocabulary.js';

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element: attributes as given, children appended (strings become text nodes). */
function s(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'text') element.textContent = String(value);
    else if (value !== null && value !== undefined) element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) if (child) element.append(child);
  return element;
}

/** Horizontal bars: `rows` of { label, value, text, kind }; `max` is the full width's value. */
function barChart(rows, max) {
  const rowHeight = 26;
  const labelWidth = 170;
  const width = 560;
  const barSpace = width - labelWidth - 90;
  const height = rows.length * rowHeight + 8;
  return s('svg', { viewBox: `0 0 ${width} ${height}`, role: 'presentation', focusable: 'false' },
    rows.map((row, index) => {
      const y = index * rowHeight + 4;
      const length = max > 0 ? Math.max(row.value > 0 ? 2 : 0, Math.round((row.value / max) * barSpace)) : 0;
      return s('g', {},
        s('text', { x: 0, y: y + 15, text: row.label }),
        s('rect', { class: `bar ${row.kind ?? ''}`, x: labelWidth, y, width: length, height: rowHeight - 8, rx: 2 }),
        s('text', { x: labelWidth + length + 6, y: y + 15, text: row.text ?? row.value }));
    }),
    s('line', { class: 'axis', x1: labelWidth, y1: 0, x2: labelWidth, y2: height }));
}

/** Opened and resolved per day as paired columns, with the first and last date under the axis. */
function trendChart(trend) {
  const width = 560;
  const height = 180;
  const bottom = 150;
  const max = Math.max(1, ...trend.map((d) => Math.max(d.opened, d.resolved)));
  const slot = (width - 40) / Math.max(1, trend.length);
  const bar = Math.max(1, slot / 2 - 1);
  return s('svg', { viewBox: `0 0 ${width} ${height}`, role: 'presentation', focusable: 'false' },
    s('text', { x: 0, y: 12, class: 'legend', text: `max ${max} a day` }),
    trend.map((day, index) => {
      const x = 30 + index * slot;
      const opened = Math.round((day.opened / max) * (bottom - 20));
      const resolved = Math.round((day.resolved / max) * (bottom - 20));
      return s('g', {},
        s('rect', { class: 'bar', x, y: bottom - opened, width: bar, height: opened }),
        s('rect', { class: 'bar second', x: x + bar + 1, y: bottom - resolved, width: bar, height: resolved }));
    }),
    s('line', { class: 'axis', x1: 28, y1: bottom, x2: width, y2: bottom }),
    s('text', { x: 30, y: bottom + 16, text: trend[0]?.date ?? '' }),
    s('text', { x: width - 80, y: bottom + 16, text: trend[trend.length - 1]?.date ?? '' }),
    s('rect', { class: 'bar', x: 200, y: bottom + 22, width: 10, height: 10 }), s('text', { x: 214, y: bottom + 31, text: 'opened' }),
    s('rect', { class: 'bar second', x: 280, y: bottom + 22, width: 10, height: 10 }), s('text', { x: 294, y: bottom + 31, text: 'resolved' }));
}

const seconds = (value) => (value === null || value === undefined ? '—' : formatSpan(value * 1000));

/** The dashboard's queue with these filters (`tier=any` unless a tier is given: the queue would start at the reader's). */
export function queueLink(filters) {
  const params = new URLSearchParams(filters);
  if (!params.has('tier')) params.set('tier', 'any');
  return `/#/?${params}`;
}

/** A count that opens the queue listing exactly those cases. */
function countLink(value, filters, description) {
  return h('a', { href: queueLink(filters), text: String(value), 'aria-label': `${value} ${description}: show them in the queue` });
}

/** "Opened 1 to 3 days ago" for a bucket of the backlog by age. */
function ageWords(bucket) {
  const days = (n) => `${n} ${n === 1 ? 'day' : 'days'}`;
  if (bucket.from_days === 0) return `Less than ${days(bucket.to_days)} ago`;
  if (bucket.to_days === null) return `More than ${days(bucket.from_days)} ago`;
  return `${bucket.from_days} to ${days(bucket.to_days)} ago`;
}

function ageFilters(bucket) {
  const filters = {};
  if (bucket.opened_after) filters.opened_after = bucket.opened_after;
  if (bucket.opened_before) filters.opened_before = bucket.opened_before;
  return filters;
}

function render(report) {
  byId('report-range').textContent = `${formatDateTime(report.from)} to ${formatDateTime(report.to)} (${report.days} days, whole UTC days).`;
  byId('figure-open').textContent = String(report.open.total);
  byId('figure-open').setAttribute('aria-label', `${report.open.total} open cases: show them in the queue`);
  byId('figure-overdue').textContent = String(report.overdue);
  byId('figure-overdue').setAttribute('aria-label', `${report.overdue} overdue cases: show them in the queue`);
  const first = report.first_response;
  byId('figure-first-response').textContent = first.answered
    ? `median ${seconds(first.p50_seconds)}, 90th percentile ${seconds(first.p90_seconds)} (${first.answered} of ${first.cases} cases opened${first.sampled ? ', the newest' : ''} in the window)`
    : first.cases ? `no agent has acted yet on the ${first.cases} cases opened in the window` : 'no case opened in the window';
  byId('figure-resolved').textContent = String(report.time_to_resolve.resolved);
  byId('figure-times').textContent = report.time_to_resolve.resolved
    ? `median ${seconds(report.time_to_resolve.p50_seconds)}, 90th percentile ${seconds(report.time_to_resolve.p90_seconds)}` : 'nothing resolved';

  // Backlog: one row per open state with a count per tier.
  const states = [...new Set(report.open.by_state_and_tier.map((row) => row.state))];
  const count = (state, tier) => report.open.by_state_and_tier.find((row) => row.state === state && row.tier === tier)?.count ?? 0;
  const total = (state) => VOCABULARY.tiers.reduce((sum, tier) => sum + count(state, tier), 0);
  replace(byId('backlog-head'), h('tr', {}, h('th', { scope: 'col', text: 'State' }), VOCABULARY.tiers.map((tier) => h('th', { scope: 'col', text: label(TIERS, tier) })),
    h('th', { scope: 'col', text: 'All tiers' })));
  const stateWords = (state) => (STATES[state] ?? state).toLowerCase();
  replace(byId('backlog-rows'), states.length ? states.map((state) => h('tr', { dataset: { state } },
    h('th', { scope: 'row', text: STATES[state] ?? state }),
    VOCABULARY.tiers.map((tier) => h('td', {}, count(state, tier)
      ? countLink(count(state, tier), { state, tier }, `cases in ${stateWords(state)} at ${label(TIERS, tier)}`) : '0')),
    h('td', {}, countLink(total(state), { state }, `cases in ${stateWords(state)}`)))) : h('tr', {}, h('td', { colspan: 6, text: 'No open cases.' })));

  // Per agent: what each holds now (and how much of it is overdue), and what they resolved in the window.
  replace(byId('agents-rows'), report.agents.length ? report.agents.map((agent) => h('tr', { dataset: { agent: agent.agent_id } },
    h('th', { scope: 'row', text: agent.name }),
    h('td', { text: label(TIERS, agent.tier) }),
    h('td', {}, countLink(agent.open, { assignee: agent.agent_id }, `open cases held by ${agent.name}`)),
    h('td', {}, agent.overdue ? countLink(agent.overdue, { assignee: agent.agent_id, overdue: 'true' }, `overdue cases held by ${agent.name}`) : '0'),
    h('td', {}, agent.resolved ? countLink(agent.resolved, { assignee: agent.agent_id, state: 'resolved' }, `cases resolved by ${agent.name}`) : '0')))
    : h('tr', {}, h('td', { colspan: 5, text: 'No case is assigned to anyone.' })));

  replace(byId('age-rows'), report.backlog_by_age.map((bucket) => h('tr', { dataset: { fromDays: bucket.from_days } },
    h('th', { scope: 'row', text: ageWords(bucket) }),
    h('td', {}, countLink(bucket.count, ageFilters(bucket), `open cases opened ${ageWords(bucket).toLowerCase()}`)))));
  replace(byId('age-chart'), barChart(report.backlog_by_age.map((bucket) => ({ label: ageWords(bucket), value: bucket.count,
    kind: bucket.from_days >= 7 ? 'miss' : '' })), Math.max(0, ...report.backlog_by_age.map((bucket) => bucket.count))));
  replace(byId('backlog-chart'), barChart(states.map((state) => ({ label: STATES[state] ?? state, value: total(state) })),
    Math.max(0, ...states.map(total))));

  replace(byId('paths-rows'), report.paths.map((path) => h('tr', { dataset: { path: path.path } },
    h('th', { scope: 'row', text: PATHS[path.path] ?? path.path }), h('td', { text: seconds(path.target_seconds) }),
    h('td', { text: path.resolved }), h('td', { text: path.within_target }),
    h('td', { text: path.within_target_percent === null ? '—' : `${path.within_target_percent} %` }))));
  replace(byId('paths-chart'), barChart(report.paths.map((path) => ({
    label: PATHS[path.path] ?? path.path, value: path.within_target_percent ?? 0,
    text: path.resolved ? `${path.within_target_percent} % (${path.within_target} of ${path.resolved})` : 'none resolved',
    kind: (path.within_target_percent ?? 100) < 80 ? 'miss' : 'second',
  })), 100));

  replace(byId('trend-rows'), report.trend.map((day) => h('tr', { dataset: { date: day.date } },
    h('th', { scope: 'row', text: day.date }), h('td', { text: day.opened }), h('td', { text: day.resolved }))));
  replace(byId('trend-chart'), trendChart(report.trend));
}

async function load(days) {
  const { data } = await request('GET', `/api/v1/reports/summary?days=${days}`);
  byId('csv-link').setAttribute('href', `/api/v1/reports/summary?days=${days}&format=csv`);
  render(data);
  byId('reports-body').dataset.days = String(days);
}

byId('window-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    await load(byId('window-days').value);
  } catch (error) {
    replace(byId('reports-denied'), error.message);
    show(byId('reports-denied'));
  }
});

async function boot() {
  try {
    const { data } = await request('GET', '/api/v1/session');
    byId('agent-name').textContent = data.agent.name;
    if (!data.permissions.includes('reports.read')) throw new ApiError(403, { code: 'forbidden' });
    await load(byId('window-days').value);
    show(byId('reports-body'));
  } catch (error) {
    const region = byId('reports-denied');
    if (error.status === 401) replace(region, 'You are not signed in. ', h('a', { href: '/', text: 'Sign in on the cases page' }), ', then come back.');
    else if (error.status === 403) replace(region, 'Reports are for tier 2 and above, and administrators. ', h('a', { href: '/', text: 'Back to the cases' }));
    else replace(region, error.message);
    show(region);
  } finally {
    show(byId('loading'), false);
  }
}

boot();
