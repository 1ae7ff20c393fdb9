// What every panel of the case page shares: the agent's dashboard state and the case on screen, how a refusal
// reads, agents' names, and the helpers that fill a panel or send a change (If-Match; 412 reloads the case).
import { ApiError } from '../api.js';
import { announce, byId, h, replace, show, whileBusy } from '../dom.js';
import { FACTORS, REQUIREMENTS, UNLOCKS, fieldProblemWords, label } from '../labels.js';
import { reload } from '../case.js';

export let app = null;
export let current = null; // { number, data, version }

/** Keeps the dashboard's shared state (the agent, its permissions, the API client) for every panel. */
export function setApp(appState) { app = appState; }

/** The case on screen, or null; only the loader sets it. */
export function setCurrent(value) { current = value; }

export const message = () => byId('case-message');

/** Whether the case on screen takes `word` from this agent now (its `allowed_actions`: a transition, or other work
 *  such as `file_evidence`, `review`, `assign`, `note_customer`): the page offers nothing else. */
export function allows(word) {
  return current?.data?.allowed_actions?.includes(word) ?? false;
}

export function say(text, kind = 'error') {
  announce(message(), text, kind);
  if (text && kind === 'error') message().focus();
}

/** The words for a refused request, field errors included. */
export function problemWords(error) {
  if (!(error instanceof ApiError)) return String(error?.message ?? error);
  const fields = fieldProblemWords(error.errors);
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
      return `Not complete yet. Still to do: ${(error.problem.outstanding ?? []).map((u) => label(UNLOCKS, u).toLowerCase()).join('; ')}. Schedule each step in the unlock checklist: the service does it after the cooling-off, then complete the case.`;
    case 'account_busy':
      return `Not now: an unlock step is already scheduled on case ${error.problem.case_number ?? ''} of the same account. One recovery of an account at a time: look at that case first.`;
    case 'cooling_off':
      return 'Not while an unlock step waits for its time: the freeze holds until the step is done or cancelled.';
    case 'case_erased':
      return 'This case was erased: it takes no more changes.';
    case 'caller_not_verified':
      return 'Verify the caller first (The call): have them read the customer code on their status page, or mail them a one-time code and have them read it.';
    case 'caller_code_wrong':
      return 'That is not the case’s code. Wrong codes count against the case: ask the caller to read it again from their page or mail, never guess.';
    case 'different_customer':
      return 'These cases name different customers (their name or contact address differs). Merge them only if they are one person, with the confirmation ticked.';
    case 'risk_uncleared':
      return 'Not while this case is at risk: a tier 3 or engineering agent looks at the risk signals and clears them first (see Risk).';
    case 'four_eyes':
      return 'You cleared this case’s risk signals, so a second agent approves it and records its unlock steps.';
    case 'insufficient_tier':
    case 'forbidden':
      return `Not allowed for your tier. ${error.message}`;
    default:
      return fields ? `${error.message} ${fields}` : error.message;
  }
}

// Agents' names by actor ("agent:<uuid>"), from the `actors` the service sends beside events, notes and evidence.
export const agentNames = new Map();

export function learnNames(data) {
  for (const [actor, name] of Object.entries(data?.actors ?? {})) agentNames.set(actor, name);
}

export function actorWords(actor) {
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

export function dl(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(Boolean).map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
}

export async function allPages(path) {
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

/** Sends a change with If-Match (POST, or `method`); shows the result, or why not. 412: someone else changed the
 *  case, reload it. */
export async function change(container, path, json, done, method = 'POST') {
  await whileBusy(container, async () => {
    try {
      await app.api.call(method, path, { json, headers: { 'If-Match': current.version } });
      await reload();
      say(done, 'ok');
    } catch (error) {
      if (error.code === 'stale_version' || error.status === 412) {
        await reload();
        say('Someone else changed this case while you had it open. It has been reloaded: check what changed before you act again.', 'warn');
        message().focus();
      } else if (error.code === 'unlocks_outstanding') {
        // Show the checklist as it is now (a step may have been done meanwhile).
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
export async function fill(id, draw) {
  const body = byId(id);
  try {
    replace(body, await draw());
  } catch (error) {
    replace(body, h('p', { class: 'field-error' }, problemWords(error)));
  }
}

/** Sends a panel form's request with its controls disabled; then `after`, or why it was refused in `error`. */
export async function send(form, error, request, after) {
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
