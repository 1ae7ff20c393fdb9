// Notes: internal or for the customer; the note being typed survives reloads of the list.
import { h, show } from '../dom.js';
import { formatDateTime } from '../format.js';
import { groupCaseNumber } from '../identifiers.js';
import { actorWords, allPages, allows, app, current, fill, send } from './common.js';
import { loadMessages } from './messages.js';
import { loadTimeline } from './timeline.js';

// MARK: Notes

export function loadNotes() {
  return fill('notes-body', async () => {
    const notes = await allPages(`/api/v1/cases/${current.number}/notes`);
    return [
      notes.length === 0 ? h('p', { class: 'muted' }, 'No notes yet.') : h('ol', { class: 'notes', id: 'notes-list' }, notes.map((note) => h('li', {},
        h('p', { class: 'muted small' }, formatDateTime(note.created_at), ` · ${actorWords(note.author)} · `,
          h('span', { class: `badge ${note.visibility}` }, note.visibility === 'customer' ? 'shown to the customer' : 'internal'),
          note.from_case ? [' · from case ', h('a', { href: `#/cases/${note.from_case}`, class: 'mono' }, groupCaseNumber(note.from_case))] : null),
        h('p', { class: 'note-body' }, note.body)))),
      app.can('case.note') && allows('note_internal') ? noteForm() : null];
  });
}

// The note being typed survives reloads of the notes list (and a sign-in in between), per case.
export const draftNotes = new Map();

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
      // A merged case's customer reads the case it went into: a note for them belongs there.
      allows('note_customer') ? h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'visibility', value: 'customer', id: 'note-customer' }), 'Also the customer, on the status page')
        : h('p', { class: 'muted small', id: 'note-customer-elsewhere' }, 'A note for the customer goes on the case this one was merged into.')),
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
