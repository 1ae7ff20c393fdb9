import Notifications
import ReclaimOperations
import ReclaimStore

/// OpenAPI schemas of webhook endpoints and deliveries (merged into `OpenAPIDocument.schemas`).
extension OpenAPIDocument {
    nonisolated(unsafe) private static let webhookProperties: [String: Any] = [
        "id": ["type": "string", "format": "uuid"],
        "url": ["type": "string"],
        "events": ["type": "array", "items": ["type": "string", "enum": WebhookEvent.allCases.map(\.rawValue)]],
        "created_at": ["type": "string", "format": "date-time"],
        "disabled_at": ["type": ["string", "null"], "format": "date-time", "description": "Set when the receiver answered 410 Gone."],
    ]

    /// The schemas, by name.
    nonisolated(unsafe) static let notificationSchemas: [String: Any] = [  // immutable after initialisation
        "NewWebhook": [
            "type": "object", "required": ["url", "events"],
            "properties": [
                "url": ["type": "string", "description": "https only (http for a RECLAIM_WEBHOOK_ALLOW destination)."],
                "events": ["type": "array", "minItems": 1, "items": ["type": "string", "enum": WebhookEvent.allCases.map(\.rawValue)]],
            ],
        ],
        "Webhook": ["type": "object", "required": ["id", "url", "events", "created_at", "disabled_at"], "properties": webhookProperties],
        "CreatedWebhook": [
            "type": "object", "required": ["id", "url", "events", "created_at", "disabled_at", "secret"],
            "properties": webhookProperties.merging([
                "secret": ["type": "string", "description": "whsec_ + base64: verify webhook-signature with it. Shown this once."]
            ]) { a, _ in a },
        ],
        "WebhookList": [
            "type": "object", "required": ["items"],
            "properties": ["items": ["type": "array", "items": ["$ref": "#/components/schemas/Webhook"]], "next_cursor": ["type": "null"]],
        ],
        "WebhookDelivery": [
            "type": "object", "required": ["id", "event", "state", "created_at", "attempts"],
            "properties": [
                "id": ["type": "string", "format": "uuid", "description": "The webhook-id, the same on every attempt."],
                "event": ["type": "string"], "state": ["type": "string", "enum": OutboxState.allCases.map(\.rawValue)],
                "created_at": ["type": "string", "format": "date-time"], "sent_at": ["type": ["string", "null"]],
                "next_attempt_at": ["type": ["string", "null"]],
                "attempts": [
                    "type": "array",
                    "items": [
                        "type": "object", "required": ["at", "status", "duration_ms", "error"],
                        "properties": [
                            "at": ["type": "string", "format": "date-time"], "status": ["type": ["integer", "null"]],
                            "duration_ms": ["type": "integer"], "error": ["type": ["string", "null"]],
                        ],
                    ],
                ],
            ],
        ],
        "WebhookDeliveryList": [
            "type": "object", "required": ["items"],
            "properties": ["next_cursor": ["type": "null"], "items": ["type": "array", "items": ["$ref": "#/components/schemas/WebhookDelivery"]]],
        ],
        "CaseMessageList": [
            "type": "object", "required": ["items"],
            "properties": [
                "items": [
                    "type": "array", "description": "Both directions, in time order.",
                    "items": ["oneOf": [["$ref": "#/components/schemas/CaseMessageOut"], ["$ref": "#/components/schemas/CaseMessageIn"]]],
                ]
            ],
        ],
        "InboundList": [
            "type": "object", "required": ["items"],
            "properties": [
                "items": [
                    "type": "array",
                    "items": [
                        "type": "object", "required": ["id", "from", "from_rescue_address", "subject", "text", "received_at", "reason"],
                        "properties": [
                            "id": ["type": "string", "format": "uuid"], "from": ["type": ["string", "null"]],
                            "from_rescue_address": [
                                "type": "boolean",
                                "description":
                                    "The sender reaches the mailbox of a rescue address some case recorded (current or former): the thief's.",
                            ],
                            "subject": ["type": ["string", "null"]],
                            "text": ["type": "string", "description": "The mail's plain text (HTML converted to text), to read as text."],
                            "received_at": ["type": "string", "format": "date-time"],
                            "reason": ["type": ["string", "null"], "description": "Why no rule matched it."],
                        ],
                    ],
                ]
            ],
        ],
        "InboundAttach": [
            "type": "object", "required": ["case_number"],
            "properties": ["case_number": ["type": "string", "description": "The case it belongs to."]],
        ],
        "InboundDiscard": [
            "type": "object", "required": ["reason"],
            "properties": ["reason": ["type": "string", "minLength": 1, "maxLength": 2000]],
        ],
        "CaseMessageIn": [
            "type": "object",
            "required": ["direction", "id", "from", "subject", "received_at", "text", "matched_by", "auto", "from_rescue_address", "attachments"],
            "properties": [
                "direction": ["type": "string", "enum": ["in"]],
                "id": ["type": "string", "format": "uuid"],
                "from": ["type": ["string", "null"], "description": "The sender's address as the mail states it (never proof of who wrote it)."],
                "subject": ["type": ["string", "null"]],
                "received_at": ["type": "string", "format": "date-time"],
                "text": ["type": "string", "description": "The plain text (an HTML-only mail converted); never to be rendered as HTML."],
                "matched_by": ["type": "string", "enum": InboundMatch.allCases.map(\.rawValue)],
                "auto": ["type": "boolean", "description": "An automatic reply (Auto-Submitted, Precedence): recorded, never acted on."],
                "from_rescue_address": ["type": "boolean", "description": "Sent from the case's rescue address (the thief's)."],
                "attachments": ["type": "array", "items": ["type": "string", "format": "uuid"], "description": "Evidence ids of its documents."],
            ],
        ],
        "CaseMessageOut": [
            "type": "object",
            "required": [
                "direction", "id", "channel", "kind", "to", "state", "attempts", "created_at", "sent_at", "next_attempt_at", "last_error", "reason",
            ],
            "properties": [
                "direction": ["type": "string", "enum": ["out"]],
                "id": [
                    "type": ["string", "null"], "format": "uuid",
                    "description": "The message id (Message-ID, webhook-id); null for a refused mail.",
                ],
                "channel": ["type": "string", "enum": OutboxChannel.allCases.map(\.rawValue)],
                "kind": [
                    "type": "string",
                    "description":
                        "The mail's template (\(CustomerMailKind.allCases.map(\.rawValue).joined(separator: ", "))) or the webhook's event type.",
                ],
                "to": [
                    "oneOf": [
                        [
                            "type": "object", "required": ["email"], "additionalProperties": false,
                            "properties": [
                                "email": [
                                    "type": ["string", "null"],
                                    "description":
                                        "The customer's contact address; null on a refused contact_changed notice (the previous address reached the rescue mailbox and is not kept).",
                                ]
                            ],
                        ],
                        [
                            "type": "object", "required": ["client", "url"], "additionalProperties": false,
                            "properties": [
                                "client": ["type": ["string", "null"], "description": "The API client's name."],
                                "url": ["type": ["string", "null"]],
                            ],
                        ],
                    ]
                ],
                "state": [
                    "type": "string", "enum": OutboxState.allCases.map(\.rawValue) + ["refused"],
                    "description": "refused: not sent, the contact address is the case's rescue address (also a mail_refused event).",
                ],
                "attempts": ["type": "integer", "minimum": 0],
                "created_at": ["type": "string", "format": "date-time", "description": "When it was queued (or refused)."],
                "sent_at": ["type": ["string", "null"], "format": "date-time"],
                "next_attempt_at": [
                    "type": ["string", "null"], "format": "date-time", "description": "While queued: when it is tried (again).",
                ],
                "last_error": [
                    "type": ["string", "null"], "description": "What the last failed attempt met, as the attempt log holds it.",
                ],
                "reason": ["type": ["string", "null"], "description": "Why a mail was refused: rescue_address."],
                "event_seq": ["type": "integer", "description": "A refused mail's mail_refused event on the timeline."],
            ],
        ],
        "AdminClientWebhookList": [
            "type": "object", "required": ["items"],
            "properties": [
                "items": [
                    "type": "array",
                    "items": [
                        "type": "object", "required": ["id", "url", "events", "created_at", "disabled_at", "active", "recent_deliveries"],
                        "properties": webhookProperties.merging([
                            "active": ["type": "boolean", "description": "False once the receiver answered 410 Gone (disabled_at)."],
                            "recent_deliveries": [
                                "type": "array", "description": "The latest 20 messages, newest first, each with every attempt.",
                                "items": ["$ref": "#/components/schemas/WebhookDelivery"],
                            ],
                        ]) { a, _ in a },
                    ],
                ]
            ],
        ],
        "WebhookRetry": [
            "type": "object", "required": ["id", "state"],
            "properties": ["id": ["type": "string", "format": "uuid"], "state": ["const": "queued"]],
        ],
    ]
}
