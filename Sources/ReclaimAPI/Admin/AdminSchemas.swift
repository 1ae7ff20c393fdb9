import ReclaimCore

/// The `/openapi.json` schemas of the admin and report routes (merged into `components.schemas` by `OpenAPIDocument`).
extension OpenAPIDocument {
    nonisolated(unsafe) private static let tier: [String: Any] = ["type": "string", "enum": Tier.allCases.map(\.rawValue)]
    nonisolated(unsafe) private static let moment: [String: Any] = ["type": ["string", "null"], "format": "date-time"]
    nonisolated(unsafe) private static let uuid: [String: Any] = ["type": "string", "format": "uuid"]
    nonisolated(unsafe) private static let agentProperties: [String: Any] = [
        "id": uuid, "email": ["type": "string", "format": "email"], "name": ["type": "string"], "tier": tier,
        "admin": ["type": "boolean"], "active": ["type": "boolean"], "last_sign_in_at": moment,
        "created_at": ["type": "string", "format": "date-time"],
        "passkey_required": ["type": "boolean", "description": "Password and TOTP no longer sign this agent in."],
        "passkeys": ["type": "integer", "description": "Passkeys the agent has registered."],
    ]
    nonisolated(unsafe) private static let clientProperties: [String: Any] = [
        "id": uuid, "name": ["type": "string"], "active": ["type": "boolean"], "created_at": ["type": "string", "format": "date-time"],
        "revoked_at": moment, "rotated_at": moment,
        "previous_secret_valid_until": [
            "type": ["string", "null"], "format": "date-time", "description": "Until when the secret before the last rotation still signs.",
        ],
    ]
    private static let agentRequired = [
        "id", "email", "name", "tier", "admin", "active", "last_sign_in_at", "created_at", "passkey_required", "passkeys",
    ]
    nonisolated(unsafe) private static let proposalProperties: [String: Any] = [
        "id": uuid, "kind": ["type": "string", "enum": AdminProposalKind.allCases.map(\.rawValue)],
        "target": [
            "type": "object", "required": ["id", "email"], "description": "The agent it is for (for agent_add, the id it will have).",
            "properties": ["id": uuid, "email": ["type": "string"]],
        ],
        "change": ["type": "object", "description": "What was asked: agent_add {name, tier, admin}; agent_change the members sent; {} for a reset."],
        "proposed_by": ["type": "string", "description": "The proposing admin's actor (agent:<id>)."],
        "proposed_at": ["type": "string", "format": "date-time"], "expires_at": ["type": "string", "format": "date-time"],
        "status": ["type": "string", "enum": AdminProposalStatus.allCases.map(\.rawValue)],
        "decided_by": ["type": ["string", "null"], "description": "Who confirmed or withdrew it (system when it expired)."],
        "decided_at": moment,
    ]
    private static let proposalRequired = [
        "id", "kind", "target", "change", "proposed_by", "proposed_at", "expires_at", "status", "decided_by", "decided_at",
    ]
    private static let clientRequired = ["id", "name", "active", "created_at", "revoked_at", "rotated_at", "previous_secret_valid_until"]

    /// Administration (issue 14).
    nonisolated(unsafe) static let adminSchemas: [String: Any] = [  // immutable after initialisation
        "AdminNewAgent": [
            "type": "object", "required": ["email", "name", "tier"],
            "properties": [
                "email": mailbox, "name": ["type": "string", "minLength": 1, "maxLength": 200], "tier": tier,
                "admin": ["type": "boolean", "default": false],
            ],
        ],
        "AdminAgentChange": [
            "type": "object", "description": "At least one member; deactivating ends the agent's sessions.",
            "properties": [
                "tier": tier, "active": ["type": "boolean"], "admin": ["type": "boolean"],
                "passkey_required": ["type": "boolean", "description": "Only with a registered passkey (409 admin_lockout otherwise)."],
            ],
        ],
        "AdminNewClient": [
            "type": "object", "required": ["name"], "properties": ["name": ["type": "string", "minLength": 1, "maxLength": 200]],
        ],
        "AdminAgent": ["type": "object", "required": agentRequired, "properties": agentProperties],
        "AdminCreatedAgent": [
            "type": "object", "required": agentRequired + ["password", "totp_uri"],
            "properties": agentProperties.merging([
                "password": ["type": "string", "description": "Shown this once."],
                "totp_uri": ["type": "string", "description": "otpauth://totp/… URI, shown this once."],
            ]) { a, _ in a },
        ],
        "AdminProposal": ["type": "object", "required": proposalRequired, "properties": proposalProperties],
        "AdminProposedAgent": [
            "type": "object", "required": proposalRequired + ["password"],
            "properties": proposalProperties.merging([
                "password": [
                    "type": "string",
                    "description": "The new agent's password, shown this once to the proposer; the confirming admin is shown the TOTP URI.",
                ]
            ]) { a, _ in a },
        ],
        "AdminProposalList": [
            "type": "object", "required": ["items", "next_cursor", "actors", "alone"],
            "properties": [
                "items": ["type": "array", "items": ["$ref": "#/components/schemas/AdminProposal"]], "next_cursor": ["type": ["string", "null"]],
                "actors": ["type": "object", "additionalProperties": ["type": "string"], "description": "Names of the agents named as actors."],
                "alone": ["type": "boolean", "description": "The admin asking is the only admin: their changes act at once."],
            ],
        ],
        "AdminConfirmedProposal": [
            "type": "object", "required": ["proposal", "result"],
            "properties": [
                "proposal": ["$ref": "#/components/schemas/AdminProposal"],
                "result": [
                    "type": "object",
                    "description":
                        "What the change answers: agent_add the agent and its totp_uri (no password: the proposer was shown it); agent_change the agent; password_reset {id, password}; totp_reset {id, totp_uri}. Secrets shown this once.",
                ],
            ],
        ],
        "AdminAgentList": [
            "type": "object", "required": ["items", "next_cursor"],
            "properties": [
                "items": ["type": "array", "items": ["$ref": "#/components/schemas/AdminAgent"]], "next_cursor": ["type": ["string", "null"]],
            ],
        ],
        "AdminPasswordReset": [
            "type": "object", "required": ["id", "password"],
            "properties": ["id": uuid, "password": ["type": "string", "description": "Shown this once."]],
        ],
        "AdminTOTPReset": [
            "type": "object", "required": ["id", "totp_uri"],
            "properties": ["id": uuid, "totp_uri": ["type": "string", "description": "Shown this once."]],
        ],
        "AdminClient": ["type": "object", "required": clientRequired, "properties": clientProperties],
        "AdminCreatedClient": [
            "type": "object", "required": clientRequired + ["api_key", "signing_secret"],
            "properties": clientProperties.merging([
                "api_key": ["type": "string", "description": "Shown this once."],
                "signing_secret": ["type": "string", "description": "Shown this once."],
            ]) { a, _ in a },
        ],
        "AdminRotatedClient": [
            "type": "object", "required": clientRequired + ["signing_secret"],
            "properties": clientProperties.merging(["signing_secret": ["type": "string", "description": "The new secret, shown this once."]]) {
                a, _ in a
            },
        ],
        "AdminRotatedClientKey": [
            "type": "object", "required": clientRequired + ["api_key"],
            "properties": clientProperties.merging(["api_key": ["type": "string", "description": "The new API key, shown this once."]]) {
                a, _ in a
            },
        ],
        // Passkeys
        "PasskeyRegistrationOptions": [
            "type": "object",
            "required": [
                "challenge", "timeout", "rp", "user", "pub_key_cred_params", "attestation", "authenticator_selection", "exclude_credentials",
            ],
            "properties": [
                "challenge": ["type": "string"], "timeout": ["type": "integer"], "rp": ["type": "object"], "user": ["type": "object"],
                "pub_key_cred_params": ["type": "array"], "attestation": ["type": "string"], "authenticator_selection": ["type": "object"],
                "exclude_credentials": ["type": "array"],
            ],
        ],
        "PasskeyRegistration": [
            "type": "object", "required": ["client_data_json", "attestation_object"],
            "properties": [
                "name": ["type": "string", "maxLength": 100], "client_data_json": ["type": "string", "description": "base64url"],
                "attestation_object": ["type": "string", "description": "base64url"],
            ],
        ],
        "Passkey": [
            "type": "object", "required": ["id", "name", "created_at", "last_used_at"],
            "properties": ["id": uuid, "name": ["type": "string"], "created_at": ["type": "string", "format": "date-time"], "last_used_at": moment],
        ],
        "PasskeyList": [
            "type": "object", "required": ["items", "next_cursor"],
            "properties": [
                "items": ["type": "array", "items": ["$ref": "#/components/schemas/Passkey"]], "next_cursor": ["type": ["string", "null"]],
            ],
        ],
        "PasskeySignInOptions": [
            "type": "object", "required": ["challenge", "timeout", "rp_id", "user_verification"],
            "properties": [
                "challenge": ["type": "string"], "timeout": ["type": "integer"], "rp_id": ["type": "string"], "user_verification": ["type": "string"],
            ],
        ],
        "PasskeyAssertion": [
            "type": "object", "required": ["credential_id", "client_data_json", "authenticator_data", "signature"],
            "properties": [
                "credential_id": ["type": "string"], "client_data_json": ["type": "string"], "authenticator_data": ["type": "string"],
                "signature": ["type": "string"],
            ],
        ],
        // Supervision
        "ReportSummary": [
            "type": "object",
            "required": [
                "days", "from", "to", "open", "overdue", "paths", "time_to_resolve", "trend", "agents", "first_response", "backlog_by_age",
            ],
            "properties": [
                "days": ["type": "integer"], "from": ["type": "string", "format": "date-time"], "to": ["type": "string", "format": "date-time"],
                "open": [
                    "type": "object", "required": ["total", "by_state_and_tier"],
                    "properties": [
                        "total": ["type": "integer"],
                        "by_state_and_tier": [
                            "type": "array",
                            "items": [
                                "type": "object", "required": ["state", "tier", "count"],
                                "properties": ["state": ["type": "string"], "tier": tier, "count": ["type": "integer"]],
                            ],
                        ],
                    ],
                ],
                "overdue": ["type": "integer"],
                "paths": [
                    "type": "array",
                    "items": [
                        "type": "object", "required": ["path", "target_seconds", "resolved", "within_target", "within_target_percent"],
                        "properties": [
                            "path": ["type": "string"], "target_seconds": ["type": "integer"], "resolved": ["type": "integer"],
                            "within_target": ["type": "integer"],
                            "within_target_percent": ["type": ["integer", "null"], "description": "Rounded down; null when none was resolved."],
                        ],
                    ],
                ],
                "time_to_resolve": [
                    "type": "object", "required": ["resolved", "p50_seconds", "p90_seconds"],
                    "properties": [
                        "resolved": ["type": "integer"], "p50_seconds": ["type": ["integer", "null"]], "p90_seconds": ["type": ["integer", "null"]],
                    ],
                ],
                "agents": [
                    "type": "array",
                    "description": "Each agent holding open cases or resolved ones in the window: open and overdue now, resolved in the window.",
                    "items": [
                        "type": "object", "required": ["agent_id", "name", "tier", "open", "overdue", "resolved"],
                        "properties": [
                            "agent_id": ["type": "string", "format": "uuid"], "name": ["type": "string"], "tier": tier,
                            "open": ["type": "integer"], "overdue": ["type": "integer"], "resolved": ["type": "integer"],
                        ],
                    ],
                ],
                "first_response": [
                    "type": "object", "required": ["cases", "answered", "p50_seconds", "p90_seconds", "sampled"],
                    "description":
                        "Time from opening to the first agent's event on cases opened in the window (the newest 2,000 when sampled).",
                    "properties": [
                        "cases": ["type": "integer"], "answered": ["type": "integer"], "p50_seconds": ["type": ["integer", "null"]],
                        "p90_seconds": ["type": ["integer", "null"]], "sampled": ["type": "boolean"],
                    ],
                ],
                "backlog_by_age": [
                    "type": "array",
                    "description": "Open cases by time since opening; opened_after/opened_before are the queue's filters for the bucket.",
                    "items": [
                        "type": "object", "required": ["from_days", "to_days", "opened_after", "opened_before", "count"],
                        "properties": [
                            "from_days": ["type": "integer"], "to_days": ["type": ["integer", "null"]],
                            "opened_after": ["type": ["string", "null"], "format": "date-time"],
                            "opened_before": ["type": ["string", "null"], "format": "date-time"], "count": ["type": "integer"],
                        ],
                    ],
                ],
                "trend": [
                    "type": "array",
                    "items": [
                        "type": "object", "required": ["date", "opened", "resolved"],
                        "properties": [
                            "date": ["type": "string", "format": "date"], "opened": ["type": "integer"], "resolved": ["type": "integer"],
                        ],
                    ],
                ],
            ],
        ],
        "AdminClientList": [
            "type": "object", "required": ["items", "next_cursor"],
            "properties": [
                "items": ["type": "array", "items": ["$ref": "#/components/schemas/AdminClient"]], "next_cursor": ["type": ["string", "null"]],
            ],
        ],
    ]
}
