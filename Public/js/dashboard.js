// The agents' dashboard: session and sign-in, the header, and hash routing between the queue (#/ with
// filters) and a case (#/cases/<number>). The views live in queue.js and case.js.
import { ApiError, agentClient, request, retryWords } from './api.js';
import { announce, byId, replace, show, whileBusy } from './dom.js';
import { TIERS } from './labels.js';
import { showQueue } from './queue.js';
import { forgetCase, showCase } from './case.js';
import { setUpPasskeys, signInWithPasskey } from './passkeys.js';
import { showOpenCase } from './open-case.js';

const dialog = byId('signin');
const form = byId('signin-form');
const reason = byId('signin-reason');
const signInMessage = byId('signin-message');

/** The signed-in agent, its permissions and the API client; shared with the views. */
const app = {
  agent: null,
  permissions: new Set(),
  api: agentClient({ onUnauthorized: () => signInAgain() }),
  can(permission) { return this.permissions.has(permission); },
  flash(message, kind = 'ok') { announce(byId('flash'), message, kind); },
};

// Sign-in waiters: every request that met a 401 waits for the one sign-in form.
let waiting = null;

function adopt(session) {
  const previous = app.agent;
  app.agent = session.agent;
  app.permissions = new Set(session.permissions);
  app.api.csrf = session.csrf_token;
  byId('agent-name').textContent = session.agent.name;
  byId('agent-tier').textContent = TIERS[session.agent.tier] + (session.agent.admin ? ' · admin' : '');
  show(byId('admin-link'), app.can('admin.manage'));  // Administration: /admin, for admins
  show(byId('reports-link'), app.can('reports.read'));  // Supervision: /reports, tier2+ and admins
  show(byId('whoami'));
  return previous;
}

/** Shows the sign-in form (modal: the page behind keeps everything typed) and resolves once signed in. */
function signIn(why) {
  if (waiting) return waiting.promise;
  let resolve;
  let reject;
  const promise = new Promise((yes, no) => { resolve = yes; reject = no; });
  waiting = { promise, resolve, reject };
  announce(reason, why, 'warn');
  announce(signInMessage, '');
  form.reset();
  if (app.agent) byId('signin-email').value = app.agent.email;
  if (!dialog.open) dialog.showModal();
  (app.agent ? byId('signin-password') : byId('signin-email')).focus();
  return promise;
}

function signInAgain() {
  return signIn('Your session has ended. Sign in again to carry on: what you typed is kept.');
}

// Escape must not close the form: the page behind is not usable without a session.
dialog.addEventListener('cancel', (event) => event.preventDefault());

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const email = byId('signin-email').value.trim();
  const password = byId('signin-password').value;
  const totp = byId('signin-totp').value.replace(/\s/g, '');
  if (!email || !password || !/^[0-9]{6}$/.test(totp)) {
    announce(signInMessage, 'Enter your email, your password and the 6-digit code from your authenticator app.', 'error');
    return;
  }
  await whileBusy(form, async () => {
    try {
      const { data } = await request('POST', '/api/v1/session', { json: { email, password, totp } });
      signedIn(data);
    } catch (error) {
      byId('signin-totp').value = '';
      if (error.code === 'invalid_credentials') announce(signInMessage, 'The email, password or code is not right. Check them and try again with a new code.', 'error');
      else if (error.code === 'locked_out') announce(signInMessage, `Too many failed sign-ins. ${retryWords(error.retryAfter)}`, 'error');
      else if (error.code === 'passkey_required') announce(signInMessage, 'Your administrator requires a passkey: use "Sign in with a passkey".', 'error');
      else announce(signInMessage, error.message, 'error');
      byId('signin-totp').focus();
    }
  });
});

/** A session from either sign-in: adopt it, close the form, and resume (or, for another agent, drop) what was waiting. */
function signedIn(data) {
  const previous = adopt(data);
  form.reset();
  dialog.close();
  const pending = waiting;
  waiting = null;
  if (previous && previous.id !== data.agent.id) {
    // Someone else signed in: what the last agent typed is not theirs to send.
    pending?.reject(new ApiError(401, { code: 'agent_changed', detail: 'Signed in as a different agent: nothing was sent.' }));
    forgetCase();
    // Back to the queue: a changed hash routes by itself (hashchange), an unchanged one needs asking.
    if (window.location.hash === '#/') route();
    else window.location.hash = '#/';
  } else {
    pending?.resolve();
  }
}

// Passkeys: instead of password and code.
byId('signin-passkey').addEventListener('click', () => whileBusy(form, async () => {
  try {
    signedIn(await signInWithPasskey());
  } catch (error) {
    announce(signInMessage, error.code === 'invalid_credentials' ? 'That passkey was not accepted. Try again, or use your password and code.' : error.message, 'error');
  }
}));
setUpPasskeys(app);

byId('signout').addEventListener('click', async () => {
  try {
    await app.api.call('DELETE', '/api/v1/session');
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401) { app.flash(error.message, 'error'); return; }
  }
  app.agent = null;
  app.permissions = new Set();
  forgetCase();
  show(byId('whoami'), false);
  show(byId('queue'), false);
  show(byId('case'), false);
  show(byId('open-case'), false);
  replace(byId('open-body'));
  announce(byId('flash'), '');
  await signIn('You are signed out.');
  route();
});

/** Shows the view the hash names. */
async function route() {
  show(byId('loading'), false);
  const hash = window.location.hash || '#/';
  const match = /^#\/cases\/([0-9]{12})$/.exec(hash);
  show(byId('open-case'), false);
  if (match) {
    show(byId('queue'), false);
    await showCase(app, match[1]);
  } else if (hash === '#/new' && app.can('case.create')) {
    show(byId('queue'), false);
    show(byId('case'), false);
    showOpenCase(app);
  } else {
    show(byId('case'), false);
    show(byId('queue-open'), app.can('case.create'));
    await showQueue(app, new URLSearchParams(hash.split('?')[1] ?? ''));
  }
}

window.addEventListener('hashchange', () => {
  announce(byId('flash'), '');
  route();
});

async function boot() {
  try {
    const { data } = await request('GET', '/api/v1/session');
    adopt(data);
  } catch (error) {
    show(byId('loading'), false);
    if (!(error instanceof ApiError) || error.status !== 401) announce(byId('flash'), error.message, 'error');
    await signIn(null);
  }
  route();
}

boot();
