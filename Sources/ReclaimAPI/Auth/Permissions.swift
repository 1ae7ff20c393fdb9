import ReclaimCore

/// Who may call what: the one permission table, read by every handler and exposed to the dashboard.
///
/// Case workflow actions are further limited by `ReclaimCore.Workflow` (tier of the action and of
/// the case); this table decides only whether a kind of principal may try at all.
public enum Permission: String, CaseIterable, Sendable {
    case createCase = "case.create"
    case listCases = "case.list"
    case readCase = "case.read"
    case transitionCase = "case.transition"
    case assignCase = "case.assign"
    case freezeCase = "case.freeze"
    case unfreezeCase = "case.unfreeze"
    /// Any agent may try; `Workflow.checkUnlock` allows engineering only (and the refusal is recorded on the case).
    case recordUnlock = "case.unlock"
    case reissueAccessCode = "case.access_code"
    /// Verifying a caller by a call code (`POST /api/v1/cases/{n}/caller-verification`, api.md v1.3).
    case verifyCaller = "case.verify_caller"
    case readOwnCaseStatus = "case.own_status"
    case mergeCases = "case.merge"
    /// Correcting an open case's details (`PATCH /api/v1/cases/{n}`).
    case correctCase = "case.correct"
    /// Erasing a finished case's personal data, and exporting it (admins).
    case eraseCase = "case.erase"
    case exportCase = "case.export"
    /// Flagging a case (`flagged`, tier1+) and clearing its risk signals (tier3, engineering).
    case flagCase = "case.flag"
    case clearRisk = "case.clear_risk"
    case addNote = "case.note"
    case readEvents = "case.events"
    /// The unmatched received mail: list, attach to a case, discard.
    case handleInboundMail = "inbound.handle"
    case fileEvidence = "evidence.file"
    case listEvidence = "evidence.list"
    case readEvidenceContent = "evidence.content"
    case reviewEvidence = "evidence.review"
    case readVerification = "case.verification"
    case createAccount = "account.create"
    case readStatus = "status.read"
    case uploadAsCustomer = "status.upload"
    /// Administration: agents, API clients and the audit log (`/api/v1/admin/…`).
    case administer = "admin.manage"
    /// Supervision: the summary report (`/api/v1/reports/summary`) and its page.
    case readReports = "reports.read"
    /// Notifications: an API client's own webhook endpoints and their deliveries.
    case manageWebhooks = "webhook.manage"
}

/// Who a permission is granted to.
public struct Grant: Sendable {
    /// Lowest agent tier allowed (nil: agents are not allowed unless admin).
    public let agentTier: Tier?
    /// Whether admin agents are allowed regardless of tier.
    public let admins: Bool
    /// Whether API clients are allowed.
    public let apiClients: Bool
    /// Whether a customer (case number + access code) is allowed.
    public let customers: Bool
}

public enum PermissionTable {
    /// The table. Tier minima for workflow actions live in ReclaimCore.Workflow, not here.
    public static let grants: [Permission: Grant] = [
        .createCase: Grant(agentTier: .tier1, admins: false, apiClients: true, customers: false),
        .listCases: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .readCase: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .transitionCase: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .assignCase: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .freezeCase: Grant(agentTier: Workflow.freezeMinimumTier, admins: false, apiClients: false, customers: false),
        .unfreezeCase: Grant(agentTier: Workflow.freezeMinimumTier, admins: false, apiClients: false, customers: false),
        .recordUnlock: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .reissueAccessCode: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .verifyCaller: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .mergeCases: Grant(agentTier: CaseMerge.minimumTier, admins: false, apiClients: false, customers: false),
        .correctCase: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .eraseCase: Grant(agentTier: nil, admins: true, apiClients: false, customers: false),
        .exportCase: Grant(agentTier: nil, admins: true, apiClients: false, customers: false),
        .flagCase: Grant(agentTier: FourEyes.flagMinimumTier, admins: false, apiClients: false, customers: false),
        .clearRisk: Grant(agentTier: FourEyes.clearMinimumTier, admins: false, apiClients: false, customers: false),
        .readOwnCaseStatus: Grant(agentTier: nil, admins: false, apiClients: true, customers: false),
        .addNote: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .readEvents: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .handleInboundMail: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .fileEvidence: Grant(agentTier: .tier1, admins: false, apiClients: true, customers: false),
        .listEvidence: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .readEvidenceContent: Grant(agentTier: Workflow.contentReadMinimumTier, admins: false, apiClients: false, customers: false),
        .reviewEvidence: Grant(agentTier: .tier2, admins: false, apiClients: false, customers: false),
        .readVerification: Grant(agentTier: .tier1, admins: false, apiClients: false, customers: false),
        .createAccount: Grant(agentTier: nil, admins: true, apiClients: true, customers: false),
        .readStatus: Grant(agentTier: nil, admins: false, apiClients: false, customers: true),
        .uploadAsCustomer: Grant(agentTier: nil, admins: false, apiClients: false, customers: true),
        .administer: Grant(agentTier: nil, admins: true, apiClients: false, customers: false),
        .readReports: Grant(agentTier: .tier2, admins: true, apiClients: false, customers: false),
        // Notifications: an API client registers and watches its own endpoints.
        .manageWebhooks: Grant(agentTier: nil, admins: false, apiClients: true, customers: false),
    ]

    /// Whether `principal` holds `permission`.
    public static func allows(_ permission: Permission, _ principal: Principal) -> Bool {
        guard let grant = grants[permission] else { return false }
        switch principal {
        case .agent(let agent):
            if grant.admins && agent.isAdmin { return true }
            guard let minimum = grant.agentTier else { return false }
            return agent.tier.isAtLeast(minimum)
        case .apiClient: return grant.apiClients
        case .customer: return grant.customers
        }
    }

    /// The permissions a principal holds, for the dashboard (`GET /api/v1/session`).
    public static func permissions(of principal: Principal) -> [Permission] {
        Permission.allCases.filter { allows($0, principal) }
    }
}
