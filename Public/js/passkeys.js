// Passkeys (WebAuthn): sign in with one instead of password and TOTP, and register, list and remove one's own from
// the header's "Passkeys" dialog. The service checks everything; this module only carries bytes as base64url.
import { ApiError, request } from './api.js';
import { announce, byId, h, replace, whileBusy } from './dom.js';
import { formatDateTime } from './format.js';

function toBase64URL(buffer) {
  let text = '';
  for (const byte of new Uint8Array(buffer)) text += String.fromCharCode(byte);
  return btoa(text).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function fromBase64URL(text) {
  const standard = text.replaceAll('-', '+').replaceAll('_', '/');
  const binary = atob(standard + '='.repeat((4 - (standard.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** Whether this browser can use passkeys at all. */
export const passkeysSupported = () => Boolean(window.PublicKeyCredential && navigator.credentials);

/** Signs in with a passkey: resolves to the session (as POST /api/v1/session answers); rejects with ApiError. */
export async function signInWithPasskey() {
  const { data: options } = await request('POST', '/api/v1/session/passkey-options', { json: {} });
  let credential;
  try {
    credential = await navigator.credentials.get({
      publicKey: { challenge: fromBase64URL(options.challenge), rpId: options.rp_id, userVerification: 'required', timeout: options.timeout },
    });
  } catch {
    throw new ApiError(0, { code: 'passkey_cancelled', detail: 'No passkey was used. Try again, or sign in with your password and code.' });
  }
  const { data } = await request('POST', '/api/v1/session/passkey', {
    json: {
      credential_id: toBase64URL(credential.rawId),
      client_data_json: toBase64URL(credential.response.clientDataJSON),
      authenticator_data: toBase64URL(credential.response.authenticatorData),
      signature: toBase64URL(credential.response.signature),
    },
  });
  return data;
}

async function listPasskeys(app) {
  const { data } = await app.api.call('GET', '/api/v1/passkeys');
  const region = byId('passkeys-message');
  replace(byId('passkeys-list'), data.items.length ? data.items.map((passkey) => {
    const remove = h('button', { type: 'button', class: 'secondary', 'aria-label': `Remove the passkey ${passkey.name}`, text: 'Remove' });
    remove.addEventListener('click', async () => {
      try {
        await app.api.call('DELETE', `/api/v1/passkeys/${passkey.id}`);
        announce(region, `Removed ${passkey.name}.`, 'ok');
        await listPasskeys(app);
      } catch (error) {
        announce(region, error.message, 'error');
      }
    });
    return h('li', { dataset: { passkey: passkey.id } }, h('strong', { text: passkey.name }),
      h('span', { class: 'block small', text: `Added ${formatDateTime(passkey.created_at)}; last used ${passkey.last_used_at ? formatDateTime(passkey.last_used_at) : 'never'}` }),
      remove);
  }) : h('li', { class: 'muted', text: 'No passkeys yet.' }));
}

/** Wires the header's Passkeys button and dialog for the signed-in agent in `app`. */
export function setUpPasskeys(app) {
  const dialog = byId('passkeys');
  const form = byId('passkey-form');
  const region = byId('passkeys-message');
  byId('passkeys-button').addEventListener('click', async () => {
    announce(region, '');
    dialog.showModal();
    try { await listPasskeys(app); } catch (error) { announce(region, error.message, 'error'); }
  });
  byId('passkeys-close').addEventListener('click', () => dialog.close());
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!passkeysSupported()) { announce(region, 'This browser cannot use passkeys.', 'error'); return; }
    await whileBusy(form, async () => {
      try {
        const { data: options } = await app.api.call('POST', '/api/v1/passkeys/registration-options', { json: {} });
        const credential = await navigator.credentials.create({
          publicKey: {
            challenge: fromBase64URL(options.challenge),
            rp: { id: options.rp.id, name: options.rp.name },
            user: { id: fromBase64URL(options.user.id), name: options.user.name, displayName: options.user.display_name },
            pubKeyCredParams: options.pub_key_cred_params,
            timeout: options.timeout,
            attestation: options.attestation,
            authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
            excludeCredentials: options.exclude_credentials.map((c) => ({ type: c.type, id: fromBase64URL(c.id) })),
          },
        }).catch(() => { throw new ApiError(0, { detail: 'No passkey was made. Try again when your device asks.' }); });
        await app.api.call('POST', '/api/v1/passkeys', {
          json: {
            name: byId('passkey-name').value.trim() || 'Passkey',
            client_data_json: toBase64URL(credential.response.clientDataJSON),
            attestation_object: toBase64URL(credential.response.attestationObject),
          },
        });
        form.reset();
        announce(region, 'Passkey added: you can sign in with it instead of your password and code.', 'ok');
        await listPasskeys(app);
      } catch (error) {
        announce(region, error.message, 'error');
      }
    });
  });
}
