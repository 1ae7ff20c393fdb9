import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

@testable import ReclaimStore

/// The identity tables' SQL: replay store, idempotency claims, agents, sessions.
@Suite struct IdentityStoreTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func withDatabase(_ body: (PostgresConnection) throws -> Void) throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        try body(connection)
    }

    @Test func aSignatureIsRecordedOnceUntilItExpires() throws {
        try withDatabase { connection throws in
            let client = UUID()
            try APIClientStore.insert(
                id: client, name: "c", keyHash: Array(repeating: 1, count: 32), sealedSigningSecret: [1, 2, 3],
                signingKeyID: "k", now: Self.t0, on: connection)
            let signature = Array(repeating: UInt8(7), count: 32)
            let expires = Self.t0.addingTimeInterval(301)
            #expect(try SignatureReplayStore.record(clientID: client, signatureHash: signature, expiresAt: expires, now: Self.t0, on: connection))
            #expect(
                try SignatureReplayStore.record(
                    clientID: client, signatureHash: signature, expiresAt: expires, now: Self.t0.addingTimeInterval(300), on: connection) == false)
            #expect(try SignatureReplayStore.purgeExpired(now: Self.t0.addingTimeInterval(302), on: connection) == 1)
        }
    }

    @Test func idempotencyKeysAreLockedAndCompletedInTheTransactionOfTheChange() throws {
        try withDatabase { connection throws in
            let client = IdempotencyOwner.apiClient(UUID())
            let hash = Array(repeating: UInt8(9), count: 32)
            func lock(_ at: Date) throws -> IdempotencyLock {
                try IdempotencyKeyStore.lock(client, key: "k1", requestHash: hash, now: at, lifetime: 86400, wait: 1, on: connection)
            }
            // Rolled back (a crash, an error): nothing is left, the next transaction acquires again.
            struct Crash: Error {}
            #expect(throws: Crash.self) {
                try connection.withTransaction { _ in
                    _ = try lock(Self.t0)
                    throw Crash()
                }
            }
            #expect(try IdempotencyKeyStore.lookup(client, key: "k1", now: Self.t0, on: connection) == nil)
            // Completed and committed: later transactions find the sealed answer.
            try connection.withTransaction { connection throws in
                #expect(try lock(Self.t0) == .acquired)
                try IdempotencyKeyStore.complete(client, key: "k1", sealedResponse: [4, 5], keyID: "idem-1", on: connection)
            }
            try connection.withTransaction { _ throws in
                #expect(try lock(Self.t0.addingTimeInterval(60)) == .completed(requestHash: hash, sealedResponse: [4, 5], keyID: "idem-1"))
            }
            #expect(try IdempotencyKeyStore.lookup(client, key: "k1", now: Self.t0, on: connection)?.sealedResponse == [4, 5])
            // Agents have a key space of their own.
            try connection.withTransaction { _ throws in
                #expect(
                    try IdempotencyKeyStore.lock(
                        .agent(client.id), key: "k1", requestHash: hash, now: Self.t0, lifetime: 86400, wait: 1,
                        on: connection) == .acquired)
            }
            // After 24 hours the key is new again.
            try connection.withTransaction { _ throws in #expect(try lock(Self.t0.addingTimeInterval(86401)) == .acquired) }
            // lock_timeout is restored after the lock: the rest of the transaction keeps the session's setting.
            try connection.withTransaction { connection throws in
                _ = try lock(Self.t0.addingTimeInterval(2 * 86401))
                #expect(try connection.query("SELECT current_setting('lock_timeout') AS t")[0].decode("t", as: String.self) == "0")
            }
        }
    }

    @Test func agentEmailsAreUniqueRegardlessOfCaseAndTOTPStepsAreUsedOnce() throws {
        try withDatabase { connection throws in
            func agent(_ email: String) -> AgentRecord {
                AgentRecord(
                    id: UUID(), email: email, name: "A", tier: .tier1, isAdmin: false, disabled: false, passwordHash: "$argon2id$x",
                    sealedTOTPSecret: [1], totpKeyID: "t", totpLastStep: nil)
            }
            let first = agent("Ann@Example.test")
            try AgentStore.insert(first, now: Self.t0, on: connection)
            #expect(throws: PostgresError.self) { try AgentStore.insert(agent("ann@example.TEST"), now: Self.t0, on: connection) }
            #expect(try AgentStore.find(email: "ANN@EXAMPLE.TEST", on: connection)?.id == first.id)
            #expect(try AgentStore.consumeTOTPStep(agentID: first.id, step: 100, on: connection))
            #expect(try AgentStore.consumeTOTPStep(agentID: first.id, step: 100, on: connection) == false)
            #expect(try AgentStore.consumeTOTPStep(agentID: first.id, step: 99, on: connection) == false)
            #expect(try AgentStore.consumeTOTPStep(agentID: first.id, step: 101, on: connection))
        }
    }

    @Test func sessionsResolveWithinBothTimeoutsOnly() throws {
        try withDatabase { connection throws in
            let agent = AgentRecord(
                id: UUID(), email: "s@x.test", name: "S", tier: .tier2, isAdmin: true, disabled: false, passwordHash: "h",
                sealedTOTPSecret: [1], totpKeyID: "t", totpLastStep: nil)
            try AgentStore.insert(agent, now: Self.t0, on: connection)
            let token = Array(repeating: UInt8(3), count: 32)
            let session = UUID()
            try SessionStore.insert(
                id: session, tokenHash: token, agentID: agent.id, now: Self.t0, expiresAt: Self.t0.addingTimeInterval(43200), on: connection)
            #expect(
                try SessionStore.find(tokenHash: token, now: Self.t0.addingTimeInterval(1799), idleTimeout: 1800, on: connection)?.agentTier == .tier2
            )
            #expect(try SessionStore.find(tokenHash: token, now: Self.t0.addingTimeInterval(1801), idleTimeout: 1800, on: connection) == nil)
            try SessionStore.touch(id: session, now: Self.t0.addingTimeInterval(43000), on: connection)
            #expect(try SessionStore.find(tokenHash: token, now: Self.t0.addingTimeInterval(43100), idleTimeout: 1800, on: connection) != nil)
            #expect(try SessionStore.find(tokenHash: token, now: Self.t0.addingTimeInterval(43201), idleTimeout: 1800, on: connection) == nil)
            try AgentStore.disable(agentID: agent.id, now: Self.t0, on: connection)
            #expect(try SessionStore.find(tokenHash: token, now: Self.t0.addingTimeInterval(43100), idleTimeout: 1800, on: connection) == nil)
        }
    }
}
