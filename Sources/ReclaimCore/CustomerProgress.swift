/// One stage of the status page's progress line.
public struct ProgressStage: Sendable, Hashable {
    /// Where the case is relative to this stage.
    public enum Mark: String, Sendable {
        case done, current, upcoming
    }

    /// A stable word: received, identity_check, documents, review, restoring, finished.
    public let key: String
    /// The stage in plain words for the customer.
    public let label: String
    public let mark: Mark
}

/// The stages a case on `path` goes through, in order, each marked done, current or upcoming for `state`.
///
/// A line, not a map: the path decides which stages are drawn (the reset path skips engineering, the document
/// paths add documents and review, the activation-lock path skips the identity check), and the state decides how
/// far along it is. The last stage is named for how the case ended once it has (resolved, not confirmed, closed);
/// rejected and closed lines leave out the restoring stage.
public func customerProgress(state: CaseState, path: RecoveryPath) -> [ProgressStage] {
    // The stages in the order every path shares; each path draws a subset.
    let received = "received", identity = "identity_check", documents = "documents", review = "review",
        restoring = "restoring", finished = "finished"
    let order = [received, identity, documents, review, restoring, finished]
    var keys: [String]
    switch path {
    case .undetermined, .verifiedIdentity: keys = [received, identity, restoring, finished]
    case .reset: keys = [received, identity, finished]
    case .documents: keys = [received, identity, documents, review, restoring, finished]
    case .activationLock: keys = [received, documents, review, restoring, finished]
    }
    // A refused case never reached restoring, and a closed one may have been refused before it was closed:
    // neither line may claim that access was restored.
    if state == .rejected || state == .closed { keys.removeAll { $0 == restoring } }
    let reached: String = switch state {
    case .new: received
    case .identityCheck: identity
    case .awaitingDocuments: documents
    case .documentReview: review
    case .engineering: restoring
    case .resolved, .rejected, .closed, .merged: finished
    }
    // The current stage is the last drawn one not after the state's own (an activation-lock case escalated to the
    // identity check is still shown as received).
    let reachedIndex = order.firstIndex(of: reached)!
    let current = keys.lastIndex { order.firstIndex(of: $0)! <= reachedIndex } ?? 0
    let finishedLabel = switch state {
    case .rejected: "Not confirmed"
    case .closed: "Closed"
    case .merged: "Joined with another case"
    default: path == .reset ? "Reset link sent" : "Resolved"
    }
    let labels = [received: "Received", identity: "Identity check", documents: "Your documents", review: "Review",
                  restoring: path == .activationLock ? "Removing the lock" : "Restoring access", finished: finishedLabel]
    let ended = !state.isOpen
    return keys.enumerated().map { index, key in
        let mark: ProgressStage.Mark = (index < current || (ended && index == current)) ? .done : index == current ? .current : .upcoming
        return ProgressStage(key: key, label: labels[key]!, mark: mark)
    }
}
