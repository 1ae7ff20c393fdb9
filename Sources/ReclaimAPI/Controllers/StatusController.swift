import Crypto
import Foundation
import HTTPServer
import ReclaimCore
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
        guard let keys = context.keys else { throw Problem.internal }
        let now = context.clock.now()
        let address = request.clientAddress
        let addressKey = StatusThrottle.addressKey(address)

        guard let number = try? CaseNumber(parsing: body.caseNumber) else {
            try context.pool.withTransaction { connection in
                if let until = try StatusThrottle.lockedUntil(keys: [addressKey], now: now, on: connection) { throw Self.locked(until: until, now: now) }
                try StatusThrottle.recordFailure(caseNumber: nil, address: address, policy: policy, now: now, on: connection)
            }
            throw Problem.notFound(code: "invalid_case_number", detail: "This is not a valid case number: check it for a typo.")
        }

        let (record, lockedUntil, notes) = try context.pool.withConnection { connection in
            try CaseStore.findForStatus(number: number.digits, throttleKeys: [StatusThrottle.caseKey(number.digits), addressKey], now: now, on: connection)
        }
        if let lockedUntil { throw Self.locked(until: lockedUntil, now: now) }

        // The same work whether or not the case exists and whether or not the code is well-formed.
        let symbols = AccessCode.normalize(body.accessCode) ?? "-"
        let key = record.flatMap { keys.key(id: $0.accessCodeKeyID, purpose: .accessCode) } ?? keys.activeKey(for: .accessCode).key
        let computed = CaseHTTP.accessCodeHash(symbols, key: key)
        let matches = ConstantTime.equals(computed, record?.accessCodeHash ?? Self.dummyHash) && record != nil && symbols != "-"
        guard let record, matches else {
            try context.pool.withTransaction { connection in
                try StatusThrottle.recordFailure(caseNumber: number.digits, address: address, policy: policy, now: now, on: connection)
            }
            throw Problem.notFound(detail: "No case matches this case number and access code.")
        }

        let s = record.snapshot
        let response: JSONValue = [
            "case_number": .string(record.number),
            "state": .string(s.state.rawValue),
            "stage": .string(plainState(s.state)),
            "next_step": .string(customerNextStep(state: s.state, path: s.path, dueAt: record.dueAt)),
            "updated_at": Timestamp.json(record.updatedAt),
            "due_at": Timestamp.json(record.dueAt),
            // Evidence arrives with issue 5; until then nothing is filed.
            "evidence": [],
            "missing": .array(missingEvidence(state: s.state, path: s.path, kind: s.kind, facts: s.facts, have: []).map(JSONValue.string)),
            "notes": .array(notes.map { ["body": .string($0.body), "created_at": Timestamp.json($0.at)] }),
        ]
        return CaseHTTP.json(response, headers: [("Cache-Control", "no-store")])
    }

    static func locked(until: Date, now: Date) -> Problem {
        Problem.tooManyRequests(retryAfter: Int(until.timeIntervalSince(now).rounded(.up)), code: "locked_out",
                                detail: "Too many failed attempts. Try again later.")
    }
}
