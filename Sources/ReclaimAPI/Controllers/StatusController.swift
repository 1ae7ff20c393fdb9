import Crypto
import Foundation
import HTTPServer
import ReclaimCore
import ReclaimOperations
import ReclaimStore

/// `POST /api/v1/status`: what a customer may see with their case number and access code, and nothing more.
///
/// A wrong code and an unknown case answer the same 404 after the same work (an HMAC is computed either way,
/// and either way a failure is recorded); 9 failures on a number lock it for 8 hours, even to the right code;
/// an address is limited to 50 failures an hour (mistyped numbers included). Both limits live in PostgreSQL.
final class StatusController: Sendable {
    let context: ServiceContext
    let workflow: Workflow
    let policy: StatusThrottlePolicy

    init(context: ServiceContext, workflow: Workflow = Workflow(), policy: StatusThrottlePolicy = .default) {
        self.context = context
        self.workflow = workflow
        self.policy = policy
    }

    struct StatusBody {
        var caseNumber: String
        var accessCode: String
    }

    /// Compared against when the case does not exist, so both answers cost the same.
    private static let dummyHash = [UInt8](repeating: 0, count: HMACSHA256.byteCount)

    @Sendable func status(_ request: HTTPRequest) throws -> HTTPResponse {
        let members = try CaseHTTP.jsonObject(request)
        let body = StatusBody(caseNumber: try CaseHTTP.requiredString(members, "case_number"), accessCode: try CaseHTTP.requiredString(members, "access_code"))
        let (record, notes) = try customerCase(body, request)
        if record.snapshot.state == .merged, let into = record.mergedInto {
            // The customer's own code on the merged number shows the case it went into.
            let now = context.clock.now()
            let (target, _, targetNotes) = try context.pool.withConnection { try CaseStore.findForStatus(number: into, throttleKeys: [], now: now, on: $0) }
            if let target, case .object(var members) = try view(target, notes: targetNotes) {
                members["merged_from"] = .string(record.number)
                return CaseHTTP.json(.object(members), headers: [("Cache-Control", "no-store")])
            }
        }
        return CaseHTTP.json(try view(record, notes: notes), headers: [("Cache-Control", "no-store")])
    }

    /// `GET /api/v1/cases/{n}/status` (API clients): the customer's view of a case the client opened; 404 for any other.
    @Sendable func clientStatus(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.readOwnCaseStatus, request)
        let number = try CaseHTTP.caseNumber(request)
        let now = context.clock.now()
        let (record, _, notes) = try context.pool.withConnection { try CaseStore.findForStatus(number: number.digits, throttleKeys: [], now: now, on: $0) }
        guard let record, record.createdBy == principal.actor else { throw CaseHTTP.caseNotFound }
        return CaseHTTP.json(try view(record, notes: notes), headers: [("Cache-Control", "no-store")])
    }

    /// The body of `POST /api/v1/status`: what the customer may see, and nothing more.
    private func view(_ record: CaseRecord, notes: [(body: String, at: Date)]) throws -> JSONValue {
        // Evidence: what the customer filed and its review status (never its content or summary).
        let evidence = try context.pool.withConnection { try EvidenceStore.list(caseID: record.id, on: $0) }

        let s = record.snapshot
        let response: JSONValue = [
            "case_number": .string(record.number),
            "state": .string(s.state.rawValue),
            "stage": .string(plainState(s.state)),
            "progress": .array(customerProgress(state: s.state, path: s.path).map {
                ["key": .string($0.key), "label": .string($0.label), "mark": .string($0.mark.rawValue)]
            }),
            "next_step": .string(customerNextStep(state: s.state, path: s.path, dueAt: record.dueAt, now: context.clock.now())),
            "updated_at": Timestamp.json(record.updatedAt),
            "due_at": Timestamp.json(record.dueAt),
            "evidence": .array(evidence.map { ["type": .string($0.kind.rawValue), "status": .string($0.status.rawValue), "filed_at": Timestamp.json($0.filedAt)] }),
            "missing": .array(EvidenceRequirements.missing(record, evidence).map(JSONValue.string)),
            "notes": .array(notes.map { ["body": .string($0.body), "created_at": Timestamp.json($0.at)] }),
        ]
        return response
    }

    /// Evidence: `POST /api/v1/status/evidence`, a customer's document upload with `case_number` and `access_code` as
    /// multipart fields (fields `type` and `file` as for agents); a wrong code counts as a status failure → 201.
    @Sendable func uploadEvidence(_ request: HTTPRequest) throws -> HTTPResponse {
        let form = try request.multipart()
        guard let caseNumber = form.field("case_number"), let accessCode = form.field("access_code") else {
            throw Problem.unprocessable(errors: [FieldError(field: "case_number", message: "Send case_number and access_code as form fields.")])
        }
        var (record, _) = try customerCase(StatusBody(caseNumber: caseNumber, accessCode: accessCode), request)
        // A merged number's customer files into the case it went into, where its evidence now counts.
        if record.snapshot.state == .merged, let into = record.mergedInto,
           let target = try context.pool.withConnection({ try CaseStore.find(number: into, on: $0) }) {
            record = target
        }
        // A finished case is in nobody's queue: a document filed there would wait for no one. The status page's
        // next step tells the customer to contact us instead (an agent can reopen the case).
        guard record.snapshot.state.isOpen else { throw OperationError.caseNotOpen }
        let (type, bytes, declared) = try EvidenceInput.documentFromForm(form)
        let number = try CaseHTTP.parseCaseNumber(record.number)
        let now = context.now
        let evidence = try context.pool.withTransaction { connection in
            try CaseOperations(keys: context.keys).fileDocument(type: type, bytes: bytes, declaredType: declared, number: number,
                                                                by: Principal.customer(number).actor, at: now, on: connection)
        }
        let response: JSONValue = ["type": .string(evidence.kind.rawValue), "status": .string(evidence.status.rawValue),
                                   "filed_at": Timestamp.json(evidence.filedAt), "size": .int(Int64(bytes.count)),
                                   "sha256": .optional(evidence.sha256.map { Hex.encode($0) }), "media_type": .optional(evidence.mediaType)]
        return CaseHTTP.json(response, status: 201, headers: [("Cache-Control", "no-store")])
    }

    /// The case behind a case number and access code, under the throttles: 404 (the same for an unknown case and a wrong
    /// code, each recorded as a failure), 404 `invalid_case_number`, 429 while locked.
    private func customerCase(_ body: StatusBody, _ request: HTTPRequest) throws -> (CaseRecord, [(body: String, at: Date)]) {
        guard let keys = context.keys else { throw Problem.internal }
        let now = context.clock.now()
        let address = request.clientAddress
        let addressKey = ThrottleStore.addressKey(address)

        guard let number = try? CaseNumber(parsing: body.caseNumber) else {
            try context.pool.withTransaction { connection in
                if let until = try ThrottleStore.lockedUntil(keys: [addressKey], now: now, on: connection) { throw Self.locked(until: until, now: now) }
                try ThrottleStore.recordFailure(caseNumber: nil, address: address, policy: policy, now: now, on: connection)
            }
            throw Problem.notFound(code: ErrorCode.invalidCaseNumber, detail: "This is not a valid case number: check it for a typo.")
        }

        let (record, lockedUntil, notes) = try context.pool.withConnection { connection in
            try CaseStore.findForStatus(number: number.digits, throttleKeys: [ThrottleStore.caseKey(number.digits), addressKey], now: now, on: connection)
        }
        if let lockedUntil { throw Self.locked(until: lockedUntil, now: now) }

        // The same work whether or not the case exists and whether or not the code is well-formed.
        let symbols = AccessCode.normalize(body.accessCode) ?? "-"
        let key = record.flatMap { keys.key(id: $0.accessCodeKeyID, purpose: .accessCode) } ?? keys.activeKey(for: .accessCode).key
        let computed = AccessCodeHash.compute(symbols: symbols, key: key)
        let matches = ConstantTime.equals(computed, record?.accessCodeHash ?? Self.dummyHash) && record != nil && symbols != "-"
        guard let record, matches else {
            try context.pool.withTransaction { connection in
                try ThrottleStore.recordFailure(caseNumber: number.digits, address: address, policy: policy, now: now, on: connection)
            }
            throw Problem.notFound(detail: "No case matches this case number and access code.")
        }
        return (record, notes)
    }

    static func locked(until: Date, now: Date) -> Problem {
        Problem.tooManyRequests(retryAfter: Int(until.timeIntervalSince(now).rounded(.up)), code: ErrorCode.lockedOut,
                                detail: "Too many failed attempts. Try again later.")
    }
}
