import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// What an API request for an administrative change came to: done at once (a lone admin, or a change that takes power
/// away), or proposed for a second admin (`SecondAdminRule`).
public enum AdministrationOutcome<Done: Sendable>: Sendable {
    case done(Done)
    /// Proposed; `password` is the proposer's half of a new agent's credentials (the confirmer is shown the TOTP seed).
    case proposed(AdminProposal, password: String?)
}

/// What a confirmation did, with the one-time secrets it reveals to the confirming admin.
public enum ConfirmedChange: Sendable {
    /// The new agent with its TOTP seed (its `password` is empty: the proposer was shown it).
    case agentAdded(NewAgent)
    case agentChanged(AgentSummary)
    case passwordReset(id: UUID, password: String)
    /// The agent with its new TOTP seed.
    case totpReset(NewAgent)
}

/// Two people means two people (api.md v1.3): the API's path for the changes `SecondAdminRule` names. Each request is
/// one transaction that first records the proposals whose time ran out (`proposal_expired`, actor `system`), then acts
/// or proposes. The command line keeps acting at once (`addAgent`, `updateAgent`, …): it is the operator's break-glass,
/// with the key file and the database in hand.
extension IdentityAdministration {
    /// Creates an agent, or proposes it while another admin exists. A proposed agent has no row until confirmed, so
    /// nothing signs in as it; the proposer is shown its password, the confirmer its TOTP seed: neither alone holds both.
    public func requestAddAgent(email: String, name: String, tier: Tier, isAdmin: Bool, now: Date, by actor: String) throws
        -> AdministrationOutcome<NewAgent>
    {
        let (address, trimmedName) = try Self.validateNewAgent(email: email, name: name)
        let password = AgentPassword.generate()
        let hash = try hasher.hash(password)
        let id = UUID()
        return try Self.unlessTaken {
            try pool.withTransaction { connection in
                try recordExpired(now: now, connection)
                guard try needsSecondAdmin(.addAgent, actor: actor, connection) else {
                    let secret = TOTP.generateSecret()
                    try insertAgent(
                        id: id, email: address, name: trimmedName, tier: tier, isAdmin: isAdmin, passwordHash: hash, totpSecret: secret,
                        now: now, by: actor, connection)
                    return .done(
                        NewAgent(id: id, email: address, name: trimmedName, tier: tier, isAdmin: isAdmin, password: password, totpSecret: secret))
                }
                guard try AgentStore.find(email: address, on: connection) == nil else { throw IdentityAdministrationError.agentExists }
                let proposal = try propose(
                    .agentAdd, target: id, email: address,
                    change: ["name": .string(trimmedName), "tier": .string(tier.rawValue), "admin": .bool(isAdmin)], passwordHash: hash,
                    now: now, by: actor, connection)
                return .proposed(proposal, password: password)
            }
        }
    }

    /// Changes an agent, or proposes the change while another admin exists and it gives power (a higher tier, admin
    /// granted or taken from another admin, a passkey requirement lifted): then all of it waits, nothing applies now.
    public func requestAgentChange(
        _ reference: AgentReference, tier: Tier? = nil, active: Bool? = nil, admin: Bool? = nil, passkeyRequired: Bool? = nil, now: Date,
        by actor: String
    ) throws -> AdministrationOutcome<AgentSummary> {
        try pool.withTransaction { connection in
            try recordExpired(now: now, connection)
            let current = try requireSummary(reference, connection)
            let request = AgentChangeRequest(tier: tier, active: active, admin: admin, passkeyRequired: passkeyRequired)
            let ruleChange = SecondAdminRule.AgentChange(
                tier: tier.map { (current.tier, $0) }, admin: admin.map { (current.isAdmin, $0) },
                passkeyRequired: passkeyRequired.map { (current.passkeyRequired, $0) }, ofSelf: Principal.agentID(fromActor: actor) == current.id)
            guard try needsSecondAdmin(.change(ruleChange), actor: actor, connection) else {
                return .done(try applyUpdate(current, request, now: now, by: actor, lockoutActor: actor, connection))
            }
            // Refused now if it would be refused when confirmed as things stand.
            try checkLockout(current, request, lockoutActor: actor, connection)
            var change: [String: JSONValue] = [:]
            if let tier { change["tier"] = .string(tier.rawValue) }
            if let active { change["active"] = .bool(active) }
            if let admin { change["admin"] = .bool(admin) }
            if let passkeyRequired { change["passkey_required"] = .bool(passkeyRequired) }
            let proposal = try propose(
                .agentChange, target: current.id, email: current.email, change: .object(change), passwordHash: nil, now: now, by: actor,
                connection)
            return .proposed(proposal, password: nil)
        }
    }

    /// Resets another agent's password, or proposes it while another admin exists (the password is then made and shown
    /// only to the confirming admin; until then the old one still signs in and nothing ends).
    public func requestPasswordReset(_ reference: AgentReference, now: Date, by actor: String) throws -> AdministrationOutcome<
        (
            id: UUID, password: String
        )
    > {
        let password = AgentPassword.generate()
        let hash = try hasher.hash(password)
        return try pool.withTransaction { connection in
            try recordExpired(now: now, connection)
            let agent = try requireSummary(reference, connection)
            let ofSelf = Principal.agentID(fromActor: actor) == agent.id
            guard try needsSecondAdmin(.resetPassword(ofSelf: ofSelf), actor: actor, connection) else {
                try applyPasswordReset(agent, hash: hash, now: now, by: actor, connection)
                return .done((agent.id, password))
            }
            let proposal = try propose(
                .passwordReset, target: agent.id, email: agent.email, change: [:], passwordHash: nil, now: now, by: actor, connection)
            return .proposed(proposal, password: nil)
        }
    }

    /// Resets another agent's TOTP seed, or proposes it while another admin exists (the seed is then made and shown only
    /// to the confirming admin).
    public func requestTOTPReset(_ reference: AgentReference, now: Date, by actor: String) throws -> AdministrationOutcome<NewAgent> {
        try pool.withTransaction { connection in
            try recordExpired(now: now, connection)
            let agent = try requireSummary(reference, connection)
            let ofSelf = Principal.agentID(fromActor: actor) == agent.id
            guard try needsSecondAdmin(.resetTOTP(ofSelf: ofSelf), actor: actor, connection) else {
                return .done(try applyTOTPReset(agent, now: now, by: actor, connection))
            }
            let proposal = try propose(
                .totpReset, target: agent.id, email: agent.email, change: [:], passwordHash: nil, now: now, by: actor, connection)
            return .proposed(proposal, password: nil)
        }
    }

    /// What confirming a proposal came to: the change, or (committed, then refused) its expiry.
    private enum Confirmation {
        case confirmed(AdminProposal, ConfirmedChange)
        case expired
    }

    /// Confirms a proposal as a different admin: checks it again as things stand (the email still free, the agent still
    /// there, no lockout), applies it with its own admin-log entry naming the proposal, and records the confirmation.
    /// An expired proposal is recorded as such (committed) and refused.
    public func confirmProposal(id: UUID, now: Date, by actor: String) throws -> (AdminProposal, ConfirmedChange) {
        // A password reset hashes its new password first, outside the transaction (argon2id takes a while).
        let peeked = try pool.withConnection { try AdminProposalStore.find(id: id, on: $0) }
        let newPassword = peeked?.kind == .passwordReset ? AgentPassword.generate() : nil
        let newHash = try newPassword.map { try hasher.hash($0) }
        let outcome = try Self.unlessTaken {
            try pool.withTransaction { connection -> Confirmation in
                try recordExpired(now: now, connection)
                guard let proposal = try AdminProposalStore.find(id: id, forUpdate: true, on: connection) else {
                    throw IdentityAdministrationError.noSuchProposal
                }
                switch proposal.status(at: now) {
                case .expired: return .expired
                case .confirmed, .withdrawn: throw IdentityAdministrationError.proposalClosed
                case .pending: break
                }
                guard proposal.proposedBy != actor else { throw IdentityAdministrationError.sameAdmin }
                try requireActiveAdmin(proposal.proposedBy, connection)
                let extra: [String: JSONValue] = ["proposal_id": .string(proposal.id.lowercased), "proposed_by": .string(proposal.proposedBy)]
                let change: ConfirmedChange
                switch proposal.kind {
                case .agentAdd:
                    guard case .object(let asked) = proposal.change, case .string(let name)? = asked["name"],
                        case .string(let tierText)? = asked["tier"], let tier = Tier(rawValue: tierText), case .bool(let isAdmin)? = asked["admin"],
                        let hash = proposal.passwordHash
                    else { throw PostgresError(.decoding, message: "admin_proposals holds an agent_add without its members") }
                    let secret = TOTP.generateSecret()
                    try insertAgent(
                        id: proposal.targetAgentID, email: proposal.targetEmail, name: name, tier: tier, isAdmin: isAdmin, passwordHash: hash,
                        totpSecret: secret, now: now, by: actor, extra: extra, connection)
                    change = .agentAdded(
                        NewAgent(
                            id: proposal.targetAgentID, email: proposal.targetEmail, name: name, tier: tier, isAdmin: isAdmin, password: "",
                            totpSecret: secret))
                case .agentChange:
                    let current = try requireSummary(.id(proposal.targetAgentID), connection)
                    guard case .object(let asked) = proposal.change else {
                        throw PostgresError(.decoding, message: "admin_proposals holds an agent_change without its members")
                    }
                    func flag(_ key: String) -> Bool? { if case .bool(let value)? = asked[key] { value } else { nil } }
                    let tier: Tier? = if case .string(let text)? = asked["tier"] { Tier(rawValue: text) } else { nil }
                    let request = AgentChangeRequest(
                        tier: tier, active: flag("active"), admin: flag("admin"), passkeyRequired: flag("passkey_required"))
                    change = .agentChanged(
                        try applyUpdate(current, request, now: now, by: actor, lockoutActor: proposal.proposedBy, extra: extra, connection))
                case .passwordReset:
                    guard let newPassword, let newHash else { throw IdentityAdministrationError.proposalClosed }
                    let agent = try requireSummary(.id(proposal.targetAgentID), connection)
                    try applyPasswordReset(agent, hash: newHash, now: now, by: actor, extra: extra, connection)
                    change = .passwordReset(id: agent.id, password: newPassword)
                case .totpReset:
                    let agent = try requireSummary(.id(proposal.targetAgentID), connection)
                    change = .totpReset(try applyTOTPReset(agent, now: now, by: actor, extra: extra, connection))
                }
                try AdminProposalStore.decide(id: proposal.id, status: .confirmed, by: actor, at: now, on: connection)
                try audit(.proposalConfirmed, Self.auditData(proposal), by: actor, now: now, connection)
                guard let decided = try AdminProposalStore.find(id: proposal.id, on: connection) else {
                    throw IdentityAdministrationError.noSuchProposal
                }
                return .confirmed(decided, change)
            }
        }
        switch outcome {
        case .confirmed(let proposal, let change): return (proposal, change)
        case .expired: throw IdentityAdministrationError.proposalExpired
        }
    }

    /// Withdraws a pending proposal: its proposer changing their mind, or another admin declining it. Recorded.
    public func withdrawProposal(id: UUID, now: Date, by actor: String) throws -> AdminProposal {
        let outcome = try pool.withTransaction { connection -> AdminProposal? in
            try recordExpired(now: now, connection)
            guard let proposal = try AdminProposalStore.find(id: id, forUpdate: true, on: connection) else {
                throw IdentityAdministrationError.noSuchProposal
            }
            switch proposal.status(at: now) {
            case .expired: return nil
            case .confirmed, .withdrawn: throw IdentityAdministrationError.proposalClosed
            case .pending: break
            }
            try AdminProposalStore.decide(id: proposal.id, status: .withdrawn, by: actor, at: now, on: connection)
            try audit(.proposalWithdrawn, Self.auditData(proposal), by: actor, now: now, connection)
            return try AdminProposalStore.find(id: proposal.id, on: connection)
        }
        guard let outcome else { throw IdentityAdministrationError.proposalExpired }
        return outcome
    }

    /// Proposals newest first, those after `after`, at most `limit`.
    public func listProposals(after: UUID?, limit: Int) throws -> [AdminProposal] {
        try pool.withConnection { try AdminProposalStore.list(after: after, limit: limit, on: $0) }
    }

    /// Whether `actor` is the only admin (disabled admins count): then it acts alone, and `/admin` says so.
    public func isLoneAdmin(_ actor: String) throws -> Bool {
        try pool.withConnection { try AgentStore.otherAdmins(than: Principal.agentID(fromActor: actor) ?? UUID(), on: $0) == 0 }
    }

    // MARK: Shared

    private func needsSecondAdmin(_ action: SecondAdminRule.Action, actor: String, _ connection: PostgresConnection) throws -> Bool {
        let others = try AgentStore.otherAdmins(than: Principal.agentID(fromActor: actor) ?? UUID(), on: connection)
        return SecondAdminRule.needsConfirmation(action, otherAdmins: others)
    }

    /// Stores a proposal and its `proposal_made` entry.
    private func propose(
        _ kind: AdminProposalKind, target: UUID, email: String, change: JSONValue, passwordHash: String?, now: Date, by actor: String,
        _ connection: PostgresConnection
    ) throws -> AdminProposal {
        let proposal = AdminProposal(
            id: UUID(), kind: kind, targetAgentID: target, targetEmail: email, change: change, passwordHash: passwordHash, proposedBy: actor,
            proposedAt: now, expiresAt: now.addingTimeInterval(proposalLifetime))
        try AdminProposalStore.insert(proposal, on: connection)
        var data = Self.auditData(proposal)
        data["change"] = change
        data["expires_at"] = Timestamp.json(proposal.expiresAt)
        try audit(.proposalMade, data, by: actor, now: now, connection)
        return proposal
    }

    /// Records every pending proposal whose time ran out (actor `system`), in the caller's transaction.
    private func recordExpired(now: Date, _ connection: PostgresConnection) throws {
        for proposal in try AdminProposalStore.expireDue(now: now, on: connection) {
            try audit(.proposalExpired, Self.auditData(proposal), by: "system", now: now, connection)
        }
    }

    /// A proposal whose proposer is no longer an active admin is closed: their say no longer counts.
    private func requireActiveAdmin(_ actor: String, _ connection: PostgresConnection) throws {
        guard let id = Principal.agentID(fromActor: actor), let agent = try AgentStore.find(id: id, on: connection), agent.isAdmin, !agent.disabled
        else { throw IdentityAdministrationError.proposalClosed }
    }

    private static func auditData(_ proposal: AdminProposal) -> [String: JSONValue] {
        [
            "proposal_id": .string(proposal.id.lowercased), "kind": .string(proposal.kind.rawValue),
            "agent_id": .string(proposal.targetAgentID.lowercased), "email": .string(proposal.targetEmail),
            "proposed_by": .string(proposal.proposedBy),
        ]
    }
}
