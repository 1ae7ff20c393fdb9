import Foundation
import ReclaimCore
import ReclaimStore

// Typed views of what the API answers, decoded with JSONDecoder, so a test reads `created.state == "new"`
// instead of casting `[String: Any]`. Keys are spelled out (no snake-case strategy: it would rewrite dictionary
// keys such as `facts` and `factors` too). A field the API always sends is required: a view that decodes proves it
// is there; a field that may be null is `T?` decoded as present-but-null where the API always sends it.

extension TestHTTPResponse {
    /// The body decoded as `type`; throws (naming the body) when it does not fit.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(body))
        } catch {
            throw TestHTTPError.notJSON("\(T.self): \(error) in \(String(text.prefix(300)))")
        }
    }

    /// The body as a problem document.
    public func problem() throws -> ProblemView { try decode(ProblemView.self) }

    /// The body as a JSON value, for what has no view (or for checking which members are present).
    public func value() throws -> JSONValue { try decode(JSONValue.self) }
}

extension JSONValue {
    /// The member `key` of an object (nil when absent or not an object; `.null` when present and null).
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    /// The text of a string.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    /// The value of an integer.
    public var intValue: Int? { if case .int(let value) = self { Int(value) } else { nil } }
    /// The value of a boolean.
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The items of an array.
    public var arrayValue: [JSONValue]? { if case .array(let items) = self { items } else { nil } }
    /// The members of an object.
    public var objectValue: [String: JSONValue]? { if case .object(let members) = self { members } else { nil } }
    /// True for JSON null.
    public var isNull: Bool { self == .null }
}

/// A case as the case API shows it (api.md): `access_code` only in the answer that created it.
public struct CaseView: Decodable, Sendable, Equatable {
    public let caseNumber: String
    public let kind: String
    public let state: String
    public let tier: String
    public let path: String
    /// The boolean facts, by their JSON names (the rescue address is `rescueEmail`).
    public let facts: [String: Bool]
    /// `facts.former_rescue_emails`: rescue addresses the case recorded and a correction removed (api.md v1.3).
    public private(set) var formerRescueEmails: [String] = []
    /// `facts.rescue_email`: the address the thief added, when known (sent as null otherwise).
    public let rescueEmail: String?
    /// null when the case has no language of its own (always sent).
    public let language: String?
    public let accountEmail: String
    public let customer: Customer
    public let devices: [Device]
    public let summary: String
    /// Null when nobody holds the case.
    public let assignee: Assignee?
    public let frozen: Bool
    /// Null while the clock is paused (the customer's turn, or finished).
    public let dueAt: String?
    public let overdue: Bool
    public let allowedActions: [String]
    /// The workflow transitions of `allowed_actions` (POST …/transitions), in table order.
    public var transitions: [String] { allowedActions.filter { CaseAction(rawValue: $0) != nil } }
    /// The other work of `allowed_actions` (`CaseWork`: evidence, notes, assign, freeze, access code…).
    public var work: [String] { allowedActions.filter { CaseWork(rawValue: $0) != nil } }
    public let createdAt: String
    public let updatedAt: String
    public let version: Int
    /// Present only when the case was just opened (or in an idempotent replay of that request).
    public let accessCode: String?
    /// The whole answer, for members no field names yet (`view["unlocks"]`).
    public let raw: JSONValue

    /// A member of the answer as Foundation values (String, Int, Bool, NSNull, arrays, dictionaries), nil when absent.
    public subscript(key: String) -> Any? { raw[key].map(\.foundation) }

    /// The customer's name, contact address and phone (nil: none on file).
    public struct Customer: Decodable, Sendable, Equatable {
        public let name: String
        public let contactEmail: String
        public let phone: String?
        enum CodingKeys: String, CodingKey {
            case name, phone
            case contactEmail = "contact_email"
        }
    }

    /// A device on the case (each identifier null when not given).
    public struct Device: Decodable, Sendable, Equatable {
        public let serial: String?
        public let imei: String?
        public let model: String?
    }

    /// Who holds the case.
    public struct Assignee: Decodable, Sendable, Equatable {
        public let id: String
        public let name: String?
        public let tier: String?
    }

    enum CodingKeys: String, CodingKey {
        case caseNumber = "case_number"
        case kind, language, state, tier, path, facts
        case accountEmail = "account_email"
        case customer, devices, summary
        case assignee, frozen
        case dueAt = "due_at"
        case overdue
        case allowedActions = "allowed_actions"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case version
        case accessCode = "access_code"
    }

    public init(from decoder: any Decoder) throws {
        raw = try JSONValue(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        caseNumber = try c.decode(String.self, forKey: .caseNumber)
        kind = try c.decode(String.self, forKey: .kind)
        state = try c.decode(String.self, forKey: .state)
        tier = try c.decode(String.self, forKey: .tier)
        path = try c.decode(String.self, forKey: .path)
        let factsDecoder = try c.superDecoder(forKey: .facts)
        let factMembers = try factsDecoder.container(keyedBy: AnyKey.self)
        var flags: [String: Bool] = [:]
        var rescue: String??
        for key in factMembers.allKeys {
            if key.stringValue == "rescue_email" {
                rescue = .some(try factMembers.decode(String?.self, forKey: key))
            } else if key.stringValue == "former_rescue_emails" {
                formerRescueEmails = try factMembers.decode([String].self, forKey: key)
            } else {
                flags[key.stringValue] = try factMembers.decode(Bool.self, forKey: key)
            }
        }
        guard let rescue else {
            throw DecodingError.keyNotFound(
                AnyKey(stringValue: "rescue_email"), .init(codingPath: factsDecoder.codingPath, debugDescription: "always sent"))
        }
        facts = flags
        rescueEmail = rescue
        language = try c.decode(String?.self, forKey: .language)
        accountEmail = try c.decode(String.self, forKey: .accountEmail)
        customer = try c.decode(Customer.self, forKey: .customer)
        devices = try c.decode([Device].self, forKey: .devices)
        summary = try c.decode(String.self, forKey: .summary)
        // `decode(T?.self)` (not decodeIfPresent): the API always sends these, null or not.
        assignee = try c.decode(Assignee?.self, forKey: .assignee)
        frozen = try c.decode(Bool.self, forKey: .frozen)
        dueAt = try c.decode(String?.self, forKey: .dueAt)
        overdue = try c.decode(Bool.self, forKey: .overdue)
        allowedActions = try c.decode([String].self, forKey: .allowedActions)
        createdAt = try c.decode(String.self, forKey: .createdAt)
        updatedAt = try c.decode(String.self, forKey: .updatedAt)
        version = try c.decode(Int.self, forKey: .version)
        accessCode = try c.decodeIfPresent(String.self, forKey: .accessCode)
    }
}

/// One event of a case's timeline: `{seq, at, actor, type, data, prev_hash, hash}`.
public struct EventView: Decodable, Sendable, Equatable {
    public let seq: Int
    public let at: String
    /// `agent:<uuid>`, `client:<uuid>` or `customer`.
    public let actor: String
    public let type: String
    public let data: JSONValue
    public let prevHash: String?
    public let hash: String

    enum CodingKeys: String, CodingKey {
        case seq, at, actor, type, data
        case prevHash = "prev_hash"
        case hash
    }

    /// A member of the event as Foundation values, nil when absent (`event["type"]`, `event["data"]`).
    public subscript(key: String) -> Any? {
        switch key {
        case "seq": seq
        case "at": at
        case "actor": actor
        case "type": type
        case "data": data.foundation
        case "prev_hash": prevHash ?? NSNull()
        case "hash": hash
        default: nil
        }
    }
}

extension JSONValue {
    /// The value as JSONSerialization would have produced it.
    public var foundation: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .int(let value): Int(value)
        case .string(let value): value
        case .array(let items): items.map(\.foundation)
        case .object(let members): members.mapValues(\.foundation)
        }
    }
}

/// A list answer: `items`, and, depending on the route, a cursor, the actors' names or what is still missing.
public struct ListView<Item: Decodable & Sendable>: Decodable, Sendable {
    public let items: [Item]
    /// The queue's next page (nil on the last).
    public let nextCursor: String?
    /// Display names of the agents named in `items` (events, notes).
    public let actors: [String: String]?
    /// Evidence still missing (the evidence list).
    public let missing: [String]?

    enum CodingKeys: String, CodingKey {
        case items
        case nextCursor = "next_cursor"
        case actors, missing
    }
}

/// A piece of evidence as agents see it: summaries only, never the secret.
public struct EvidenceView: Decodable, Sendable, Equatable {
    public let id: String
    public let type: String
    public let status: String
    /// Hex SHA-256 of stored bytes (documents, transcripts).
    public let sha256: String?
    public let size: Int?
    public let mediaType: String?
    public let summary: String
    public let filedBy: String
    public let filedAt: String
    /// Why the customer is told a rejected document was not accepted.
    public let customerReason: String?

    enum CodingKeys: String, CodingKey {
        case id, type, status, sha256, size
        case mediaType = "media_type"
        case summary
        case filedBy = "filed_by"
        case filedAt = "filed_at"
        case customerReason = "customer_reason"
    }
}

/// `GET .../verification`: the three factors' outcomes and the decision.
public struct VerificationView: Decodable, Sendable, Equatable {
    public let verified: Bool
    /// `security_answer`, `card`, `device` → `matched`, `mismatched` or `missing`.
    public let factors: [String: String]
}

/// The customer's status page answer: plain words, no agent-only detail.
public struct StatusView: Decodable, Sendable, Equatable {
    public let caseNumber: String
    public let state: String
    public let stage: String
    public let progress: [Step]
    public let nextStep: String
    public let updatedAt: String
    public let dueAt: String?
    public let evidence: [Evidence]
    public let missing: [String]
    public let notes: [Note]

    /// One step of the progress bar.
    public struct Step: Decodable, Sendable, Equatable {
        public let key: String
        public let label: String
        /// `done`, `current` or `upcoming`.
        public let mark: String
    }

    /// Evidence as the customer sees it.
    public struct Evidence: Decodable, Sendable, Equatable {
        public let type: String
        public let status: String
        public let filedAt: String
        /// For a rejected document: the reason's word and its sentence in the answer's language.
        public let customerReason: String?
        public let customerReasonText: String?
        enum CodingKeys: String, CodingKey {
            case type, status
            case filedAt = "filed_at"
            case customerReason = "customer_reason"
            case customerReasonText = "customer_reason_text"
        }
    }

    /// A note written for the customer (never an author).
    public struct Note: Decodable, Sendable, Equatable {
        public let body: String
        public let createdAt: String
        enum CodingKeys: String, CodingKey {
            case body
            case createdAt = "created_at"
        }
    }

    enum CodingKeys: String, CodingKey {
        case caseNumber = "case_number"
        case state, stage, progress
        case nextStep = "next_step"
        case updatedAt = "updated_at"
        case dueAt = "due_at"
        case evidence, missing, notes
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        caseNumber = try c.decode(String.self, forKey: .caseNumber)
        state = try c.decode(String.self, forKey: .state)
        stage = try c.decode(String.self, forKey: .stage)
        progress = try c.decode([Step].self, forKey: .progress)
        nextStep = try c.decode(String.self, forKey: .nextStep)
        updatedAt = try c.decode(String.self, forKey: .updatedAt)
        dueAt = try c.decode(String?.self, forKey: .dueAt)  // always sent, null while paused
        evidence = try c.decode([Evidence].self, forKey: .evidence)
        missing = try c.decode([String].self, forKey: .missing)
        notes = try c.decode([Note].self, forKey: .notes)
    }
}

/// A note as agents see it.
public struct NoteView: Decodable, Sendable, Equatable {
    public let id: String
    public let body: String
    /// `internal` or `customer`.
    public let visibility: String
    public let author: String
    public let createdAt: String

    enum CodingKeys: String, CodingKey {
        case id, body, visibility, author
        case createdAt = "created_at"
    }
}

/// A colleague in `GET /api/v1/agents` (no e-mail address).
public struct ColleagueView: Decodable, Sendable, Equatable {
    public let id: String
    public let name: String
    public let tier: String
}

/// A signed-in session: `POST` and `GET /api/v1/session`.
public struct SessionView: Decodable, Sendable, Equatable {
    public let agent: Agent
    public let csrfToken: String
    public let permissions: [String]

    /// The signed-in agent.
    public struct Agent: Decodable, Sendable, Equatable {
        public let id: String
        public let name: String
        public let email: String
        public let tier: String
        public let admin: Bool
    }

    enum CodingKeys: String, CodingKey {
        case agent
        case csrfToken = "csrf_token"
        case permissions
    }
}

/// A problem document (RFC 9457) with the service's stable `code` and its extra members.
public struct ProblemView: Decodable, Sendable, Equatable {
    public let type: String
    public let title: String
    public let status: Int
    public let detail: String?
    public let code: String
    public let requestID: String?
    /// Per-field errors of a 422 `validation_failed`.
    public let errors: [FieldError]?
    /// The factors' outcomes of a 409 `verification_failed`.
    public let factors: [String: String]?
    /// The tier an action needs (403 `insufficient_tier`).
    public let requiredTier: String?

    /// One invalid field.
    public struct FieldError: Decodable, Sendable, Equatable {
        public let field: String
        public let message: String
    }

    /// The fields named in `errors`, in order.
    public var fields: [String] { errors?.map(\.field) ?? [] }

    enum CodingKeys: String, CodingKey {
        case type, title, status, detail, code
        case requestID = "request_id"
        case errors, factors
        case requiredTier = "required_tier"
    }
}

/// A coding key for members whose names are data.
struct AnyKey: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}
