// The administration page (/admin): agents, API clients (with their webhook endpoints and latest deliveries) and the
// audit log, for admin agents. Every change is a
// call to /api/v1/admin/…, which records it on the admin hash chain; the chain is checked here, in the browser.
// One-time secrets (a new agent's password and TOTP URI, a client's key and signing secret) are shown once in
// #secret and dropped from the page when dismissed.
import { ApiError, agentClient, request } from './api.js';
import { verifyChain } from './chain.js';
import { announce, byId, h, replace, show, whileBusy } from './dom.js';
import { formatDateTime } from './format.js';
import { TIERS, label } from './labels.js';
import { VOCABULARY } from './vocabulary.js';

const api = agentClient({ onUnauthorized: () => Promise.reject(new ApiError(401, { code: 'unauthenticated', detail: 'Your session has ended.' })) });
let clientNames = new Map();
// The signed-in admin's actor (`agent:<id>`): their own proposals are for another admin to confirm.
let me = '';
const AWAITS = 'Proposed: it awaits a second administrator, who confirms it under Proposals.';

/** Shows one-time secrets: `pairs` of [label, value]. */
function showSecret(intro, pairs) {
  byId('secret-intro').textContent = intro;
  replace(byId('secret-values'), pairs.map(([label, value]) => [h('dt', { text: label }), h('dd', {}, h('code', { text: value }))]));
  const panel = byId('secret');
  show(panel);
  panel.focus();
}

byId('secret-done').addEventListener('click', () => {
  replace(byId('secret-values'));
  byId('secret-intro').textContent = '';
  show(byId('secret'), false);
});

/** The page for a signed-out or non-admin visitor. */
function refuse(error) {
  show(byId('admin-body'), false);
  const region = byId('admin-denied');
  if (error.status === 401) {
    replace(region, 'You are not signed in (or your session has ended). ', h('a', { href: '/', text: 'Sign in on the cases page' }), ', then come back.');
  } else if (error.status === 403 && error.code !== 'csrf_failed') {
    replace(region, 'Only administrators may use this page. ', h('a', { href: '/', text: 'Back to the cases' }));
  } else {
    replace(region, error.message);
  }
  show(region);
}

/** Runs a change; on success reloads the lists and says so in `region`. */
async function change(region, work, done) {
  try {
    const result = await work();
    announce(region, '');
    await Promise.all([loadAgents(), loadClients(), loadProposals()]);
    await loadAudit();
    // A proposal (a 202 naming who proposed it) is not a change: say so rather than what would have happened. A retried
    // delivery's 202 is queued work, said as usual.
    if (result?.status === 202 && result.data?.proposed_by) announce(byId('flash'), AWAITS, 'info');
    else if (done) announce(byId('flash'), done, 'ok');
    return result;
  } catch (error) {
    if (error.status === 401 || (error.status === 403 && error.code !== 'csrf_failed')) refuse(error);
    else announce(region, [error.message, error.fieldMessages].filter(Boolean).join(' '), 'error');
    return null;
  }
}

// MARK: Agents

function agentRow(agent) {
  const region = byId('agents-message');
  const tier = h('select', { 'aria-label': `Tier of ${agent.name}`, dataset: { field: 'tier' } },
    VOCABULARY.tiers.map((value) => h('option', { value, selected: value === agent.tier, text: label(TIERS, value) })));
  tier.addEventListener('change', () => change(region, () => api.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { json: { tier: tier.value } }),
    `${agent.name} is now ${TIERS[tier.value]}.`));
  const admin = h('input', { type: 'checkbox', checked: agent.admin, 'aria-label': `${agent.name} is an administrator`, dataset: { field: 'admin' } });
  admin.addEventListener('change', () => change(region, () => api.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { json: { admin: admin.checked } }),
    `${agent.name} ${admin.checked ? 'is now' : 'is no longer'} an administrator.`));
  const passkey = h('input', { type: 'checkbox', checked: agent.passkey_required, 'aria-label': `${agent.name} must sign in with a passkey`,
    dataset: { field: 'passkey_required' } });
  passkey.addEventListener('change', () => change(region, () => api.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { json: { passkey_required: passkey.checked } }),
    passkey.checked ? `${agent.name} must now sign in with a passkey.` : `${agent.name} may sign in with password and code again.`));
  const toggle = h('button', {
    type: 'button', class: agent.active ? 'secondary' : '', dataset: { action: agent.active ? 'deactivate' : 'reactivate' },
    'aria-label': `${agent.active ? 'Deactivate' : 'Reactivate'} ${agent.name}`, text: agent.active ? 'Deactivate' : 'Reactivate',
  });
  toggle.addEventListener('click', () => change(region, () => api.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { json: { active: !agent.active } }),
    agent.active ? `${agent.name} is deactivated; their sessions are ended.` : `${agent.name} may sign in again.`));
  const resetPassword = h('button', { type: 'button', class: 'secondary', dataset: { action: 'reset-password' }, 'aria-label': `Reset the password of ${agent.name}`, text: 'Reset password' });
  resetPassword.addEventListener('click', async () => {
    const result = await change(region, () => api.call('POST', `/api/v1/admin/agents/${agent.id}/reset-password`));
    if (result && result.status !== 202) showSecret(`A new password for ${agent.name} (${agent.email}); their sessions are ended.`, [['Password', result.data.password]]);
  });
  const resetTOTP = h('button', { type: 'button', class: 'secondary', dataset: { action: 'reset-totp' }, 'aria-label': `Reset the authenticator of ${agent.name}`, text: 'Reset TOTP' });
  resetTOTP.addEventListener('click', async () => {
    const result = await change(region, () => api.call('POST', `/api/v1/admin/agents/${agent.id}/reset-totp`));
    if (result && result.status !== 202) showSecret(`A new authenticator secret for ${agent.name} (${agent.email}); their sessions are ended.`, [['TOTP URI', result.data.totp_uri]]);
  });
  return h('tr', { dataset: { agent: agent.id, email: agent.email } },
    h('td', {}, h('strong', { text: agent.name }), h('span', { class: 'block small mono', text: agent.email })),
    h('td', {}, tier),
    h('td', {}, admin),
    h('td', {}, passkey, h('span', { class: 'block small', text: `${agent.passkeys} registered` })),
    h('td', {}, h('span', { class: agent.active ? 'state-on' : 'state-off', dataset: { state: agent.active ? 'active' : 'inactive' }, text: agent.active ? 'Active' : 'Inactive' }), ' ', toggle),
    h('td', { text: agent.last_sign_in_at ? formatDateTime(agent.last_sign_in_at) : 'Never' }),
    h('td', {}, h('div', { class: 'actions' }, resetPassword, resetTOTP)));
}

async function everyPage(path) {
  const items = [];
  let cursor = null;
  for (let page = 0; page < 50; page += 1) {
    const { data } = await api.call('GET', `${path}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...data.items);
    if (!data.next_cursor) return { items, actors: data.actors ?? {} };
    cursor = data.next_cursor;
  }
  return { items, actors: {} };
}

async function loadAgents() {
  const { items } = await everyPage('/api/v1/admin/agents');
  replace(byId('agents-rows'), items.map(agentRow));
}

// A new agent's tier: one of the service's, in its order.
byId('agent-tier').append(...VOCABULARY.tiers.map((tier) => h('option', { value: tier }, label(TIERS, tier))));

byId('agent-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const region = byId('agent-form-message');
  const json = { email: byId('agent-email').value.trim(), name: byId('agent-name-input').value.trim(), tier: byId('agent-tier').value, admin: byId('agent-admin').checked };
  if (!json.email || !json.name) { announce(region, 'Enter the agent\'s email and name.', 'error'); return; }
  await whileBusy(form, async () => {
    const result = await change(region, () => api.call('POST', '/api/v1/admin/agents', { json }));
    if (!result) return;
    form.reset();
    if (result.status === 202) {
      // Proposed: this admin holds the password, the confirming admin will hold the TOTP URI; neither alone signs in.
      showSecret(`${json.name} (${result.data.target.email}) is proposed and cannot sign in yet: it awaits a second administrator, who will be shown the authenticator (TOTP) secret when confirming. Hand the agent this password.`,
        [['Email', result.data.target.email], ['Password', result.data.password]]);
      return;
    }
    showSecret(`${result.data.name} (${result.data.email}) can sign in with these.`,
      [['Email', result.data.email], ['Password', result.data.password], ['TOTP URI', result.data.totp_uri]]);
  });
});

// MARK: Proposals

/** What a proposal would do, in words. */
function proposalWords(proposal) {
  const c = proposal.change ?? {};
  const who = proposal.target.email;
  switch (proposal.kind) {
    case 'agent_add': return `Add agent ${who} (${TIERS[c.tier] ?? c.tier}${c.admin ? ', administrator' : ''})`;
    case 'password_reset': return `Reset the password of ${who}`;
    case 'totp_reset': return `Reset the authenticator of ${who}`;
    default: {
      const parts = [];
      if (c.tier) parts.push(`tier ${TIERS[c.tier] ?? c.tier}`);
      if (c.admin !== undefined) parts.push(c.admin ? 'make administrator' : 'no longer administrator');
      if (c.active !== undefined) parts.push(c.active ? 'reactivate' : 'deactivate');
      if (c.passkey_required !== undefined) parts.push(c.passkey_required ? 'require a passkey' : 'passkey no longer required');
      return `Change ${who}: ${parts.join(', ')}`;
    }
  }
}

const PROPOSAL_STATES = { pending: 'Awaiting a second administrator', confirmed: 'Confirmed', expired: 'Expired', withdrawn: 'Withdrawn' };

/** Shows what a confirmation revealed to this admin (once). */
function showConfirmed(proposal, result) {
  const who = proposal.target.email;
  if (proposal.kind === 'agent_add') {
    showSecret(`${who} exists now. The administrator who proposed it holds the password; hand the agent this authenticator secret.`,
      [['Email', who], ['TOTP URI', result.totp_uri]]);
  } else if (proposal.kind === 'password_reset') {
    showSecret(`A new password for ${who}; their sessions are ended.`, [['Password', result.password]]);
  } else if (proposal.kind === 'totp_reset') {
    showSecret(`A new authenticator secret for ${who}; their sessions are ended.`, [['TOTP URI', result.totp_uri]]);
  } else {
    announce(byId('flash'), `Confirmed: ${proposalWords(proposal)}.`, 'ok');
  }
}

function proposalRow(proposal, actors) {
  const region = byId('proposals-message');
  const words = proposalWords(proposal);
  const mine = proposal.proposed_by === me;
  const actions = [];
  if (proposal.status === 'pending' && !mine) {
    const confirm = h('button', { type: 'button', dataset: { action: 'confirm' }, 'aria-label': `Confirm: ${words}`, text: 'Confirm' });
    confirm.addEventListener('click', async () => {
      const result = await change(region, () => api.call('POST', `/api/v1/admin/proposals/${proposal.id}/confirm`));
      if (result) showConfirmed(proposal, result.data.result);
    });
    actions.push(confirm);
  }
  if (proposal.status === 'pending') {
    const withdraw = h('button', { type: 'button', class: 'secondary', dataset: { action: 'withdraw' },
      'aria-label': `${mine ? 'Withdraw' : 'Decline'}: ${words}`, text: mine ? 'Withdraw' : 'Decline' });
    withdraw.addEventListener('click', () => change(region, () => api.call('POST', `/api/v1/admin/proposals/${proposal.id}/withdraw`),
      `${mine ? 'Withdrawn' : 'Declined'}: ${words}.`));
    actions.push(withdraw);
  }
  const by = actors[proposal.proposed_by] ?? proposal.proposed_by;
  return h('tr', { dataset: { proposal: proposal.id, kind: proposal.kind, status: proposal.status } },
    h('td', { text: words }),
    h('td', {}, mine ? `${by} (you)` : by, h('span', { class: 'block small', text: formatDateTime(proposal.proposed_at) })),
    h('td', { text: formatDateTime(proposal.expires_at) }),
    h('td', { text: PROPOSAL_STATES[proposal.status] ?? proposal.status }),
    h('td', {}, mine && proposal.status === 'pending' ? h('span', { class: 'block small', text: 'Another administrator confirms it.' }) : null,
      h('div', { class: 'actions' }, actions)));
}

async function loadProposals() {
  const { data } = await api.call('GET', '/api/v1/admin/proposals?limit=50');
  show(byId('proposals-alone'), data.alone);
  show(byId('proposals-two'), !data.alone);
  show(byId('proposals-empty'), data.items.length === 0);
  show(byId('proposals-list'), data.items.length > 0);
  replace(byId('proposals-rows'), data.items.map((proposal) => proposalRow(proposal, data.actors ?? {})));
}

// MARK: API clients

function clientRow(client) {
  const region = byId('clients-message');
  const rotate = h('button', { type: 'button', class: 'secondary', dataset: { action: 'rotate' }, 'aria-label': `New signing secret for ${client.name}`, text: 'Rotate secret' });
  rotate.addEventListener('click', async () => {
    const result = await change(region, () => api.call('POST', `/api/v1/admin/clients/${client.id}/rotate`));
    if (result) {
      showSecret(`A new signing secret for ${client.name}. The previous one keeps working until ${formatDateTime(result.data.previous_secret_valid_until)}.`,
        [['Signing secret', result.data.signing_secret]]);
    }
  });
  // A new API key ends the old one at once (unlike a signing secret): the first press asks, the second rotates.
  const rotateKey = h('button', { type: 'button', class: 'secondary', dataset: { action: 'rotate-key' }, 'aria-label': `New API key for ${client.name}`, text: 'New API key' });
  rotateKey.addEventListener('click', async () => {
    if (rotateKey.dataset.confirm !== 'yes') {
      rotateKey.dataset.confirm = 'yes';
      rotateKey.textContent = 'Press again: the old key stops at once';
      rotateKey.setAttribute('aria-label', `Press again for a new API key for ${client.name}: its current key stops working at once`);
      return;
    }
    const result = await change(region, () => api.call('POST', `/api/v1/admin/clients/${client.id}/rotate-key`));
    if (result) {
      showSecret(`A new API key for ${client.name}. The previous key no longer works; the signing secret is unchanged.`,
        [['API key', result.data.api_key]]);
    }
  });
  // Revoking cannot be undone: the first press asks, the second revokes.
  const revoke = h('button', { type: 'button', class: 'danger', dataset: { action: 'revoke' }, 'aria-label': `Revoke ${client.name}`, text: 'Revoke' });
  revoke.addEventListener('click', () => {
    if (revoke.dataset.confirm !== 'yes') {
      revoke.dataset.confirm = 'yes';
      revoke.textContent = 'Press again to revoke';
      revoke.setAttribute('aria-label', `Press again to revoke ${client.name}: its key stops working at once`);
      return;
    }
    change(region, () => api.call('DELETE', `/api/v1/admin/clients/${client.id}`), `${client.name} is revoked.`);
  });
  const secret = client.previous_secret_valid_until && client.active
    ? `Rotated ${formatDateTime(client.rotated_at)}; the previous secret works until ${formatDateTime(client.previous_secret_valid_until)}`
    : client.rotated_at ? `Rotated ${formatDateTime(client.rotated_at)}` : 'Never rotated';
  return h('tr', { dataset: { client: client.id } },
    h('td', {}, h('strong', { text: client.name }), h('span', { class: 'block small', text: `Added ${formatDateTime(client.created_at)}` }),
      h('span', { class: 'block small mono', text: client.id })),
    h('td', {}, h('span', { class: client.active ? 'state-on' : 'state-off', text: client.active ? 'Active' : `Revoked ${formatDateTime(client.revoked_at)}` })),
    h('td', { class: 'small', text: secret }),
    h('td', {}, h('div', { class: 'actions' }, client.active ? [rotate, rotateKey, revoke] : null, webhooksButton(client))));
}

// MARK: A client's webhooks

// The clients whose webhooks are shown, kept open when the list is drawn again.
const openWebhooks = new Set();

function webhooksButton(client) {
  const button = h('button', { type: 'button', class: 'secondary', dataset: { action: 'webhooks' }, 'aria-expanded': 'false',
    'aria-controls': `webhooks-${client.id}`, 'aria-label': `Webhooks of ${client.name}`, text: 'Webhooks' });
  button.addEventListener('click', () => {
    if (openWebhooks.has(client.id)) {
      openWebhooks.delete(client.id);
      document.getElementById(`webhooks-${client.id}`)?.remove();
      button.setAttribute('aria-expanded', 'false');
    } else {
      openWebhooks.add(client.id);
      showWebhooks(client);
    }
  });
  return button;
}

/** "HTTP 500 · 120 ms · error" for one attempt, at its time. */
function attemptWords(attempt) {
  return [formatDateTime(attempt.at), attempt.status === null ? 'no answer' : `HTTP ${attempt.status}`, `${attempt.duration_ms} ms`, attempt.error]
    .filter(Boolean).join(' · ');
}

function deliveryStateWords(delivery) {
  if (delivery.state === 'sent') return `Delivered ${formatDateTime(delivery.sent_at)}`;
  if (delivery.state === 'queued') return delivery.attempts.length ? `Retry at ${formatDateTime(delivery.next_attempt_at)}` : 'Waiting to be sent';
  return 'Failed (no more retries)';
}

/** A delivery that gave up (dead-lettered) or keeps failing may be sent again now, to an endpoint still receiving. */
function retryable(endpoint, delivery) {
  return endpoint.active && (delivery.state === 'failed' || (delivery.state === 'queued' && delivery.attempts.length > 0));
}

function retryButton(client, endpoint, delivery) {
  const button = h('button', { type: 'button', class: 'secondary', dataset: { action: 'retry' },
    'aria-label': `Send the ${delivery.event} delivery of ${formatDateTime(delivery.created_at)} again now`, text: 'Retry now' });
  button.addEventListener('click', async () => {
    const region = byId('clients-message');
    button.disabled = true;
    await change(region,
      () => api.call('POST', `/api/v1/admin/clients/${client.id}/webhooks/${endpoint.id}/deliveries/${delivery.id}/retry`),
      `The ${delivery.event} delivery to ${endpoint.url} is queued again, due now.`);
    button.disabled = false;
  });
  return button;
}

function endpointPanel(client, endpoint) {
  const deliveries = endpoint.recent_deliveries;
  return h('div', { class: 'endpoint', dataset: { endpoint: endpoint.id } },
    h('h4', {}, h('span', { class: 'mono', text: endpoint.url })),
    h('p', { class: 'small' },
      h('span', { class: endpoint.active ? 'state-on' : 'state-off', dataset: { state: endpoint.active ? 'active' : 'disabled' },
        text: endpoint.active ? 'Active' : `Disabled ${formatDateTime(endpoint.disabled_at)}: the receiver answered 410 Gone` }),
      ` · added ${formatDateTime(endpoint.created_at)} · events: `, h('span', { class: 'mono', text: endpoint.events.join(', ') })),
    deliveries.length === 0 ? h('p', { class: 'muted small', text: 'Nothing delivered yet.' })
      : h('table', { class: 'queue deliveries' },
        h('caption', { class: 'visually-hidden', text: `The latest deliveries to ${endpoint.url} for ${client.name}, newest first` }),
        h('thead', {}, h('tr', {}, ['Queued', 'Event', 'State', 'Attempts'].map((title) => h('th', { scope: 'col', text: title })))),
        h('tbody', {}, deliveries.map((delivery) => h('tr', { dataset: { delivery: delivery.id, state: delivery.state } },
          h('td', { text: formatDateTime(delivery.created_at) }),
          h('td', { class: 'mono', text: delivery.event }),
          h('td', {}, deliveryStateWords(delivery), retryable(endpoint, delivery) ? [' ', retryButton(client, endpoint, delivery)] : null),
          h('td', {}, delivery.attempts.length === 0 ? '—'
            : h('ol', { class: 'attempts' }, delivery.attempts.map((attempt) => h('li', { class: 'small', text: attemptWords(attempt) })))))))));
}

/** Opens (or refreshes) the row under the client's with its endpoints and their latest 20 deliveries. */
async function showWebhooks(client) {
  const row = document.querySelector(`#clients-rows tr[data-client="${client.id}"]`);
  if (!row) return;
  const id = `webhooks-${client.id}`;
  let detail = document.getElementById(id);
  if (!detail) {
    detail = h('tr', { id, class: 'client-webhooks', dataset: { webhooksFor: client.id } }, h('td', { colspan: 4 }, h('p', { class: 'muted', text: 'Loading…' })));
    row.after(detail);
  }
  row.querySelector('button[data-action="webhooks"]')?.setAttribute('aria-expanded', 'true');
  const cell = detail.firstChild;
  try {
    const { data } = await api.call('GET', `/api/v1/admin/clients/${client.id}/webhooks`);
    replace(cell, h('h3', { text: `Webhook endpoints of ${client.name}` }),
      data.items.length === 0 ? h('p', { class: 'muted', text: 'No webhook endpoints (deleted ones are not shown).' })
        : data.items.map((endpoint) => endpointPanel(client, endpoint)));
  } catch (error) {
    if (error.status === 401 || (error.status === 403 && error.code !== 'csrf_failed')) refuse(error);
    else replace(cell, h('p', { class: 'field-error', text: error.message }));
  }
}

async function loadClients() {
  const { items } = await everyPage('/api/v1/admin/clients');
  clientNames = new Map(items.map((client) => [client.id, client.name]));
  replace(byId('clients-rows'), items.map(clientRow));
  for (const client of items) if (openWebhooks.has(client.id)) showWebhooks(client);
}

byId('client-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const region = byId('client-form-message');
  const name = byId('client-name').value.trim();
  if (!name) { announce(region, 'Enter the client\'s name.', 'error'); return; }
  await whileBusy(form, async () => {
    const result = await change(region, () => api.call('POST', '/api/v1/admin/clients', { json: { name } }));
    if (!result) return;
    form.reset();
    showSecret(`${result.data.name} authenticates with these: the key in Authorization: Bearer, the secret signs every POST.`,
      [['Client id', result.data.id], ['API key', result.data.api_key], ['Signing secret', result.data.signing_secret]]);
  });
});

// MARK: Accounts on file

/** The account the form describes, in the shape of `POST /api/v1/accounts`; throws words for a missing part. */
function accountFromForm() {
  const value = (id) => byId(id).value.trim();
  const email = value('account-email');
  if (!email) throw new Error('Enter the account\'s email.');
  const questions = [1, 2].map((n) => ({ id: `q${n}`, question: value(`account-q${n}`), answer: value(`account-a${n}`) }))
    .filter((q) => q.question || q.answer);
  if (questions.some((q) => !q.question || !q.answer)) throw new Error('Give each security question its answer.');
  const account = { email, security_questions: questions, cards: [], devices: [] };
  const notice = byId('account-notice').value.split(/[\s,;]+/).filter(Boolean);
  if (notice.length) account.notice_addresses = notice;
  const number = value('account-card').replace(/[\s-]/g, '');
  if (number) account.cards.push({ number, exp_month: Number(value('account-card-month')), exp_year: Number(value('account-card-year')) });
  const device = { serial: value('account-serial'), imei: value('account-imei').replace(/[\s-]/g, ''), model: value('account-model') };
  if (device.serial || device.imei) {
    account.devices.push(Object.fromEntries(Object.entries(device).filter(([, v]) => v)));
  }
  return account;
}

/** What went wrong with one account, in words (the service names the fields, never echoes a value). */
function accountRefusal(error) {
  if (error.code === 'account_exists') return 'this account is already on file';
  if (error.status === 404) return 'no account with this address is on file';
  return [error.message, error.fieldMessages].filter(Boolean).join(' ');
}

byId('account-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const region = byId('account-form-message');
  let json;
  try {
    json = accountFromForm();
  } catch (problem) {
    announce(region, problem.message, 'error');
    return;
  }
  // With an address to correct, what is on file for it is replaced (admins only; an audit-log entry).
  const replacing = byId('account-replace').value.trim();
  await whileBusy(form, async () => {
    try {
      if (replacing) await api.call('PUT', `/api/v1/accounts/${encodeURIComponent(replacing)}`, { json });
      else await api.call('POST', '/api/v1/accounts', { json });
      form.reset();
      announce(region, '');
      announce(byId('flash'), replacing ? `The account on file for ${replacing} is replaced: ${json.email}.` : `${json.email} is on file.`, 'ok');
      if (replacing) await loadAudit();
    } catch (error) {
      if (error.status === 401 || (error.status === 403 && error.code !== 'csrf_failed')) refuse(error);
      else announce(region, `Not put on file: ${accountRefusal(error)}.`, 'error');
    }
  });
});

// A file of accounts, one a line, put on file one by one as `reclaim accounts import` does: each line's outcome listed,
// the good ones stored whatever the others do.
byId('account-import-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const region = byId('account-import-message');
  const results = byId('account-import-results');
  const file = byId('account-file').files[0];
  if (!file) { announce(region, 'Choose a file of accounts, one JSON object a line.', 'error'); return; }
  const lines = (await file.text()).split(/\r?\n/).map((text, index) => ({ text: text.trim(), number: index + 1 })).filter((l) => l.text);
  if (!lines.length) { announce(region, 'The file holds no account.', 'error'); return; }
  replace(results);
  let stored = 0;
  await whileBusy(form, async () => {
    for (const line of lines) {
      let json;
      try {
        json = JSON.parse(line.text);
      } catch {
        results.append(h('li', { dataset: { line: line.number, outcome: 'refused' }, text: `Line ${line.number}: not JSON.` }));
        continue;
      }
      try {
        await api.call('POST', '/api/v1/accounts', { json });
        stored += 1;
        results.append(h('li', { dataset: { line: line.number, outcome: 'stored' }, text: `Line ${line.number}: ${json.email} is on file.` }));
      } catch (error) {
        if (error.status === 401 || (error.status === 403 && error.code !== 'csrf_failed')) { refuse(error); return; }
        results.append(h('li', { dataset: { line: line.number, outcome: 'refused' }, text: `Line ${line.number}: ${accountRefusal(error)}.` }));
      }
    }
  });
  announce(region, `${stored} of ${lines.length} accounts put on file.`, stored === lines.length ? 'ok' : 'warn');
});

// MARK: Audit

// The audit list's actor names, for the entries that name another actor (a proposal's proposer).
let auditActors = {};
function actorName(actor) {
  if (actor === 'cli') return 'Command line';
  if (actor === 'system') return 'System';
  return auditActors[actor] ?? actor;
}

function describe(event) {
  const d = event.data ?? {};
  const changes = d.changes ?? {};
  switch (event.type) {
    case 'agent_added': return `Added agent ${d.email} (${TIERS[d.tier] ?? d.tier}${d.admin ? ', administrator' : ''})`;
    case 'agent_updated': {
      const parts = [];
      if (changes.tier) parts.push(`tier ${TIERS[changes.tier.from] ?? changes.tier.from} → ${TIERS[changes.tier.to] ?? changes.tier.to}`);
      if (changes.admin) parts.push(changes.admin.to ? 'made administrator' : 'no longer administrator');
      if (changes.active) parts.push(changes.active.to ? 'reactivated' : 'deactivated');
      if (changes.passkey_required) parts.push(changes.passkey_required.to ? 'passkey required' : 'passkey no longer required');
      return `Changed ${d.email}: ${parts.join(', ')}`;
    }
    case 'password_reset': return `Reset the password of ${d.email}`;
    case 'totp_reset': return `Reset the authenticator of ${d.email}`;
    case 'client_added': return `Added API client ${d.name}`;
    case 'client_rotated': return `Rotated the signing secret of ${clientNames.get(d.client_id) ?? d.client_id}`;
    case 'client_revoked': return `Revoked API client ${clientNames.get(d.client_id) ?? d.client_id}`;
    case 'client_key_rotated': return `Gave API client ${clientNames.get(d.client_id) ?? d.client_id} a new API key (the old one stopped)`;
    case 'account_replaced': return `Replaced the account on file for ${d.email}${d.new_email !== d.email ? ` (now ${d.new_email})` : ''}`;
    case 'webhook_retried': return `Queued a webhook delivery to ${clientNames.get(d.client_id) ?? d.client_id} again (delivery ${d.delivery_id})`;
    case 'proposal_made': return `Proposed (awaiting a second administrator): ${proposalWords({ kind: d.kind, target: { email: d.email }, change: d.change })}`;
    case 'proposal_confirmed': return `Confirmed the proposal of ${actorName(d.proposed_by)}: ${d.kind.replace('_', ' ')} for ${d.email}`;
    case 'proposal_withdrawn': return `Withdrew the proposal of ${actorName(d.proposed_by)}: ${d.kind.replace('_', ' ')} for ${d.email}`;
    case 'proposal_expired': return `The proposal of ${actorName(d.proposed_by)} expired unconfirmed: ${d.kind.replace('_', ' ')} for ${d.email}`;
    case 'passkey_sign_count_regressed': return `Refused a passkey sign-in: its sign count went back from ${d.stored_sign_count} to ${d.received_sign_count} (a copied key?)`;
    case 'case_erased': return d.cause === 'retention'
      ? `Erased the personal data of case ${d.case_number}: its retention period ended`
      : `Erased the personal data of case ${d.case_number}${d.reason ? ` — “${d.reason}”` : ''}`;
    case 'case_exported': return `Exported the personal data of case ${d.case_number} (${d.documents} document${d.documents === 1 ? '' : 's'})`;
    default: return event.type;
  }
}

async function loadAudit() {
  const { items, actors } = await everyPage('/api/v1/admin/audit');
  const mark = byId('audit-chain');
  const verdict = await verifyChain(items);
  if (verdict.ok === true) {
    mark.className = 'chain ok';
    mark.textContent = `✓ Hash chain verified in this browser (${items.length} ${items.length === 1 ? 'entry' : 'entries'}).`;
  } else if (verdict.ok === false) {
    mark.className = 'chain broken';
    mark.textContent = `✗ The hash chain is broken at entry ${verdict.seq}: ${verdict.reason}. The log may have been altered.`;
  } else {
    mark.className = 'chain unknown';
    mark.textContent = verdict.reason;
  }
  auditActors = actors;
  const who = actorName;
  replace(byId('audit-rows'), [...items].reverse().map((event) => h('tr', { dataset: { seq: event.seq, type: event.type } },
    h('td', { text: event.seq }), h('td', { text: formatDateTime(event.at) }), h('td', { text: who(event.actor) }), h('td', { text: describe(event) }))));
}

// The server's own verdict (signature, size, consistency proof to today's root): the page recomputes nothing.
async function loadCheckpoint() {
  const { data } = await request('GET', '/api/v1/admin/checkpoint');
  const mark = byId('checkpoint-verdict');
  const checkpoint = data.checkpoint;
  if (checkpoint && data.verified) {
    mark.className = 'chain ok';
    mark.textContent = `✓ The service's tree (${data.tree_size} leaves) extends its latest checkpoint; verified by the server.`;
  } else {
    mark.className = checkpoint ? 'chain broken' : 'chain unknown';
    mark.textContent = checkpoint ? `✗ The service's tree does not verify against its latest checkpoint: ${data.problem}` : data.problem;
  }
  byId('checkpoint-size').textContent = checkpoint ? String(checkpoint.tree_size) : '—';
  byId('checkpoint-root').textContent = checkpoint ? checkpoint.root_hash : '—';
  byId('checkpoint-time').textContent = checkpoint ? formatDateTime(checkpoint.signed_at) : '—';
  byId('checkpoint-today').textContent = `${data.tree_size} leaves${data.pending ? `, ${data.pending} more waiting` : ''}`;
  byId('checkpoint-key').textContent = data.verifier_key ?? '—';
  byId('checkpoint-note').textContent = checkpoint ? checkpoint.note : '';
}

// Signing out here ends the session as on the cases page, then goes there (to sign in again).
byId('signout').addEventListener('click', async () => {
  try {
    await api.call('DELETE', '/api/v1/session');
  } catch (error) {
    if (error.status !== 401) { announce(byId('flash'), error.message, 'error'); return; }
  }
  window.location.assign('/');
});

async function boot() {
  try {
    const { data } = await request('GET', '/api/v1/session');
    api.csrf = data.csrf_token;
    me = `agent:${data.agent.id}`;
    byId('agent-name').textContent = data.agent.name;
    show(byId('signout'));
    if (!data.permissions.includes('admin.manage')) throw new ApiError(403, { code: 'forbidden', detail: 'Only administrators may use this page.' });
    await Promise.all([loadAgents(), loadClients(), loadProposals()]);
    await Promise.all([loadAudit(), loadCheckpoint()]);
    show(byId('admin-body'));
  } catch (error) {
    refuse(error);
  } finally {
    show(byId('loading'), false);
  }
}

boot();
