/// An agent tier, in rising order of power: each tier may do what the ones below it may.
public enum Tier: String, Sendable, Codable, CaseIterable, Comparable, CodingKeyRepresentable {
    /// Front line: opens cases, checks answers, sends resets.
    case tier1
    /// Account department: verifies identity, freezes accounts.
    case tier2
    /// Documents: collects and reviews proof of ownership.
    case tier3
    /// The only tier that performs unlocks.
    case engineering

    /// Position in the order of power (tier1 is 0).
    public var rank: Int {
        switch self {
        case .tier1: 0
        case .tier2: 1
        case .tier3: 2
        case .engineering: 3
        }
    }

    /// Orders tiers by power, so `.tier1 < .engineering`.
    public static func < (lhs: Tier, rhs: Tier) -> Bool { lhs.rank < rhs.rank }

    /// True when this tier is `other` or above it ("tier2+" in api.md).
    public func isAtLeast(_ other: Tier) -> Bool { self >= other }
}
