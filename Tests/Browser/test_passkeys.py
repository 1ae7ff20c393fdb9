"""Passkeys: a real registration and sign-in with Chromium's virtual authenticator, and the attacker's side of the
API with an authenticator played here (Python's cryptography signs): replayed and expired challenges, a wrong
origin, a tampered signature, a lowered sign count, and an admin's requirement."""
import base64
import hashlib
import json
import struct
import time
import urllib.error
import urllib.parse
import urllib.request

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions

from harness import BrowserTestCase


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b'=').decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + '=' * (-len(text) % 4))


def cbor(value):
    """The few CBOR shapes an authenticator sends: small ints, bytes, text, maps."""
    def head(major, n):
        if n < 24:
            return bytes([major << 5 | n])
        if n < 256:
            return bytes([major << 5 | 24, n])
        return bytes([major << 5 | 25]) + struct.pack('>H', n)
    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, bytes):
        return head(2, len(value)) + value
    if isinstance(value, str):
        return head(3, len(value.encode())) + value.encode()
    if isinstance(value, dict):
        return head(5, len(value)) + b''.join(cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(value)


class Authenticator:
    """A software authenticator: one P-256 key, a credential id and a sign count it chooses."""

    def __init__(self, rp_id='localhost'):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = hashlib.sha256(str(time.time()).encode()).digest()[:16]
        self.rp_hash = hashlib.sha256(rp_id.encode()).digest()

    def attestation(self, challenge, origin, flags=0x45):
        numbers = self.key.public_key().public_numbers()
        cose = {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, 'big'), -3: numbers.y.to_bytes(32, 'big')}
        auth_data = self.rp_hash + bytes([flags]) + struct.pack('>I', 0) + bytes(16) + struct.pack('>H', len(self.credential_id)) \
            + self.credential_id + cbor(cose)
        client = json.dumps({'type': 'webauthn.create', 'challenge': challenge, 'origin': origin}).encode()
        return {'name': 'Software key', 'client_data_json': b64url(client),
                'attestation_object': b64url(cbor({'fmt': 'none', 'attStmt': {}, 'authData': auth_data}))}

    def assertion(self, challenge, origin, sign_count, flags=0x05, kind='webauthn.get'):
        auth_data = self.rp_hash + bytes([flags]) + struct.pack('>I', sign_count)
        client = json.dumps({'type': kind, 'challenge': challenge, 'origin': origin}).encode()
        signature = self.key.sign(auth_data + hashlib.sha256(client).digest(), ec.ECDSA(hashes.SHA256()))
        return {'credential_id': b64url(self.credential_id), 'client_data_json': b64url(client),
                'authenticator_data': b64url(auth_data), 'signature': b64url(signature)}


class PasskeyTests(BrowserTestCase):

    def call(self, method, path, body=None, session=None):
        headers = {'Content-Type': 'application/json'}
        if session:
            headers['Cookie'] = session['cookie']
            headers['X-CSRF-Token'] = session['csrf']
        data = json.dumps(body if body is not None else {}).encode() if method != 'GET' else None
        request = urllib.request.Request(self.service.origin + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b'null'), response.headers
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b'null'), error.headers

    def session_of(self, status, body, headers):
        self.assertEqual(status, 201, body)
        return {'cookie': headers['Set-Cookie'].split(';')[0], 'csrf': body['csrf_token'], 'agent': body['agent']}

    def password_sign_in(self, agent):
        return self.call('POST', '/api/v1/session', {'email': agent['email'], 'password': agent['password'], 'totp': self.service.totp(agent)})

    def challenge(self, path='/api/v1/session/passkey-options', session=None):
        status, body, _ = self.call('POST', path, {}, session)
        self.assertEqual(status, 200, body)
        return body['challenge']

    def test_an_agent_registers_a_passkey_in_the_browser_and_signs_in_with_it(self):
        browser = self.browser()
        browser.driver.add_virtual_authenticator(VirtualAuthenticatorOptions(
            protocol='ctap2', transport='internal', has_resident_key=True, has_user_verification=True, is_user_verified=True))
        agent = self.sign_in(browser, 'tier1')
        browser.click('#passkeys-button')
        browser.wait_for_text('#passkeys-list', 'No passkeys yet')
        browser.fill('#passkey-name', 'Work laptop')
        browser.click('#passkey-add')
        browser.wait_for_text('#passkeys-message', 'Passkey added')
        browser.wait_for_text('#passkeys-list', 'Work laptop')
        self.assertEqual(browser.unlabelled_controls(), [])
        self.assert_accessible(browser)
        browser.click('#passkeys-close')
        self.assertEqual(self.service.psql("SELECT count(*) FROM passkeys p JOIN agents a ON a.id = p.agent_id WHERE a.email = '%s'" % agent['email']), '1')

        browser.click('#signout')
        browser.wait_for('#signin')
        browser.click('#signin-passkey')
        browser.wait_until_gone('#signin')
        browser.wait_for_text('#agent-name', agent['name'])
        browser.wait_for('#queue')
        count = self.service.psql("SELECT p.sign_count FROM passkeys p JOIN agents a ON a.id = p.agent_id WHERE a.email = '%s'" % agent['email'])
        self.assertGreater(int(count), 0, 'the virtual authenticator counts its signatures')

    def test_the_attackers_side_of_passkey_sign_in(self):
        origin = self.service.origin
        agent = self.service.new_agent('tier2')
        session = self.session_of(*self.password_sign_in(agent))
        key = Authenticator()

        # Registration: a replayed challenge, another origin and a device that did not verify the user are refused.
        challenge = self.challenge('/api/v1/passkeys/registration-options', session)
        self.assertEqual(self.call('POST', '/api/v1/passkeys', key.attestation(challenge, 'https://evil.example'), session)[0], 422)
        challenge = self.challenge('/api/v1/passkeys/registration-options', session)
        self.assertEqual(self.call('POST', '/api/v1/passkeys', key.attestation(challenge, origin, flags=0x41), session)[0], 422)
        challenge = self.challenge('/api/v1/passkeys/registration-options', session)
        status, body, _ = self.call('POST', '/api/v1/passkeys', key.attestation(challenge, origin), session)
        self.assertEqual(status, 201, body)
        self.assertEqual(self.call('POST', '/api/v1/passkeys', key.attestation(challenge, origin), session)[0], 422, 'challenge used twice')
        # Without a session, nothing can be registered.
        self.assertEqual(self.call('POST', '/api/v1/passkeys/registration-options', {})[0], 401)

        # A good sign-in, then the same assertion again.
        good = key.assertion(self.challenge(), origin, sign_count=5)
        self.session_of(*self.call('POST', '/api/v1/session/passkey', good))
        self.assertEqual(self.call('POST', '/api/v1/session/passkey', good)[0], 401, 'a replayed challenge')
        # Another origin, a tampered signature, no user verification, a challenge never issued, an expired one.
        self.assertEqual(self.call('POST', '/api/v1/session/passkey', key.assertion(self.challenge(), 'https://evil.example', sign_count=6))[0], 401)
        tampered = key.assertion(self.challenge(), origin, sign_count=6)
        tampered['authenticator_data'] = b64url(unb64url(tampered['authenticator_data'])[:-1] + b'\x07')
        self.assertEqual(self.call('POST', '/api/v1/session/passkey', tampered)[0], 401)
        self.assertEqual(self.call('POST', '/api/v1/session/passkey', key.assertion(self.challenge(), origin, sign_count=6, flags=0x01))[0], 401)
        self.assertEqual(self.call('POST', '/api/v1/session/passkey', key.assertion(b64url(bytes(32)), origin, sign_count=6))[0], 401)
        stale = self.challenge()
        self.service.psql("UPDATE webauthn_challenges SET expires_at = now() - interval '1 second'")
        self.assertEqual(self.call('POST', '/api/v1/session/passkey', key.assertion(stale, origin, sign_count=6))[0], 401)
        # Someone else's key for this credential id.
        impostor = Authenticator()
        impostor.credential_id = key.credential_id
        self.assertEqual(self.call('POST', '/api/v1/session/passkey', impostor.assertion(self.challenge(), origin, sign_count=9))[0], 401)
        # A lowered sign count (a copied key): refused and recorded in the admin audit log.
        self.assertEqual(self.call('POST', '/api/v1/session/passkey', key.assertion(self.challenge(), origin, sign_count=4))[0], 401)
        self.assertEqual(self.service.psql("SELECT count(*) FROM admin_events WHERE type = 'passkey_sign_count_regressed'"), '1')
        self.session_of(*self.call('POST', '/api/v1/session/passkey', key.assertion(self.challenge(), origin, sign_count=7)))

        # An admin requires a passkey: password and code no longer sign in; the passkey does. Not for non-admins.
        admin = self.session_of(*self.password_sign_in(self.service.new_agent('tier1', admin=True)))
        other = self.service.new_agent('tier1')
        other_id = self.service.psql("SELECT id FROM agents WHERE email = '%s'" % other['email'])
        status, body, _ = self.call('PATCH', '/api/v1/admin/agents/' + other_id, {'passkey_required': True}, admin)
        self.assertEqual((status, body['code']), (409, 'admin_lockout'), 'no passkey yet: requiring one would lock them out')
        self.assertEqual(self.call('PATCH', '/api/v1/admin/agents/' + session['agent']['id'], {'passkey_required': True}, session)[0], 403)
        status, body, _ = self.call('PATCH', '/api/v1/admin/agents/' + session['agent']['id'], {'passkey_required': True}, admin)
        self.assertEqual(status, 200, body)
        self.assertTrue(body['passkey_required'])
        status, body, _ = self.password_sign_in(agent)
        self.assertEqual((status, body['code']), (403, 'passkey_required'))
        self.session_of(*self.call('POST', '/api/v1/session/passkey', key.assertion(self.challenge(), origin, sign_count=8)))
