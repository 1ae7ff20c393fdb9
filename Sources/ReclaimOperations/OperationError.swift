import Foundation
import ReclaimCore

/// Why an operation refused, in the domain's words; the API maps each case to one problem document (status and
/// code) in one table, and the command line prints `description`. Never carries a secret or a stored value.
public enum OperationError: Error, Sendable, Equatable {
    /// No case has this number (or the caller may not know it).
    case caseNotFound
    /// No evidence has this id.
    case evidenceNotFound
    /// The case moved on since the caller read it (it is now at `current`).
    case stale(current: Int)
    /// The workflow refused; `caseID` is set when the refusal is a permission one to be recorded on the timeline.
    case refused(WorkflowRefusal, caseID: UUID?)
    /// Input that breaks a rule, field by field.
    case invalid(ValidationFailure)
    /// Too many wrong answers for the account on file; answers are refused until `until`.
    case answersLocked(until: Date, now: Date)
    /// The account is already frozen.
    case alreadyFrozen
    /// There is no freeze to lift.
    case notFrozen
    /// The case's account is not on file, so there are no security questions to ask.
    case noAccountOnFile
    /// A document or transcript needs a higher tier to review; `caseID` for the denial record.
    case reviewNeedsTier(Tier, caseID: UUID)
    /// Content that is not one of the accepted media types, or not the type it was declared as.
    case unsupportedMedia(declaredMismatch: Bool)
    /// Content over `limit` bytes.
    case tooLarge(limit: Int)
    /// The case is finished: nobody would see what is filed on it.
    case caseNotOpen
    /// An account with this e-mail is already on file.
    case accountExists
    /// The secret keys are not loaded (the service was started without them).
    case keysUnavailable
    /// A new access code was issued moments ago; another may be issued from `until`.
    case accessCodeJustIssued(until: Date, now: Date)

    /// One field's validation failure.
    static func invalid(field: String, _ message: String) -> OperationError {
        .invalid(ValidationFailure([FieldIssue(field: field, message: message)]))
    }
}

extension OperationError: CustomStringConvertible {
    /// One line for the operator or the log.
    public var description: String {
        switch self {
        case .caseNotFound: "no case has this number"
        case .evidenceNotFound: "no evidence has this id"
        case .stale(let current): "the case changed (now at version \(current))"
        case .refused(let refusal, _): refusal.message
        case .invalid(let failure): failure.issues.map { "\($0.field): \($0.message)" }.joined(separator: "; ")
        case .answersLocked: "too many wrong answers for this account"
        case .alreadyFrozen: "the account is already frozen"
        case .notFrozen: "the account is not frozen"
        case .noAccountOnFile: "the case's account is not on file"
        case .reviewNeedsTier(let tier, _): "reviewing this evidence needs \(tier.rawValue) or above"
        case .unsupportedMedia(let mismatch): mismatch ? "the file's content is not the type it was declared as" : "only PDF, JPEG, PNG and HEIC files are accepted"
        case .tooLarge(let limit): "the content is larger than \(limit) bytes"
        case .caseNotOpen: "the case is finished"
        case .accountExists: "an account with this e-mail is already on file"
        case .keysUnavailable: "the secret keys are not loaded"
        case .accessCodeJustIssued: "a new access code was issued moments ago"
        }
    }
}
