// The Messages panel: the conversation, what the case sent to whom and when (never a body) and what the customer
// wrote back (its text as text, never HTML), in time order, looking again while one waits.
import { byId, h } from '../dom.js';
import { formatDateTime, words } from '../format.js';
import { MESSAGE_KINDS, label } from '../labels.js';
import { app, current, fill } from './common.js';

// MARK: Messages

/** Where a message went: the customer's address, or the partner's name and its endpoint. */
function recipientWords(message) {
  const to = message.to ?? {};
  // A refused notice of a new contact address names no address: the previous one reached the thief's and is not kept.
  if (message.channel === 'mail') return to.email ?? (message.kind === 'contact_changed' ? 'the previous contact address' : '—');
  return `${to.client ?? 'a partner'} (${to.url ?? '—'})`;
}

/** A mail the case received: who it says it is from (never proof), how it matched, its text in a <pre> (textContent:
 *  read, never rendered), its attachments as the evidence they became. */
function receivedItem(message) {
  const flags = [];
  if (message.from_rescue_address) flags.push(h('span', { class: 'badge rejected' }, 'from the rescue address the thief added'));
  if (message.auto) flags.push(h('span', { class: 'badge' }, 'automatic reply'));
  const matched = { reply_token: 'by its reply address', references: 'by the mail it answers', subject: 'by the case number from the contact address', agent: 'attached by an agent' };
  return h('li', { class: 'received', dataset: { direction: 'in', message: message.id } },
    h('span', { class: 'when' }, formatDateTime(message.received_at)),
    h('span', { class: 'what' }, 'Reply from ', h('span', { class: 'mono from' }, message.from ?? '—'), ': ', h('strong', {}, message.subject ?? '(no subject)'), ' ', flags),
    h('pre', { class: 'received-text', tabindex: '0', text: message.text }),
    message.attachments?.length
      ? h('p', { class: 'small attachments' }, 'Attachments filed as evidence: ',
        message.attachments.map((id, index) => [index ? ', ' : '', h('button', { type: 'button', class: 'secondary mono', onclick: () => document.querySelector(`[data-evidence="${id}"]`)?.scrollIntoView() }, id.slice(0, 8))]))
      : null,
    h('span', { class: 'muted small' }, `Matched ${matched[message.matched_by] ?? message.matched_by}. A reply is correspondence, never proof of identity.`));
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
    case 'refused': return message.reason === 'rescue_address' ? 'Not sent: the address reaches the rescue address the thief added' : `Not sent: ${words(message.reason)}`;
    default: return words(message.state);
  }
}

// While a message waits, the panel looks again a few times (the worker delivers within seconds); bounded per case view.
const MESSAGE_POLL_MS = 4000;
const MESSAGE_POLLS = 15;
let messagePoll = { timer: null, left: 0, number: null };

/** What the case sent to whom and when (never a body): mails to the customer and webhooks to partners. */
export function loadMessages({ polled = false } = {}) {
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
    return h('ol', { class: 'messages', id: 'messages-list' }, items.map((m) => m.direction === 'in' ? receivedItem(m) : h('li', { dataset: { channel: m.channel, kind: m.kind, state: m.state, direction: 'out' } },
      h('span', { class: 'when' }, formatDateTime(m.created_at)),
      h('span', { class: 'what' }, m.channel === 'mail' ? 'Mail to ' : 'Webhook to ', h('span', { class: 'mono to' }, recipientWords(m)), ': ',
        h('span', { class: m.channel === 'mail' ? 'kind' : 'kind mono' }, label(MESSAGE_KINDS, m.kind))),
      h('span', { class: `message-state ${m.state}` }, messageStateWords(m)))));
  });
}
