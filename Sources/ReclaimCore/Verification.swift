/// One of the three identity factors checked against what is on file.
public enum Factor: String, Sendable, Codable, CaseIterable, CodingKeyRepresentable {
    /// At least one security answer.
    case securityAnswer = "security_answer"
    /// The payment card.
    case card
    /// The device serial or IMEI.
    case device
}

/// How a factor came out.
public enum FactorOutcome: String, Sendable, Codable, CaseIterable {
    /// Filed evidence matched what is on file.
    case matched
    /// Evidence was filed, none of it matched.
    case mismatched
    /// No evidence counts (none filed, or all rejected).
    case missing
}

/// Where a piece of evidence stands after review.
public enum EvidenceStatus: String, Sendable, Codable, CaseIterable {
    /// Filed, not reviewed yet (still counts).
    case pending
    /// Reviewed and accepted.
    case accepted
    /// Reviewed and rejected (no longer counts).
    case rejected

    /// What a review may decide: accepted or rejected.
    public static let decisions: [EvidenceStatus] = allCases.filter { $0 != .pending }
}

/// One filed piece of typed evidence, reduced to what the verification rule reads.
public struct FactorEvidence: Sendable, Hashable, Codable {
    /// The factor it speaks to.
    public var factor: Factor
    /// It matched what is on file (for answers: at least one answer matched).
    public var matched: Bool
    /// Its review status.
    public var status: EvidenceStatus

    /// An evidence result.
    public init(factor: Factor, matched: Bool, status: EvidenceStatus) {
        self.factor = factor
        self.matched = matched
        self.status = status
    }
}

/// The outcome of the three factors and whether identity is verified (at least two matched).
public struct VerificationOutcome: Sendable, Hashable, Codable {
    /// Every factor's outcome (all three always present).
    public let factors: [Factor: FactorOutcome]
    /// At least `VerificationPolicy.requiredMatches` factors matched.
    public let verified: Bool

    /// An outcome; factors not given are `missing`.
    public init(factors: [Factor: FactorOutcome]) {
        var all = [Factor: FactorOutcome]()
        for factor in Factor.allCases { all[factor] = factors[factor] ?? .missing }
        self.factors = all
        verified = all.values.filter { $0 == .matched }.count >= VerificationPolicy.requiredMatches
    }

    /// The outcome of one factor.
    public subscript(factor: Factor) -> FactorOutcome { factors[factor] ?? .missing }

    /// The factors that matched, in declaration order (what gets recorded with `verify`).
    public var matchedFactors: [Factor] { Factor.allCases.filter { self[$0] == .matched } }

    // JSON field names.
    private enum CodingKeys: String, CodingKey {
        case factors, verified
    }

    /// Decodes factors; `verified` is recomputed, never trusted from input.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(factors: try c.decode([Factor: FactorOutcome].self, forKey: .factors))
    }
}

/// The tier-2 verification rule: identity is verified when two of the three factors match.
public enum VerificationPolicy {
    /// Matched factors needed.
    public static let requiredMatches = 2

    /// Factor outcomes from filed evidence: rejected evidence is ignored (a factor with only rejected
    /// evidence is `missing`), pending evidence counts, any matched item makes the factor matched.
    public static func evaluate(_ evidence: some Sequence<FactorEvidence>) -> VerificationOutcome {
        var outcomes = [Factor: FactorOutcome]()
        for item in evidence where item.status != .rejected {
            if item.matched {
                outcomes[item.factor] = .matched
            } else if outcomes[item.factor] != .matched {
                outcomes[item.factor] = .mismatched
            }
        }
        return VerificationOutcome(factors: outcomes)
    }

    /// The `send_reset` rule: there is at least one answer on file and every one was matched.
    public static func allOnFileAnswersMatched(onFile questionIDs: Set<String>, matched matchedIDs: Set<String>) -> Bool {
        allOnFileAnswersMatched(onFile: questionIDs.count, matched: questionIDs.intersection(matchedIDs).count)
    }

    /// The same rule from counts: `matched` of the `onFile` questions on file had a matching answer.
    public static func allOnFileAnswersMatched(onFile: Int, matched: Int) -> Bool {
        onFile > 0 && matched >= onFile
    }
}
