import Notifications
import ReclaimOperations

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
            "properties": ["url": ["type": "string", "description": "https only (http for a RECLAIM_WEBHOOK_ALLOW destination)."],
                           "events": ["type": "array", "minItems": 1, "items": ["type": "string", "enum": WebhookEvent.allCases.map(\.rawValue)]]],
        ],
        "Webhook": ["type": "object", "required": ["id", "url", "events", "created_at", "disabled_at"], "properties": webhookProperties],
        "CreatedWebhook": [
            "type": "object", "required": ["id", "url", "events", "created_at", "disabled_at", "secret"],
            "properties": webhookProperties.merging(["secret": ["type": "string", "description": "whsec_ + base64: verify webhook-signature with it. Shown this once."]]) { a, _ in a },
        ],
        "WebhookList": ["type": "object", "required": ["items"],
                        "properties": ["items": ["type": "array", "items": ["$ref": "#/components/schemas/Webhook"]], "next_cursor": ["type": "null"]]],
        "WebhookDeliveryList": [
            "type": "object", "required": ["items"],
            "properties": [
                "next_cursor": ["type": "null"],
                "items": ["type": "array", "items": [
                    "type": "object", "required": ["id", "event", "state", "created_at", "attempts"],
                    "properties": [
                        "id": ["type": "string", "format": "uuid", "description": "The webhook-id, the same on every attempt."],
                        "event": ["type": "string"], "state": ["type": "string", "enum": ["queued", "sent", "failed"]],
                        "created_at": ["type": "string", "format": "date-time"], "sent_at": ["type": ["string", "null"]],
                        "next_attempt_at": ["type": ["string", "null"]],
                        "attempts": ["type": "array", "items": [
                            "type": "object", "required": ["at", "status", "duration_ms", "error"],
                            "properties": ["at": ["type": "string", "format": "date-time"], "status": ["type": ["integer", "null"]],
                                           "duration_ms": ["type": "integer"], "error": ["type": ["string", "null"]]],
                        ]],
                    ],
                ]],
            ],
        ],
        "WebhookRetry": ["type": "object", "required": ["id", "state"],
                         "properties": ["id": ["type": "string", "format": "uuid"], "state": ["const": "queued"]]],
    ]
}
