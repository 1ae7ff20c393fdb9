// Checks a case's timeline in the browser, independently of the service: each event's hash must be the hex
// SHA-256 of the previous event's hash (or "" for the first) followed by the JCS (RFC 8785) form of
// {seq, at, actor, type, data}, and each prev_hash must name its predecessor. A personal member of data (an address,
// a free-text reason) is hashed only as its commitment: the event's `commitments` name each, {commitment, salt}; the
// value shown must hash to it (hex SHA-256 of the salt followed by the value's JCS form), an erased one (no salt) is
// null, and the hash covers {"commitment": …} in its place. So an erased event still verifies.

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
    const data = await hashedData(event);
    if (data.broken) return { ok: false, seq: event.seq, reason: data.broken };
    const body = canonicalJSON({ seq: event.seq, at: event.at, actor: event.actor, type: event.type, data: data.value });
    const expected = await sha256Hex((previous ?? '') + body);
    if (expected !== event.hash) return { ok: false, seq: event.seq, reason: 'its content does not match its hash' };
    previous = event.hash;
  }
  return { ok: true };
}

/** The event's data as its hash covers it: each committed member checked against its commitment and replaced by it. */
async function hashedData(event) {
  const commitments = event.commitments ?? {};
  const keys = Object.keys(commitments);
  if (keys.length === 0) return { value: event.data };
  const value = { ...event.data };
  for (const key of keys) {
    const { commitment, salt } = commitments[key];
    const shown = value[key] ?? null;
    if (salt != null) {
      if (await sha256Hex(salt + canonicalJSON(shown)) !== commitment) return { broken: `its ${key} does not match its commitment` };
    } else if (shown !== null) {
      return { broken: `its ${key} is shown although it was erased` };
    }
    value[key] = { commitment };
  }
  return { value };
}
