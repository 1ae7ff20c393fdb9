import Foundation
import Testing

@testable import ReclaimCore

/// Drives a case through the workflow, checking due dates on the way.
private struct Journey {
    let workflow: Workflow
    var snapshot: CaseSnapshot
    var now: Date

    init(kind: CaseKind = .accountTakeover, facts: CaseFacts = CaseFacts(), at start: Date, sla: SLAPolicy = .default) {
        workflow = Workflow(sla: sla)
        snapshot = workflow.opening(kind: kind, facts: facts, at: start)
        now = start
    }

    var dueAt: Date? { workflow.dueAt(snapshot) }

    mutating func wait(_ seconds: TimeInterval) { now = now.addingTimeInterval(seconds) }

    mutating func take(_ action: CaseAction, after seconds: TimeInterval = 0, unlock: UnlockKind = .removeRescueEmail) throws {
        wait(seconds)
        var context = permissiveContext
        context.unlock = unlock
        let decision = try workflow.decide(action, on: snapshot, actorTier: .engineering, context: context, now: now).get()
        #expect(decision.dueAt == workflow.dueAt(decision.after))
        #expect(workflow.sla.clock(after: decision) == decision.after.clock)
        snapshot = decision.after
    }
}

@Suite struct SLATests {
    let t0 = utc(2026, 3, 1, 9)

    @Test func defaultsAreAPIs() {
        let sla = SLAPolicy.default
        #expect(
            [sla.newCase, sla.identityCheck, sla.engineeringAfterVerify, sla.documentsPath, sla.activationLockPath, sla.hardLimit].map { $0 / day }
                == [1, 2, 10, 15, 20, 90])
    }

    @Test func resetPath() throws {
        var j = Journey(at: t0)
        #expect(j.dueAt == t0.addingTimeInterval(1 * day))
        try j.take(.escalate, after: 3 * hour)
        #expect(j.dueAt == j.now.addingTimeInterval(2 * day))
        try j.take(.sendReset, after: hour)
        #expect(j.snapshot.path == .reset && j.dueAt == nil)
        try j.take(.close, after: day)
        #expect(j.dueAt == nil)
    }

    @Test func verifiedIdentityPathGivesEngineeringTenDaysFromVerify() throws {
        var j = Journey(at: t0)
        try j.take(.escalate, after: hour)
        try j.take(.verify, after: day)
        let verifiedAt = j.now
        #expect(j.dueAt == verifiedAt.addingTimeInterval(10 * day))
        j.wait(10 * day)
        #expect(!j.workflow.isOverdue(j.snapshot, now: j.now))
        #expect(j.workflow.isOverdue(j.snapshot, now: j.now.addingTimeInterval(1)))
        try j.take(.complete, after: 1)
        #expect(j.dueAt == nil && !j.workflow.isOverdue(j.snapshot, now: j.now.addingTimeInterval(100 * day)))
    }

    @Test func documentsPathPausesWhileAwaitingTheCustomer() throws {
        var j = Journey(at: t0)
        try j.take(.escalate, after: hour)
        try j.take(.requestDocuments, after: day)
        let requestedAt = j.now
        #expect(j.dueAt == nil)
        #expect(j.snapshot.clock.pausedSince == requestedAt && j.snapshot.clock.pathClockStartedAt == requestedAt)
        j.wait(40 * day)
        #expect(!j.workflow.isOverdue(j.snapshot, now: j.now), "no due date while it is the customer's turn")
        try j.take(.beginReview, after: 0)
        #expect(j.snapshot.clock.pausedSince == nil && j.snapshot.clock.pausedSeconds == 40 * day)
        let expected = requestedAt.addingTimeInterval(15 * day + 40 * day)
        #expect(j.dueAt == expected)
        // The path clock keeps running through approval into engineering.
        try j.take(.approve, after: 2 * day)
        #expect(j.dueAt == expected)
        try j.take(.complete, after: day)
        #expect(j.dueAt == nil)
    }

    @Test func activationLockPathHasTwentyDays() throws {
        var j = Journey(kind: .activationLock, at: t0)
        #expect(j.dueAt == t0.addingTimeInterval(day))
        try j.take(.requestDocuments, after: 2 * hour)
        let requestedAt = j.now
        try j.take(.beginReview, after: 3 * day)
        #expect(j.dueAt == requestedAt.addingTimeInterval(20 * day + 3 * day))
        try j.take(.approve, after: 5 * day)
        #expect(j.dueAt == requestedAt.addingTimeInterval(23 * day))
        #expect(!j.workflow.isOverdue(j.snapshot, now: requestedAt.addingTimeInterval(23 * day)))
        #expect(j.workflow.isOverdue(j.snapshot, now: requestedAt.addingTimeInterval(23 * day + 1)))
        try j.take(.complete, after: day, unlock: .removeActivationLock)
        #expect(j.snapshot.state == .resolved && j.dueAt == nil)
    }

    @Test func twoStepAccountCasesRunOnTheActivationLockClock() throws {
        var j = Journey(facts: CaseFacts(twoStepEnabled: true), at: t0)
        try j.take(.escalate)
        try j.take(.requestDocuments, after: hour)
        let requestedAt = j.now
        try j.take(.beginReview)
        #expect(j.snapshot.path == .activationLock && j.dueAt == requestedAt.addingTimeInterval(20 * day))
    }

    @Test func ninetyDaysFromOpeningIsTheHardLimit() throws {
        var j = Journey(kind: .activationLock, at: t0)
        try j.take(.requestDocuments, after: day)
        try j.take(.beginReview, after: 80 * day)
        // 1 + 20 + 80 days would be 101 days after opening: capped at 90.
        #expect(j.dueAt == t0.addingTimeInterval(90 * day))
        try j.take(.approve, after: 2 * day)
        #expect(j.dueAt == t0.addingTimeInterval(90 * day))
        #expect(j.workflow.isOverdue(j.snapshot, now: t0.addingTimeInterval(90 * day + 1)))
    }

    @Test func reopenRestartsThePathClock() throws {
        var j = Journey(at: t0)
        try j.take(.escalate)
        try j.take(.requestDocuments, after: day)
        try j.take(.beginReview, after: 4 * day)
        try j.take(.reject, after: day)
        #expect(j.dueAt == nil)
        try j.take(.reopen, after: 3 * day)
        #expect(j.snapshot.state == .identityCheck && j.snapshot.path == .undetermined)
        #expect(j.snapshot.clock.pathClockStartedAt == nil && j.snapshot.clock.pausedSeconds == 0)
        #expect(j.dueAt == j.now.addingTimeInterval(2 * day))
        try j.take(.requestDocuments, after: hour)
        let secondRequest = j.now
        #expect(j.snapshot.clock.pathClockStartedAt == secondRequest && j.snapshot.clock.pausedSeconds == 0)
        try j.take(.beginReview, after: 2 * day)
        #expect(j.dueAt == secondRequest.addingTimeInterval(15 * day + 2 * day))
    }

    @Test func reopenedPastTheLimitIsOverdueAtOnce() throws {
        var j = Journey(at: t0)
        try j.take(.sendReset)
        try j.take(.reopen, after: 100 * day)
        #expect(j.dueAt == t0.addingTimeInterval(90 * day))
        #expect(j.workflow.isOverdue(j.snapshot, now: j.now))
    }

    @Test func configuredDurationsAreUsed() throws {
        let sla = SLAPolicy(
            newCase: 4 * hour, identityCheck: day, engineeringAfterVerify: 7 * day, documentsPath: 10 * day, activationLockPath: 30 * day,
            hardLimit: 60 * day)
        var j = Journey(at: t0, sla: sla)
        #expect(j.dueAt == t0.addingTimeInterval(4 * hour))
        try j.take(.escalate)
        #expect(j.dueAt == t0.addingTimeInterval(day))
        try j.take(.verify)
        #expect(j.dueAt == t0.addingTimeInterval(7 * day))
        let json = try JSONEncoder().encode(sla)
        #expect(try JSONDecoder().decode(SLAPolicy.self, from: json) == sla)
    }

    @Test func dueAtIsNilWhenPausedOrFinished() {
        let clock = SLAClock(openedAt: t0, stateEnteredAt: t0, pathClockStartedAt: t0, pausedSeconds: 0, pausedSince: t0)
        for state in [CaseState.awaitingDocuments, .resolved, .rejected, .closed] {
            for path in RecoveryPath.allCases {
                #expect(SLAPolicy.default.dueAt(state: state, path: path, clock: clock) == nil)
            }
            #expect(!SLAPolicy.default.isOverdue(dueAt: t0, state: state, now: t0.addingTimeInterval(day)))
        }
        #expect(!SLAPolicy.default.isOverdue(dueAt: nil, state: .new, now: t0))
        #expect(SLAPolicy.default.isOverdue(dueAt: t0, state: .new, now: t0.addingTimeInterval(0.001)))
        #expect(!SLAPolicy.default.isOverdue(dueAt: t0, state: .new, now: t0))
    }

    @Test func clockIsCodableWithSnakeCaseKeys() throws {
        let clock = SLAClock(openedAt: t0, stateEnteredAt: t0, pathClockStartedAt: nil, pausedSeconds: 12.5, pausedSince: nil)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(clock), as: UTF8.self)
        #expect(text == #"{"opened_at":"2026-03-01T09:00:00Z","paused_seconds":12.5,"state_entered_at":"2026-03-01T09:00:00Z"}"#)
    }
}
