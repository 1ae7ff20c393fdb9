import Foundation
import Testing

@testable import ReclaimCore

/// The report's per-path targets follow the SLA table, and the customer's turn is not counted.
@Suite struct ResolutionTargetTests {
    static let day = SLAPolicy.day

    @Test(arguments: [
        (RecoveryPath.undetermined, 1.0), (.reset, 3), (.verifiedIdentity, 13), (.documents, 18), (.activationLock, 23),
    ])
    func targetsAreTheSumOfTheStepsBudgets(path: RecoveryPath, days: Double) {
        #expect(SLAPolicy.default.resolutionTarget(path) == days * Self.day)
    }

    @Test func theHardLimitCapsEveryTarget() {
        let tight = SLAPolicy(hardLimit: 5 * Self.day)
        #expect(tight.resolutionTarget(.activationLock) == 5 * Self.day)
        #expect(tight.resolutionTarget(.reset) == 3 * Self.day)
    }

    @Test func pausesAreNotCountedAndTheTargetItselfIsWithin() {
        let policy = SLAPolicy.default
        #expect(policy.resolvedWithinTarget(path: .reset, elapsed: 3 * Self.day, paused: 0))
        #expect(!policy.resolvedWithinTarget(path: .reset, elapsed: 3 * Self.day + 1, paused: 0))
        #expect(policy.resolvedWithinTarget(path: .documents, elapsed: 25 * Self.day, paused: 7 * Self.day))
        #expect(!policy.resolvedWithinTarget(path: .documents, elapsed: 25 * Self.day, paused: -7 * Self.day))
    }
}
