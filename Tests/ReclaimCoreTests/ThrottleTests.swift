import Foundation
import Testing

@testable import ReclaimCore

/// The one window-and-lock rule behind sign-in, the status look-up and answer checks.
@Suite struct ThrottleTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let windowed = ThrottleRule(limit: 3, window: 600, lockout: 900)
    static let consecutive = ThrottleRule(limit: 3, window: nil, lockout: 900)

    /// Failures at these offsets from t0, from a clear state.
    func failing(_ offsets: [TimeInterval], rule: ThrottleRule = windowed, from state: ThrottleState = .clear) -> ThrottleState {
        offsets.reduce(state) { $0.recordingFailure(at: Self.t0.addingTimeInterval($1), rule: rule) }
    }

    @Test func aClearKeyIsNotLockedAndItsFirstFailureStartsACount() {
        #expect(ThrottleState.clear.lockedUntil(at: Self.t0) == nil)
        let first = failing([5])
        #expect(first == ThrottleState(failures: 1, windowStartedAt: Self.t0.addingTimeInterval(5), lockedUntil: nil))
        #expect(first.lockedUntil(at: Self.t0.addingTimeInterval(5)) == nil)
    }

    @Test func theFailureThatReachesTheLimitLocksForTheLockoutFromItself() {
        let below = failing([0, 10])
        #expect(below.failures == 2 && below.lockedUntil == nil)
        let locked = failing([0, 10, 20])
        let until = Self.t0.addingTimeInterval(20 + 900)
        #expect(locked.lockedUntil(at: Self.t0.addingTimeInterval(20)) == until)
        #expect(locked.lockedUntil(at: until.addingTimeInterval(-0.001)) == until)
        // The lock ends at `until`: not locked at that instant or after.
        #expect(locked.lockedUntil(at: until) == nil)
        #expect(locked.lockedUntil(at: until.addingTimeInterval(1)) == nil)
        // A limit of 1 locks on the first failure.
        let strict = failing([0], rule: ThrottleRule(limit: 1, window: 60, lockout: 30))
        #expect(strict.lockedUntil(at: Self.t0) == Self.t0.addingTimeInterval(30))
    }

    @Test func failuresOutsideTheWindowStartAFreshCount() {
        // The window is measured from the count's first failure; at exactly `window` it has passed.
        let fresh = failing([0, 10, 600])
        #expect(fresh == ThrottleState(failures: 1, windowStartedAt: Self.t0.addingTimeInterval(600), lockedUntil: nil))
        let inside = failing([0, 10, 599.999])
        #expect(inside.lockedUntil != nil)
        // A fresh count needs the full limit again.
        let again = failing([0, 10, 700, 710])
        #expect(again.failures == 2 && again.lockedUntil == nil)
        #expect(failing([0, 10, 700, 710, 720]).lockedUntil == Self.t0.addingTimeInterval(720 + 900))
    }

    @Test func failuresWhileLockedNeitherCountNorExtendTheLock() {
        let locked = failing([0, 10, 20])
        let during = failing([30, 400, 900, 919], from: locked)
        #expect(during == locked)
        #expect(during.lockedUntil(at: Self.t0.addingTimeInterval(919)) == Self.t0.addingTimeInterval(920))
        // Many failures at once while locked: still the same lock.
        #expect(locked.recordingFailures(50, at: Self.t0.addingTimeInterval(100), rule: Self.windowed) == locked)
    }

    @Test func anExpiredLockStartsAfresh() {
        let locked = failing([0, 10, 20])
        let after = failing([920], from: locked)
        #expect(after == ThrottleState(failures: 1, windowStartedAt: Self.t0.addingTimeInterval(920), lockedUntil: nil))
        #expect(after.lockedUntil(at: Self.t0.addingTimeInterval(920)) == nil)
        // Even inside what would have been the old count's window, and even without a window.
        let consecutive = failing([0, 1, 2], rule: Self.consecutive)
        let afterConsecutive = failing([902], rule: Self.consecutive, from: consecutive)
        #expect(afterConsecutive.failures == 1 && afterConsecutive.lockedUntil == nil)
        // Then the full limit locks again.
        #expect(failing([902, 903, 904], rule: Self.consecutive, from: consecutive).lockedUntil == Self.t0.addingTimeInterval(904 + 900))
    }

    @Test func withoutAWindowFailuresCountUntilASuccessResets() {
        // Days apart still count: consecutive failures, as for a sign-in account.
        let day: TimeInterval = 86_400
        let two = failing([0, 30 * day], rule: Self.consecutive)
        #expect(two.failures == 2 && two.lockedUntil == nil)
        #expect(failing([0, 30 * day, 60 * day], rule: Self.consecutive).lockedUntil == Self.t0.addingTimeInterval(60 * day + 900))
        // A success is `.clear` (the store deletes the row): counting starts at zero.
        #expect(failing([60 * day, 61 * day], rule: Self.consecutive, from: .clear).lockedUntil == nil)
    }

    @Test func severalFailuresAtOnceCountOneEach() {
        let now = Self.t0
        #expect(ThrottleState.clear.recordingFailures(2, at: now, rule: Self.windowed).failures == 2)
        #expect(ThrottleState.clear.recordingFailures(0, at: now, rule: Self.windowed) == .clear)
        #expect(ThrottleState.clear.recordingFailures(-1, at: now, rule: Self.windowed) == .clear)
        // Past the limit: the lock is taken once, at the limit, and the extra ones do not count.
        let many = ThrottleState.clear.recordingFailures(7, at: now, rule: Self.windowed)
        #expect(many == ThrottleState(failures: 3, windowStartedAt: now, lockedUntil: now.addingTimeInterval(900)))
    }

    @Test func aClockThatGoesBackDoesNotEndACount() {
        // A failure stamped before the count began (another instance's clock) stays in the count.
        let state = failing([100, 50, 60])
        #expect(state.lockedUntil == Self.t0.addingTimeInterval(60 + 900))
    }

    @Test func theStatusAndSignInRulesKeepTheirNumbers() {
        // Status look-up: 9 failures on a case number in 8 h lock it for 8 h.
        let hour: TimeInterval = 3600
        let caseRule = ThrottleRule(limit: 9, window: 8 * hour, lockout: 8 * hour)
        let eight = failing((0..<8).map { Double($0) * hour }, rule: caseRule)
        #expect(eight.lockedUntil == nil)
        // The ninth just before the window ends locks; just after it, the count has started again.
        #expect(failing([8 * hour - 1], rule: caseRule, from: eight).lockedUntil == Self.t0.addingTimeInterval(16 * hour - 1))
        #expect(failing([8 * hour], rule: caseRule, from: eight).failures == 1)
    }

    // MARK: Claims: counted before they are decided, settled after

    @Test func aClaimIsRefusedWhileLockedAndCountsLikeFailures() throws {
        let locked = failing([0, 10, 20])
        #expect(locked.claiming(1, at: Self.t0.addingTimeInterval(30), rule: Self.windowed) == nil)
        let claim = try #require(failing([0]).claiming(1, at: Self.t0.addingTimeInterval(5), rule: Self.windowed))
        #expect(claim.after == failing([0, 5]))
        #expect(claim.before == failing([0]) && claim.count == 1)
        // The claim that reaches the limit is admitted and locks: the next is not.
        let reaching = try #require(claim.after.claiming(1, at: Self.t0.addingTimeInterval(6), rule: Self.windowed))
        #expect(reaching.after.lockedUntil == Self.t0.addingTimeInterval(6 + 900))
        #expect(reaching.after.claiming(1, at: Self.t0.addingTimeInterval(7), rule: Self.windowed) == nil)
    }

    @Test func settlingGivesBackWhatWasNoFailureAndLiftsALockItNoLongerReaches() throws {
        let now = Self.t0.addingTimeInterval(6)
        let claim = try #require(failing([0, 5]).claiming(1, at: now, rule: Self.windowed))
        #expect(claim.after.lockedUntil(at: now) != nil)
        // A right answer: back to the two failures before, unlocked.
        let right = claim.after.settling(claim, failures: 0, now: now, rule: Self.windowed)
        #expect(right == ThrottleState(failures: 2, windowStartedAt: Self.t0, lockedUntil: nil))
        // A wrong one: as claimed.
        #expect(claim.after.settling(claim, failures: 1, now: now, rule: Self.windowed) == claim.after)
        // Seven claimed on a clear key count three (the lock takes no more); two wrong leave two, unlocked; five leave the lock.
        let many = try #require(ThrottleState.clear.claiming(7, at: now, rule: Self.windowed))
        #expect(many.after.failures == 3)
        #expect(
            many.after.settling(many, failures: 2, now: now, rule: Self.windowed)
                == ThrottleState(failures: 2, windowStartedAt: now, lockedUntil: nil))
        #expect(many.after.settling(many, failures: 5, now: now, rule: Self.windowed) == many.after)
        #expect(many.after.settling(many, failures: 0, now: now, rule: Self.windowed).failures == 0)
    }

    @Test func concurrentClaimsSettleInAnyOrder() throws {
        let now = Self.t0.addingTimeInterval(10)
        // A and B claim one each on one failure; B's reaches the limit.
        let a = try #require(failing([0]).claiming(1, at: now, rule: Self.windowed))
        let b = try #require(a.after.claiming(1, at: now, rule: Self.windowed))
        #expect(b.after.lockedUntil(at: now) != nil)
        // A was right, B wrong: two failures, so the lock B reached no longer stands, in either order.
        let aFirst = b.after.settling(a, failures: 0, now: now, rule: Self.windowed).settling(b, failures: 1, now: now, rule: Self.windowed)
        let bFirst = b.after.settling(b, failures: 1, now: now, rule: Self.windowed).settling(a, failures: 0, now: now, rule: Self.windowed)
        #expect(aFirst == bFirst)
        #expect(aFirst == ThrottleState(failures: 2, windowStartedAt: Self.t0, lockedUntil: nil))
    }

    @Test func aCountBegunSinceIsNotTheClaims() throws {
        let claim = try #require(failing([0, 10]).claiming(1, at: Self.t0.addingTimeInterval(20), rule: Self.windowed))
        // The lock expired and a new count began before the claim was settled: that count is left alone.
        let later = failing([20 + 900 + 1], from: claim.after)
        #expect(later.failures == 1)
        #expect(later.settling(claim, failures: 0, now: Self.t0.addingTimeInterval(20 + 902), rule: Self.windowed) == later)
        // A claim that itself began a fresh count (after an expired lock) gives all of it back.
        let fresh = try #require(claim.after.claiming(1, at: Self.t0.addingTimeInterval(2000), rule: Self.windowed))
        #expect(fresh.after.failures == 1)
        #expect(fresh.after.settling(fresh, failures: 0, now: Self.t0.addingTimeInterval(2000), rule: Self.windowed).failures == 0)
    }
}
