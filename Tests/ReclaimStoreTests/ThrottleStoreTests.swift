import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimStore

/// The `throttles` table: stores what `ThrottleState` decides, for sign-in, status look-ups and answers alike.
@Suite struct ThrottleStoreTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func withDatabase(_ body: (TestDatabase, PostgresConnection) throws -> Void) throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        try body(database, connection)
    }

    @Test func limitLocksWindowForgetsAndLocksDoNotExtend() throws {
        try withDatabase { _, connection throws in
            let start = Self.t0
            let hour: TimeInterval = 3600
            let rule = ThrottleRule(limit: 3, window: hour, lockout: 2 * hour)
            func fail(_ key: String, at time: Date) throws { try ThrottleStore.recordFailure(key: key, rule: rule, now: time, on: connection) }
            func locked(_ key: String, at time: Date) throws -> Date? {
                try ThrottleStore.lockedUntil(keys: [key, "other"], now: time, on: connection)
            }

            // Two failures, then the window passes: the count starts again.
            try fail("a", at: start)
            try fail("a", at: start.addingTimeInterval(60))
            try fail("a", at: start.addingTimeInterval(hour + 1))
            #expect(try locked("a", at: start.addingTimeInterval(hour + 2)) == nil)
            // Three within the window lock for two hours from the third.
            try fail("a", at: start.addingTimeInterval(hour + 10))
            let third = start.addingTimeInterval(hour + 20)
            try fail("a", at: third)
            #expect(try locked("a", at: third.addingTimeInterval(1)) == third.addingTimeInterval(2 * hour))
            // Failing while locked does not extend the lock.
            try fail("a", at: third.addingTimeInterval(30 * 60))
            #expect(try locked("a", at: third.addingTimeInterval(31 * 60)) == third.addingTimeInterval(2 * hour))
            // After the lock, one failure does not lock again at once.
            let after = third.addingTimeInterval(2 * hour + 1)
            #expect(try locked("a", at: after) == nil)
            try fail("a", at: after)
            #expect(try locked("a", at: after.addingTimeInterval(1)) == nil)
            // Keys are independent.
            #expect(try locked("b", at: third.addingTimeInterval(1)) == nil)
            #expect(try ThrottleStore.state(key: "b", on: connection) == .clear)
        }
    }

    @Test func consecutiveSignInFailuresLockAtTheLimitAndStartAfresh() throws {
        try withDatabase { _, connection throws in
            let rule = ThrottleRule(limit: 3, window: nil, lockout: 900)
            let key = ThrottleStore.signInAccountKey(email: "A@Example.test")
            #expect(key == ThrottleStore.signInAccountKey(email: "a@example.test") && key.hasPrefix("account:") && !key.contains("@"))
            for attempt in 1...3 {
                let now = Self.t0.addingTimeInterval(Double(attempt) * 3600)
                let state = try ThrottleStore.recordFailure(key: key, rule: rule, now: now, on: connection)
                // Consecutive: hours apart still count.
                #expect((state.lockedUntil(at: now) != nil) == (attempt == 3))
            }
            let lockedAt = Self.t0.addingTimeInterval(3 * 3600)
            #expect(
                try ThrottleStore.lockedUntil(keys: [key], now: lockedAt.addingTimeInterval(899), on: connection) == lockedAt.addingTimeInterval(900))
            #expect(try ThrottleStore.lockedUntil(keys: [key], now: lockedAt.addingTimeInterval(901), on: connection) == nil)
            // After the lock the count starts again; a success (reset) forgets it.
            let after = lockedAt.addingTimeInterval(901)
            #expect(try ThrottleStore.recordFailure(key: key, rule: rule, now: after, on: connection).failures == 1)
            #expect(try ThrottleStore.recordFailure(key: key, rule: rule, now: after, on: connection).failures == 2)
            try ThrottleStore.reset(key: key, on: connection)
            #expect(try ThrottleStore.state(key: key, on: connection) == .clear)
            #expect(try ThrottleStore.recordFailure(key: key, rule: rule, now: after, on: connection).lockedUntil(at: after) == nil)
            #expect(try ThrottleStore.recordFailure(key: key, rule: rule, now: after, on: connection).lockedUntil(at: after) == nil)
        }
    }

    @Test func windowedFailuresForgetOldOnes() throws {
        try withDatabase { _, connection throws in
            let key = ThrottleStore.signInAddressKey("203.0.113.9")
            let rule = ThrottleRule(limit: 3, window: 600, lockout: 900)
            func fail(_ at: Date) throws -> Date? {
                try ThrottleStore.recordFailure(key: key, rule: rule, now: at, on: connection).lockedUntil(at: at)
            }
            #expect(try fail(Self.t0) == nil)
            #expect(try fail(Self.t0.addingTimeInterval(10)) == nil)
            // The window passed: this one starts a new count of 1.
            let later = Self.t0.addingTimeInterval(700)
            #expect(try fail(later) == nil)
            #expect(try fail(later) == nil)
            #expect(try fail(later) == later.addingTimeInterval(900))
            #expect(try ThrottleStore.lockedUntil(keys: ["account:x", key], now: later, on: connection) == later.addingTimeInterval(900))
            #expect(try ThrottleStore.lockedUntil(keys: [], now: later, on: connection) == nil)
        }
    }

    @Test func answersAreClaimedCountOneEachAndStatusKeysAreTheirOwn() throws {
        try withDatabase { _, connection throws in
            let policy = StatusThrottlePolicy.default
            let key = ThrottleStore.accountKey("owner@example.test")
            func claim(_ count: Int, _ email: String = "owner@example.test") throws -> ThrottleClaim? {
                guard case .admitted(let claim) = try ThrottleStore.claimAnswers(email: email, count: count, now: Self.t0, on: connection) else {
                    return nil
                }
                return claim
            }
            // Eight claimed and all wrong: not locked yet.
            let eight = try #require(try claim(8, "Owner@Example.test"))
            try ThrottleStore.settleAnswers(email: "owner@example.test", claim: eight, wrong: 8, now: Self.t0, on: connection)
            #expect(try ThrottleStore.lockedUntil(keys: [key], now: Self.t0, on: connection) == nil)
            // The ninth claim locks while it is checked; a right answer gives it back and lifts the lock.
            let ninth = try #require(try claim(1))
            #expect(try ThrottleStore.lockedUntil(keys: [key], now: Self.t0, on: connection) == Self.t0.addingTimeInterval(policy.caseLockout))
            #expect(
                try ThrottleStore.claimAnswers(email: "owner@example.test", count: 1, now: Self.t0, on: connection)
                    == .locked(until: Self.t0.addingTimeInterval(policy.caseLockout)))
            try ThrottleStore.settleAnswers(email: "owner@example.test", claim: ninth, wrong: 0, now: Self.t0, on: connection)
            #expect(try ThrottleStore.lockedUntil(keys: [key], now: Self.t0, on: connection) == nil)
            #expect(try ThrottleStore.state(key: key, on: connection).failures == 8)
            // A wrong one stays counted and the lock with it.
            let wrong = try #require(try claim(1))
            try ThrottleStore.settleAnswers(email: "owner@example.test", claim: wrong, wrong: 1, now: Self.t0, on: connection)
            #expect(try ThrottleStore.lockedUntil(keys: [key], now: Self.t0, on: connection) == Self.t0.addingTimeInterval(policy.caseLockout))
            // The answer key is not the sign-in key of the same email, nor a status key.
            #expect(
                try ThrottleStore.lockedUntil(keys: [ThrottleStore.signInAccountKey(email: "owner@example.test")], now: Self.t0, on: connection)
                    == nil)
            try ThrottleStore.recordFailure(caseNumber: "123456789012", address: "198.51.100.1", policy: policy, now: Self.t0, on: connection)
            #expect(try ThrottleStore.state(key: ThrottleStore.caseKey("123456789012"), on: connection).failures == 1)
            #expect(try ThrottleStore.state(key: ThrottleStore.addressKey("198.51.100.1"), on: connection).failures == 1)
            #expect(try ThrottleStore.state(key: ThrottleStore.signInAddressKey("198.51.100.1"), on: connection) == .clear)
        }
    }

    @Test func aClaimOnANewKeySettlesAtAnyInstant() throws {
        try withDatabase { _, connection throws in
            // A clock finer than the column's microseconds: the claim's dates must still match the row's.
            let now = Self.t0.addingTimeInterval(0.123_456_789)
            let rule = StatusThrottlePolicy.default.caseRule
            guard case .admitted(let right) = try ThrottleStore.claim(key: "k", rule: rule, now: now, on: connection) else {
                Issue.record("locked")
                return
            }
            try ThrottleStore.settle(key: "k", claim: right, failures: 0, rule: rule, now: now, on: connection)
            #expect(try ThrottleStore.state(key: "k", on: connection).failures == 0)
            guard case .admitted(let wrong) = try ThrottleStore.claim(key: "k", rule: rule, count: 2, now: now, on: connection) else {
                Issue.record("locked")
                return
            }
            try ThrottleStore.settle(key: "k", claim: wrong, failures: 1, rule: rule, now: now, on: connection)
            #expect(try ThrottleStore.state(key: "k", on: connection).failures == 1)
        }
    }

    /// The race of issue 25: checks read the lock, then hashed, then counted, so concurrent wrong answers all started
    /// under the limit. A claim checks and counts in one step: of 30 concurrent claims on a new key, exactly 9 pass.
    @Test func ofThirtyConcurrentClaimsExactlyTheBudgetIsAdmitted() throws {
        try withDatabase { database, connection throws in
            let rule = StatusThrottlePolicy.default.caseRule
            let admitted = Mutex(0)
            let locked = Mutex(0)
            let errors = Mutex<[String]>([])
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<30 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    do {
                        let other = try database.connect()
                        defer { other.close() }
                        start.wait()
                        switch try ThrottleStore.claim(key: "account:race@example.test", rule: rule, now: Self.t0, on: other) {
                        case .admitted: admitted.withLock { $0 += 1 }
                        case .locked: locked.withLock { $0 += 1 }
                        }
                    } catch {
                        errors.withLock { $0.append("\(error)") }
                    }
                }.start()
            }
            for _ in 0..<30 { start.signal() }
            group.wait()
            #expect(errors.withLock { $0 } == [])
            #expect(admitted.withLock { $0 } == rule.limit)
            #expect(locked.withLock { $0 } == 30 - rule.limit)
            #expect(try ThrottleStore.state(key: "account:race@example.test", on: connection).failures == rule.limit)
        }
    }

    @Test func concurrentFailuresFromTwoConnectionsAllCount() throws {
        try withDatabase { database, connection throws in
            let rule = ThrottleRule(limit: 1000, window: 3600, lockout: 60)
            let perThread = 25
            for key in ["new-key", "existing-key"] {
                if key == "existing-key" { try ThrottleStore.recordFailure(key: key, rule: rule, now: Self.t0, on: connection) }
                let before = try ThrottleStore.state(key: key, on: connection).failures
                let errors = Mutex<[String]>([])
                let group = DispatchGroup()
                for _ in 0..<2 {
                    group.enter()
                    Thread {
                        defer { group.leave() }
                        do {
                            let other = try database.connect()
                            defer { other.close() }
                            for _ in 0..<perThread {
                                try other.withTransaction { transaction in
                                    try ThrottleStore.recordFailure(key: key, rule: rule, now: Self.t0.addingTimeInterval(1), on: transaction)
                                    // Hold the row lock a moment so the other connection must wait for it.
                                    _ = try transaction.query("SELECT pg_sleep(0.001)")
                                }
                            }
                        } catch {
                            errors.withLock { $0.append("\(error)") }
                        }
                    }.start()
                }
                group.wait()
                #expect(errors.withLock { $0 } == [])
                #expect(try ThrottleStore.state(key: key, on: connection).failures == before + 2 * perThread)
            }
        }
    }

    @Test func concurrentFirstFailuresOnANewKeyBothCount() throws {
        try withDatabase { database, _ throws in
            let rule = ThrottleRule(limit: 2, window: 3600, lockout: 60)
            let inserted = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let finished = DispatchGroup()
            let results = Mutex<[String: ThrottleState]>([:])
            // A counts the first failure of a new key and keeps its transaction open; B's insert waits, then finds A's row.
            finished.enter()
            Thread {
                defer { finished.leave() }
                guard let a = try? database.connect() else {
                    inserted.signal()
                    return
                }
                defer { a.close() }
                let state = try? a.withTransaction { connection -> ThrottleState in
                    let state = try ThrottleStore.recordFailure(key: "k", rule: rule, now: Self.t0, on: connection)
                    inserted.signal()
                    release.wait()
                    return state
                }
                results.withLock { $0["a"] = state }
            }.start()
            inserted.wait()
            finished.enter()
            Thread {
                defer { finished.leave() }
                guard let b = try? database.connect() else { return }
                defer { b.close() }
                let state = try? ThrottleStore.recordFailure(key: "k", rule: rule, now: Self.t0, on: b)
                results.withLock { $0["b"] = state }
            }.start()
            // B waits on A's uncommitted row: PostgreSQL shows its backend waiting for a lock.
            let observer = try database.connect()
            defer { observer.close() }
            #expect(
                try eventually(10) {
                    try observer.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").count == 1
                })
            #expect(results.withLock { $0["b"] } == nil)
            release.signal()
            finished.wait()
            #expect(results.withLock { $0["a"] }?.failures == 1)
            let second = try #require(results.withLock { $0["b"] })
            #expect(second.failures == 2 && second.lockedUntil(at: Self.t0) == Self.t0.addingTimeInterval(60))
        }
    }

    @Test func purgeDropsOnlySpentRows() throws {
        try withDatabase { _, connection throws in
            let rule = ThrottleRule(limit: 2, window: 600, lockout: 3 * 86_400)
            try ThrottleStore.recordFailure(key: "old", rule: rule, now: Self.t0, on: connection)
            try ThrottleStore.recordFailure(key: "locked", rule: rule, count: 2, now: Self.t0, on: connection)
            try ThrottleStore.recordFailure(key: "recent", rule: rule, now: Self.t0.addingTimeInterval(2 * 86_400), on: connection)
            let now = Self.t0.addingTimeInterval(2 * 86_400 + 60)
            #expect(try ThrottleStore.purge(before: now.addingTimeInterval(-86_400), now: now, on: connection) == 1)
            #expect(try ThrottleStore.state(key: "old", on: connection) == .clear)
            #expect(try ThrottleStore.state(key: "locked", on: connection).lockedUntil(at: now) != nil)
            #expect(try ThrottleStore.state(key: "recent", on: connection).failures == 1)
        }
    }

    @Test func theMigrationCarriesBothOldTablesOver() throws {
        let database = try TestDatabase.createEmpty()
        defer { database.drop() }
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        let all = try Migrator.load(directory: TestDatabase.migrationsDirectory)
        try Migrator(migrations: all.filter { $0.version <= 4 }).migrate(connection, logger: .discard)
        let until = Self.t0.addingTimeInterval(900)
        try connection.execute(
            "INSERT INTO login_throttles VALUES ('address:192.0.2.1', 0, \(Self.t0), \(until)), ('account:abc', 2, \(Self.t0), NULL)")
        try connection.execute(
            "INSERT INTO status_throttle VALUES ('case:123456789012', 9, \(Self.t0), \(until)), ('addr:192.0.2.1', 4, \(Self.t0), NULL)")
        try Migrator(migrations: all).migrate(connection, logger: .discard)
        #expect(try ThrottleStore.lockedUntil(keys: ["address:192.0.2.1"], now: Self.t0, on: connection) == until)
        #expect(try ThrottleStore.lockedUntil(keys: ["case:123456789012"], now: Self.t0, on: connection) == until)
        #expect(try ThrottleStore.state(key: "account:abc", on: connection).failures == 2)
        #expect(try ThrottleStore.state(key: "addr:192.0.2.1", on: connection).failures == 4)
        #expect(
            try connection.query("SELECT to_regclass('login_throttles') IS NULL AND to_regclass('status_throttle') IS NULL AS gone")
                .first?.decode("gone", as: Bool.self) == true)
    }
}
