import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// Putting an account on file (what identity is checked against): one path for the API, `reclaim accounts import`
/// and the demo seed. Validation is cheap and runs first; storing hashes every answer (argon2id), so callers run it
/// off the HTTP workers.
public enum AccountOperations {
    /// The most questions, cards and devices one account may carry.
    public static let limits = (questions: 10, cards: 10, devices: 20)

    /// Validates a decoded payload, every bad field at once.
    public static func validate(_ payload: AccountPayload) throws -> ValidatedAccount {
        let account: ValidatedAccount
        switch ValidatedAccount.validate(payload) {
        case .success(let valid): account = valid
        case .failure(let failure): throw OperationError.invalid(failure)
        }
        if account.questions.count > limits.questions || account.cards.count > limits.cards || account.devices.count > limits.devices {
            throw OperationError.invalid(field: "security_questions", "At most 10 questions, 10 cards and 20 devices.")
        }
        return account
    }

    /// Hashes the answers, fingerprints the cards and stores the account; `accountExists` when the e-mail is on file.
    public static func putOnFile(
        _ account: ValidatedAccount, hasher: PasswordHash, keys: KeyFile?, at now: Date,
        pool: PostgresPool
    ) throws -> PreparedAccount {
        let prepared = try prepare(account, hasher: hasher, keys: keys)
        try pool.withTransaction { try store(prepared, at: now, on: $0) }
        return prepared
    }

    /// The hashing half of `putOnFile` (argon2id per answer; no database): run it off the HTTP workers.
    public static func prepare(_ account: ValidatedAccount, hasher: PasswordHash, keys: KeyFile?) throws -> PreparedAccount {
        guard let keys else { throw OperationError.keysUnavailable }
        return try PreparedAccount(account, hasher: hasher, cardKey: keys.activeKey(for: .cardFingerprint))
    }

    /// Replaces the account on file for `email` with `prepared` (its address, notice addresses, questions, cards and
    /// devices), in the caller's transaction: `accountNotFound` when none is on file, `accountExists` when the new address
    /// is another account's. Its devices are checked as a new account's are (`store`).
    public static func replace(email: String, with prepared: PreparedAccount, at now: Date, on connection: PostgresConnection) throws {
        do {
            guard try AccountStore.replace(email: email, with: prepared, on: connection) else { throw OperationError.accountNotFound }
        } catch let error as PostgresError where error.constraint == "accounts_email_unique" {
            throw OperationError.accountExists
        }
        try RiskSignals.checkAccountDevices(prepared.devices, accountEmail: prepared.email.value, at: now, on: connection)
    }

    /// The storing half of `putOnFile`, in the caller's transaction.
    public static func store(_ prepared: PreparedAccount, at now: Date, on connection: PostgresConnection) throws {
        do {
            try AccountStore.insert(prepared, now: now, on: connection)
        } catch let error as PostgresError where error.constraint == "accounts_email_unique" {
            throw OperationError.accountExists
        }
        // A device now on file for this account puts another account's open case holding it at risk.
        try RiskSignals.checkAccountDevices(prepared.devices, accountEmail: prepared.email.value, at: now, on: connection)
    }
}
