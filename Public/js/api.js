// The one way the pages talk to the service: JSON in and out, RFC 9457 problems turned into ApiError.
import { formatSpan } from './format.js';

/** A refused or failed request: `status` (0 when the service was not reached), the problem's stable `code`,
 *  its `detail`, per-field `errors`, and `retryAfter` in seconds when the service sent Retry-After. */
export class ApiError extends Error {
  constructor(status, problem, retryAfter = null) {
    super(problem?.detail || problem?.title || `The service answered ${status}.`);
    this.status = status;
    this.code = problem?.code ?? (status === 0 ? 'network' : `http_${status}`);
    this.problem = problem ?? {};
    this.errors = Array.isArray(problem?.errors) ? problem.errors : [];
    this.retryAfter = retryAfter;
  }

  /** The per-field messages in one sentence-run ('' when there are none). */
  get fieldMessages() {
    return this.errors.map((e) => e.message).filter(Boolean).join(' ');
  }
}

/** The most a document upload may weigh (ReclaimCore.DocumentUpload.maximumBytes), checked before sending. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

function retryAfterSeconds(response) {
  const header = response.headers.get('Retry-After');
  if (!header) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, Math.round((at - Date.now()) / 1000));
}

/**
 * Sends one request. `json` is sent as a JSON body; `body` (a FormData, say) as it is. Resolves to
 * { status, data, etag, headers }; rejects with ApiError for anything but 2xx.
 */
export async function request(method, path, { json, body, headers = {} } = {}) {
  const init = { method, headers: { Accept: 'application/json', ...headers }, credentials: 'same-origin', cache: 'no-store' };
  if (json !== undefined) {
    init.body = JSON.stringify(json);
    init.headers['Content-Type'] = 'application/json';
  } else if (body !== undefined) {
    init.body = body;
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, { code: 'network', detail: 'The service could not be reached. Check your connection and try again.' });
  }
  const type = response.headers.get('Content-Type') ?? '';
  const data = type.includes('json') ? await response.json().catch(() => null) : null;
  if (!response.ok) throw new ApiError(response.status, data, retryAfterSeconds(response));
  return { status: response.status, data, etag: response.headers.get('ETag'), headers: response.headers };
}

/**
 * Requests made with the agent's session cookie: changing ones carry X-CSRF-Token, and a 401 (the session
 * expired or was ended) awaits `onUnauthorized` — which brings back the sign-in form and resolves once the
 * agent signed in again — then sends the request once more, so nothing typed is lost.
 */
export function agentClient({ onUnauthorized }) {
  let csrfToken = null;
  return {
    set csrf(token) { csrfToken = token; },
    async call(method, path, options = {}) {
      for (let attempt = 0; ; attempt += 1) {
        const headers = { ...(options.headers ?? {}) };
        if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
        try {
          return await request(method, path, { ...options, headers });
        } catch (error) {
          if (error instanceof ApiError && error.status === 401 && attempt === 0) {
            await onUnauthorized();
            continue;
          }
          throw error;
        }
      }
    },
  };
}

/** "You can try again after Monday 17:42. That is in 8 h." for a lock that lifts in `seconds`. */
export function retryWords(seconds) {
  if (seconds === null || seconds === undefined) return 'Try again later.';
  const at = new Date(Date.now() + seconds * 1000);
  const time = new Intl.DateTimeFormat('en-GB', { weekday: 'long', hour: '2-digit', minute: '2-digit' }).format(at);
  return `You can try again after ${time}. That is in ${formatSpan(seconds * 1000)}.`;
}
