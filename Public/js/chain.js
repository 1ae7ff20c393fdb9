// Checks a case's timeline in the browser, independently of the service: each event's hash must be the hex
// SHA-256 of the previous event's hash (or "" for the first) followed by the JCS (RFC 8785) form of
// {seq, at, actor, type, data}, and each prev_hash must name its predecessor.

/** RFC 8785: keys sorted by UTF-16 code units, no whitespace, ECMAScript number and string forms —
 *  which is JSON.stringify's for numbers and strings. */
export function canonicalJSON(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJSON).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJSON(value[key])}`).join(',')}}`;
}

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * { ok: true } when the chain holds; { ok: false, seq, reason } at the first event where it breaks;
 * { ok: null, reason } when this browser cannot hash (WebCrypto needs a secure context: HTTPS or localhost).
 */
export async function verifyChain(events) {
  if (!globalThis.crypto?.subtle) return { ok: null, reason: 'This browser can only check the chain over HTTPS.' };
  let previous = null;
  for (const event of events) {
    if ((event.prev_hash ?? null) !== previous) return { ok: false, seq: event.seq, reason: 'it does not link to the event before it' };
    const body = canonicalJSON({ seq: event.seq, at: event.at, actor: event.actor, type: event.type, data: event.data });
    const expected = await sha256Hex((previous ?? '') + body);
    if (expected !== event.hash) return { ok: false, seq: event.seq, reason: 'its content does not match its hash' };
    previous = event.hash;
  }
  return { ok: true };
}
