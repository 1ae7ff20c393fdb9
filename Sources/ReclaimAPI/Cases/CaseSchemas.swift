import Foundation
import ReclaimCore
import ReclaimStore

/// OpenAPI schemas of cases, accounts on file and customer status (merged into `OpenAPIDocument.schemas`).
extension OpenAPIDocument {
    nonisolated(unsafe) private static let string: [String: Any] = ["type": "string"]
    /// An address the service accepts as input (`EmailAddress.validate`).
    nonisolated(unsafe) static let mailbox: [String: Any] = [
        "type": "string", "format": "email", "maxLength": EmailAddress.maximumLength,
        "description": EmailAddress.rule,
    ]
    nonisolated(unsafe) static let phone: [String: Any] = [
        "type": "string", "pattern": PhoneNumber.pattern, "description": PhoneNumber.rule,
    ]
    nonisolated(unsafe) private static let dateTime: [String: Any] = ["type": ["string", "null"], "format": "date-time"]
    nonisolated(unsafe) private static let caseNumber: [String: Any] = [
        "type": "string", "pattern": "^[1-9][0-9]{11}$", "description": "12 digits, the last a Damm check digit.",
    ]
    nonisolated(unsafe) static let actorNames: [String: Any] = [
        "type": "object", "additionalProperties": ["type": "string"],
        "description":
            "The agents among this page's actors (and, for events, those cases were assigned to), by `agent:<uuid>` → name; not part of any hash.",
    ]
    nonisolated(unsafe) private static let device: [String: Any] = [
        "type": "object",
        "properties": ["serial": ["type": ["string", "null"]], "imei": ["type": ["string", "null"]], "model": ["type": ["string", "null"]]],
    ]
    nonisolated(unsafe) private static let facts: [String: Any] = [
        "type": "object",
        "properties": [
            "rescue_email": [
                "type": ["string", "null"],
                "description": "The address the thief added, when known; nothing is ever sent to it, "
                    + "nor to any address that reaches the same mailbox (case, +tag and the provider's own rules ignored). "
                    + EmailAddress.rule,
            ],
            "rescue_email_added": ["type": "boolean"], "security_questions_changed": ["type": "boolean"],
            "two_step_enabled": ["type": "boolean"], "lost_mode_enabled": ["type": "boolean"],
        ],
    ]
    nonisolated(unsafe) private static let fromCase: [String: Any] = [
        "type": "string", "description": "Present on an item a merged case brought: that case's number.",
    ]
    nonisolated(unsafe) private static let language: [String: Any] = [
        "type": ["string", "null"], "enum": CustomerLanguage.allCases.map(\.rawValue) + [NSNull()],
        "description":
            "The customer's language for the status page and every message sent; null (or left out when opening) when not known: the reader's Accept-Language then decides the status page, and mail goes in English.",
    ]
    nonisolated(unsafe) private static let caseProperties: [String: Any] = [
        "case_number": caseNumber,
        "kind": ["type": "string", "enum": CaseKind.allCases.map(\.rawValue)],
        "language": language,
        "state": ["type": "string", "enum": CaseState.allCases.map(\.rawValue)],
        "tier": ["type": "string", "enum": Tier.allCases.map(\.rawValue)],
        "path": ["type": "string", "enum": RecoveryPath.allCases.map(\.rawValue)],
        "facts": [
            "type": "object",
            "properties": (facts["properties"] as! [String: Any]).merging([
                "former_rescue_emails": [
                    "type": "array", "items": ["type": "string"], "readOnly": true,
                    "description":
                        "Rescue addresses this case recorded and a correction removed or replaced: still the thief's (no mail goes to them, and no contact address may reach their mailbox, on any case of the account).",
                ]
            ]) { a, _ in a },
        ],
        "account_email": ["type": ["string", "null"], "description": "null once erased."],
        "customer": [
            "type": "object", "description": "Its members null once erased.",
            "properties": [
                "name": ["type": ["string", "null"]], "contact_email": ["type": ["string", "null"]],
                "phone": ["type": ["string", "null"], "description": "E.164; null when none is on file (and once erased)."],
            ],
        ],
        "devices": ["type": ["array", "null"], "items": device, "description": "null once erased."],
        "summary": ["type": ["string", "null"], "description": "null once erased."],
        "erased_at": [
            "type": ["string", "null"], "format": "date-time",
            "description": "When what identified the customer was erased (POST …/erasure, or retention); null until then.",
        ],
        "assignee": ["type": ["object", "null"], "properties": ["id": ["type": "string", "format": "uuid"], "name": string, "tier": string]],
        "frozen": ["type": "boolean"],
        "due_at": dateTime,
        "overdue": ["type": "boolean"],
        "allowed_actions": [
            "type": "array", "items": ["type": "string", "enum": CaseAction.allCases.map(\.rawValue) + CaseWork.allCases.map(\.rawValue)],
            "description": "What the caller may do on the case now, and all the dashboard offers: the workflow transitions "
                + "(POST …/transitions; send_reset only once every security answer on file matched), then the other work "
                + "(the vocabulary's case_work: assign is take or hand over; reissue_access_code mails a new code, "
                + "give_access_code also answers it, to read out to a caller this agent verified, tier2+). A finished case (resolved, rejected, closed, "
                + "merged) takes no work but an internal note, a customer note (not when merged), a new access code and, merged, unmerge.",
        ],
        "created_at": dateTime,
        "updated_at": dateTime,
        "version": ["type": "integer", "description": "Also sent as ETag; send it back in If-Match."],
        "unlocks": [
            "type": "object", "required": ["required", "done", "scheduled"],
            "description":
                "The unlock checklist: complete needs every required step done. A recorded step is first scheduled (the cooling-off): the service does it at effective_at.",
            "properties": [
                "required": ["type": "array", "items": unlockStep], "done": ["type": "array", "items": unlockStep],
                "scheduled": [
                    "type": "array", "description": "Steps recorded and waiting for their time, soonest first.",
                    "items": [
                        "type": "object", "required": ["step", "status", "effective_at"],
                        "properties": ["step": unlockStep, "status": ["type": "string", "enum": ["scheduled"]], "effective_at": dateTime],
                    ],
                ],
            ],
        ],
        "unreviewed_documents": [
            "type": "integer", "minimum": 0, "description": "Documents still pending review, the case's own and those of cases merged into it.",
        ],
        "awaiting_reply": [
            "type": "boolean", "description": "The newest human message on the case is the customer's (no customer note or mail after it).",
        ],
        "merged_into": ["type": ["string", "null"], "description": "State merged: the case number it was merged into."],
        "risk": ["type": "boolean", "description": "A risk signal stands uncleared: approve and unlock steps are refused (risk_uncleared)."],
        "call_codes": [
            "type": ["object", "null"], "required": ["desk", "valid_until"],
            "description":
                "Agents only, on the case's own GET; null when the case is finished. The desk code: read it to the customer when calling them (their status page shows it too). The customer's own code is never here.",
            "properties": ["desk": ["type": "string", "pattern": "^[0-9]{6}$"], "valid_until": dateTime],
        ],
        "caller_verification": [
            "type": ["object", "null"], "required": ["verified_until", "method", "agent"],
            "description": "Agents only, on the case's own GET: the latest caller verification still in force (it lets only its agent act), or null.",
            "properties": [
                "verified_until": dateTime, "method": ["type": "string", "enum": CallCodes.Method.allCases.map(\.rawValue)], "agent": string,
            ],
        ],
        "related": [
            "type": "array",
            "description":
                "Agents only, on the case's own GET and the 201 of opening: every other case, open or finished within RECLAIM_RELATED_DAYS (never an erased one), that shares the account e-mail, a serial or IMEI, the contact address or the phone; same_customer is false when the name, contact address or phone differ. Two cases sharing the account or a device with different customers both carry the risk signal parallel_case.",
            "items": [
                "type": "object", "required": ["number", "state", "tier", "opened_at", "why", "same_customer"],
                "properties": [
                    "number": caseNumber, "state": ["type": "string", "enum": CaseState.allCases.map(\.rawValue)],
                    "tier": ["type": "string", "enum": Tier.allCases.map(\.rawValue)], "opened_at": dateTime,
                    "why": ["type": "array", "items": ["type": "string", "enum": RelatedCases.Reason.allCases.map(\.rawValue)]],
                    "same_customer": ["type": "boolean"],
                ],
            ],
        ],
        "risk_signals": [
            "type": "array",
            "description":
                "Agents only, on the case's own GET and the flag and clear answers: every signal raised on the case, oldest first (the customer never sees one).",
            "items": [
                "type": "object",
                "required": ["signal", "detail", "other_cases", "raised_at", "raised_by", "cleared_at", "cleared_by", "clear_reason"],
                "properties": [
                    "signal": ["type": "string", "enum": RiskSignal.allCases.map(\.rawValue)], "detail": string,
                    "other_cases": ["type": "array", "items": caseNumber], "raised_at": dateTime, "raised_by": string,
                    "cleared_at": ["type": ["string", "null"], "format": "date-time"], "cleared_by": ["type": ["string", "null"]],
                    "clear_reason": ["type": ["string", "null"]],
                ],
            ],
        ],
    ]
    nonisolated(unsafe) private static let unlockStep: [String: Any] = ["type": "string", "enum": UnlockKind.allCases.map(\.rawValue)]
    private static let caseRequired = [
        "case_number", "kind", "language", "state", "tier", "path", "facts", "customer", "devices", "assignee", "frozen",
        "due_at", "overdue", "allowed_actions", "created_at", "updated_at", "version", "unlocks", "unreviewed_documents", "risk", "awaiting_reply",
    ]

    /// The schemas, by name.
    nonisolated(unsafe) static let caseSchemas: [String: Any] = [  // immutable after initialisation
        "NewCase": [
            "type": "object",
            "required": ["kind", "account_email", "customer"],
            "properties": [
                "kind": ["type": "string", "enum": CaseKind.allCases.map(\.rawValue)],
                "account_email": mailbox,
                "customer": [
                    "type": "object", "required": ["name", "contact_email"],
                    "properties": ["name": string, "contact_email": mailbox, "phone": phone.merging(["type": ["string", "null"]]) { $1 }],
                ],
                "devices": ["type": "array", "items": device],
                "facts": facts,
                "summary": string,
                "language": language,
            ],
        ],
        "Case": ["type": "object", "required": caseRequired, "properties": caseProperties],
        "AccessCodeRequest": [
            "type": "object",
            "description": "Without read_out (or with an empty body) the new code is only mailed to the contact address.",
            "properties": [
                "read_out": [
                    "type": "boolean",
                    "description":
                        "Also answer the new code, to read out to the caller: tier2+ (else 403 insufficient_tier), and only while this agent has verified the caller (else 409 caller_not_verified).",
                ],
                "caller_check": [
                    "description": "Retired in v1.3: any value is 422 validation_failed naming caller-verification.", "deprecated": true,
                ],
            ],
        ],
        "CallerVerificationRequest": [
            "type": "object", "minProperties": 1, "maxProperties": 1,
            "description": "Exactly one member.",
            "properties": [
                "customer_code": ["type": "string", "description": "The six digits the caller reads from their status page."],
                "mailed_code": ["type": "string", "description": "The six digits of the one-time code mailed to the contact address."],
                "method": ["type": "string", "enum": [CallCodes.Method.mailedCode.rawValue], "description": "Mail a one-time code."],
            ],
        ],
        "CallerVerified": [
            "type": "object", "required": ["verified_until", "method"],
            "properties": [
                "verified_until": dateTime, "method": ["type": "string", "enum": CallCodes.Method.allCases.map(\.rawValue)],
            ],
        ],
        "CallerCodeMailed": [
            "type": "object", "required": ["mailed", "expires_at"],
            "properties": ["mailed": ["type": "boolean"], "expires_at": dateTime],
        ],
        "CaseCorrection": [
            "type": "object", "minProperties": 1, "additionalProperties": false,
            "description": "The fields to change, each its whole new value (a JSON merge patch, RFC 7396, sent as application/json): what is "
                + "left out stays; devices replaces the list; facts and customer change only the members given. An unknown member, a "
                + "wrong type or an empty patch is 422. A contact address that reaches the rescue address's mailbox (case, +tag and "
                + "the provider's own rules ignored) is 422 naming the field the patch changed.",
            "properties": [
                "customer": [
                    "type": "object", "minProperties": 1, "additionalProperties": false,
                    "properties": [
                        "name": ["type": "string", "minLength": 1, "maxLength": 200],
                        "contact_email": mailbox.merging(
                            [
                                "description": "The customer's own address. The previous one is told of the change "
                                    + "(the new one masked), unless it reaches the rescue address. " + EmailAddress.rule
                            ], uniquingKeysWith: { $1 }),
                        "phone": phone.merging(
                            [
                                "type": ["string", "null"],
                                "description": "The customer's phone (null: none on file). " + PhoneNumber.rule
                                    + " Changing it while unlock steps wait cancels them, as the contact address does.",
                            ], uniquingKeysWith: { $1 }),
                    ],
                ],
                "language": language,
                "facts": [
                    "type": "object", "minProperties": 1, "additionalProperties": false,
                    "description": "Only the members given change. A change that makes the case device-only (two_step_enabled on an account "
                        + "takeover), or no longer so, takes the path it would have taken (new, identity_check: the initial path; "
                        + "awaiting_documents, document_review: the documents path request_documents chooses) and is 409 path_decided in "
                        + "engineering; the unlock checklist and due date follow.",
                    "properties": [
                        "rescue_email": [
                            "type": ["string", "null"], "format": "email", "maxLength": EmailAddress.maximumLength,
                            "description": "The address the thief added; null: not known. A known address sets "
                                + "rescue_email_added. " + EmailAddress.rule,
                        ],
                        "rescue_email_added": ["type": "boolean"], "security_questions_changed": ["type": "boolean"],
                        "two_step_enabled": ["type": "boolean"], "lost_mode_enabled": ["type": "boolean"],
                    ],
                ],
                "devices": [
                    "type": "array", "maxItems": 10, "items": device,
                    "description": "Every device: replaces the list (each needs a serial or an IMEI).",
                ],
                "summary": ["type": "string", "maxLength": 5000],
            ],
        ],
        "IssuedAccessCode": [
            "type": "object", "required": ["mailed"],
            "properties": [
                "access_code": [
                    "type": "string",
                    "description": "Only when the request carried read_out; shown this once: 16 Crockford base32 symbols in groups of four.",
                ],
                "mailed": [
                    "type": "boolean",
                    "description":
                        "The new code was mailed to the contact address (false: refused, the contact address is the rescue address; see mail_refused on the timeline).",
                ],
            ],
        ],
        "QuestionList": [
            "type": "object", "required": ["items"],
            "properties": [
                "items": [
                    "type": "array",
                    "items": [
                        "type": "object", "required": ["id", "question", "matched"],
                        "properties": ["id": string, "question": string, "matched": ["type": "boolean"]],
                    ],
                ]
            ],
        ],
        "Erasure": [
            "type": "object", "required": ["reason"],
            "properties": [
                "reason": [
                    "type": "string", "minLength": 1, "maxLength": 2000,
                    "description": "Why (a data-subject request, its reference): recorded in the admin log, never erased.",
                ]
            ],
        ],
        "Merge": [
            "type": "object", "required": ["into"],
            "properties": [
                "into": caseNumber, "reason": string,
                "same_customer_confirmed": [
                    "type": "boolean", "default": false,
                    "description":
                        "Required (true) when the two cases name different customers (name or contact address): the agent confirms they are one person; otherwise 409 different_customer.",
                ],
            ],
        ],
        "Unmerge": ["type": "object", "properties": ["reason": string]],
        "RiskReason": ["type": "object", "required": ["reason"], "properties": ["reason": string]],
        "UnlockStep": [
            "type": "object", "required": ["step"],
            "properties": ["step": unlockStep, "reason": string],
        ],
        "CancelUnlock": ["type": "object", "required": ["reason"], "properties": ["reason": string]],
        "CreatedCase": [
            "type": "object", "required": caseRequired + ["access_code", "possible_duplicates", "related", "risk_signals"],
            "properties": caseProperties.merging([
                "access_code": ["type": "string", "description": "Shown this once: 16 Crockford base32 symbols in groups of four."],
                "possible_duplicates": [
                    "type": "array",
                    "description": "The other open cases with the same account email, serial or IMEI (opening is never refused for them).",
                    "items": ["type": "object", "required": ["case_number", "state"], "properties": ["case_number": caseNumber, "state": string]],
                ],
            ]) { a, _ in a },
        ],
        "CaseList": [
            "type": "object", "required": ["items", "next_cursor"],
            "properties": [
                "items": ["type": "array", "items": ["$ref": "#/components/schemas/Case"]], "next_cursor": ["type": ["string", "null"]],
            ],
        ],
        "Transition": [
            "type": "object", "required": ["action"],
            "properties": [
                "action": ["type": "string", "enum": CaseAction.allCases.map(\.rawValue)],
                "reason": string,
                "unlock": unlockStep,
                "answers": [
                    "type": "array", "description": "send_reset: the customer's answers, checked against every answer on file.",
                    "items": ["type": "object", "required": ["question_id", "answer"], "properties": ["question_id": string, "answer": string]],
                ],
            ],
        ],
        "Assign": ["type": "object", "required": ["agent_id"], "properties": ["agent_id": ["type": "string", "format": "uuid"]]],
        "NewNote": [
            "type": "object", "required": ["body", "visibility"],
            "properties": ["body": string, "visibility": ["type": "string", "enum": NoteVisibility.allCases.map(\.rawValue)]],
        ],
        "Note": [
            "type": "object", "required": ["id", "body", "visibility", "author", "created_at"],
            "properties": [
                "id": ["type": "string", "format": "uuid"], "body": string, "visibility": string, "author": string, "created_at": dateTime,
            ],
        ],
        "NoteList": [
            "type": "object", "required": ["items", "next_cursor"],
            "properties": [
                "items": ["type": "array", "items": ["$ref": "#/components/schemas/Note"]], "next_cursor": ["type": ["string", "null"]],
                "actors": actorNames,
            ],
        ],
        "Event": [
            "type": "object", "required": ["seq", "at", "actor", "type", "data", "prev_hash", "hash", "leaf_index"],
            "properties": [
                "seq": ["type": "integer"], "at": dateTime, "actor": string, "type": string, "data": ["type": "object"],
                "prev_hash": ["type": ["string", "null"]],
                "hash": [
                    "type": "string",
                    "description":
                        "hex SHA-256 of prev_hash (or empty) followed by the JCS form of {seq, at, actor, type, data}, each member named in commitments replaced by {\"commitment\": <hex>}.",
                ],
                "commitments": [
                    "type": "object",
                    "description":
                        "The personal members of data (addresses, free-text reasons) the hash covers only as commitments: {member: {commitment, salt}}; commitment = hex SHA-256 of the salt (hex) followed by the value's JCS form. Once erased the value reads null and the salt is gone.",
                    "additionalProperties": [
                        "type": "object", "required": ["commitment"],
                        "properties": ["commitment": string, "salt": string],
                    ],
                ],
                "legacy_hash": [
                    "type": "string",
                    "description":
                        "Only for an event written before commitments and carried over by migration 0022: its hash then (over its values in clear), which its leaf in the transparency log hashes.",
                ],
                "leaf_index": [
                    "type": ["integer", "null"], "minimum": 0,
                    "description":
                        "The event's leaf in the transparency log (GET /api/v1/audit/proof); null for the moment between its commit and the sequencer's next pass.",
                ],
            ],
        ],
        "EventList": [
            "type": "object", "required": ["items", "next_cursor"],
            "properties": [
                "items": ["type": "array", "items": ["$ref": "#/components/schemas/Event"]], "next_cursor": ["type": ["string", "null"]],
                "actors": actorNames,
            ],
        ],
        "NewAccount": [
            "type": "object", "required": ["email"],
            "properties": [
                "email": mailbox,
                "phone": phone,
                "security_questions": [
                    "type": "array",
                    "items": [
                        "type": "object", "required": ["id", "question", "answer"],
                        "properties": ["id": string, "question": string, "answer": string],
                    ],
                ],
                "cards": [
                    "type": "array",
                    "items": [
                        "type": "object", "required": ["number", "exp_month", "exp_year"],
                        "properties": ["number": string, "exp_month": ["type": "integer"], "exp_year": ["type": "integer"]],
                    ],
                ],
                "devices": ["type": "array", "items": device],
            ],
        ],
        "Account": [
            "type": "object", "required": ["id", "email", "security_questions", "cards", "devices"],
            "properties": [
                "id": ["type": "string", "format": "uuid"], "email": string,
                "phone": ["type": ["string", "null"], "description": "E.164; null when none is on file."],
                "security_questions": ["type": "array", "items": ["type": "object", "properties": ["id": string, "question": string]]],
                "cards": [
                    "type": "array",
                    "items": [
                        "type": "object", "properties": ["masked": string, "exp_month": ["type": "integer"], "exp_year": ["type": "integer"]],
                    ],
                ],
                "devices": ["type": "array", "items": device],
            ],
        ],
        "AgentList": [
            "type": "object", "required": ["items"],
            "properties": [
                "items": [
                    "type": "array",
                    "items": [
                        "type": "object", "required": ["id", "name", "tier"],
                        "properties": [
                            "id": ["type": "string", "format": "uuid"], "name": string,
                            "tier": ["enum": Tier.allCases.map(\.rawValue)],
                        ],
                    ],
                ]
            ],
        ],
        "StopRequest": [
            "type": "object", "required": ["token"],
            "properties": ["token": ["type": "string", "description": "The token after # in the notice's /status/stop link."]],
        ],
        "Stopped": [
            "type": "object",
            "required": [
                "case_number", "language", "stopped", "first_use", "cancelled", "cancelled_text", "already_done", "message_key", "message",
                "support_contact",
            ],
            "properties": [
                "case_number": caseNumber, "language": ["enum": CustomerLanguage.allCases.map(\.rawValue)],
                "stopped": ["type": "boolean", "description": "Always true: nothing of the case's scheduled unlocks will be done."],
                "first_use": ["type": "boolean", "description": "False when the link was used before: nothing changed now."],
                "cancelled": ["type": "array", "items": unlockStep, "description": "The steps this use cancelled."],
                "cancelled_text": ["type": "array", "items": string, "description": "`cancelled` in `language`."],
                "already_done": [
                    "type": "array", "items": unlockStep,
                    "description":
                        "A first use that cancelled nothing: the steps already done (the change happened before the link was used; the desk is alerted, message_key stop.too_late).",
                ],
                "message_key": string, "message": ["type": "string", "description": "What happened and what to do next, in `language`."],
                "support_contact": string,
            ],
        ],
        "StatusRequest": [
            "type": "object", "required": ["case_number", "access_code"],
            "properties": [
                "case_number": string, "access_code": ["type": "string", "description": "Any case; spaces and dashes ignored."],
                "language": [
                    "enum": CustomerLanguage.allCases.map(\.rawValue),
                    "description": "The language of the answer; without it the case's language, then Accept-Language.",
                ],
            ],
        ],
        "Status": [
            "type": "object",
            "required": [
                "case_number", "language", "state", "stage", "stage_key", "progress", "next_step", "next_step_key", "updated_at", "due_at",
                "evidence", "missing", "missing_text", "can_upload", "notices", "support_contact", "notes", "unlocks_scheduled", "reply_received_at",
                "messages_added",
            ],
            "properties": [
                "case_number": caseNumber, "language": ["enum": CustomerLanguage.allCases.map(\.rawValue)], "state": string,
                "stage": [
                    "type": "string", "description": "Where the case stands in plain words (the progress line's current stage), in `language`.",
                ],
                "stage_key": ["type": "string", "description": "The catalogue key of `stage`."],
                "next_step_key": ["type": "string", "description": "The catalogue key of `next_step`."],
                "call_codes": [
                    "type": ["object", "null"], "required": ["desk", "customer", "valid_until"],
                    "description":
                        "Only in the customer's own look-up (POST /api/v1/status), null when the case is finished: desk, what our team tells them when we call; customer, what they read to us when they call. Both change at valid_until (the previous still accepted one more minute); never mailed.",
                    "properties": [
                        "desk": ["type": "string", "pattern": "^[0-9]{6}$"], "customer": ["type": "string", "pattern": "^[0-9]{6}$"],
                        "valid_until": dateTime,
                    ],
                ],
                "missing_text": ["type": "array", "items": string, "description": "`missing` in `language`, in the same order."],
                "can_upload": ["type": "boolean", "description": "Whether uploads are taken (open cases only)."],
                "unlocks_scheduled": [
                    "type": "array", "description": "Changes to the account recorded and waiting for their time (the cooling-off), soonest first.",
                    "items": [
                        "type": "object", "required": ["step", "text", "effective_at"],
                        "properties": ["step": unlockStep, "text": string, "effective_at": dateTime],
                    ],
                ],
                "notices": [
                    "type": "array", "description": "Warnings and advice in `language`: never pay comes first.",
                    "items": ["type": "object", "required": ["key", "text"], "properties": ["key": string, "text": string]],
                ],
                "support_contact": ["type": ["string", "null"], "description": "RECLAIM_SUPPORT_CONTACT, on finished cases."],
                "reply_received_at": [
                    "type": ["string", "null"], "format": "date-time",
                    "description": "When the customer's latest mail (from the case's contact address) reached the case (null: none).",
                ],
                "messages_added": [
                    "type": "array",
                    "description":
                        "Mail an agent attached to the case from someone other than the customer, oldest first: the sender masked, and when it arrived.",
                    "items": ["type": "object", "required": ["from", "received_at"], "properties": ["from": string, "received_at": dateTime]],
                ],
                "progress": [
                    "type": "array", "description": "The stages of the case's path in order, each done, current or upcoming.",
                    "items": [
                        "type": "object", "required": ["key", "label", "mark"],
                        "properties": ["key": string, "label": string, "mark": ["enum": ProgressStage.Mark.allCases.map(\.rawValue)]],
                    ],
                ],
                "next_step": string, "updated_at": dateTime, "due_at": dateTime,
                "evidence": [
                    "type": "array",
                    "items": [
                        "type": "object",
                        "properties": [
                            "type": string, "filed_at": dateTime, "from_case": fromCase,
                            "status": [
                                "enum": ShownEvidenceStatus.allCases.map(\.rawValue),
                                "description": "received for typed details and transcripts (never a match result) and on finished cases.",
                            ],
                            "customer_reason": [
                                "enum": CustomerReason.allCases.map(\.rawValue),
                                "description": "On a rejected document only: why it was not accepted.",
                            ],
                            "customer_reason_text": ["type": "string", "description": "`customer_reason` in `language`, one sentence."],
                        ],
                    ],
                ],
                "missing": ["type": "array", "items": string],
                "notes": [
                    "type": "array", "items": ["type": "object", "properties": ["body": string, "created_at": dateTime, "from_case": fromCase]],
                ],
                "merged_from": ["type": "string", "description": "Looked up by the number of a case merged into this one: that number."],
            ],
        ],
    ]
}
