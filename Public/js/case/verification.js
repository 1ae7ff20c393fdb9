// Verification: two of three factors (security answer, card, device) must match.
import { h } from '../dom.js';
import { FACTORS } from '../labels.js';
import { app, current, fill } from './common.js';

// MARK: Verification

export function loadVerification() {
  return fill('verification-body', async () => {
    const { data } = await app.api.call('GET', `/api/v1/cases/${current.number}/verification`);
    return [
      h('p', { id: 'verification-outcome', class: data.verified ? 'yes' : 'no' }, data.verified ? '✓ Identity verified (two of three factors match).' : 'Not verified yet: two of three factors must match.'),
      h('ul', { class: 'plain' }, Object.entries(FACTORS).map(([key, words]) => h('li', {}, `${words}: `, h('span', { class: `badge factor ${data.factors[key]}` }, data.factors[key]))))];
  });
}
