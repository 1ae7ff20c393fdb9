import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// The two call codes of an open case (api.md v1.3 "The call, verified both ways"), derived when asked, never stored.
///
/// Each code is RFC 6238 (HMAC-SHA-1, six digits, a 600 s step) over a per-case secret: HMAC-SHA-256 under the key file's
/// active `access_code` key of the role, the case's id and its current access-code hash. So nobody without the key
/// file computes a code, the desk code tells nothing of the customer code, and a new access code gives new codes (what
/// a status page showed to whoever held the old code stops working within the minute's grace).
public enum CallCodeDerivation {
    /// The code of `role` for `record` at time step `step`.
    public static func code(_ role: CallCodes.Role, for record: CaseRecord, step: UInt64, keys: KeyFile) -> String {
        let key = keys.activeKey(for: .accessCode).key
        let message = Array("reclaim call code v1:\(role.rawValue):\(record.id.lowercased):".utf8) + record.accessCodeHash
        let secret = HMACSHA256.authenticate(message: message, key: key)
        // 32 bytes, digits 6, a positive period: the initializer's checks cannot fail.
        let totp = try! TOTP(secret: secret, digits: CallCodes.digits, period: Int(CallCodes.period))
        return totp.code(counter: step)
    }

    /// The codes shown now: nil for a finished or erased case (only an open case has call codes).
    public static func shown(for record: CaseRecord, keys: KeyFile?, at now: Date) -> (desk: String, customer: String, validUntil: Date)? {
        guard let keys, record.snapshot.state.isOpen, record.erasedAt == nil else { return nil }
        let step = CallCodes.step(at: now)
        return (code(.desk, for: record, step: step, keys: keys), code(.customer, for: record, step: step, keys: keys), CallCodes.validUntil(at: now))
    }

    /// Whether `typed` is the case's code of `role` now (or the previous one within its grace minute); every accepted
    /// step is compared, in constant time.
    public static func matches(_ typed: String, _ role: CallCodes.Role, for record: CaseRecord, keys: KeyFile, at now: Date) -> Bool {
        guard let digits = CallCodes.normalize(typed) else { return false }
        var matched = false
        for step in CallCodes.acceptedSteps(at: now)
        where ConstantTime.equals(Array(code(role, for: record, step: step, keys: keys).utf8), Array(digits.utf8)) {
            matched = true
        }
        return matched
    }
}

/// A caller's verification on a case, as the agents' case page shows it.
public struct CallerVerificationState: Sendable, Equatable {
    /// Until when it holds.
    public let verifiedUntil: Date
    /// How it was verified.
    public let method: CallCodes.Method
    /// The agent who checked it (the only one it lets act).
    public let agent: String
}

extension CaseOperations {
    /// What a caller's proof is.
    public enum CallerProof: Sendable {
        /// The customer code the caller read from their status page.
        case customerCode(String)
        /// The one-time code the caller read from the mail to the contact address.
        case mailedCode(String)
    }

    /// What a check of a caller's proof came to. A wrong code is counted (and committed) before it is answered.
    public enum CallerCheck: Sendable, Equatable {
        case verified(until: Date)
        case wrong
        case locked(until: Date)
    }

    /// Checks a caller's proof on the case (tier1+): a right code appends `caller_verified` (the agent, the method, until
    /// when) and holds for `CallCodes.verificationLifetime`, for this agent; a wrong one counts against the case's status
    /// look-up budget (`ThrottleStore.caseKey`, 9 in 8 hours), and the failure that locks it appends `caller_code_locked`
    /// and raises `caller_code_guessed`. While the budget is spent every proof is refused, the right one too.
    public func verifyCaller(
        _ number: CaseNumber, proof: CallerProof, actorTier: Tier, by actor: String, at now: Date, policy: StatusThrottlePolicy = .default,
        on connection: PostgresConnection
    ) throws -> CallerCheck {
        let keys = try requireKeys()
        let id = try lockID(number, on: connection)
        if !actorTier.isAtLeast(CallCodes.verifyMinimumTier) {
            throw OperationError.refused(.insufficientTier(required: CallCodes.verifyMinimumTier), caseID: id)
        }
        guard let record = try CaseStore.find(id: id, on: connection) else { throw OperationError.caseNotFound }
        let key = ThrottleStore.caseKey(number.digits)
        if let until = try ThrottleStore.lockedUntil(keys: [key], now: now, on: connection) { return .locked(until: until) }
        let method: CallCodes.Method
        let right: Bool
        switch proof {
        case .customerCode(let typed):
            guard record.snapshot.state.isOpen else { throw OperationError.refused(.caseNotOpen, caseID: nil) }
            method = .statusCode
            right = CallCodeDerivation.matches(typed, .customer, for: record, keys: keys, at: now)
        case .mailedCode(let typed):
            method = .mailedCode
            right = try mailedCodeMatches(typed, caseID: id, keys: keys, at: now, on: connection)
        }
        guard right else {
            let state = try ThrottleStore.recordFailure(key: key, rule: policy.caseRule, now: now, on: connection)
            if let until = state.lockedUntil(at: now) {
                try CaseTimeline.append(.callerCodeLocked(method: method, until: until), caseID: id, actor: actor, at: now, on: connection)
                try RiskSignals.raise(
                    .callerCodeGuessed, on: record,
                    detail: "\(policy.caseLimit) wrong call codes: someone who is not the customer may be calling as them.", by: Self.systemActor,
                    at: now, on: connection)
            }
            return .wrong
        }
        if method == .mailedCode { try CallerMailedCodeStore.delete(caseID: id, on: connection) }
        let until = Timestamp.truncated(now).addingTimeInterval(CallCodes.verificationLifetime)
        try CaseTimeline.append(.callerVerified(method: method, until: until), caseID: id, actor: actor, at: now, on: connection)
        return .verified(until: until)
    }

    /// Mails a one-time six-digit code to the contact address (tier1+; valid `CallCodes.mailedCodeLifetime`, in the
    /// case's language, sealed in the outbox; only its keyed hash is stored, and a new one replaces it). Returns when
    /// it stops working, or nil when the mail was refused (the contact address reaches the rescue address).
    public func mailCallerCode(_ number: CaseNumber, actorTier: Tier, by actor: String, at now: Date, on connection: PostgresConnection) throws
        -> Date?
    {
        let keys = try requireKeys()
        let id = try lockID(number, on: connection)
        if !actorTier.isAtLeast(CallCodes.verifyMinimumTier) {
            throw OperationError.refused(.insufficientTier(required: CallCodes.verifyMinimumTier), caseID: id)
        }
        guard let record = try CaseStore.find(id: id, on: connection) else { throw OperationError.caseNotFound }
        let code = String(format: "%06u", SecureRandom.uniform(1_000_000))
        let expires = now.addingTimeInterval(CallCodes.mailedCodeLifetime)
        let mailed = try CaseMessages.callerCode(record, code: code, expiresAt: expires, keys: keys, at: now, on: connection)
        guard mailed else { return nil }
        let key = keys.activeKey(for: .accessCode)
        try CallerMailedCodeStore.replace(
            caseID: id, codeHash: Self.mailedCodeHash(code, caseID: id, key: key.key), keyID: key.id, expiresAt: expires, now: now, on: connection)
        try CaseTimeline.append(.callerCodeMailed(until: expires), caseID: id, actor: actor, at: now, on: connection)
        return expires
    }

    /// The verification `actor` holds on the case now, or nil: their latest `caller_verified`, if still in force.
    public func callerVerification(caseID: UUID, actor: String, at now: Date, on connection: PostgresConnection) throws -> CallerVerificationState? {
        try latestVerification(caseID: caseID, at: now, on: connection) { $0 == actor }
    }

    /// The latest verification of any agent still in force on the case (what the case page shows), or nil.
    public func anyCallerVerification(caseID: UUID, at now: Date, on connection: PostgresConnection) throws -> CallerVerificationState? {
        try latestVerification(caseID: caseID, at: now, on: connection) { _ in true }
    }

    private func latestVerification(caseID: UUID, at now: Date, on connection: PostgresConnection, by who: (String) -> Bool) throws
        -> CallerVerificationState?
    {
        let events = try CaseEventStore.list(caseID: caseID, type: CaseEventType.callerVerified.rawValue, on: connection)
        for event in events.reversed() where who(event.actor) {
            guard case .object(let data) = event.data, case .string(let word)? = data["method"], let method = CallCodes.Method(rawValue: word)
            else { continue }
            let until = event.at.addingTimeInterval(CallCodes.verificationLifetime)
            return until > now ? CallerVerificationState(verifiedUntil: until, method: method, agent: event.actor) : nil
        }
        return nil
    }

    /// Refuses an action that needs a verified call (reading out a new access code, correcting the contact address or
    /// phone) unless `actor` verified the caller within the last 15 minutes; on a case at risk the agent must also be
    /// tier 2. A verification never clears a risk signal: it proves the access code or the mailbox, not the account.
    func requireVerifiedCaller(_ record: CaseRecord, actorTier: Tier, by actor: String, at now: Date, on connection: PostgresConnection) throws
        -> CallerVerificationState
    {
        let state = try callerVerification(caseID: record.id, actor: actor, at: now, on: connection)
        switch CallCodes.gate(verifiedUntil: state?.verifiedUntil, now: now, atRisk: record.risk, actorTier: actorTier) {
        case .needsTier(let tier)?: throw OperationError.refused(.insufficientTier(required: tier), caseID: record.id)
        case .notVerified?: throw OperationError.callerNotVerified
        case nil: return state!
        }
    }

    private func mailedCodeMatches(_ typed: String, caseID: UUID, keys: KeyFile, at now: Date, on connection: PostgresConnection) throws -> Bool {
        guard let stored = try CallerMailedCodeStore.current(caseID: caseID, now: now, on: connection),
            let key = keys.key(id: stored.keyID, purpose: .accessCode)
        else { return false }
        // A typed code that is not six digits still costs one HMAC, like a wrong one.
        let digits = CallCodes.normalize(typed) ?? ""
        return ConstantTime.equals(Self.mailedCodeHash(digits, caseID: caseID, key: key), stored.codeHash)
    }

    static func mailedCodeHash(_ code: String, caseID: UUID, key: SymmetricKey) -> [UInt8] {
        HMACSHA256.authenticate(message: Array("reclaim mailed caller code v1:\(caseID.lowercased):\(code)".utf8), key: key)
    }
}
