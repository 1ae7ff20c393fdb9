// The call, verified both ways (api.md v1.3): the desk code, to read to a customer we call (their status page shows
// it too, so they can tell the desk from a thief calling as "support"); and the two ways to verify a caller before a
// new access code is read out or the contact address is corrected: the customer code from their status page, or a
// one-time code mailed to the contact address. A verification lasts 15 minutes, for the agent who checked it; it
// proves the access code or the mailbox, never the account, and clears no risk signal.
import { byId, h, replace, show } from '../dom.js';
import { formatDateTime } from '../format.js';
import { reload } from '../case.js';
import { actorWords, app, current, say, send } from './common.js';

/** Six digits as read aloud: "482 109". */
export function groupCallCode(code) {
  return code ? `${code.slice(0, 3)} ${code.slice(3)}` : '';
}

/** The panel's body. */
export function callPanel(c) {
  const codes = c.call_codes;
  const verification = c.caller_verification;
  const mine = verification && verification.agent === `agent:${app.agent?.id}`;
  return h('div', { id: 'call-body' },
    codes
      ? h('p', { id: 'call-desk' }, 'Desk code, to read to the customer when you call them: ',
        h('strong', { class: 'mono big', id: 'call-desk-code' }, groupCallCode(codes.desk)),
        h('span', { class: 'muted block', id: 'call-desk-until' }, `Their status page shows the same code until ${formatDateTime(codes.valid_until)}.`))
      : h('p', { class: 'muted', id: 'call-desk' }, 'A finished case has no call codes: verify a caller with a mailed code.'),
    h('p', { id: 'call-state', class: 'message', dataset: { kind: mine ? 'ok' : 'info' } },
      mine ? `Caller verified by you (${verification.method === 'mailed_code' ? 'mailed code' : 'customer code'}) until ${formatDateTime(verification.verified_until)}.`
        : verification ? `Caller verified by ${actorWords(verification.agent)} until ${formatDateTime(verification.verified_until)}; not by you.`
          : 'Caller not verified. Verify them before reading out a new access code or correcting the contact address.'),
    app.can('case.verify_caller') ? verifyForms(codes) : null,
    h('p', { class: 'muted' }, 'A verified call proves that the caller holds the access code or reads the contact mailbox, not that the account is theirs: it clears no risk signal.'));
}

function verifyForms(codes) {
  const error = h('p', { class: 'field-error', id: 'call-error', role: 'alert', hidden: true });
  const input = (id, label) => h('div', { class: 'field' },
    h('label', { for: id }, label), h('input', { id, inputmode: 'numeric', autocomplete: 'off', maxlength: 9, size: 9, class: 'mono' }));
  const customerForm = codes ? h('form', { id: 'call-customer-form', novalidate: true },
    input('call-customer-code', 'The customer code the caller reads from their status page'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'call-customer-check' }, 'Check the code'))) : null;
  const mailedForm = h('form', { id: 'call-mailed-form', novalidate: true },
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'secondary', id: 'call-mail', onclick: (event) => mailCode(event.target, error) },
        `Mail a one-time code to ${current.data.customer?.contact_email ?? 'the contact address'}`)),
    input('call-mailed-code', 'The one-time code the caller reads from that mail'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'call-mailed-check' }, 'Check the mailed code')));
  customerForm?.addEventListener('submit', (event) => verify(event, { customer_code: byId('call-customer-code').value }, error));
  mailedForm.addEventListener('submit', (event) => verify(event, { mailed_code: byId('call-mailed-code').value }, error));
  return h('div', { id: 'call-verify' }, customerForm, mailedForm, error);
}

async function verify(event, json, error) {
  event.preventDefault();
  error.hidden = true;
  let answer;
  await send(event.target, error, async () => {
    ({ data: answer } = await app.api.call('POST', `/api/v1/cases/${current.number}/caller-verification`, { json }));
  }, async () => {
    await reload();
    say(`Caller verified until ${formatDateTime(answer.verified_until)}.`, 'ok');
  });
}

async function mailCode(button, error) {
  error.hidden = true;
  let answer;
  await send(button.closest('form'), error, async () => {
    ({ data: answer } = await app.api.call('POST', `/api/v1/cases/${current.number}/caller-verification`, { json: { method: 'mailed_code' } }));
  }, () => {
    if (answer.mailed) say(`A one-time code was mailed; it works until ${formatDateTime(answer.expires_at)}. Ask the caller to read it to you.`, 'ok');
    else {
      error.textContent = 'Not mailed: the contact address is the rescue address the thief added.';
      show(error);
    }
    byId('call-mailed-code')?.focus();
  });
}
