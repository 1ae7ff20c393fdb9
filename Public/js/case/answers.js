// Security answers: the questions on file, checked on the server; the reset is offered once every one matched.
import { h, show } from '../dom.js';
import { reload } from '../case.js';
import { openAction } from './actions.js';
import { app, current, fill, say, send } from './common.js';

// MARK: Security answers

/** The questions on file, one field each (any may be left empty: tier 1 may skip the birthday question); filed as
 *  evidence; each question says whether a filed answer matched; the reset is offered here once every one has. */
export function loadAnswers() {
  return fill('answers-body', async () => {
    let questions;
    try {
      ({ data: { items: questions } } = await app.api.call('GET', `/api/v1/cases/${current.number}/questions`));
    } catch (error) {
      if (error.code === 'no_account_on_file') return h('p', { class: 'muted', id: 'answers-none' }, 'The account is not on file: there are no questions to ask. Use the card, the device or documents.');
      throw error;
    }
    if (questions.length === 0) return h('p', { class: 'muted', id: 'answers-none' }, 'No security questions are on file for this account.');
    const allMatched = questions.every((q) => q.matched);
    const error = h('p', { class: 'field-error', id: 'answers-error', role: 'alert', hidden: true });
    const form = h('form', { id: 'answers-form', novalidate: true },
      h('p', { class: 'muted' }, 'Type what the customer says. Answers are compared on the server and never stored; each wrong one counts against the account.'),
      questions.map((q) => h('div', { class: 'field', dataset: { question: q.id } },
        h('label', { for: `answer-${q.id}` }, q.question, ' ',
          h('span', { class: `badge factor ${q.matched ? 'matched' : 'missing'}` }, q.matched ? 'matched' : 'not matched yet')),
        h('input', { type: 'text', id: `answer-${q.id}`, autocomplete: 'off', spellcheck: 'false' }))),
      error,
      h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'answers-submit' }, 'Check the answers')));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const answers = questions.map((q) => ({ question_id: q.id, answer: form.querySelector(`#answer-${q.id}`).value.trim() })).filter((a) => a.answer);
      if (!answers.length) { error.textContent = 'Type at least one answer.'; show(error); return; }
      await send(form, error, () => app.api.call('POST', `/api/v1/cases/${current.number}/evidence`, { json: { type: 'security_answers', answers } }), async () => {
        // The whole case again: whether a reset is offered (allowed_actions) follows the answers.
        await reload();
        say(`${answers.length === 1 ? 'The answer was' : 'The answers were'} checked and filed.`, 'ok');
      });
    });
    const canReset = allMatched && current.data.allowed_actions.includes('send_reset');
    return [
      h('p', { id: 'answers-outcome', class: allMatched ? 'yes' : null },
        allMatched ? '✓ Every answer on file matched.' : `${questions.filter((q) => q.matched).length} of ${questions.length} answers on file matched.`),
      canReset ? h('div', { class: 'actions' }, h('button', { type: 'button', id: 'answers-reset', onclick: () => openAction('send_reset') },
        'Send a reset to the verified address')) : null,
      form];
  });
}
