/// What kind of administrative change a proposal holds (api.md v1.3, "Two people means two people").
public enum AdminProposalKind: String, Sendable, CaseIterable, Codable {
    /// A new agent.
    case agentAdd = "agent_add"
    /// A change to an agent that gives power: a higher tier, admin granted or taken, a passkey requirement lifted.
    case agentChange = "agent_change"
    /// A new password for another agent.
    case passwordReset = "password_reset"
    /// A new TOTP seed for another agent.
    case totpReset = "totp_reset"
}

/// Where a proposal stands. A pending proposal past its expiry reads `expired` before the sweep records it.
public enum AdminProposalStatus: String, Sendable, CaseIterable, Codable {
    case pending, confirmed, expired, withdrawn
}

/// Which administrative changes wait for a second admin. One admin who creates an agent (and so holds its password and
/// TOTP), or resets another agent's, could sign in as it and be a case's "second pair of eyes"; so while more than one
/// admin exists those changes are proposed by one and confirmed by another. A lone admin acts alone.
public enum SecondAdminRule {
    /// A change to an existing agent: each member nil when the request leaves it as it is.
    public struct AgentChange: Sendable, Equatable {
        public var tier: (from: Tier, to: Tier)?
        public var admin: (from: Bool, to: Bool)?
        public var passkeyRequired: (from: Bool, to: Bool)?
        /// Whether the agent changed is the admin asking.
        public var ofSelf: Bool

        public init(tier: (Tier, Tier)? = nil, admin: (Bool, Bool)? = nil, passkeyRequired: (Bool, Bool)? = nil, ofSelf: Bool = false) {
            self.tier = tier.map { (from: $0.0, to: $0.1) }
            self.admin = admin.map { (from: $0.0, to: $0.1) }
            self.passkeyRequired = passkeyRequired.map { (from: $0.0, to: $0.1) }
            self.ofSelf = ofSelf
        }

        public static func == (lhs: AgentChange, rhs: AgentChange) -> Bool {
            lhs.tier?.from == rhs.tier?.from && lhs.tier?.to == rhs.tier?.to && lhs.admin?.from == rhs.admin?.from
                && lhs.admin?.to == rhs.admin?.to && lhs.passkeyRequired?.from == rhs.passkeyRequired?.from
                && lhs.passkeyRequired?.to == rhs.passkeyRequired?.to && lhs.ofSelf == rhs.ofSelf
        }
    }

    /// An administrative action as an admin asks for it.
    public enum Action: Sendable, Equatable {
        case addAgent
        case change(AgentChange)
        case resetPassword(ofSelf: Bool)
        case resetTOTP(ofSelf: Bool)
    }

    /// Whether `action` waits for a different admin's confirmation, given how many admins other than the one asking
    /// exist (disabled ones included: disabling the other admin does not make one alone; only demoting them does, and
    /// that is itself proposed).
    public static func needsConfirmation(_ action: Action, otherAdmins: Int) -> Bool {
        guard otherAdmins > 0 else { return false }
        switch action {
        case .addAgent: return true
        case .resetPassword(let ofSelf), .resetTOTP(let ofSelf): return !ofSelf
        case .change(let change): return givesPower(change)
        }
    }

    /// Whether a change gives power or removes a check: a higher tier, admin granted, admin taken from another admin
    /// (the way to being a lone admin), a passkey requirement lifted (password and TOTP sign the agent in again).
    /// Lowering a tier, deactivating and requiring a passkey act at once: they only take power away.
    public static func givesPower(_ change: AgentChange) -> Bool {
        if let tier = change.tier, tier.to > tier.from { return true }
        if let admin = change.admin, admin.to != admin.from, admin.to || !change.ofSelf { return true }
        if let required = change.passkeyRequired, required.from, !required.to { return true }
        return false
    }
}
