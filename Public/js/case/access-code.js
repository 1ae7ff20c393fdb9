// A new access code for a customer who lost theirs (opened from the Actions panel).
import { byId, h, replace } from '../dom.js';
import { app, current, say, send } from './common.js';
import { loadMessages } from './messages.js';
import { loadTimeline } from './timeline.js';

// MARK: Access code

/** A new access code for a customer who lost theirs: shown once here, grouped for reading aloud. */
export function openAccessCode() {
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
