import Foundation
import Postgres
import ReclaimCore

/// A device as typed in when the case was opened (validated: serial 8–14 letters and digits, IMEI with its check digit).
public struct CaseDevice: Sendable, Hashable {
    /// Serial as printed on the box (upper case), if given.
    public var serial: String?
    /// IMEI digits, if given.
    public var imei: String?
    /// Free-text model name.
    public var model: String?

    /// A device from its parts (already validated).
    public init(serial: String?, imei: String?, model: String?) {
        self.serial = serial
        self.imei = imei
        self.model = model
    }

    /// `{"serial", "imei", "model"}`, absent values as null.
    public var json: JSONValue { ["serial": .optional(serial), "imei": .optional(imei), "model": .optional(model)] }

    init(json: JSONValue) {
        guard case .object(let members) = json else {
            self.init(serial: nil, imei: nil, model: nil)
            return
        }
        func text(_ key: String) -> String? { if case .string(let value)? = members[key] { value } else { nil } }
        self.init(serial: text("serial"), imei: text("imei"), model: text("model"))
    }
}

/// One row of `cases`, with the assignee's name and tier joined in.
public struct CaseRecord: Sendable {
    /// Primary key.
    public let id: UUID
    /// The 12-digit case number.
    public let number: String
    /// HMAC-SHA256 of the access code.
    public let accessCodeHash: [UInt8]
    /// Key-file id of the key that made `accessCodeHash`.
    public let accessCodeKeyID: String
    /// The workflow columns.
    public let snapshot: CaseSnapshot
    /// When the case is due (nil when paused or finished).
    public let dueAt: Date?
    /// The account the case is about.
    public let accountEmail: String
    /// The customer's name.
    public let customerName: String
    /// Where the customer can be reached (never a reset destination).
    public let customerContactEmail: String
    /// Devices typed in at creation.
    public let devices: [CaseDevice]
    /// What happened, in the agent's words.
    public let summary: String
    /// The assigned agent.
    public let assigneeID: UUID?
    /// The assigned agent's name (joined).
    public let assigneeName: String?
    /// The assigned agent's tier (joined).
    public let assigneeTier: Tier?
    /// Purchases and cloud operations frozen.
    public let frozen: Bool
    /// When the case was opened.
    public let createdAt: Date
    /// Last change.
    public let updatedAt: Date
    /// Optimistic-concurrency version (the ETag).
    public let version: Int
    /// The rescue address the thief added, when known: nothing is ever sent to it.
    public let rescueEmail: String?
    /// The customer's language; nil when nobody said (the reader's `Accept-Language` decides, mail goes in English).
    public let language: CustomerLanguage?
    /// The unlock steps engineering has recorded, in the order done.
    public let unlocksDone: [UnlockKind]
    /// Documents on the case not reviewed yet (pending).
    public let unreviewedDocuments: Int
    /// Who opened the case (`agent:<uuid>` or `client:<uuid>`).
    public let createdBy: String
    /// The case this one was merged into (state `merged`), by number.
    public let mergedInto: String?
    /// The state it left when merged (restored by unmerge).
    public let mergedFromState: CaseState?
    /// The security answers on file for the account and how many an answer filed on the case matched (for `send_reset`).
    public let answerProgress: AnswerProgress
    /// The state of the case it was merged into (nil unless merged).
    public let mergedIntoState: CaseState?
    /// When what identified the customer was erased (`CaseErasure`); the erased fields then read null.
    public var erasedAt: Date? = nil
    /// The customer's phone, E.164 (`PhoneNumber`); nil when none was given (or once erased).
    public var customerPhone: String? = nil
    /// Rescue addresses the case recorded and a correction removed or replaced: still the thief's (api.md v1.3).
    public var formerRescueEmails: [String] = []
    /// The newest human message on the case is the customer's (no customer mail after it): 0020's maintained column.
    public let awaitingReply: Bool
    /// A risk signal of the case stands uncleared (`cases.risk`, kept by `RiskSignalStore`).
    public let risk: Bool
    /// The unlock steps recorded and waiting for their time (the cooling-off), soonest first.
    public let unlocksScheduled: [ScheduledStep]

    /// What, beside the workflow columns, decides the work and actions the case offers now.
    public var standing: CaseStanding {
        CaseStanding(frozen: frozen, unlocksDone: Set(unlocksDone), answers: answerProgress, mergedIntoState: mergedIntoState)
    }

    /// A record from its fields.
    public init(
        id: UUID, number: String, accessCodeHash: [UInt8], accessCodeKeyID: String, snapshot: CaseSnapshot, dueAt: Date?,
        accountEmail: String, customerName: String, customerContactEmail: String, devices: [CaseDevice], summary: String,
        assigneeID: UUID?, assigneeName: String?, assigneeTier: Tier?, frozen: Bool, createdAt: Date, updatedAt: Date, version: Int,
        rescueEmail: String? = nil, language: CustomerLanguage? = nil, unlocksDone: [UnlockKind] = [], unreviewedDocuments: Int = 0,
        createdBy: String = "", mergedInto: String? = nil, mergedFromState: CaseState? = nil,
        answerProgress: AnswerProgress = AnswerProgress(onFile: 0, matched: 0), mergedIntoState: CaseState? = nil, risk: Bool = false,
        unlocksScheduled: [ScheduledStep] = [], awaitingReply: Bool = false
    ) {
        self.risk = risk
        self.unlocksScheduled = unlocksScheduled
        self.awaitingReply = awaitingReply
        self.answerProgress = answerProgress
        self.mergedIntoState = mergedIntoState
        self.createdBy = createdBy
        self.mergedInto = mergedInto
        self.mergedFromState = mergedFromState
        self.unlocksDone = unlocksDone
        self.unreviewedDocuments = unreviewedDocuments
        self.id = id
        self.number = number
        self.accessCodeHash = accessCodeHash
        self.accessCodeKeyID = accessCodeKeyID
        self.snapshot = snapshot
        self.dueAt = dueAt
        self.accountEmail = accountEmail
        self.customerName = customerName
        self.customerContactEmail = customerContactEmail
        self.devices = devices
        self.summary = summary
        self.assigneeID = assigneeID
        self.assigneeName = assigneeName
        self.assigneeTier = assigneeTier
        self.frozen = frozen
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
        self.rescueEmail = rescueEmail
        self.language = language
    }
}

/// A case about to be inserted.
public struct NewCase: Sendable {
    /// See `CaseRecord`.
    public var id: UUID
    /// See `CaseRecord`.
    public var number: CaseNumber
    /// See `CaseRecord`.
    public var accessCodeHash: [UInt8]
    /// See `CaseRecord`.
    public var accessCodeKeyID: String
    /// See `CaseRecord`.
    public var snapshot: CaseSnapshot
    /// See `CaseRecord`.
    public var dueAt: Date?
    /// See `CaseRecord`.
    public var accountEmail: String
    /// See `CaseRecord`.
    public var customerName: String
    /// See `CaseRecord`.
    public var customerContactEmail: String
    /// See `CaseRecord`.
    public var devices: [CaseDevice]
    /// See `CaseRecord`.
    public var summary: String
    /// See `CaseRecord`.
    public var createdBy: String
    /// See `CaseRecord`.
    public var now: Date
    /// See `CaseRecord`.
    public var rescueEmail: String?
    /// See `CaseRecord`.
    public var language: CustomerLanguage?
    /// See `CaseRecord`.
    public var customerPhone: String? = nil

    /// A case from its parts.
    public init(
        id: UUID, number: CaseNumber, accessCodeHash: [UInt8], accessCodeKeyID: String, snapshot: CaseSnapshot, dueAt: Date?,
        accountEmail: String, customerName: String, customerContactEmail: String, devices: [CaseDevice], summary: String,
        createdBy: String, now: Date, rescueEmail: String? = nil, language: CustomerLanguage? = nil
    ) {
        self.id = id
        self.number = number
        self.accessCodeHash = accessCodeHash
        self.accessCodeKeyID = accessCodeKeyID
        self.snapshot = snapshot
        self.dueAt = dueAt
        self.accountEmail = accountEmail
        self.customerName = customerName
        self.customerContactEmail = customerContactEmail
        self.devices = devices
        self.summary = summary
        self.createdBy = createdBy
        self.now = now
        self.rescueEmail = rescueEmail
        self.language = language
    }
}

/// An unlock step waiting for its time, as a case carries it.
public struct ScheduledStep: Sendable, Equatable {
    public let step: UnlockKind
    /// When the service does it.
    public let effectiveAt: Date

    public init(step: UnlockKind, effectiveAt: Date) {
        self.step = step
        self.effectiveAt = effectiveAt
    }
}
