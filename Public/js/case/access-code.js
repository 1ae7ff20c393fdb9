// A new access code for a customer who lost theirs (opened from the Actions panel). It is mailed to the contact
// address; it is shown here, to read out to a caller, only to tier 2+ (give_access_code) and only while the caller is
// verified by this agent (The call panel: their customer code, or a mailed one-time code): a code read out to whoever
// calls is how a thief gets in (api.md v1.3 "The call, verified both ways").
import { byId, h, replace } from '../dom.js';
import { allows, app, current, say, send } from './common.js';
import { loadMessages } from './messages.js';
import { loadTimeline } from './timeline.js';

// MARK: Access code

/** The new-code form: mail only, or (tier 2+, a caller this agent verified) also read out to the caller. */
export function openAccessCode() {
  const slot = byId('action-form-slot');
  const error = h('p', { class: 'field-error', id: 'action-error', role: 'alert', hidden: true });
  const mayGive = allows('give_access_code');
  const verification = current.data.caller_verification;
  const verified = verification && verification.agent === `agent:${app.agent?.id}`;
  const form = h('form', { id: 'action-form', class: 'action-form', novalidate: true, dataset: { action: 'access-code' } },
    h('h3', {}, 'Issue a new access code'),
    h('p', { class: 'muted' }, `For a customer who lost theirs. The new code is mailed to the contact address, ${current.data.customer?.contact_email ?? ''}; the old code stops working at once, and the lock after wrong tries is lifted.`),
    mayGive
      ? h('fieldset', { id: 'access-code-how' }, h('legend', {}, 'How the customer gets it'),
        h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'access-code-how', value: 'mail', checked: true, id: 'access-code-mail' }), 'Mail it only'),
        h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'access-code-how', value: 'give', id: 'access-code-give', disabled: !verified }),
          verified ? 'Also read it out to the caller, whom I verified' : 'Also read it out to the caller: verify them first (The call)'))
      : h('p', { class: 'muted', id: 'access-code-mail-only' }, 'Never read a code out on the phone: it goes to the contact address only. A caller who cannot receive it there is verified by tier 2 (The call), who may then read it out.'),
    error,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'action-confirm' }, 'Confirm: issue a new code'),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Cancel')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    let answer;
    await send(form, error, async () => {
      ({ data: answer } = await app.api.call('POST', `/api/v1/cases/${current.number}/access-code`,
        { json: giving(form) ? { read_out: true } : {} }));
    }, () => {
      if (answer.access_code) showCode(slot, answer.access_code, answer.mailed);
      else {
        replace(slot);
        say(answer.mailed ? `A new access code was mailed to ${current.data.customer?.contact_email ?? 'the contact address'}. The old one no longer works.`
          : 'A new code was issued but not mailed: the contact address is the rescue address the thief added. Correct the contact address first.',
        answer.mailed ? 'ok' : 'warn');
      }
      loadTimeline();
      if (app.can('case.events')) loadMessages();
    });
  });
  replace(slot, form);
  byId(mayGive ? 'access-code-mail' : 'action-confirm').focus();
}

function giving(form) {
  return form.querySelector('#access-code-give')?.checked ?? false;
}

/** The code answered to a verified caller: shown once here, grouped for reading aloud. */
function showCode(slot, code, mailed) {
  replace(slot, h('div', { class: 'action-form', id: 'new-code' },
    h('h3', {}, 'New access code'),
    h('p', {}, `Read it to the caller now: it is shown only this once.${mailed ? ' It was also mailed to the contact address.' : ''}`),
    h('p', {}, h('span', { class: 'mono big', id: 'new-code-value' }, code.replace(/-/g, ' ')), ' ',
      h('button', { type: 'button', class: 'secondary', id: 'new-code-copy', onclick: async () => {
        try { await navigator.clipboard.writeText(code); say('Access code copied.', 'ok'); } catch { say('Select the code and press Ctrl+C to copy it.', 'info'); }
      } }, 'Copy')),
    h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Done'))));
  byId('new-code-value').focus?.();
}
