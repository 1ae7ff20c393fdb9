import Foundation
import Postgres
@testable import ReclaimStore
import ReclaimTestSupport
import Testing

/// The failure counter behind the status look-up and answer checks: windows, locks, expiry.
@Suite struct StatusThrottleTests {
    @Test func limitLocksWindowForgetsAndLocksDoNotExtend() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let hour: TimeInterval = 3600
        func fail(_ key: String, at time: Date) throws {
            try StatusThrottle.recordFailure(key: key, limit: 3, window: hour, lockout: 2 * hour, now: time, on: connection)
        }
        func locked(_ key: String, at time: Date) throws -> Date? { try StatusThrottle.lockedUntil(keys: [key, "other"], now: time, on: connection) }

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
    }
}
