// The dashboard's words for the API's machine words (states, actions, evidence types), keyed by the words of the
// service's vocabularies (vocabulary.js, which also says which words exist and in which order), and the rules the
// forms need before sending: which actions need a reason (ReclaimCore CaseAction.requiresReason) and which
// unlocks fit a case (Workflow.allowedUnlocks). The service checks all of it again.

import { words } from './format.js';
import { VOCABULARY } from './vocabulary.js';

export const STATES = {
  new: 'New', identity_check: 'Identity check', awaiting_documents: 'Awaiting documents', document_review: 'Document review',
  engineering: 'Engineering', resolved: 'Resolved', rejected: 'Rejected', closed: 'Closed', merged: 'Merged',
};

export const TIERS = { tier1: 'Tier 1', tier2: 'Tier 2', tier3: 'Tier 3', engineering: 'Engineering' };

/** The states a case ends in: no tier holds it, no due date runs, no customer upload is taken. */
export const FINISHED_STATES = VOCABULARY.finished_states;

/** Whether an agent of `tier` may hold a case of `caseTier` (Workflow.checkAssignment): the service lists tiers in order. */
export function tierCovers(tier, caseTier) {
  const order = VOCABULARY.tiers;
  return order.indexOf(tier) >= order.indexOf(caseTier);
}

export const CASE_KINDS = { account_takeover: 'The account', activation_lock: 'A device (activation lock)' };

export const PATHS = {
  undetermined: 'Not decided yet', reset: 'Password reset', verified_identity: 'Verified identity',
  documents: 'Proof of ownership', activation_lock: 'Activation lock',
};

/** Each action: its button label, what it does, and whether the API needs a reason. */
export const ACTIONS = {
  send_reset: { label: 'Send reset', help: 'All answers on file matched: send a reset link to the verified primary address.' },
  escalate: { label: 'Escalate to tier 2', help: 'Hand the case to tier 2 for the identity check.' },
  verify: { label: 'Verify identity', help: 'Two of three factors matched: hand the case to engineering.' },
  request_documents: { label: 'Request documents', help: 'Ask the customer for proof of ownership.', reason: true },
  begin_review: { label: 'Begin review', help: 'Start reviewing the documents received.' },
  approve: { label: 'Approve documents', help: 'The documents prove ownership: hand the case to engineering.' },
  reject: { label: 'Reject', help: 'The documents do not prove ownership.', reason: true },
  complete: { label: 'Complete', help: 'Every unlock step is done, each by the service after its cooling-off.' },
  reopen: { label: 'Reopen', help: 'Take a finished case back to tier 2.', reason: true },
  close: { label: 'Close', help: 'Close a finished case.', reason: true },
};

/** Each unlock step as a thing to do (the checklist, the Complete form, "Still to do: …"). */
export const UNLOCKS = {
  remove_rescue_email: 'Remove the rescue address',
  reset_security_questions: 'Reset the security questions',
  remove_activation_lock: 'Remove the activation lock',
};

/** The steps engineering may schedule (UnlockChecklist.schedulable): the checklist (`unlocks.required`); without one,
 *  as Workflow.allowedUnlocks (device-only cases can only lose the activation lock): `complete` then still needs one
 *  done, and every step is done by the service after the cooling-off (api.md v1.3). */
export function schedulableUnlocks(caseData) {
  const required = caseData.unlocks?.required ?? [];
  if (required.length) return required;
  const deviceOnly = caseData.kind === 'activation_lock' || caseData.facts?.two_step_enabled;
  return deviceOnly ? ['remove_activation_lock'] : ['remove_rescue_email', 'reset_security_questions'];
}

/** What still stands between the case and `complete`: the checklist steps not done; without a checklist, every
 *  schedulable step while none is done (one is enough). */
export function outstandingUnlocks(caseData) {
  const done = new Set(caseData.unlocks?.done ?? []);
  const steps = schedulableUnlocks(caseData);
  if (!(caseData.unlocks?.required ?? []).length && steps.some((step) => done.has(step))) return [];
  return steps.filter((step) => !done.has(step));
}

export const EVIDENCE_TYPES = {
  security_answers: 'Security answers', card: 'Payment card', device: 'Device serial or IMEI', transcript: 'Call transcript',
  invoice: 'Invoice', warranty_card: 'Warranty card', box_photo: 'Photo of the box', carrier_contract: 'Carrier contract',
  police_report: 'Police report', imei_photo: 'Photo of the IMEI', lock_screen_photo: 'Photo of the lock screen',
  mail_attachment: 'Mail attachment',
};

/** An item of evidence as agents name it: a transcript the customer uploaded is their conversation with whoever locked
 *  the device (the status page's `transcript` upload), one an agent typed is a call transcript. */
export function evidenceName(type, filedBy) {
  return type === 'transcript' && filedBy === 'customer' ? 'Ransom conversation' : label(EVIDENCE_TYPES, type);
}

/** An upload's file type, as agents read it beside its kind (the service's `media_type`, parameters left out). */
export const MEDIA_TYPES = {
  'application/pdf': 'PDF', 'image/jpeg': 'JPEG image', 'image/png': 'PNG image', 'image/heic': 'HEIC image',
  'text/plain': 'text', 'message/rfc822': 'saved e-mail',
};

/** What agents may upload as a document, in the service's order. */
export const DOCUMENT_TYPES = VOCABULARY.document_kinds;

/** What the customer reads when a document is rejected (`customer_reason`), as agents choose it. */
export const CUSTOMER_REASONS = {
  unreadable: 'Unreadable (blurred, dark or cut off)', wrong_document: 'Not the document asked for',
  does_not_match: 'Does not match the device or account', incomplete: 'Incomplete (a page or an edge missing)',
  other: 'Other: cannot serve as proof of ownership',
};

export const REQUIREMENTS = {
  proof_of_purchase: 'Proof of purchase', imei_photo: 'Photo of the IMEI', lock_screen_photo: 'Photo of the lock screen',
  security_answer: 'A security answer', card: 'The payment card', device: 'A device serial or IMEI',
};

export const FACTS = {
  rescue_email_added: 'Thief added a rescue address',
  security_questions_changed: 'Thief changed the security questions',
  two_step_enabled: 'Thief turned on two-step verification',
  lost_mode_enabled: 'Device in lost mode',
};

/** The fields an agent may correct (PATCH /api/v1/cases/{n}), by their API names, as the timeline names them. */
export const CASE_FIELDS = {
  'customer.name': 'customer name', 'customer.contact_email': 'contact address', 'customer.phone': 'phone', language: 'language',
  'facts.rescue_email': 'rescue address', devices: 'devices', summary: 'summary',
};

export const FACTORS = { security_answer: 'Security answer', card: 'Payment card', device: 'Device' };

/** The mails the customer receives (CustomerMailKind) and the webhook events (WebhookEvent), for the Messages panel. */
export const MESSAGE_KINDS = {
  case_opened: 'case opened (number, access code, status link)', access_code_reissued: 'a new access code',
  state_changed: 'the case changed state', documents_requested: 'documents requested', customer_note: 'a note for the customer',
  merged: 'merged into another case', contact_changed: 'the contact address changed (to the previous address)',
  document_rejected: 'a document rejected (with the customer reason)',
  unlock_scheduled: 'an unlock scheduled (the notice with the stop link, to every address on file)',
  caller_code: 'a one-time code to verify a caller on the phone',
  'case.unlock_scheduled': 'case.unlock_scheduled', 'case.unlock_cancelled': 'case.unlock_cancelled', 'case.unlock_done': 'case.unlock_done',
  'case.opened': 'case.opened', 'case.state_changed': 'case.state_changed', 'case.merged': 'case.merged',
  'evidence.filed': 'evidence.filed', 'evidence.reviewed': 'evidence.reviewed', 'note.added': 'note.added', 'audit.checkpoint': 'audit.checkpoint', 'message.received': 'message.received',
  'case.risk_raised': 'case.risk_raised',
};

/** The risk signals (RiskSignal): what agents read on the case's risk panel; the customer never sees one. */
export const RISK_SIGNALS = {
  device_claimed_elsewhere: 'Device claimed by another account',
  document_reused: 'Document reused from another account’s case',
  mail_from_rescue_address: 'Mail from the rescue address the thief added',
  repudiated: 'Someone said “this wasn’t me”',
  flagged: 'Flagged by an agent',
  parallel_case: 'Another case on this account or device names a different customer',
  contact_changed: 'Contact, rescue facts or devices corrected while an unlock step waited',
  caller_code_guessed: 'Nine wrong call codes: someone may be calling as the customer',
};

/** Why another case is related (RelatedCases.Reason): what the case page's related list says. */
export const RELATED_REASONS = { account: 'same account', device: 'same device', contact: 'same contact address', phone: 'same phone' };

/** Where a recorded unlock step stands (the cooling-off). */
export const UNLOCK_STATUSES = { scheduled: 'scheduled', done: 'done', cancelled: 'cancelled' };

/** Each customer language named in English, for agents. */
export const LANGUAGES = { en: 'English', 'zh-Hans': 'Chinese (Simplified)', 'zh-Hant': 'Chinese (Traditional)' };

/** Which table holds the words of each vocabulary: a browser test fails on a word of the service without words here. */
export const WORDS = {
  case_kinds: CASE_KINDS, case_states: STATES, tiers: TIERS, recovery_paths: PATHS, case_actions: ACTIONS, unlock_steps: UNLOCKS,
  evidence_kinds: EVIDENCE_TYPES, requirements: REQUIREMENTS, factors: FACTORS, mail_kinds: MESSAGE_KINDS, webhook_events: MESSAGE_KINDS,
  languages: LANGUAGES, customer_reasons: CUSTOMER_REASONS, risk_signals: RISK_SIGNALS, unlock_statuses: UNLOCK_STATUSES,
};

/** A label for any machine word, falling back to the word with spaces. */
export function label(table, word) {
  return table[word]?.label ?? table[word] ?? words(word);
}

/** Field names in a problem's `errors` (the last part of a path), as the forms label them. */
export const FIELDS = {
  account_email: 'Account e-mail', name: 'Name', contact_email: 'Contact e-mail', phone: 'Phone', customer: 'Customer', language: 'Language',
  summary: 'What happened', imei: 'IMEI', serial: 'Serial number', model: 'Model', devices: 'Devices', facts: 'Facts',
  rescue_email: 'Rescue address', rescue_email_added: 'Thief added a rescue address', exp_month: 'Expiry month',
  exp_year: 'Expiry year', number: 'Number', email: 'E-mail', text: 'Text', file: 'File', reason: 'Reason',
  customer_reason: 'What the customer reads', answers: 'Answers', security_questions: 'Security questions',
};

/** What each item of a list is called in a path's `list[i]` ("devices[0]" reads "Device 1"). */
const LIST_ITEMS = { devices: 'Device', answers: 'Answer', security_questions: 'Security question' };

/** A problem's field path in words: "devices[0].imei" reads "Device 1: IMEI", "customer.name" "Customer: Name". */
export function fieldWords(path) {
  return String(path ?? '').split('.').filter(Boolean).map((part) => {
    const [, name, index] = part.match(/^([^[]*)\[(\d+)\]$/) ?? [null, part, null];
    if (index !== null) return `${LIST_ITEMS[name] ?? label(FIELDS, name)} ${Number(index) + 1}`;
    const words = label(FIELDS, name);
    return words.charAt(0).toUpperCase() + words.slice(1);
  }).join(': ');
}

/** A refusal's per-field `errors` in one line of words: "Device 1: IMEI — not a valid IMEI; …" ('' when none). */
export function fieldProblemWords(errors) {
  return (errors ?? []).map((e) => (e.field ? `${fieldWords(e.field)} — ${e.message}` : e.message)).filter(Boolean).join('; ');
}
