// Evidence: summaries with previews for tier3+, reviews, and the form that files typed evidence or a document.
import { MAX_UPLOAD_BYTES } from '../api.js';
import { h, replace, show } from '../dom.js';
import { formatBytes, formatDateTime } from '../format.js';
import { groupCaseNumber } from '../identifiers.js';
import { CUSTOMER_REASONS, DOCUMENT_TYPES, EVIDENCE_TYPES, MEDIA_TYPES, REQUIREMENTS, evidenceName, label } from '../labels.js';
import { VOCABULARY } from '../vocabulary.js';
import { reload } from '../case.js';
import { actorWords, allows, app, current, fill, learnNames, say, send } from './common.js';
import { loadMessages } from './messages.js';
import { loadTimeline } from './timeline.js';
import { loadVerification } from './verification.js';

// MARK: Evidence

export function loadEvidence() {
  return fill('evidence-body', async () => {
    const { data } = await app.api.call('GET', `/api/v1/cases/${current.number}/evidence`);
    learnNames(data);
    return [
      // What is still missing matters only while the case takes evidence.
      !allows('file_evidence') ? null : data.missing.length
        ? h('p', { id: 'evidence-missing' }, 'Still missing: ', data.missing.map((m) => label(REQUIREMENTS, m)).join(', '), '.')
        : h('p', { id: 'evidence-missing', class: 'muted' }, 'Nothing missing for this path.'),
      data.items.length === 0 ? h('p', { class: 'muted' }, 'No evidence filed yet.')
        : h('ul', { class: 'evidence', id: 'evidence-list' }, data.items.map(evidenceItem)),
      !app.can('evidence.file') ? null : allows('file_evidence') ? fileEvidenceForm()
        : h('p', { class: 'muted', id: 'evidence-closed' }, 'This case is finished: it takes no more evidence.')];
  });
}

function evidenceItem(item) {
  const previewable = app.can('evidence.content') && item.media_type && (item.media_type.startsWith('image/') && item.media_type !== 'image/heic'
    || item.media_type === 'application/pdf' || isTextual(item.media_type));
  const slot = h('div', { class: 'preview-slot' });
  const reviewable = app.can('evidence.review') && allows('review') && item.status === 'pending';
  return h('li', { dataset: { evidence: item.id, type: item.type } },
    h('div', { class: 'evidence-head' },
      h('strong', {}, evidenceName(item.type, item.filed_by)), ' ',
      h('span', { class: `badge ${item.status}` }, item.status)),
    // An upload is named by its kind (above) with its file type and size, once: the service's summary repeats all
    // three in words of its own ("Imei photo, JPEG, 106 KiB"). Typed evidence reads its summary (masked card, answers,
    // "Transcript, 82 characters").
    h('p', { class: 'evidence-summary' }, isUpload(item) ? uploadWords(item) : item.summary),
    item.customer_reason ? h('p', { class: 'customer-reason' }, 'The customer reads: ', h('strong', {}, label(CUSTOMER_REASONS, item.customer_reason))) : null,
    h('p', { class: 'muted small' }, `Filed ${formatDateTime(item.filed_at)} by ${actorWords(item.filed_by)}`,
      item.from_case ? [' · from case ', h('a', { href: `#/cases/${item.from_case}`, class: 'mono' }, groupCaseNumber(item.from_case))] : null),
    h('div', { class: 'actions' },
      previewable ? h('button', { type: 'button', class: 'secondary preview', onclick: (e) => preview(item, slot, e.target) }, 'Preview') : null,
      reviewable ? h('button', { type: 'button', class: 'secondary', onclick: () => reviewForm(item, slot) }, 'Review') : null),
    slot);
}

/** A file sent to the service (a document, a mail's attachment, the customer's conversation), not typed details: an
 *  agent's call transcript is typed text, though it is stored as text/plain. */
function isUpload(item) {
  return Boolean(item.media_type) && (item.type !== 'transcript' || item.filed_by === 'customer');
}

/** "JPEG image, 106 kB": an upload's file type and size. */
function uploadWords(item) {
  const type = item.media_type.split(';')[0].trim();
  return [MEDIA_TYPES[type] ?? type, formatBytes(item.size)].filter(Boolean).join(', ');
}

/** Shows a document inline. The bytes come from the content endpoint with the session cookie (same origin, so the
 *  CSP's 'self' covers it); every opening is recorded on the timeline, so it only happens on request. */
function preview(item, slot, button) {
  const source = `/api/v1/evidence/${item.id}/content?disposition=inline`;
  const alt = `${evidenceName(item.type, item.filed_by)} filed ${formatDateTime(item.filed_at)}`;
  if (isTextual(item.media_type)) {
    previewText(source, alt, slot, button);
    return;
  }
  const element = item.media_type === 'application/pdf'
    ? h('iframe', { src: source, title: alt, class: 'preview pdf' })
    : h('img', { src: source, alt, class: 'preview' });
  if (element.tagName === 'IMG') element.addEventListener('error', () => replace(slot, h('p', { class: 'field-error' }, 'The document could not be shown.')));
  // The opening is on the timeline once the bytes came.
  element.addEventListener('load', () => loadTimeline(), { once: true });
  replace(slot, element);
  button.remove();
}

/** Text and saved e-mails (a transcript of the conversation with the thief). */
function isTextual(mediaType) {
  return mediaType.startsWith('text/plain') || mediaType === 'message/rfc822';
}

/** Shows a text or e-mail transcript as text: fetched, decoded and put in a <pre> with textContent, so a message
 *  holding HTML or script is read, never rendered (the endpoint also serves it as an attachment with nosniff). */
async function previewText(source, alt, slot, button) {
  button.disabled = true;
  try {
    const response = await fetch(source, { credentials: 'same-origin', headers: { Accept: 'text/plain, message/rfc822' } });
    if (!response.ok) throw new Error(String(response.status));
    const words = new TextDecoder('utf-8').decode(await response.arrayBuffer());
    replace(slot, h('pre', { class: 'preview text', tabindex: '0', 'aria-label': alt, text: words }));
    button.remove();
    loadTimeline();
  } catch {
    replace(slot, h('p', { class: 'field-error' }, 'The document could not be shown.'));
    button.disabled = false;
  }
}

function reviewForm(item, slot) {
  const error = h('p', { class: 'field-error', role: 'alert', hidden: true });
  // Rejecting a document tells the customer why, in their language: the service takes one of its fixed reasons. Typed
  // details and transcripts are shown to the customer only as received, so they take none.
  const isDocument = DOCUMENT_TYPES.includes(item.type) || item.type === 'mail_attachment';
  // A mail attachment is accepted as what it proves (an invoice, say): it then counts for the documents gate as that.
  const acceptedAs = item.type === 'mail_attachment' ? h('div', { class: 'accepted-as-field' },
    h('label', { for: `review-accepted-as-${item.id}` }, 'Accept as (required to accept)'),
    h('select', { id: `review-accepted-as-${item.id}`, name: 'accepted_as' },
      h('option', { value: '' }, 'Choose…'),
      DOCUMENT_TYPES.map((word) => h('option', { value: word }, label(EVIDENCE_TYPES, word))))) : null;
  const customerReason = isDocument ? h('div', { class: 'customer-reason-field', hidden: true },
    h('label', { for: `review-customer-reason-${item.id}` }, 'What the customer reads (required to reject)'),
    h('select', { id: `review-customer-reason-${item.id}`, name: 'customer_reason' },
      h('option', { value: '' }, 'Choose…'),
      VOCABULARY.customer_reasons.map((word) => h('option', { value: word }, label(CUSTOMER_REASONS, word)))),
    h('p', { class: 'muted small' }, 'Shown on the status page and mailed, in the customer’s language; your reason above stays internal.')) : null;
  const form = h('form', { class: 'review-form', novalidate: true },
    h('fieldset', {}, h('legend', {}, 'Decision'),
      h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'decision', value: 'accepted', checked: true }), 'Accept'),
      h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'decision', value: 'rejected' }), 'Reject')),
    h('label', { for: `review-reason-${item.id}` }, 'Reason (required)'),
    h('textarea', { id: `review-reason-${item.id}`, rows: 2, maxlength: 2000, required: true }),
    acceptedAs,
    customerReason,
    error,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save review'),
      h('button', { type: 'button', class: 'secondary', onclick: () => replace(slot) }, 'Cancel')));
  if (customerReason || acceptedAs) {
    form.addEventListener('change', () => {
      const rejected = form.querySelector('input[name="decision"]:checked').value === 'rejected';
      if (customerReason) show(customerReason, rejected);
      if (acceptedAs) show(acceptedAs, !rejected);
    });
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const reason = form.querySelector('textarea').value.trim();
    if (!reason) { error.textContent = 'Give a reason for the decision.'; show(error); return; }
    const decision = form.querySelector('input[name="decision"]:checked').value;
    const json = { decision, reason };
    if (acceptedAs && decision === 'accepted') {
      json.accepted_as = acceptedAs.querySelector('select').value;
      if (!json.accepted_as) { error.textContent = 'Choose what the attachment proves.'; show(error); return; }
    }
    if (customerReason && decision === 'rejected') {
      json.customer_reason = customerReason.querySelector('select').value;
      if (!json.customer_reason) { error.textContent = 'Choose what the customer reads: why the document was not accepted.'; show(error); return; }
    }
    await send(form, error, () => app.api.call('POST', `/api/v1/evidence/${item.id}/review`, { json }), async () => {
      // A rejected document may send the case back to the customer by itself: the whole case is drawn again.
      if (json.customer_reason) await reload();
      else evidenceChanged();
      say(`Evidence ${decision}.`, 'ok');
    });
  });
  replace(slot, form);
  form.querySelector('input').focus();
}

function fileEvidenceForm() {
  const kinds = { card: 'Payment card', device: 'Device serial or IMEI', transcript: 'Call transcript', document: 'Document (upload)' };
  const fields = h('div', { id: 'evidence-fields' });
  const error = h('p', { class: 'field-error', id: 'evidence-error', role: 'alert', hidden: true });
  const select = h('select', { id: 'evidence-kind' }, Object.entries(kinds).map(([value, words]) => h('option', { value }, words)));
  const form = h('form', { id: 'evidence-form', class: 'evidence-form', novalidate: true },
    h('h3', {}, 'File evidence'),
    h('label', { for: 'evidence-kind' }, 'What'), select, fields, error,
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'evidence-submit' }, 'File')));
  const draw = () => replace(fields, evidenceFields(select.value));
  select.addEventListener('change', draw);
  draw();
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    show(error, false);
    let request;
    try {
      request = evidenceRequest(select.value, form);
    } catch (problem) {
      error.textContent = problem.message;
      show(error);
      return;
    }
    await send(form, error, () => app.api.call('POST', `/api/v1/cases/${current.number}/evidence`, request), () => {
      say(`${kinds[select.value]} filed.`, 'ok');
      evidenceChanged();
    });
  });
  return form;
}

function evidenceFields(kind) {
  switch (kind) {
    case 'card': return [
      h('label', { for: 'ev-card-number' }, 'Card number', h('span', { class: 'hint' }, 'Never the security code: it is refused and not stored.')),
      h('input', { type: 'text', id: 'ev-card-number', inputmode: 'numeric', autocomplete: 'off' }),
      h('div', { class: 'inline-fields' },
        h('div', {}, h('label', { for: 'ev-card-month' }, 'Expiry month'), h('input', { type: 'text', id: 'ev-card-month', inputmode: 'numeric', maxlength: 2 })),
        h('div', {}, h('label', { for: 'ev-card-year' }, 'Expiry year'), h('input', { type: 'text', id: 'ev-card-year', inputmode: 'numeric', maxlength: 4 })))];
    case 'device': return [
      h('label', { for: 'ev-imei' }, 'IMEI', h('span', { class: 'hint' }, '15 digits; or give the serial')),
      h('input', { type: 'text', id: 'ev-imei', inputmode: 'numeric', autocomplete: 'off' }),
      h('label', { for: 'ev-serial' }, 'Serial number'),
      h('input', { type: 'text', id: 'ev-serial', autocomplete: 'off' })];
    case 'transcript': return [
      h('label', { for: 'ev-transcript' }, 'Transcript', h('span', { class: 'hint' }, 'Stored encrypted; readable by tier 3 and engineering.')),
      h('textarea', { id: 'ev-transcript', rows: 5 })];
    default: return [
      h('label', { for: 'ev-doc-type' }, 'Document type'),
      h('select', { id: 'ev-doc-type' }, DOCUMENT_TYPES.map((t) => h('option', { value: t }, EVIDENCE_TYPES[t]))),
      h('label', { for: 'ev-file' }, 'File', h('span', { class: 'hint' }, 'PDF, JPEG, PNG or HEIC; 10 MB at most.')),
      h('input', { type: 'file', id: 'ev-file', accept: 'application/pdf,image/jpeg,image/png,image/heic,.heic' })];
  }
}

function evidenceRequest(kind, form) {
  const value = (id) => form.querySelector(`#${id}`)?.value.trim() ?? '';
  switch (kind) {
    case 'card': {
      const number = value('ev-card-number').replace(/[\s-]/g, '');
      const month = Number(value('ev-card-month'));
      const year = Number(value('ev-card-year'));
      if (!/^[0-9]{13,19}$/.test(number)) throw new Error('A card number has 13 to 19 digits.');
      if (!(month >= 1 && month <= 12) || !(year >= 2000)) throw new Error('Give the expiry month (1–12) and the four-digit year.');
      return { json: { type: 'card', number, exp_month: month, exp_year: year } };
    }
    case 'device': {
      const imei = value('ev-imei').replace(/[\s-]/g, '');
      const serial = value('ev-serial');
      if (!imei && !serial) throw new Error('Give the IMEI or the serial number.');
      return { json: { type: 'device', ...(imei ? { imei } : {}), ...(serial ? { serial } : {}) } };
    }
    case 'transcript': {
      const text = value('ev-transcript');
      if (!text) throw new Error('The transcript is empty.');
      return { json: { type: 'transcript', text } };
    }
    default: {
      const file = form.querySelector('#ev-file').files[0];
      if (!file) throw new Error('Choose a file to upload.');
      if (file.size > MAX_UPLOAD_BYTES) throw new Error('The file is larger than 10 MB.');
      const body = new FormData();
      body.append('type', value('ev-doc-type'));
      body.append('file', file);
      return { body };
    }
  }
}

/** Evidence filed or reviewed: its list, the timeline and the verification change together. */
export function evidenceChanged() {
  loadEvidence();
  loadTimeline();
  if (app.can('case.events')) loadMessages();
  if (app.can('case.verification')) loadVerification();
}
