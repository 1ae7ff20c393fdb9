// Mail no rule matched to a case, above the queue (tier 1 and up): an agent attaches it to the case it belongs to or
// discards it with a reason. A received mail is correspondence: its sender, subject and text are shown as text only
// (never as HTML). A sender that reaches a rescue address some case recorded is marked: it is the thief writing in.
import { byId, h, replace, show, whileBusy } from './dom.js';
import { formatDateTime, words } from './format.js';

const REASONS = {
  no_match: 'no reply address, thread or case number from the contact address', sender_limit: 'too many mails from this sender this hour',
  too_large: 'over 25 MB', not_a_message: 'not a readable mail',
};

/** Draws the unmatched list (hidden when empty or when the agent may not handle it). */
export async function loadInbound(app) {
  const panel = byId('inbound-mail');
  if (!panel || !app.can('inbound.handle')) return;
  let items = [];
  try {
    items = (await app.api.call('GET', '/api/v1/inbound')).data.items ?? [];
  } catch {
    return;
  }
  show(panel, items.length > 0);
  replace(byId('inbound-list'), ...items.map((item) => inboundItem(app, item)));
}

function inboundItem(app, item) {
  const error = h('p', { class: 'field-error', role: 'alert', hidden: true });
  const numberField = `inbound-case-${item.id}`;
  const reasonField = `inbound-reason-${item.id}`;
  const act = async (form, path, json) => {
    await whileBusy(form, async () => {
      try {
        await app.api.call('POST', `/api/v1/inbound/${item.id}/${path}`, { json });
      } catch (e) {
        error.textContent = e?.problem?.detail ?? e?.message ?? 'Refused.';
        show(error);
        return;
      }
      await loadInbound(app);
    });
  };
  const attach = h('form', { class: 'inline-form' },
    h('label', { for: numberField }, 'Case number'),
    h('input', { id: numberField, inputmode: 'numeric', autocomplete: 'off', required: true }),
    h('button', { type: 'submit' }, 'Attach'));
  attach.addEventListener('submit', (event) => {
    event.preventDefault();
    act(attach, 'attach', { case_number: byId(numberField).value.trim() });
  });
  const discard = h('form', { class: 'inline-form' },
    h('label', { for: reasonField }, 'Reason'),
    h('input', { id: reasonField, maxlength: 2000, required: true }),
    h('button', { type: 'submit', class: 'secondary' }, 'Discard'));
  discard.addEventListener('submit', (event) => {
    event.preventDefault();
    act(discard, 'discard', { reason: byId(reasonField).value.trim() });
  });
  return h('li', { dataset: { inbound: item.id } },
    h('p', {}, h('span', { class: 'mono' }, item.from ?? '—'), ': ', h('strong', {}, item.subject ?? '(no subject)')),
    item.from_rescue_address ? h('p', { class: 'field-error', dataset: { rescueSender: '' } },
      'From a rescue address a thief added to an account: do not attach it to the owner’s case as their reply.') : null,
    h('pre', { class: 'received-text', tabindex: '0', text: item.text ?? '' }),
    h('p', { class: 'muted small' }, `Received ${formatDateTime(item.received_at)} · unmatched: ${REASONS[item.reason] ?? words(item.reason ?? '')}`),
    h('div', { class: 'actions' }, attach, discard), error);
}
