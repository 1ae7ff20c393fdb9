import Foundation
import HTTPServer
import ReclaimCore
import ReclaimOperations

// The one catalogue of what the service answers when it refuses (PostgREST's `Error.hs`): every problem `code` with
// the status it is always answered with (`ErrorCode`), and every refusal of the domain (workflow, operations,
// administration) with its code, message and extra members, each declared once below. `ProblemMapping.map` answers
// them, the command line prints their messages (`Refusals.message(for:)`), `/openapi.json` lists the codes and the
// route table's prose names them from here.
//
// A new refusal: its case in the domain's enum (`WorkflowRefusal`, `OperationError`, `IdentityAdministrationError`),
// its `problem` line below (a new code: an `ErrorCode` case with its status), and one value in that enum's `examples`.

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
    case unlockNotScheduled = "unlock_not_scheduled"
    case stopLinkUnknown = "stop_link_unknown"
    case noAccountOnFile = "no_account_on_file"
    case notSameAccount = "not_same_account"
    case differentCustomer = "different_customer"
    case accessCodeJustIssued = "access_code_just_issued"
    case pathDecided = "path_decided"
    case accountBusy = "account_busy"
    case coolingOff = "cooling_off"
    case tooManyDocuments = "too_many_documents"
    case callerNotVerified = "caller_not_verified"
    case callerCodeWrong = "caller_code_wrong"
    // Personal data
    case caseOpen = "case_open"
    case caseErased = "case_erased"
    case alreadyErased = "already_erased"
    case riskUncleared = "risk_uncleared"
    case fourEyes = "four_eyes"
    // Administration
    case agentExists = "agent_exists"
    case adminLockout = "admin_lockout"
    case sameAdmin = "same_admin"
    case proposalExpired = "proposal_expired"
    case proposalClosed = "proposal_closed"
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
        case .invalidCaseNumber, .noAccountOnFile, .stopLinkUnknown: 404
        case .idempotencyInProgress, .invalidTransition, .verificationFailed, .notRecoverable, .caseNotOpen, .answersNotMatched, .alreadyFrozen,
            .accountExists, .agentExists, .adminLockout, .passkeyExists, .documentsMissing, .documentsPending, .unlocksOutstanding, .alreadyDone,
            .notFrozen, .notSameAccount, .endpointDisabled, .sameAdmin, .proposalExpired, .proposalClosed:
            409
        case .accessCodeJustIssued, .pathDecided, .differentCustomer, .riskUncleared, .fourEyes, .unlockNotScheduled, .caseOpen,
            .alreadyErased, .accountBusy, .coolingOff, .tooManyDocuments, .callerNotVerified:
            409
        case .caseErased: 410
        case .idempotencyMismatch, .unlockRequired, .unlockNotAllowed, .reasonRequired, .passkeyRefused, .callerCodeWrong: 422
        case .lockedOut: 429
        case .notConfigured, .busy, .databaseUnavailable, .databaseBusy, .databaseTimeout, .databaseOverloaded, .notMigrated, .schemaMismatch: 503
        }
    }

    var title: String { HTTPStatus.reasonPhrase(status) }

    /// The one code the contract answers with a second status: `case_erased` is 410 to a look-up and 409 to a change
    /// (api.md v1.3 "An erased case is finished for good").
    var alsoAnswered: Int? { self == .caseErased ? 409 : nil }

    /// Every code the service answers, the transport's included, for `/openapi.json`.
    static var everyKind: [any ProblemKind] { HTTPProblemCode.allCases + ErrorCode.allCases }
}

/// A refusal of the domain that the service answers as a problem of its own: its catalogue entry says how.
protocol Refusal: Error, Sendable {
    /// How this refusal is answered, declared once: its code (and so its status), its message (`detail`, what the
    /// command line prints too), the fields at fault, extra members and headers. Never a secret or a stored value.
    var problem: Problem { get }
    /// One value of every case, for the test that walks the catalogue and for the route table's prose.
    static var examples: [Self] { get }
}

extension Refusal {
    /// The one line the command line prints: the fields at fault for bad input, else the message.
    var message: String {
        let problem = problem
        if !problem.fieldErrors.isEmpty { return problem.fieldErrors.map { "\($0.field): \($0.message)" }.joined(separator: "; ") }
        return problem.detail ?? problem.title
    }
}

/// The catalogue's messages for the command line, which prints what the API says.
public enum Refusals {
    /// A refusal's message (its fields at fault, for bad input); nil for an error that is not a refusal.
    public static func message(for error: any Error) -> String? { (error as? any Refusal)?.message }
}

// MARK: Workflow refusals

extension WorkflowRefusal: Refusal {
    var problem: Problem {
        switch self {
        case .invalidTransition(let from, let action):
            Problem(ErrorCode.invalidTransition, detail: "\(action.rawValue) cannot be taken on a case in \(from.rawValue).")
        case .insufficientTier(let required):
            Problem(
                ErrorCode.insufficientTier, detail: "This needs \(required.rawValue) or above.", extraMembers: ["required_tier": required.rawValue])
        case .verificationFailed(let outcome):
            Problem(
                ErrorCode.verificationFailed, detail: "Identity is verified only when at least two of security answer, card and device match.",
                extraMembers: ["factors": Dictionary(uniqueKeysWithValues: outcome.factors.map { ($0.key.rawValue, $0.value.rawValue) })])
        case .notRecoverable:
            Problem(
                ErrorCode.notRecoverable,
                detail:
                    "The account cannot be recovered (two-step verification is on, or the case is about a device): only the device can be unlocked, with proof of ownership."
            )
        case .caseNotOpen:
            Problem(
                ErrorCode.caseNotOpen,
                detail:
                    "The case is finished (resolved, rejected, closed or merged) and takes no more work; an internal note is still possible. Work on a merged case goes on the case it went into."
            )
        case .unlockRequired:
            Problem(
                ErrorCode.unlockRequired,
                detail: "No unlock step is done on this case: schedule one (it is done after the cooling-off), then complete.")
        case .unlockNotScheduled:
            Problem(
                ErrorCode.unlockNotScheduled,
                detail: "This unlock step is not done: schedule it (it is done after the cooling-off, with its notice); complete never performs one.")
        case .unlockNotAllowed: Problem(ErrorCode.unlockNotAllowed, detail: "This unlock is not allowed on this case.")
        case .answersNotMatched: Problem(ErrorCode.answersNotMatched, detail: "A reset needs every security answer on file to match.")
        case .reasonRequired: Problem(ErrorCode.reasonRequired, detail: "Give a reason for this action.")
        case .documentsMissing(let missing):
            Problem(
                ErrorCode.documentsMissing, detail: "Approval needs an accepted document for: \(missing.map(\.rawValue).joined(separator: ", ")).",
                extraMembers: ["missing": missing.map(\.rawValue)])
        case .documentsPending:
            Problem(ErrorCode.documentsPending, detail: "A document on this case is still waiting for review: accept or reject it first.")
        case .unlocksOutstanding(let steps):
            Problem(
                ErrorCode.unlocksOutstanding, detail: "Still to undo before the case is complete: \(steps.map(\.rawValue).joined(separator: ", ")).",
                extraMembers: ["outstanding": steps.map(\.rawValue)])
        case .alreadyDone: Problem(ErrorCode.alreadyDone, detail: "This unlock step is already recorded.")
        case .notSameAccount: Problem(ErrorCode.notSameAccount, detail: "Only cases about the same account e-mail can be merged.")
        case .pathDecided:
            Problem(
                ErrorCode.pathDecided,
                detail:
                    "The case reached engineering on the facts as they were (verify or approve checked those), and this change would change whether only the device can be recovered. Tell engineering in an internal note; once the case is finished, tier 2 can reopen it and correct the facts."
            )
        case .differentCustomer(let fields):
            Problem(
                ErrorCode.differentCustomer,
                detail:
                    "These cases name different customers (\(fields.joined(separator: ", "))): merge them only if they are one person, with same_customer_confirmed.",
                extraMembers: ["differing": fields])
        }
    }

    static let examples: [WorkflowRefusal] = [
        .invalidTransition(from: .new, action: .complete), .insufficientTier(required: .tier3),
        .verificationFailed(VerificationOutcome(factors: [.securityAnswer: .matched, .card: .mismatched])), .notRecoverable, .caseNotOpen,
        .unlockRequired, .unlockNotScheduled, .unlockNotAllowed, .answersNotMatched, .reasonRequired, .documentsMissing([.proofOfPurchase]),
        .documentsPending,
        .unlocksOutstanding([.resetSecurityQuestions]), .alreadyDone, .notSameAccount, .pathDecided, .differentCustomer(["customer.name"]),
    ]
}

// MARK: Operation errors

extension OperationError: Refusal {
    var problem: Problem {
        switch self {
        case .caseNotFound: Problem.notFound(detail: "No case has this number.")
        case .evidenceNotFound: Problem.notFound(detail: "No evidence has this id.")
        case .stale(let current):
            Problem(
                HTTPProblemCode.staleVersion, detail: "The case changed (now at version \(current)); reload it and try again.",
                extraHeaders: [("ETag", "\"\(current)\"")])
        case .refused(let refusal, _): refusal.problem
        case .refusedAfterRecording(let refusal, let version):
            // What was done stands: the ETag gives the version the case is at now.
            refusal.problem.adding(header: ("ETag", "\"\(version)\""))
        case .invalid(let failure): CaseHTTP.problem(for: failure)
        case .answersLocked(let until, let now):
            Problem.tooManyRequests(
                retryAfter: Int(until.timeIntervalSince(now).rounded(.up)), code: ErrorCode.lockedOut,
                detail: "Too many wrong answers for this account. Try again later.")
        case .alreadyFrozen: Problem(ErrorCode.alreadyFrozen, detail: "The account is already frozen.")
        case .notFrozen: Problem(ErrorCode.notFrozen, detail: "The account is not frozen.")
        case .unlockNotScheduled: Problem(ErrorCode.unlockNotScheduled, detail: "This unlock step is not scheduled on this case.")
        case .stopLinkUnknown: Problem(ErrorCode.stopLinkUnknown, detail: "This link is not known. Call support; never pay anyone.")
        case .noAccountOnFile:
            Problem(ErrorCode.noAccountOnFile, detail: "The case's account is not on file: there are no security questions to ask.")
        case .reviewNeedsTier(let tier):
            Problem(
                ErrorCode.insufficientTier, detail: "Reviewing this evidence needs \(tier.rawValue) or above.",
                extraMembers: ["required_tier": tier.rawValue])
        case .unsupportedMedia(let mismatch):
            Problem(
                HTTPProblemCode.unsupportedMediaType,
                detail: mismatch ? "The file's content is not the type it was declared as." : "Only PDF, JPEG, PNG and HEIC files are accepted.")
        case .tooLarge(let limit): Problem.payloadTooLarge(limit: limit)
        case .tooManyDocuments(let limit):
            Problem(
                ErrorCode.tooManyDocuments, detail: "This case holds \(limit) documents, as many as a case may hold.",
                extraMembers: ["limit": limit])
        case .caseNotOpen:
            Problem(ErrorCode.caseNotOpen, detail: "This case is finished, so nobody would see a new document. Contact us quoting your case number.")
        case .caseOpen:
            Problem(ErrorCode.caseOpen, detail: "The case is still open: only a resolved, rejected, closed or merged case can be erased.")
        case .alreadyErased:
            Problem(ErrorCode.alreadyErased, detail: "The case was erased already: nothing identifying the customer is left to erase or export.")
        case .accountExists: Problem(ErrorCode.accountExists, detail: "An account with this e-mail is already on file.")
        case .accountNotFound: Problem.notFound(detail: "No account with this e-mail is on file.")
        case .keysUnavailable: Problem.unavailable(retryAfter: 60, code: ErrorCode.notConfigured, detail: "The service has no key file.")
        case .accessCodeJustIssued(let until, let now):
            Problem(
                ErrorCode.accessCodeJustIssued,
                detail: "A new access code was sent to the customer moments ago; another would make that one useless.",
                extraHeaders: [("Retry-After", String(max(1, Int(until.timeIntervalSince(now).rounded(.up)))))])
        case .inboundNotFound: Problem.notFound(detail: "No received mail has this id.")
        case .inboundHandled: Problem(ErrorCode.alreadyDone, detail: "This mail is no longer unmatched: it was attached to a case or discarded.")
        case .riskUncleared(let signals):
            Problem(
                ErrorCode.riskUncleared,
                detail: "This case has risk signals nobody has cleared; a tier 3 or engineering agent clears them first.",
                extraMembers: ["signals": signals.map(\.rawValue)])
        case .fourEyes:
            Problem(ErrorCode.fourEyes, detail: "You cleared this case's risk signals: a second agent approves it and records its unlock steps.")
        case .accountBusy(let number):
            Problem(
                ErrorCode.accountBusy,
                detail: "An unlock step is already scheduled on case \(number) of the same account: one recovery of an account at a time.",
                extraMembers: ["case_number": number])
        case .coolingOff:
            Problem(
                ErrorCode.coolingOff,
                detail: "An unlock step is waiting for its time on this case: the freeze holds until it is done or cancelled.")
        case .caseErased:
            // The one code answered with two statuses, as the contract says: 410 for a look-up (gone), 409 for a change.
            Problem(ErrorCode.caseErased, detail: "What identified the customer was erased: the case takes no more changes.").with(status: 409)
        case .callerNotVerified:
            Problem(
                ErrorCode.callerNotVerified,
                detail:
                    "Verify the caller first (POST /api/v1/cases/{n}/caller-verification): have them read the customer code on their status page, or mail them a one-time code and have them read it.",
                extraMembers: ["ways": CallCodes.Method.allCases.map(\.rawValue)])
        case .callerCodeWrong:
            Problem(
                ErrorCode.callerCodeWrong,
                detail: "This is not the case's code. Wrong codes count against the case's look-up budget; never guess one for the caller.")
        case .callerCodeLocked(let until, let now):
            Problem.tooManyRequests(
                retryAfter: max(1, Int(until.timeIntervalSince(now).rounded(.up))), code: ErrorCode.lockedOut,
                detail: "Too many wrong codes for this case: no code is checked until the lock ends, and the case is flagged.")
        }
    }

    static let examples: [OperationError] = [
        .caseNotFound, .evidenceNotFound, .stale(current: 3), .refused(.insufficientTier(required: .tier2), caseID: nil),
        .refusedAfterRecording(.unlocksOutstanding([.resetSecurityQuestions]), version: 4),
        .invalid(field: "reason", "A reason has at most 2000 characters."), .answersLocked(until: .distantFuture, now: .distantPast),
        .alreadyFrozen, .notFrozen, .noAccountOnFile, .reviewNeedsTier(.tier3), .unsupportedMedia(declaredMismatch: true),
        .unsupportedMedia(declaredMismatch: false), .tooLarge(limit: 1024), .caseNotOpen, .caseOpen, .alreadyErased, .accountExists,
        .accountNotFound, .keysUnavailable,
        .accessCodeJustIssued(until: Date(timeIntervalSince1970: 60), now: Date(timeIntervalSince1970: 0)), .unlockNotScheduled,
        .riskUncleared([.deviceClaimedElsewhere, .flagged]), .fourEyes, .stopLinkUnknown, .inboundNotFound, .inboundHandled,
        .accountBusy("123456789012"), .coolingOff, .caseErased, .tooManyDocuments(limit: 100), .callerNotVerified, .callerCodeWrong,
        .callerCodeLocked(until: Date(timeIntervalSince1970: 60), now: Date(timeIntervalSince1970: 0)),
    ]

    /// The refusals the case-changing routes answer besides the workflow's, for their documented statuses.
    static let caseChanges: [OperationError] = [
        .alreadyFrozen, .notFrozen, .riskUncleared([.flagged]), .fourEyes, .accountBusy("123456789012"), .coolingOff, .caseErased,
        .callerNotVerified,
    ]
}

// MARK: Administration errors

extension IdentityAdministrationError: Refusal {
    var problem: Problem {
        switch self {
        case .invalid(let failure): CaseHTTP.problem(for: failure)
        case .noSuchAgent: Problem.notFound(detail: "No agent has this id or email.")
        case .noSuchClient(let activeOnly): Problem.notFound(detail: activeOnly ? "No active API client has this id." : "No API client has this id.")
        case .agentExists: Problem(ErrorCode.agentExists, detail: "An agent with this email already exists.")
        case .lockout(.selfDemotion): Problem(ErrorCode.adminLockout, detail: "An admin may not deactivate or demote themselves; ask another admin.")
        case .lockout(.lastAdmin): Problem(ErrorCode.adminLockout, detail: "This is the last active admin; make another agent admin first.")
        case .lockout(.noPasskeyYet):
            Problem(ErrorCode.adminLockout, detail: "The agent has no passkey yet: they register one first (from their menu).")
        case .lockout(.lastRequiredPasskey):
            Problem(ErrorCode.adminLockout, detail: "An administrator requires you to sign in with a passkey: keep at least one.")
        case .noSuchProposal: Problem.notFound(detail: "No proposal has this id.")
        case .sameAdmin: Problem(ErrorCode.sameAdmin, detail: "You proposed this change: a different admin must confirm it.")
        case .proposalExpired:
            Problem(ErrorCode.proposalExpired, detail: "This proposal ran out of time before a second admin confirmed it; propose it again.")
        case .proposalClosed:
            Problem(
                ErrorCode.proposalClosed,
                detail: "This proposal was already confirmed or withdrawn, or whoever proposed it is no longer an active admin.")
        }
    }

    static let examples: [IdentityAdministrationError] =
        [
            .invalid(field: "email", "Not a valid email address."), .noSuchAgent, .noSuchClient(activeOnly: true), .noSuchClient(activeOnly: false),
            .agentExists, .noSuchProposal, .sameAdmin, .proposalExpired, .proposalClosed,
        ] + AdministrationLockout.allCases.map(IdentityAdministrationError.lockout)
}

extension IdentityAdministrationError: CustomStringConvertible {
    /// The catalogue's message, as the command line prints it.
    public var description: String { message }
}

extension Problem {
    /// The same problem answered with another status (only `case_erased`'s change refusal: see `ErrorCode.alsoAnswered`).
    fileprivate func with(status: Int) -> Problem {
        var problem = self
        problem.status = status
        problem.title = HTTPStatus.reasonPhrase(status)
        return problem
    }

    /// The same problem with one more header.
    fileprivate func adding(header: (String, String)) -> Problem {
        var problem = self
        problem.extraHeaders.append(header)
        return problem
    }
}

// MARK: For the route table

extension ResponseDoc {
    /// A problem answered with these refusals: the codes among them answered with `status`, each once, in order, with
    /// the members they add ("verification_failed (with factors)"); `lead` comes first ("validation_failed").
    static func refusals(_ refusals: [any Refusal], status: Int, lead: [String] = [], then note: String = "") -> ResponseDoc {
        var seen = Set(lead)
        var words = lead
        for problem in refusals.map(\.problem) where problem.status == status && seen.insert(problem.code).inserted {
            let members = problem.extraMembers.keys.sorted()
            words.append(members.isEmpty ? problem.code : "\(problem.code) (with \(members.joined(separator: ", ")))")
        }
        return .problem(words.joined(separator: ", ") + (note.isEmpty ? "." : note))
    }

    /// A problem answered with one refusal's code, explained by its messages ("agent_exists: An agent with this email…").
    static func refusal(_ refusals: any Refusal...) -> ResponseDoc {
        let problems = refusals.map(\.problem)
        return .problem("\(problems[0].code): " + problems.compactMap(\.detail).joined(separator: " Or: "))
    }
}
