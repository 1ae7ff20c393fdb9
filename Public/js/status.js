// The customer status page: a victim looks up a case with its number and access code, sees where it
// stands in plain words in their language, and uploads the documents and the ransom conversation.
// The number and code live only in this module's memory (never in storage) and go nowhere but the status API;
// only the chosen language is kept (localStorage). The mails link to `/status?case=<number>`: that number (never
// a code) fills the field, and leaves the address bar.
import { h, replace, show, byId, announce, whileBusy } from './dom.js';
import { request, ApiError, MAX_UPLOAD_BYTES } from './api.js';
import { parseCaseNumber, groupCaseNumber, normalizeAccessCode } from './identifiers.js';
import { LANGUAGES, DATE_LOCALES, text, languageFromLocales } from './status-text.js';
import { VOCABULARY } from './vocabulary.js';

const STORAGE_KEY = 'reclaim.language';
const MARKS = ['done', 'current', 'upcoming'];
const MARK_SYMBOL = { done: '✓', current: '●', upcoming: '' };
const ACCEPT_DOCUMENT = '.pdf,.jpg,.jpeg,.png,.heic,.heif,application/pdf,image/jpeg,image/png,image/heic,image/heif';
const ACCEPT_TRANSCRIPT = `${ACCEPT_DOCUMENT},.txt,.eml,text/plain,message/rfc822`;

// ---- Language -------------------------------------------------------------------------------------

function storedLanguage() {
  try {
    const value = localStorage.getItem(STORAGE_KEY);
    return LANGUAGES.includes(value) ? value : null;
  } catch {
    return null;  // storage refused (private mode): the choice lasts for this page only
  }
}

/** The reader's own choice (kept), else the browser's languages. */
let chosen = storedLanguage();
let language = chosen ?? languageFromLocales(navigator.languages?.length ? navigator.languages : [navigator.language]);

function t(key, values) { return text(language, key, values); }

/** Shows the page's own sentence `words()` in `element`, and again in the new language after a switch. */
const sentences = new Map();
function say(element, words, kind) {
  sentences.set(element, { words, kind });
  announce(element, words(), kind);
}
function unsay(element) {
  sentences.delete(element);
  announce(element, '');
}

/** Puts the page's own words in `language` (the service's sentences come with each status). */
function applyLanguage() {
  document.documentElement.lang = language;
  for (const element of document.querySelectorAll('[data-t]')) element.textContent = t(element.dataset.t);
  document.title = t('page.title');
  for (const button of document.querySelectorAll('[data-language]')) {
    button.setAttribute('aria-pressed', String(button.dataset.language === language));
  }
  updateFileHint();
  for (const [element, { words, kind }] of sentences) if (!element.hidden) announce(element, words(), kind);
}

// ---- Dates: always in the reader's zone, named ------------------------------------------------------

function dateTimeFormat() {
  return new Intl.DateTimeFormat(DATE_LOCALES[language], {
    year: 'numeric', month: 'long', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short',
  });
}

/** A date and time in the reader's zone with the zone's short name, or "—". */
function formatWhen(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : dateTimeFormat().format(date);
}

function zoneName() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
}

function formatSize(size) {
  const format = (value, unit) => `${new Intl.NumberFormat(DATE_LOCALES[language], { maximumFractionDigits: 1 }).format(value)} ${unit}`;
  if (size < 1000) return format(size, 'B');
  if (size < 1000 * 1000) return format(Math.round(size / 1000), 'kB');
  return format(size / 1000 / 1000, 'MB');
}

// ---- Problems -------------------------------------------------------------------------------------

/** The customer's words for a failed look-up or upload (`error` is an ApiError or anything thrown). */
function problemWords(error) {
  if (!(error instanceof ApiError)) return t('error.page');
  const retryAt = error.retryAfter ? formatWhen(new Date(Date.now() + error.retryAfter * 1000).toISOString()) : null;
  switch (error.code) {
    case 'network': return t('error.network');
    case 'not_found': {
      // An access code that a re-issue replaced (api.md v1.3): when the new one was mailed, and where (masked).
      const replaced = error.problem.access_code_replaced;
      if (replaced?.to && replaced?.mailed_at) return t('error.code_replaced', { date: formatWhen(replaced.mailed_at), address: replaced.to });
      return t('error.not_found');
    }
    case 'invalid_case_number': return t('error.typo');
    case 'locked_out': return retryAt ? t('error.locked', { time: retryAt }) : t('error.locked_later');
    default: break;
  }
  if (error.status === 429) return retryAt ? t('error.busy', { time: retryAt }) : t('error.locked_later');
  if (error.status >= 500) return t('error.unavailable');
  return error.message;
}

function caseNumberError(typed, parsed) {
  if (!parsed.error) return null;
  const digits = String(typed ?? '').normalize('NFKC').replace(/[\s\-\u2010-\u2015\u2212\uFE58\uFE63\uFF0D]/gu, '');
  if (digits === '') return t('error.case_number_empty');
  if (!/^[1-9][0-9]{11}$/.test(digits)) return t('error.case_number_length');
  return t('error.case_number_typo');
}

// ---- Elements -------------------------------------------------------------------------------------

const lookupForm = byId('lookup');
const caseInput = byId('case-number');
const codeInput = byId('access-code');
const message = byId('message');
const result = byId('result');
const uploadForm = byId('upload');
const typeSelect = byId('doc-type');
const fileInput = byId('doc-file');
const uploadMessage = byId('upload-message');
// What an upload may be, in the service's order; applyLanguage() writes each one's words.
typeSelect.append(...VOCABULARY.upload_kinds.map((kind) => h('option', { value: kind, dataset: { t: `evidence.${kind}` } })));

/** The case being shown: { caseNumber, accessCode }, held only here; and its last status. */
let current = null;
let lastStatus = null;

function fieldError(input, words) {
  const error = byId(`${input.id}-error`);
  const hint = `${input.id}-hint`;
  error.textContent = words ?? '';
  show(error, Boolean(words));
  if (words) {
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', `${error.id} ${hint}`);
  } else {
    input.removeAttribute('aria-invalid');
    input.setAttribute('aria-describedby', hint);
  }
}

function updateFileHint() {
  const transcript = typeSelect.value === 'transcript';
  byId('doc-file-hint').textContent = t(transcript ? 'upload.file_hint_transcript' : 'upload.file_hint');
  fileInput.accept = transcript ? ACCEPT_TRANSCRIPT : ACCEPT_DOCUMENT;
}

// ---- Rendering ------------------------------------------------------------------------------------

/** Six digits as read aloud: "482 109". */
function groupCallCode(code) {
  return `${code.slice(0, 3)} ${code.slice(3)}`;
}

function renderProgress(steps) {
  return steps.map((step) => {
    const mark = MARKS.includes(step.mark) ? step.mark : 'upcoming';
    return h('li', { class: `step ${mark}`, 'aria-current': mark === 'current' ? 'step' : null },
      h('span', { class: 'marker', 'aria-hidden': 'true', text: MARK_SYMBOL[mark] }),
      h('span', { class: 'label' },
        step.label,
        mark === 'current' ? h('span', { class: 'now', text: t('mark.now') }) : null,
        ' ',
        h('span', { class: 'visually-hidden', text: t(`mark.${mark}`) })));
  });
}

function renderStatus(status) {
  lastStatus = status;
  byId('result-case').textContent = groupCaseNumber(status.case_number);
  // Looked up by a merged number: say why another number shows (the merge mail says the same).
  byId('merged-from').textContent = status.merged_from ? t('result.merged_from', { number: groupCaseNumber(status.merged_from) }) : '';
  show(byId('merged-from'), Boolean(status.merged_from));
  byId('stage').textContent = status.stage;
  byId('updated').textContent = formatWhen(status.updated_at);
  byId('checked').textContent = formatWhen(status.checked_at);
  byId('zone').textContent = t('result.zone', { zone: zoneName() });
  replace(byId('progress'), renderProgress(status.progress ?? []));

  byId('next-step').textContent = status.next_step;
  // The due date of the step under way; once it has passed, say so rather than promise a date gone by.
  const passed = status.due_at && new Date(status.due_at).getTime() < Date.now();
  byId('due-label').textContent = t(passed ? 'result.due_passed' : 'result.due');
  byId('due').textContent = passed ? t('result.late', { date: formatWhen(status.due_at) }) : formatWhen(status.due_at);
  show(byId('due-fact'), Boolean(status.due_at));

  // The call codes (api.md v1.3): the desk's, to check a caller who says they are us; hers, to read to us when she calls.
  const codes = status.call_codes;
  byId('call-desk').textContent = codes ? groupCallCode(codes.desk) : '';
  byId('call-customer').textContent = codes ? groupCallCode(codes.customer) : '';
  byId('calls-until').textContent = codes ? t('calls.until', { time: formatWhen(codes.valid_until) }) : '';
  show(byId('calls-block'), Boolean(codes));

  // The service's own sentences for what is missing, in the answer's language and the same order.
  const missing = status.missing_text ?? [];
  replace(byId('missing'), missing.map((words) => h('li', { text: words })));
  show(byId('missing-block'), missing.length > 0);

  // The cooling-off: what will be undone and when, so that a victim who did not ask for it can say so.
  const unlocks = status.unlocks_scheduled ?? [];
  replace(byId('unlocks'), unlocks.map((item) => h('li', { class: 'unlock-item' },
    h('span', { text: item.text }), ' ',
    h('span', { class: 'muted', text: t('result.unlock_when', { date: formatWhen(item.effective_at) }) }))));
  show(byId('unlocks-block'), unlocks.length > 0);

  const notices = status.notices ?? [];
  replace(byId('notices'), notices.map((notice) => h('li', { class: `notice ${notice.key.replace('.', '-')}`, text: notice.text })));
  show(byId('notices-block'), notices.length > 0);

  const evidence = status.evidence ?? [];
  replace(byId('evidence'), evidence.map((item) => h('li', { class: 'evidence-item' },
    h('span', { class: 'evidence-type', text: t(`evidence.${item.type}`) }), ' ',
    h('span', { class: `badge ${item.status}`, text: t(`status.${item.status}`) }), ' ',
    h('span', { class: 'muted', text: t('result.received_at', { date: formatWhen(item.filed_at) }) }),
    // A rejected document says why, in the service's words and the answer's language: what to send instead.
    item.customer_reason_text ? h('p', { class: 'evidence-reason', text: item.customer_reason_text }) : null)));
  show(byId('evidence'), evidence.length > 0);
  show(byId('no-evidence'), evidence.length === 0);

  const notes = status.notes ?? [];
  replace(byId('notes'), notes.map((note) => h('li', {},
    h('p', { class: 'note-body', text: note.body }),
    h('p', { class: 'muted note-date', text: formatWhen(note.created_at) }))));
  show(byId('notes-block'), notes.length > 0);
  // The customer's reply by mail reached the case: the time only, in their language.
  byId('reply-received').textContent = status.reply_received_at ? t('result.reply_received', { date: formatWhen(status.reply_received_at) }) : '';
  show(byId('reply-received'), Boolean(status.reply_received_at));
  // Mail an agent attached from someone else: whose (masked) and when, never as the customer's own reply.
  const added = status.messages_added ?? [];
  replace(byId('messages-added'), added.map((item) => h('li', { class: 'message-added',
    text: t('result.message_added', { from: item.from, date: formatWhen(item.received_at) }) })));
  show(byId('messages-added'), added.length > 0);

  // A finished case takes no more files (nobody would see them); its notices say how to reach support.
  show(uploadForm, Boolean(status.can_upload));
}

function preselectUpload(missing) {
  // The first upload that answers a missing item (the service says which kinds meet which requirement).
  const type = (missing ?? []).map((word) => VOCABULARY.requirement_uploads[word]?.[0]).find(Boolean);
  typeSelect.value = type ?? typeSelect.options[0].value;
  updateFileHint();
}

// ---- Look-up --------------------------------------------------------------------------------------

/** Fetches and shows the status of `credentials`; on failure shows why. Resolves to the status or null. */
async function load(credentials) {
  try {
    const json = { case_number: credentials.caseNumber, access_code: credentials.accessCode };
    // Only a choice the reader made is sent: otherwise the case's language, then the browser's, decides.
    if (chosen) json.language = chosen;
    const { data } = await request('POST', '/api/v1/status', { json });
    data.checked_at = new Date().toISOString();
    if (!chosen && LANGUAGES.includes(data.language) && data.language !== language) {
      language = data.language;
      applyLanguage();
    }
    unsay(message);
    renderStatus(data);
    return data;
  } catch (error) {
    if (error instanceof ApiError && error.status !== 0) {
      // The service refused these credentials (or locked them): nothing of the case stays on screen.
      current = null;
      lastStatus = null;
      show(result, false);
      show(lookupForm, true);
    }
    if (error instanceof ApiError && error.code === 'invalid_case_number') fieldError(caseInput, t('error.typo'));
    say(message, () => problemWords(error), 'error');
    message.focus();
    return null;
  }
}

lookupForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const parsed = parseCaseNumber(caseInput.value);
  const accessCode = normalizeAccessCode(codeInput.value);
  fieldError(caseInput, caseNumberError(caseInput.value, parsed));
  fieldError(codeInput, accessCode ? null : t('error.code_format'));
  if (parsed.error || !accessCode) {
    unsay(message);
    (parsed.error ? caseInput : codeInput).focus();
    return;
  }
  const credentials = { caseNumber: parsed.digits, accessCode };
  const status = await whileBusy(lookupForm, () => load(credentials));
  if (!status) return;
  current = credentials;
  preselectUpload(status.missing);
  fieldError(fileInput, null);
  unsay(uploadMessage);
  show(lookupForm, false);
  show(result, true);
  byId('stage').focus();
});

byId('refresh').addEventListener('click', async () => {
  if (!current) return;
  const status = await whileBusy(result, () => load(current));
  if (status) byId('stage').focus();
});

byId('another').addEventListener('click', () => {
  current = null;
  lastStatus = null;
  show(result, false);
  unsay(message);
  codeInput.value = '';
  show(lookupForm, true);
  caseInput.focus();
  caseInput.select();
});

for (const button of document.querySelectorAll('[data-language]')) {
  button.addEventListener('click', async () => {
    chosen = button.dataset.language;
    language = chosen;
    try { localStorage.setItem(STORAGE_KEY, chosen); } catch { /* kept for this page only */ }
    applyLanguage();
    // The service's sentences too: ask again in the new language.
    // The page's own messages were put in the new language by applyLanguage().
    if (current) await whileBusy(result, () => load(current));
  });
}

// ---- Upload ---------------------------------------------------------------------------------------

fileInput.addEventListener('change', () => fieldError(fileInput, null));
typeSelect.addEventListener('change', updateFileHint);

uploadForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!current) return;
  unsay(uploadMessage);
  const file = fileInput.files?.[0];
  if (!file) {
    fieldError(fileInput, t('upload.choose'));
    fileInput.focus();
    return;
  }
  // The service's limit, checked here first so nobody waits on a doomed upload.
  if (file.size > MAX_UPLOAD_BYTES) {
    fieldError(fileInput, t('upload.too_big', { size: formatSize(file.size) }));
    fileInput.focus();
    return;
  }
  fieldError(fileInput, null);
  const type = typeSelect.value;
  const body = new FormData();
  body.append('case_number', current.caseNumber);
  body.append('access_code', current.accessCode);
  if (chosen) body.append('language', chosen);
  body.append('type', type);
  body.append('file', file, file.name);
  const credentials = current;
  await whileBusy(uploadForm, async () => {
    try {
      const { data } = await request('POST', '/api/v1/status/evidence', { body });
      const status = await load(credentials);
      uploadForm.reset();
      if (status) preselectUpload(status.missing);
      say(uploadMessage, () => t('upload.thanks', { size: formatSize(data?.size ?? file.size) }), 'ok');
    } catch (error) {
      say(uploadMessage, () => uploadProblemWords(error, type), 'error');
    }
  });
  // whileBusy re-enabled the controls only now; focus the outcome so it is read and seen.
  if (!uploadMessage.hidden) uploadMessage.focus();
});

function uploadProblemWords(error, type) {
  if (error instanceof ApiError) {
    switch (error.code) {
      case 'payload_too_large': return t('upload.too_large');
      case 'case_not_open': return error.message;  // the service's sentence, in the reader's language, with the contact
      case 'unsupported_media_type': return t(type === 'transcript' ? 'upload.unsupported_transcript' : 'upload.unsupported');
      case 'validation_failed': return t('upload.refused', { details: error.fieldMessages || error.message });
      default: break;
    }
  }
  return problemWords(error);
}

// ---- The stop link: /status/stop#token -------------------------------------------------------------

/** The token after `#`, kept in memory only: it leaves the address bar at once and goes nowhere but the stop API. */
const stopToken = location.pathname.replace(/\/+$/, '') === '/status/stop' ? decodeURIComponent(location.hash.slice(1)) : null;
if (stopToken !== null) {
  history.replaceState(null, '', location.pathname);
  byId('lookup').hidden = true;
  show(byId('stop'), true);
  const stopMessage = byId('stop-message');
  const stopButton = byId('stop-submit');
  if (!stopToken) {
    show(byId('stop-result'), true);
    say(stopMessage, () => t('stop.no_token'), 'error');
    stopButton.disabled = true;
  }
  stopButton.addEventListener('click', async () => {
    await whileBusy(byId('stop'), async () => {
      try {
        const { data } = await request('POST', '/api/v1/status/stop', { json: { token: stopToken } });
        // The service's sentence is in the case's language: the page follows it.
        if (LANGUAGES.includes(data.language) && data.language !== language) {
          language = data.language;
          applyLanguage();
        }
        replace(byId('stop-cancelled'), (data.cancelled_text ?? []).map((words) => h('li', { text: words })));
        say(stopMessage, () => data.message, 'success');
        stopButton.hidden = true;
      } catch (error) {
        say(stopMessage, () => (error instanceof ApiError && error.code === 'stop_link_unknown' ? error.message : problemWords(error)), 'error');
      }
      show(byId('stop-result'), true);
    });
    stopMessage.focus();
  });
}

applyLanguage();
if (lastStatus) renderStatus(lastStatus);

// The mail's link names the case: fill its number and ask for the code (the code is never in a link).
const linked = new URLSearchParams(location.search).get('case');
if (linked) {
  const parsed = parseCaseNumber(linked);
  caseInput.value = parsed.error ? linked : groupCaseNumber(parsed.digits);
  history.replaceState(null, '', location.pathname);
  codeInput.focus();
}
