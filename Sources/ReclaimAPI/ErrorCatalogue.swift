import HTTPServer
import ReclaimCore

/// Every stable problem `code` the service itself answers, declared once with its status and title. Handlers build
/// problems from these (`Problem(ErrorCode.caseNotOpen, detail: …)`); `/openapi.json` lists them with the transport's
/// (`HTTPProblemCode`) under `components.schemas.Problem`.
enum ErrorCode: String, CaseIterable, ProblemKind {
    // Identity
    case invalidCredentials = "invalid_credentials"
    case lockedOut = "locked_out"
    case csrfFailed = "csrf_failed"
    case invalidSignature = "invalid_signature"
    case staleSignature = "stale_signature"
    case replayedSignature = "replayed_signature"
    case notConfigured = "not_configured"
    // Idempotency
    case invalidIdempotencyKey = "invalid_idempotency_key"
    case idempotencyInProgress = "idempotency_in_progress"
    case idempotencyMismatch = "idempotency_mismatch"
    // Cases and the workflow
    case invalidCaseNumber = "invalid_case_number"
    case invalidTransition = "invalid_transition"
    case insufficientTier = "insufficient_tier"
    case verificationFailed = "verification_failed"
    case notRecoverable = "not_recoverable"
    case caseNotOpen = "case_not_open"
    case unlockRequired = "unlock_required"
    case unlockNotAllowed = "unlock_not_allowed"
    case answersNotMatched = "answers_not_matched"
    case reasonRequired = "reason_required"
    case alreadyFrozen = "already_frozen"
    case accountExists = "account_exists"
    case documentsMissing = "documents_missing"
    case documentsPending = "documents_pending"
    case unlocksOutstanding = "unlocks_outstanding"
    case alreadyDone = "already_done"
    case notFrozen = "not_frozen"
    case noAccountOnFile = "no_account_on_file"
    case notSameAccount = "not_same_account"
    case accessCodeJustIssued = "access_code_just_issued"
    // Administration
    case agentExists = "agent_exists"
    case adminLockout = "admin_lockout"
    // Passkeys
    case passkeyExists = "passkey_exists"
    case passkeyRefused = "passkey_refused"
    case passkeyRequired = "passkey_required"
    // Notifications
    case endpointDisabled = "endpoint_disabled"
    // Capacity and the database
    case busy
    case databaseUnavailable = "database_unavailable"
    case databaseBusy = "database_busy"
    case databaseTimeout = "database_timeout"
    case databaseOverloaded = "database_overloaded"
    case notMigrated = "not_migrated"
    case schemaMismatch = "schema_mismatch"

    var code: String { rawValue }

    var status: Int {
        switch self {
        case .invalidIdempotencyKey: 400
        case .invalidCredentials, .invalidSignature, .staleSignature, .replayedSignature: 401
        case .csrfFailed, .insufficientTier, .passkeyRequired: 403
        case .invalidCaseNumber, .noAccountOnFile: 404
        case .idempotencyInProgress, .invalidTransition, .verificationFailed, .notRecoverable, .caseNotOpen, .answersNotMatched, .alreadyFrozen,
             .accountExists, .agentExists, .adminLockout, .passkeyExists, .documentsMissing, .documentsPending, .unlocksOutstanding, .alreadyDone,
             .notFrozen, .notSameAccount, .endpointDisabled: 409
        case .accessCodeJustIssued: 409
        case .idempotencyMismatch, .unlockRequired, .unlockNotAllowed, .reasonRequired, .passkeyRefused: 422
        case .lockedOut: 429
        case .notConfigured, .busy, .databaseUnavailable, .databaseBusy, .databaseTimeout, .databaseOverloaded, .notMigrated, .schemaMismatch: 503
        }
    }

    var title: String { HTTPStatus.reasonPhrase(status) }

    /// The code of a workflow refusal (its status follows the refusal's category: forbidden 403, conflict 409, invalid 422).
    init(_ refusal: WorkflowRefusal) {
        self = switch refusal {
        case .invalidTransition: .invalidTransition
        case .insufficientTier: .insufficientTier
        case .verificationFailed: .verificationFailed
        case .notRecoverable: .notRecoverable
        case .caseNotOpen: .caseNotOpen
        case .unlockRequired: .unlockRequired
        case .unlockNotAllowed: .unlockNotAllowed
        case .answersNotMatched: .answersNotMatched
        case .reasonRequired: .reasonRequired
        case .documentsMissing: .documentsMissing
        case .documentsPending: .documentsPending
        case .unlocksOutstanding: .unlocksOutstanding
        case .alreadyDone: .alreadyDone
        case .notSameAccount: .notSameAccount
        }
    }

    /// Every code the service answers, the transport's included, for `/openapi.json`.
    static var everyKind: [any ProblemKind] { HTTPProblemCode.allCases + ErrorCode.allCases }
}
