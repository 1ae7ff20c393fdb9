import Foundation
import ReclaimCore

/// Why an operation refused, in the domain's words. How each is answered (code, status, message, extra members) is
/// declared once, in the API's refusal catalogue (`ReclaimAPI/ErrorCatalogue.swift`), which the command line prints
/// too. Never carries a secret or a stored value.
public enum OperationError: Error, Sendable, Equatable {
    /// No case has this number (or the caller may not know it).
    case caseNotFound
    /// No evidence has this id.
    case evidenceNotFound
    /// The case moved on since the caller read it (it is now at `current`).
    case stale(current: Int)
    /// The workflow refused; `caseID` is set when the refusal is a permission one to be recorded on the timeline.
    case refused(WorkflowRefusal, caseID: UUID?)
    /// The workflow refused after the operation did a part that stands (`complete` records the unlock given even when
    /// steps remain): the caller commits that part, then answers this; the case is now at `version`.
    case refusedAfterRecording(WorkflowRefusal, version: Int)
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
    /// A document or transcript needs a higher tier to review (logged, not recorded on the case).
    case reviewNeedsTier(Tier)
    /// Content that is not one of the accepted media types, or not the type it was declared as.
    case unsupportedMedia(declaredMismatch: Bool)
    /// Content over `limit` bytes.
    case tooLarge(limit: Int)
    /// The case holds `limit` documents already (`RECLAIM_CASE_DOCUMENTS`).
    case tooManyDocuments(limit: Int)
    /// The case is finished: nobody would see what is filed on it.
    case caseNotOpen
    /// The case is still open: only a finished case is erased.
    case caseOpen
    /// The case was erased already.
    case alreadyErased
    /// An account with this e-mail is already on file.
    case accountExists
    /// No account with this e-mail is on file.
    case accountNotFound
    /// The secret keys are not loaded (the service was started without them).
    case keysUnavailable
    /// A new access code was issued moments ago; another may be issued from `until`.
    case accessCodeJustIssued(until: Date, now: Date)
    /// No received mail has this id.
    case inboundNotFound
    /// The received mail is no longer unmatched (attached to a case or discarded already).
    case inboundHandled
    /// Approving or recording an unlock step while these risk signals stand uncleared.
    case riskUncleared([RiskSignal])
    /// The agent cleared the case's risk signals, so a second person approves it and records its unlock steps.
    case fourEyes
    /// Cancelling an unlock step that is not scheduled (never recorded, done already, or cancelled before).
    case unlockNotScheduled
    /// A "this wasn't me" link whose token the service never issued.
    case stopLinkUnknown
    /// A step is scheduled on this other case (by number) of the same account: one recovery of an account at a time.
    case accountBusy(String)
    /// Lifting a freeze while an unlock step waits for its time.
    case coolingOff
    /// The case was erased: it takes no change at all.
    case caseErased
    /// Reading out a new access code or correcting the contact address needs a caller this agent verified (api.md v1.3).
    case callerNotVerified
    /// The call code (the customer code, or a mailed one-time code) is not the case's: counted against its budget.
    case callerCodeWrong
    /// Wrong call codes spent the case's look-up budget: no proof is checked until `until`.
    case callerCodeLocked(until: Date, now: Date)

    /// One field's validation failure.
    public static func invalid(field: String, _ message: String) -> OperationError {
        .invalid(ValidationFailure([FieldIssue(field: field, message: message)]))
    }
}
