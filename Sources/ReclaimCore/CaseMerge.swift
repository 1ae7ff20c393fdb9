/// Merging duplicate cases (api.md v1.1): tier 2 and above, both cases open, about the same account e-mail.
public enum CaseMerge {
    /// Least tier that may merge or unmerge.
    public static let minimumTier = Tier.tier2

    /// Whether `source` may be merged into `target`: `insufficientTier`, `caseNotOpen` (either finished, or the same
    /// case), `notSameAccount` (e-mails compared case-insensitively).
    public static func check(actorTier: Tier, source: CaseState, target: CaseState, sameCase: Bool,
                             sourceAccount: String, targetAccount: String) throws(WorkflowRefusal) {
        guard actorTier.isAtLeast(minimumTier) else { throw .insufficientTier(required: minimumTier) }
        guard CaseWork.merge.isTaken(in: source), target.isOpen, !sameCase else { throw .caseNotOpen }
        guard sourceAccount.lowercased() == targetAccount.lowercased() else { throw .notSameAccount }
    }

    /// Whether a merged case may be unmerged: tier 2 and above, while the case it went into is open.
    public static func checkUnmerge(actorTier: Tier, source: CaseState, target: CaseState?) throws(WorkflowRefusal) {
        guard actorTier.isAtLeast(minimumTier) else { throw .insufficientTier(required: minimumTier) }
        guard source == .merged, let target, target.isOpen else { throw .caseNotOpen }
    }
}
