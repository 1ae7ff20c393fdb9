import Foundation
import ReclaimCore

/// OpenAPI schemas of evidence, reviews and verification (merged into `OpenAPIDocument.schemas`).
extension OpenAPIDocument {
    nonisolated(unsafe) private static let nullableString: [String: Any] = ["type": ["string", "null"]]
    nonisolated(unsafe) private static let factorOutcome: [String: Any] = ["type": "string", "enum": FactorOutcome.allCases.map(\.rawValue)]

    /// The schemas, by name.
    nonisolated(unsafe) static let evidenceSchemas: [String: Any] = [  // immutable after initialisation
        "NewEvidence": [
            "description":
                "Typed evidence as JSON. Documents are sent as multipart/form-data (fields type and file) or as raw bytes with Content-Type and ?type=; PDF, JPEG, PNG or HEIC, sniffed from the bytes, 10 MiB at most. A cvv, cvc or cvv2 member is refused (422).",
            "oneOf": [
                [
                    "type": "object", "required": ["type", "answers"],
                    "properties": [
                        "type": ["const": "security_answers"],
                        "answers": [
                            "type": "array", "maxItems": 20,
                            "items": [
                                "type": "object", "required": ["question_id", "answer"],
                                "properties": ["question_id": ["type": "string"], "answer": ["type": "string"]],
                            ],
                        ],
                    ],
                ],
                [
                    "type": "object", "required": ["type", "number", "exp_month", "exp_year"],
                    "properties": [
                        "type": ["const": "card"],
                        "number": ["type": "string", "description": "13 to 19 digits; Luhn-checked except UnionPay (62)."],
                        "exp_month": ["type": "integer", "minimum": 1, "maximum": 12], "exp_year": ["type": "integer"],
                    ],
                ],
                [
                    "type": "object", "required": ["type"],
                    "properties": [
                        "type": ["const": "device"], "serial": ["type": "string", "description": "8 to 14 letters and digits."],
                        "imei": ["type": "string", "description": "15 digits with a Luhn check digit, or a 16-digit IMEISV."],
                    ],
                ],
                [
                    "type": "object", "required": ["type", "text"],
                    "properties": [
                        "type": ["const": "transcript"], "text": ["type": "string", "description": "At most 256 KiB; stored encrypted."],
                    ],
                ],
            ],
        ],
        "Evidence": [
            "type": "object",
            "required": [
                "id", "type", "status", "customer_reason", "accepted_as", "sha256", "size", "media_type", "summary", "filed_by", "filed_at",
            ],
            "properties": [
                "id": ["type": "string", "format": "uuid"],
                "type": ["type": "string", "enum": EvidenceKind.allCases.map(\.rawValue)],
                "status": ["type": "string", "enum": EvidenceStatus.allCases.map(\.rawValue)],
                "customer_reason": [
                    "type": ["string", "null"], "enum": CustomerReason.allCases.map(\.rawValue) + [NSNull()],
                    "description": "The latest review's reason for the customer, when it rejected a document.",
                ],
                "accepted_as": [
                    "type": ["string", "null"], "enum": DocumentType.allCases.map(\.rawValue) + [NSNull()],
                    "description": "What the latest review accepted a mail attachment as: it counts for the documents gate as that kind.",
                ],
                "sha256": ["type": ["string", "null"], "description": "Hex SHA-256 of the document or transcript bytes."],
                "size": ["type": ["integer", "null"]],
                "media_type": nullableString,
                "summary": ["type": "string", "description": "Never a secret: a card as 623456******7890, answers as a count."],
                "filed_by": ["type": "string"],
                "filed_at": ["type": "string", "format": "date-time"],
            ],
        ],
        "EvidenceList": [
            "type": "object",
            "required": ["items", "next_cursor", "missing"],
            "properties": [
                "items": ["type": "array", "items": ["$ref": "#/components/schemas/Evidence"]], "next_cursor": nullableString,
                "actors": actorNames,
                "missing": ["type": "array", "items": ["type": "string"], "description": "What is still missing for the case's path."],
            ],
        ],
        "EvidenceReview": [
            "type": "object",
            "required": ["decision", "reason"],
            "properties": [
                "decision": ["type": "string", "enum": EvidenceStatus.decisions.map(\.rawValue)], "reason": ["type": "string", "maxLength": 2000],
                "customer_reason": [
                    "type": ["string", "null"], "enum": CustomerReason.allCases.map(\.rawValue) + [NSNull()],
                    "description":
                        "Required when rejecting a document, refused otherwise: why, in words the customer reads in their language on /status and in a mail. The case under review returns to awaiting_documents by itself when the rejection leaves a requirement unmet and nothing else is pending.",
                ],
            ],
        ],
        "Verification": [
            "type": "object",
            "required": ["verified", "factors"],
            "properties": [
                "verified": ["type": "boolean"],
                "factors": [
                    "type": "object", "required": Factor.allCases.map(\.rawValue),
                    "properties": Dictionary(uniqueKeysWithValues: Factor.allCases.map { ($0.rawValue, factorOutcome) }),
                ],
            ],
        ],
        "CustomerUploadReceipt": [
            "type": "object",
            "required": ["type", "status", "filed_at", "size", "sha256", "media_type"],
            "properties": [
                "type": ["type": "string"], "status": ["type": "string", "enum": EvidenceStatus.allCases.map(\.rawValue)],
                "filed_at": ["type": "string", "format": "date-time"], "size": ["type": "integer"], "sha256": ["type": "string"],
                "media_type": ["type": "string"],
            ],
        ],
        "CustomerUpload": [
            "type": "object",
            "description":
                "multipart/form-data: case_number, access_code, type (a document type, or transcript for the conversation with whoever locked the device: PNG, JPEG, HEIC, PDF, UTF-8 text or a saved e-mail, message/rfc822), file, and optionally language.",
            "required": ["case_number", "access_code", "type", "file"],
            "properties": [
                "case_number": ["type": "string"], "access_code": ["type": "string"], "type": ["enum": UploadKind.allRawValues],
                "language": ["enum": CustomerLanguage.allCases.map(\.rawValue)],
                "file": ["type": "string", "contentMediaType": "application/octet-stream"],
            ],
        ],
    ]
}
