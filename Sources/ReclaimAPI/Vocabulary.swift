import ReclaimCore
import ReclaimOperations
import ReclaimStore

/// The vocabularies, as `GET /api/v1/vocabulary` serves them to the pages (and to anyone: they are in `/openapi.json`
/// too): every list of machine words a page offers or checks, by name, in the service's order, each read from its one
/// declaration (`allCases`). The words people read for them stay in the pages' catalogues (`labels.js`,
/// `status-text.js`), keyed by these words; the browser test `test_vocabulary` fails on a word without them.
enum Vocabulary {
    /// Each list by name. A new vocabulary is a line here; a new word is a case of its enum.
    static let lists: [(name: String, words: [String])] = [
        ("case_kinds", CaseKind.allCases.map(\.rawValue)),
        ("case_states", CaseState.allCases.map(\.rawValue)),
        ("finished_states", CaseState.allCases.filter { !$0.isOpen }.map(\.rawValue)),
        ("tiers", Tier.allCases.map(\.rawValue)),
        ("recovery_paths", RecoveryPath.allCases.map(\.rawValue)),
        ("case_actions", CaseAction.allCases.map(\.rawValue)),
        ("case_work", CaseWork.allCases.map(\.rawValue)),
        ("unlock_steps", UnlockKind.allCases.map(\.rawValue)),
        ("evidence_kinds", EvidenceKind.allCases.map(\.rawValue)),
        ("document_kinds", DocumentType.allCases.map(\.rawValue)),
        ("upload_kinds", UploadKind.allRawValues),
        ("evidence_statuses", EvidenceStatus.allCases.map(\.rawValue)),
        ("shown_evidence_statuses", ShownEvidenceStatus.allCases.map(\.rawValue)),
        ("customer_reasons", CustomerReason.allCases.map(\.rawValue)),
        ("risk_signals", RiskSignal.allCases.map(\.rawValue)),
        ("factors", Factor.allCases.map(\.rawValue)),
        ("requirements", Requirement.allCases.map(\.rawValue)),
        ("note_visibilities", NoteVisibility.allCases.map(\.rawValue)),
        ("event_types", CaseEventType.allCases.map(\.rawValue)),
        ("mail_kinds", CustomerMailKind.allCases.map(\.rawValue)),
        ("webhook_events", WebhookEvent.allCases.map(\.rawValue)),
        ("languages", CustomerLanguage.allCases.map(\.rawValue)),
    ]

    /// For each requirement met by an upload, the document kinds that meet it, in `EvidenceKind`'s order (the status
    /// page offers the first when the requirement is missing).
    static let requirementUploads: [(requirement: String, kinds: [String])] = Requirement.allCases.filter(\.isUpload).map { requirement in
        (requirement.rawValue, EvidenceKind.allCases.filter(requirement.satisfiedBy.contains).map(\.rawValue))
    }

    /// The response body, built once.
    static let body: [UInt8] = {
        var members: [String: JSONValue] = [:]
        for (name, words) in lists { members[name] = .array(words.map(JSONValue.string)) }
        members["requirement_uploads"] = .object(
            Dictionary(uniqueKeysWithValues: requirementUploads.map { ($0.requirement, .array($0.kinds.map(JSONValue.string))) }))
        return Array(JSONValue.object(members).canonical.utf8)
    }()

    /// The `Vocabulary` schema: each list an array of exactly its words.
    nonisolated(unsafe) static let schema: [String: Any] = {  // immutable after initialisation
        var properties: [String: Any] = [:]
        for (name, words) in lists { properties[name] = ["type": "array", "items": ["type": "string", "enum": words]] }
        properties["requirement_uploads"] = [
            "type": "object", "description": "For each requirement an upload meets, the document kinds that meet it.",
            "required": requirementUploads.map(\.requirement),
            "additionalProperties": ["type": "array", "items": ["type": "string", "enum": DocumentType.allCases.map(\.rawValue)]],
        ]
        return [
            "type": "object", "required": lists.map(\.name) + ["requirement_uploads"], "properties": properties,
            "description": "The machine words of each vocabulary, in the service's order (tiers in rising power).",
        ]
    }()
}
