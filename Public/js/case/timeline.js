// The timeline, with a mark saying whether its hash chain verifies (checked here with WebCrypto).
import { h } from '../dom.js';
import { formatDateTime, words } from '../format.js';
import { groupCaseNumber } from '../identifiers.js';
import { ACTIONS, CASE_FIELDS, CUSTOMER_REASONS, EVIDENCE_TYPES, FACTS, LANGUAGES, MESSAGE_KINDS, PATHS, RISK_SIGNALS, STATES, UNLOCKS, evidenceName, label } from '../labels.js';
import { verifyChain } from '../chain.js';
import { actorWords, allPages, current, fill } from './common.js';

// MARK: Timeline


/** An event's words on the timeline (exported for the test that every event type of the service has its own). */
export function eventWords(event) {
  const d = event.data ?? {};
  switch (event.type) {
    case 'case_opened': return 'Case opened';
    case 'transition': return `${label(ACTIONS, d.action)}: ${label(STATES, d.from)} → ${label(STATES, d.to)}${d.reason ? ` — “${d.reason}”` : ''}${d.unlock ? ` (${label(UNLOCKS, d.unlock)})` : ''}`;
    case 'reset_sent': return `Reset sent to the verified primary address${d.to ? ` ${d.to}` : ''}`;
    case 'note_added': return d.visibility === 'customer' ? 'Note for the customer added' : 'Internal note added';
    case 'evidence_filed': return `Evidence filed: ${evidenceName(d.type, event.actor)}`;
    case 'evidence_reviewed': return `Evidence ${d.decision ?? 'reviewed'}: ${label(EVIDENCE_TYPES, d.type)}${d.reason ? ` — “${d.reason}”` : ''}`
      + (d.customer_reason ? `; the customer reads: ${label(CUSTOMER_REASONS, d.customer_reason)}` : '');
    case 'evidence_content_read': return `Document opened: ${label(EVIDENCE_TYPES, d.type)}`;
    case 'assigned': return `Assigned to ${actorWords(`agent:${d.agent_id}`)}`;
    case 'frozen': return 'Account frozen';
    case 'unfrozen': return d.cause === 'lifted' ? 'Freeze lifted' : `Freeze lifted: the case is ${label(STATES, d.state ?? d.cause).toLowerCase()}`;
    case 'unlock_done': return `Unlock step done: ${label(UNLOCKS, d.step)}${d.reason ? ` — “${d.reason}”` : ''}`;
    case 'unlock_scheduled': return `Unlock step scheduled: ${label(UNLOCKS, d.step)}, takes effect ${d.effective_at} (${d.notified} address(es) told)`;
    case 'unlock_cancelled': return `Scheduled unlock cancelled: ${label(UNLOCKS, d.step)} — “${d.reason}”`;
    case 'handed_back': return `Handed back to ${label(STATES, d.to)}: ${d.reason}`;
    case 'unassigned': return `No longer assigned to ${actorWords(`agent:${d.previous}`)}: the case moved to ${label(STATES, d.state)}`;
    case 'merged': return `Merged into case ${groupCaseNumber(d.into)}${d.same_customer_confirmed ? ' (different name or contact address: confirmed as the same person)' : ''}${d.reason ? ` — “${d.reason}”` : ''}`;
    case 'merge_received': return `Case ${groupCaseNumber(d.from_case)} merged into this one${d.reason ? ` — “${d.reason}”` : ''}`;
    case 'unmerged': return `Merge undone: back to ${label(STATES, d.to_state)}${d.reason ? ` — “${d.reason}”` : ''}`;
    case 'unmerge_left': return `Case ${groupCaseNumber(d.case_number)} unmerged: its items left this case`;
    case 'access_code_reissued': return `New access code issued (the old one no longer works)${d.read_out_after ? '; read out to the verified caller' : ''}`;
    case 'caller_verified': return `Caller verified by ${d.method === 'mailed_code' ? 'a mailed one-time code' : 'their customer code'} until ${formatDateTime(d.verified_until)}`;
    case 'caller_code_mailed': return `One-time code mailed to the contact address (works until ${formatDateTime(d.expires_at)})`;
    case 'caller_code_locked': return `Too many wrong call codes: locked until ${formatDateTime(d.locked_until)}`;
    case 'document_arrived': return `Document arrived: ${evidenceName(d.type, event.actor)} (${d.unreviewed_documents} to review)`;
    case 'mail_refused': return `Mail not sent (${words(d.reason ?? 'refused')}): ${label(MESSAGE_KINDS, d.mail)}`;
    case 'case_corrected': return `Details corrected: ${correctionWords(d)}`;
    case 'case_erased': return d.cause === 'retention' ? 'Personal data erased: the retention period ended' : 'Personal data erased on request';
    case 'message_received': {
      const how = { reply_token: 'by its reply address', references: 'by the mail it answers', subject: 'by the case number from the contact address', agent: 'attached by an agent' };
      const kind = d.from_rescue_address ? 'A mail from the rescue address the thief added' : d.auto ? 'An automatic reply' : 'A reply from the customer';
      return `${kind} arrived (${how[d.matched_by] ?? d.matched_by})`;
    }
    case 'risk_raised': return `Risk raised: ${label(RISK_SIGNALS, d.signal)}${d.detail ? ` — ${d.detail}` : ''}`;
    case 'risk_cleared': return `Risk cleared: ${(d.signals ?? []).map((s) => label(RISK_SIGNALS, s)).join('; ') || 'signals'}${d.reason ? ` — “${d.reason}”` : ''}`;
    case 'denied': return `Refused: ${words(d.attempted ?? d.action ?? 'an action')}`;
    default: return words(event.type);
  }
}

/** What a correction changed, as its event says it: the fields, never their values (the event holds none), except
 *  the language, the facts' new answers, how many devices came and went, and the path when it followed. */
function correctionWords(d) {
  const parts = (d.fields ?? []).map((field) => {
    const fact = field.startsWith('facts.') ? field.slice('facts.'.length) : null;
    if (field === 'language') return `language (now ${d.language ? label(LANGUAGES, d.language) : 'not known'})`;
    if (field === 'facts.rescue_email') return `rescue address ${d.rescue_email ?? 'changed'}`;
    if (field === 'devices' && d.devices) return `devices (${d.devices.added} added, ${d.devices.removed} removed)`;
    if (fact && fact in FACTS) return `${FACTS[fact].toLowerCase()}: ${d.facts?.[fact] ? 'yes' : 'no'}`;
    return label(CASE_FIELDS, field);
  });
  if (d.path) parts.push(`path ${label(PATHS, d.path.from)} → ${label(PATHS, d.path.to)}`);
  return parts.join('; ') || 'details';
}

export function loadTimeline() {
  return fill('timeline-body', async () => {
    const events = await allPages(`/api/v1/cases/${current.number}/events`);
    const check = await verifyChain(events);
    const mark = check.ok === true
      ? h('p', { class: 'chain ok', id: 'chain-mark' }, '✓ Hash chain verified in this browser: no event was changed or removed.')
      : check.ok === false
        ? h('p', { class: 'chain broken', id: 'chain-mark', role: 'alert' }, `✗ Hash chain broken at event ${check.seq}: ${check.reason}.`)
        : h('p', { class: 'chain unknown', id: 'chain-mark' }, check.reason);
    return [mark, h('ol', { class: 'timeline', id: 'timeline-list' }, events.map((event) => h('li', { dataset: { type: event.type, seq: event.seq } },
      h('span', { class: 'when' }, formatDateTime(event.at)),
      h('span', { class: 'what' }, eventWords(event)),
      h('span', { class: 'who muted' }, ` by ${actorWords(event.actor)}`))))];
  });
}
