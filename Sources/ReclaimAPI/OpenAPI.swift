import Foundation
import HTTPServer
import ReclaimCore

/// Builds the OpenAPI 3.1 document from the route table, so it lists exactly the routes served.
enum OpenAPIDocument {
    /// The schemas that operations name; one entry per resource shape.
    nonisolated(unsafe) static let schemas: [String: Any] = [  // immutable after initialisation
        "Problem": [
            "type": "object",
            "description": "RFC 9457 problem document.",
            "required": ["type", "title", "status", "code"],
            "properties": [
                "type": ["type": "string", "format": "uri"],
                "title": ["type": "string"],
                "status": ["type": "integer"],
                "detail": ["type": "string"],
                "code": [
                    "type": "string", "enum": ErrorCode.everyKind.map(\.code),
                    "description":
                        "Stable machine word; x-codes lists each with the status and title it is always answered with (case_erased: 410 to a look-up, also_status 409 to a change).",
                    "x-codes": Dictionary(
                        uniqueKeysWithValues: ErrorCode.everyKind.map { kind in
                            var entry: [String: Any] = ["status": kind.status, "title": kind.title]
                            if let also = (kind as? ErrorCode)?.alsoAnswered { entry["also_status"] = also }
                            return (kind.code, entry)
                        }),
                ],
                "request_id": ["type": "string"],
                "errors": [
                    "type": "array",
                    "items": [
                        "type": "object",
                        "required": ["field", "message"],
                        "properties": ["field": ["type": "string"], "message": ["type": "string"]],
                    ],
                ],
            ],
        ],
        "Health": [
            "type": "object",
            "required": ["status"],
            "properties": ["status": ["type": "string", "const": "ok"]],
        ],
        "Ready": [
            "type": "object",
            "required": ["status", "schema_version"],
            "properties": ["status": ["type": "string", "const": "ready"], "schema_version": ["type": "integer"]],
        ],
        "Vocabulary": Vocabulary.schema,
        // Evidence: an agent's or API client's document as a form (the customers' form is CustomerUpload).
        "DocumentForm": [
            "type": "object",
            "required": ["type", "file"],
            "properties": [
                "type": ["type": "string", "enum": DocumentType.allCases.map(\.rawValue)],
                "file": ["type": "string", "format": "binary", "description": "PDF, JPEG, PNG or HEIC, 10 MiB at most, sniffed from the bytes."],
            ],
        ],
        // Identity
        "SignIn": [
            "type": "object",
            "required": ["email", "password", "totp"],
            "properties": [
                "email": ["type": "string", "format": "email"],
                "password": ["type": "string", "minLength": 12, "maxLength": 128],
                "totp": ["type": "string", "description": "The 6-digit RFC 6238 code (SHA-1, 30 s); each code is accepted once."],
            ],
        ],
        "Session": [
            "type": "object",
            "required": ["agent", "csrf_token", "permissions"],
            "properties": [
                "agent": [
                    "type": "object",
                    "required": ["id", "name", "email", "tier", "admin"],
                    "properties": [
                        "id": ["type": "string", "format": "uuid"],
                        "name": ["type": "string"],
                        "email": ["type": "string", "format": "email"],
                        "tier": ["type": "string", "enum": Tier.allCases.map(\.rawValue)],
                        "admin": ["type": "boolean"],
                    ],
                ],
                "csrf_token": ["type": "string", "description": "Send as X-CSRF-Token on every changing request made with the cookie."],
                "permissions": [
                    "type": "array", "items": ["type": "string"], "description": "Permission names from the permission table (e.g. case.freeze).",
                ],
            ],
        ],
    ]

    /// Schemas of path parameters, by name (a case number also parses with spaces or dashes; anything else is a 404).
    nonisolated(unsafe) static let pathParameterSchemas: [String: [String: Any]] = [  // immutable after initialisation
        "case_number": ["type": "string", "pattern": "^[0-9]{12}$", "description": "12 digits, the last a Damm check digit."],
        "id": ["type": "string", "format": "uuid"],
    ]

    /// Static pages served from `Public/` under fixed paths, documented alongside the API.
    static let pages: [(path: String, summary: String)] = [
        ("/", "The agent dashboard (HTML)."),
        ("/status", "The customer status page (HTML)."),
        ("/status/stop", "The \"this wasn't me\" page of an unlock notice (HTML): reads the token after #, posts it only to /api/v1/status/stop."),
        ("/admin", "The administration page for admin agents (HTML): agents, API clients, the audit log."),
        ("/reports", "The reports page for tier2+ and admins (HTML): backlog, overdue, targets, time to resolve, trend."),
    ]

    static func render(routes: [APIRoute]) -> [UInt8] {
        var paths: [String: [String: Any]] = [:]
        for route in routes {
            var operation: [String: Any] = [
                "operationId": route.operationID,
                "summary": route.summary,
                "tags": [route.tag],
            ]
            var parameters = pathParameters(route.path).map { name -> [String: Any] in
                ["name": name, "in": "path", "required": true, "schema": pathParameterSchemas[name] ?? ["type": "string"]]
            }
            if route.requiresIfMatch {
                parameters.append([
                    "name": "If-Match", "in": "header", "required": true,
                    "description": "The case's current ETag (\"<version>\"); 428 without it, 412 when stale.",
                    "schema": ["type": "string"],
                ])
            }
            if route.acceptsIdempotencyKey {
                parameters.append([
                    "name": "Idempotency-Key", "in": "header", "required": false,
                    "description": route.acceptsAgentIdempotencyKey
                        ? "Agents and API clients: the same key with the same request replays the first 2xx answer for 24 hours; the change is made once."
                        : "API clients: the same key with the same request replays the first 2xx answer for 24 hours; the change is made once.",
                    "schema": ["type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"],
                ])
            }
            for query in route.queryParameters {
                parameters.append([
                    "name": query.name, "in": "query", "required": false, "description": query.description,
                    "schema": ["type": "string", "enum": query.values],
                ])
            }
            if !parameters.isEmpty { operation["parameters"] = parameters }
            if !route.requestContent.isEmpty {
                var content: [String: Any] = [:]
                for accepted in route.requestContent {
                    switch accepted {
                    case .json(let schema): content["application/json"] = ["schema": ["$ref": "#/components/schemas/\(schema)"]]
                    case .multipart(let schema, let partTypes):
                        var form: [String: Any] = ["schema": ["$ref": "#/components/schemas/\(schema)"]]
                        if !partTypes.isEmpty { form["encoding"] = partTypes.mapValues { ["contentType": $0.joined(separator: ", ")] } }
                        content["multipart/form-data"] = form
                    case .bytes(let mediaTypes):
                        for type in mediaTypes { content[type] = ["schema": ["type": "string", "format": "binary"]] }
                    }
                }
                operation["requestBody"] = ["required": true, "content": content]
            }
            switch route.authentication {
            case .none: operation["security"] = [[String: Any]]()
            case .agent: operation["security"] = [["agentSession": [String]()]]
            case .apiClient: operation["security"] = [["apiKey": [String]()]]
            case .agentOrAPIClient: operation["security"] = [["agentSession": [String]()], ["apiKey": [String]()]]
            case .customer: operation["security"] = [[String: Any]]()
            }
            var responses: [String: Any] = [:]
            for (status, doc) in route.documentedResponses {
                var response: [String: Any] = ["description": doc.description]
                var media: [String: Any] = [:]
                for content in doc.content {
                    media[content.mediaType] = content.schema.map { ["schema": ["$ref": "#/components/schemas/\($0)"]] } ?? [String: Any]()
                }
                if !media.isEmpty { response["content"] = media }
                responses[String(status)] = response
            }
            operation["responses"] = responses
            paths[route.path, default: [:]][route.method.rawValue.lowercased()] = operation
        }
        for page in pages {
            paths[page.path, default: [:]]["get"] = [
                "operationId": page.path == "/" ? "dashboardPage" : "statusPage",
                "summary": page.summary,
                "tags": ["pages"],
                "security": [[String: Any]](),
                "responses": ["200": ["description": "The page.", "content": ["text/html": [String: Any]()]]],
            ]
        }
        let document: [String: Any] = [
            "openapi": "3.1.0",
            "info": [
                "title": "Reclaim",
                "version": BuildInfo.version,
                "description": "Support cases for stolen accounts and activation-locked devices.",
            ],
            "paths": paths,
            "components": [
                // Cases: CaseSchemas.swift; Evidence: EvidenceSchemas.swift; Administration: Admin/AdminSchemas.swift;
                // Notifications: NotificationSchemas.swift; the transparency log: Controllers/AuditController.swift
                "schemas": schemas.merging(caseSchemas) { first, _ in first }.merging(evidenceSchemas) { first, _ in first }
                    .merging(adminSchemas) { first, _ in first }.merging(notificationSchemas) { first, _ in first }
                    .merging(auditSchemas) { first, _ in first },
                "securitySchemes": [
                    "agentSession": [
                        "type": "apiKey", "in": "cookie", "name": "__Host-reclaim_session",
                        "description": "Agent session cookie; changing requests also send X-CSRF-Token.",
                    ],
                    "apiKey": [
                        "type": "http", "scheme": "bearer",
                        "description": "API client key; every POST also carries Reclaim-Signature.",
                    ],
                ],
            ],
        ]
        let data = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Array(data)
    }

    /// `{name}` segments of a path pattern.
    static func pathParameters(_ path: String) -> [String] {
        path.split(separator: "/").compactMap { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? String(segment.dropFirst().dropLast()) : nil
        }
    }
}
