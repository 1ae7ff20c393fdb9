// Related cases (api.md v1.3 "One account, one story"): every other case, open or recently finished, that shares the
// account e-mail, a device, the contact address or the phone, with why and whether it names the same customer. Two
// cases sharing the account or a device with different customers both carry `parallel_case`: one is not the owner's.
import { h } from '../dom.js';
import { formatDateTime } from '../format.js';
import { groupCaseNumber } from '../identifiers.js';
import { RELATED_REASONS, STATES, TIERS, label } from '../labels.js';

/** The panel's body, or null when the case has no related case. */
export function relatedPanel(c) {
  const related = c.related ?? [];
  if (!related.length) return null;
  return h('div', { id: 'related-body' },
    related.some((r) => !r.same_customer && (r.why.includes('account') || r.why.includes('device')))
      ? h('p', { class: 'message', dataset: { kind: 'warn' }, id: 'related-warning' },
        'Another case claims this account or device for a different customer: one of the two may be the thief’s. Compare them before acting.')
      : null,
    h('ul', { class: 'plain related-cases', id: 'related-list' }, related.map((r) => h('li', { dataset: { number: r.number }, class: 'related-case' },
      h('a', { href: `#/cases/${r.number}`, class: 'mono related-link' }, groupCaseNumber(r.number)), ' ',
      h('span', { class: `badge state ${r.state}` }, label(STATES, r.state)), ' ', label(TIERS, r.tier),
      h('span', { class: 'block' }, 'Why: ', r.why.map((w) => label(RELATED_REASONS, w)).join(', '),
        r.same_customer ? ' — same customer' : h('strong', { class: 'related-other-customer' }, ' — a different customer')),
      h('span', { class: 'muted block' }, `Opened ${formatDateTime(r.opened_at)}`)))));
}
