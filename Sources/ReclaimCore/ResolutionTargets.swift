import Foundation

/// Supervision (issue 14): how long a case on each path may take, from opening to `resolved`, and still count as
/// resolved within its target. Built from the SLA table, so the report and the due dates cannot disagree: the
/// steps a case on the path goes through, each with its own budget, capped at the hard limit. Time in
/// `awaiting_documents` (the customer's turn, `paused_seconds`) is not counted against us.
extension SLAPolicy {
    /// The target for `path`, in seconds.
    public func resolutionTarget(_ path: RecoveryPath) -> TimeInterval {
        let target: TimeInterval =
            switch path {
            case .undetermined: newCase
            case .reset: newCase + identityCheck
            case .verifiedIdentity: newCase + identityCheck + engineeringAfterVerify
            case .documents: newCase + identityCheck + documentsPath
            case .activationLock: newCase + identityCheck + activationLockPath
            }
        return min(target, hardLimit)
    }

    /// Whether a case resolved `elapsed` seconds after opening, `paused` of them the customer's turn, met its path's target.
    public func resolvedWithinTarget(path: RecoveryPath, elapsed: TimeInterval, paused: TimeInterval) -> Bool {
        elapsed - max(0, paused) <= resolutionTarget(path)
    }
}
