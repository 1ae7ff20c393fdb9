// The customer status page: a victim looks up a case with its number and access code, sees where it
// stands in plain words, and uploads the documents we still need. The number and code live only in
// this module's memory (never in storage or the URL) and go nowhere but the status API.
import { h, replace, show, byId, announce, whileBusy } from './dom.js';
import { request, ApiError, MAX_UPLOAD_BYTES, retryWords } from './api.js';
import { FINISHED_STATES } from './labels.js';
import { formatDate, formatDateTime, words, formatBytes } from './format.js';
import { parseCaseNumber, groupCaseNumber, normalizeAccessCode } from './identifiers.js';


// The `missing` words of the status, as the customer should read them.
const MISSING_WORDS = {
  proof_of_purchase: 'Proof of purchase: an invoice, a photo of the back of the box, or your carrier contract',
  imei_photo: 'A photo of the serial number or IMEI, ideally of the "Hello" setup screen',
  lock_screen_photo: 'A photo of the screen that shows the device is locked or lost',
  security_answer: 'The answers to your security questions',
  card: 'The payment card registered to your account',
  device: 'The serial number or IMEI of a device registered to your account',
};

// Which upload answers a missing item, to preselect it in the document form.
const MISSING_UPLOAD = { proof_of_purchase: 'invoice', imei_photo: 'imei_photo', lock_screen_photo: 'lock_screen_photo' };

// Evidence types (documents and what was told to an agent) in words.
const EVIDENCE_WORDS = {
  invoice: 'Invoice or receipt',
  warranty_card: 'Warranty card',
  box_photo: 'Photo of the box',
  carrier_contract: 'Carrier contract',
  police_report: 'Police report',
  imei_photo: 'Photo of the serial number or IMEI',
  lock_screen_photo: 'Photo of the locked or lost screen',
  transcript: 'Transcript of a conversation with whoever locked the device',
  security_answers: 'Answers to your security questions',
  card: 'Payment card details',
  device: 'Serial number or IMEI of your device',
};

const EVIDENCE_STATUS = { pending: 'Waiting for review', accepted: 'Accepted', rejected: 'Not accepted' };
const MARK_WORDS = { done: '(done)', current: '(current step)', upcoming: '(still to come)' };
const MARK_SYMBOL = { done: '✓', current: '●', upcoming: '' };

const NOT_FOUND = 'No case matches this case number and access code. Check both against the confirmation we sent you; after 9 failed tries the case number is locked for 8 hours.';
const TYPO = 'This case number has a typo: check the digits against your confirmation.';
const NETWORK = 'We could not reach Reclaim. Check your internet connection and try again.';

function sentence(text) {
  const value = words(text);
  return value.charAt(0).toUpperCase() + value.slice(1);
}

/** The customer's words for a failed look-up or upload (`error` is an ApiError or anything thrown). */
function problemWords(error) {
  if (!(error instanceof ApiError)) return 'Something went wrong in this page. Reload it and try again.';
  switch (error.code) {
    case 'network': return NETWORK;
    case 'not_found': return NOT_FOUND;
    case 'invalid_case_number': return TYPO;
    case 'locked_out': {
      return `This case number is locked: after 9 failed tries we lock it for 8 hours, to keep your case safe from guessing. ${retryWords(error.retryAfter)}`;
    }
    default:
      break;
  }
  if (error.status === 429) return `Too many tries from this connection. ${retryWords(error.retryAfter)}`;
  if (error.status >= 500) {
    return `Reclaim is not answering right now. ${error.retryAfter ? retryWords(error.retryAfter) : 'Please try again in a few minutes.'}`;
  }
  return error.message;
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

/** The case being shown: { caseNumber, accessCode }, held only here. */
let current = null;

// ---- Field errors ---------------------------------------------------------------------------------

function fieldError(input, text) {
  const error = byId(`${input.id}-error`);
  const hint = `${input.id}-hint`;
  error.textContent = text ?? '';
  show(error, Boolean(text));
  if (text) {
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', `${error.id} ${hint}`);
  } else {
    input.removeAttribute('aria-invalid');
    input.setAttribute('aria-describedby', hint);
  }
}

// ---- Rendering ------------------------------------------------------------------------------------

function renderProgress(steps) {
  return steps.map((step) => {
    const mark = MARK_WORDS[step.mark] ? step.mark : 'upcoming';
    return h('li', { class: `step ${mark}`, 'aria-current': mark === 'current' ? 'step' : null },
      h('span', { class: 'marker', 'aria-hidden': 'true', text: MARK_SYMBOL[mark] }),
      h('span', { class: 'label' },
        step.label,
        mark === 'current' ? h('span', { class: 'now', text: 'Now' }) : null,
        h('span', { class: 'visually-hidden', text: ` ${MARK_WORDS[mark]}` })));
  });
}

function renderStatus(status) {
  byId('result-case').textContent = groupCaseNumber(status.case_number);
  byId('stage').textContent = status.stage;
  byId('updated').textContent = formatDateTime(status.updated_at);
  byId('checked').textContent = formatDateTime(new Date().toISOString());
  replace(byId('progress'), renderProgress(status.progress ?? []));

  byId('next-step').textContent = status.next_step;
  // The due date of the step under way; once it has passed, say so rather than promise a date gone by.
  const passed = status.due_at && new Date(status.due_at).getTime() < Date.now();
  byId('due-label').textContent = passed ? 'We aimed to finish by' : 'Expected news by';
  byId('due').textContent = status.due_at ? `${formatDate(status.due_at)}${passed ? ' (we are late, sorry)' : ''}` : '';
  show(byId('due-fact'), Boolean(status.due_at));

  const missing = status.missing ?? [];
  replace(byId('missing'), missing.map((word) => h('li', { text: MISSING_WORDS[word] ?? sentence(word) })));
  show(byId('missing-block'), missing.length > 0);

  const evidence = status.evidence ?? [];
  replace(byId('evidence'), evidence.map((item) => h('li', { class: 'evidence-item' },
    h('span', { class: 'evidence-type', text: EVIDENCE_WORDS[item.type] ?? sentence(item.type) }), ' ',
    h('span', { class: `badge ${EVIDENCE_STATUS[item.status] ? item.status : ''}`, text: EVIDENCE_STATUS[item.status] ?? sentence(item.status) }), ' ',
    h('span', { class: 'muted', text: `received ${formatDateTime(item.filed_at)}` }))));
  show(byId('evidence'), evidence.length > 0);
  show(byId('no-evidence'), evidence.length === 0);

  const notes = status.notes ?? [];
  replace(byId('notes'), notes.map((note) => h('li', {},
    h('p', { class: 'note-body', text: note.body }),
    h('p', { class: 'muted note-date', text: formatDateTime(note.created_at) }))));
  show(byId('notes-block'), notes.length > 0);

  // A finished case takes no more documents (nobody would see them); the next step says whom to contact.
  show(uploadForm, !FINISHED_STATES.includes(status.state));
}

function preselectUpload(missing) {
  const type = (missing ?? []).map((word) => MISSING_UPLOAD[word]).find(Boolean);
  typeSelect.value = type ?? typeSelect.options[0].value;
}

// ---- Look-up --------------------------------------------------------------------------------------

/** Fetches and shows the status of `credentials`; on failure shows why. Resolves to the status or null. */
async function load(credentials) {
  try {
    const { data } = await request('POST', '/api/v1/status', {
      json: { case_number: credentials.caseNumber, access_code: credentials.accessCode },
    });
    announce(message, '');
    renderStatus(data);
    return data;
  } catch (error) {
    if (error instanceof ApiError && error.status !== 0) {
      // The service refused these credentials (or locked them): nothing of the case stays on screen.
      current = null;
      show(result, false);
      show(lookupForm, true);
    }
    if (error instanceof ApiError && error.code === 'invalid_case_number') fieldError(caseInput, TYPO);
    announce(message, problemWords(error), 'error');
    message.focus();
    return null;
  }
}

lookupForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const parsed = parseCaseNumber(caseInput.value);
  const accessCode = normalizeAccessCode(codeInput.value);
  fieldError(caseInput, parsed.error);
  fieldError(codeInput, accessCode ? null : 'An access code has 16 letters and digits: check it against your confirmation.');
  if (parsed.error || !accessCode) {
    announce(message, '');
    (parsed.error ? caseInput : codeInput).focus();
    return;
  }
  const credentials = { caseNumber: parsed.digits, accessCode };
  const status = await whileBusy(lookupForm, () => load(credentials));
  if (!status) return;
  current = credentials;
  preselectUpload(status.missing);
  fieldError(fileInput, null);
  announce(uploadMessage, '');
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
  show(result, false);
  announce(message, '');
  codeInput.value = '';
  show(lookupForm, true);
  caseInput.focus();
  caseInput.select();
});

// ---- Upload ---------------------------------------------------------------------------------------

fileInput.addEventListener('change', () => fieldError(fileInput, null));

uploadForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!current) return;
  announce(uploadMessage, '');
  const file = fileInput.files?.[0];
  if (!file) {
    fieldError(fileInput, 'Choose the file to send.');
    fileInput.focus();
    return;
  }
  // The service's limit, checked here first so nobody waits on a doomed upload.
  if (file.size > MAX_UPLOAD_BYTES) {
    fieldError(fileInput, `This file is ${formatBytes(file.size)}; we accept files up to 10 MB. A smaller photo or a scan at a lower resolution will do.`);
    fileInput.focus();
    return;
  }
  fieldError(fileInput, null);
  const type = typeSelect.value;
  const body = new FormData();
  body.append('case_number', current.caseNumber);
  body.append('access_code', current.accessCode);
  body.append('type', type);
  body.append('file', file, file.name);
  const credentials = current;
  await whileBusy(uploadForm, async () => {
    try {
      const { data } = await request('POST', '/api/v1/status/evidence', { body });
      const status = await load(credentials);
      uploadForm.reset();
      if (status) preselectUpload(status.missing);
      announce(uploadMessage,
        `Thank you: we received your ${(EVIDENCE_WORDS[data?.type ?? type] ?? words(type)).toLowerCase()} (${formatBytes(data?.size ?? file.size)}). It is listed above and waits for review.`,
        'ok');
    } catch (error) {
      announce(uploadMessage, uploadProblemWords(error), 'error');
    }
  });
  // whileBusy re-enabled the controls only now; focus the outcome so it is read and seen.
  if (!uploadMessage.hidden) uploadMessage.focus();
});

function uploadProblemWords(error) {
  if (error instanceof ApiError) {
    switch (error.code) {
      case 'payload_too_large': return 'This file is too large: we accept files up to 10 MB.';
      case 'case_not_open': return 'This case is finished, so we could not add the document. Contact us quoting your case number.';
      case 'unsupported_media_type': return 'We could not use this file. We accept PDF, JPEG, PNG or HEIC.';
      case 'validation_failed': {
        const details = error.fieldMessages;
        return `We could not accept this document. ${details || error.message}`;
      }
      default: break;
    }
  }
  return problemWords(error);
}
