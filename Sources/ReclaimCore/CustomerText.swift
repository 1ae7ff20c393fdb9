/// Every sentence the service writes for a customer, by key; each language's catalogue (`CustomerCatalogue`) holds one
/// whole-sentence template per key, so no sentence is ever built from translated fragments.
///
/// Templates may hold only `{contact}` (the support contact, never translated), or for `problemCodeReplaced` `{date}` and
/// `{address}` (filled in by the caller): `placeholders` says which.
public enum CustomerText: String, Sendable, CaseIterable {
    // The heading: where the case stands, named for the current stage of the progress line.
    case stageReceived = "stage.received"
    case stageIdentityCheck = "stage.identity_check"
    case stageDocuments = "stage.documents"
    case stageReview = "stage.review"
    case stageRestoringAccess = "stage.restoring_access"
    case stageRestoringLock = "stage.restoring_lock"
    case stageResolvedReset = "stage.resolved_reset"
    case stageResolvedAccess = "stage.resolved_access"
    case stageResolvedLock = "stage.resolved_lock"
    case stageRejected = "stage.rejected"
    case stageDocumentRejected = "stage.document_rejected"
    case stageClosed = "stage.closed"

    // What happens next: one sentence, consistent with `missing`.
    case nextWaitTriage = "next.wait_triage"
    case nextTellAgent = "next.tell_agent"
    case nextWaitIdentity = "next.wait_identity"
    case nextUpload = "next.upload"
    case nextUploadPaused = "next.upload_paused"
    case nextUploadAgain = "next.upload_again"
    case nextUploadAgainPaused = "next.upload_again_paused"
    case nextDocumentsComplete = "next.documents_complete"
    case nextWaitReview = "next.wait_review"
    case nextWaitEngineeringAccess = "next.wait_engineering_access"
    case nextWaitEngineeringLock = "next.wait_engineering_lock"
    case nextDoneReset = "next.done_reset"
    case nextDoneAccess = "next.done_access"
    case nextDoneLock = "next.done_lock"
    case nextRejected = "next.rejected"
    case nextClosed = "next.closed"

    // What is still needed, one sentence each.
    case missingProofOfPurchase = "missing.proof_of_purchase"
    case missingIMEIPhoto = "missing.imei_photo"
    case missingLockScreenPhoto = "missing.lock_screen_photo"
    case missingSecurityAnswer = "missing.security_answer"
    case missingCard = "missing.card"
    case missingDevice = "missing.device"

    // Why a document was not accepted (`CustomerReason`), shown beside it and in the mail.
    case reasonUnreadable = "reason.unreadable"
    case reasonWrongDocument = "reason.wrong_document"
    case reasonDoesNotMatch = "reason.does_not_match"
    case reasonIncomplete = "reason.incomplete"
    case reasonOther = "reason.other"

    // The progress line.
    case progressReceived = "progress.received"
    case progressIdentityCheck = "progress.identity_check"
    case progressDocuments = "progress.documents"
    case progressReview = "progress.review"
    case progressRestoringAccess = "progress.restoring_access"
    case progressRestoringLock = "progress.restoring_lock"
    case progressResetSent = "progress.reset_sent"
    case progressResolved = "progress.resolved"
    case progressNotConfirmed = "progress.not_confirmed"
    case progressClosed = "progress.closed"

    // Notices shown beside the case.
    case noticeNeverPay = "notice.never_pay"
    case noticeDeviceOnly = "notice.device_only"
    case noticeSecureAccount = "notice.secure_account"
    case noticeNewAccount = "notice.new_account"
    case noticeContact = "notice.contact"

    // Refusals of the status look-up and upload (problem `detail`).
    case problemNotFound = "problem.not_found"
    case problemInvalidCaseNumber = "problem.invalid_case_number"
    case problemLocked = "problem.locked"
    case problemCaseNotOpen = "problem.case_not_open"
    case problemStopUnknown = "problem.stop_unknown"
    /// A look-up with an access code that was replaced (api.md v1.3): when the new one was mailed, and where (masked).
    case problemCodeReplaced = "problem.code_replaced"

    // The cooling-off (api.md v1.2): a scheduled unlock step in the customer's words, and the stop link's answers.
    case unlockRemoveRescueEmail = "unlock.remove_rescue_email"
    case unlockResetSecurityQuestions = "unlock.reset_security_questions"
    case unlockRemoveActivationLock = "unlock.remove_activation_lock"
    case stopDone = "stop.done"
    case stopAgain = "stop.again"
    /// The stop link used after the step took effect (api.md v1.3): the change happened, the desk is alerted.
    case stopTooLate = "stop.too_late"

    // Erasure (api.md v1.2): the customer's look-up of an erased case.
    case problemErased = "problem.case_erased"

    /// The placeholders every language's template for this key must hold (and no others).
    public var placeholders: Set<String> {
        switch self {
        case .nextTellAgent, .nextRejected, .nextClosed, .noticeContact, .problemCaseNotOpen, .problemStopUnknown, .stopDone, .stopAgain,
            .stopTooLate, .problemErased:
            ["contact"]
        case .problemCodeReplaced: ["date", "address"]
        default: []
        }
    }

    /// The sentence in `language`, with `{contact}` filled in.
    public func text(_ language: CustomerLanguage, contact: String) -> String {
        let template = CustomerCatalogue.catalogue(language)[self] ?? CustomerCatalogue.english[self] ?? rawValue
        return placeholders.isEmpty ? template : template.replacingOccurrences(of: "{contact}", with: contact)
    }
}

extension CustomerLanguage {
    /// The first supported language named by a BCP 47 tag: `en*` → en; `zh-Hant`, `zh-TW`, `zh-HK`, `zh-MO` → zh-Hant;
    /// any other `zh` → zh-Hans; nil for anything else.
    public init?(tag: String) {
        let parts = tag.trimmingCharacters(in: .whitespaces).lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).map(String.init)
        guard let primary = parts.first else { return nil }
        switch primary {
        case "en": self = .english
        case "zh":
            let rest = Set(parts.dropFirst())
            if rest.contains("hant") {
                self = .traditionalChinese
            } else if rest.contains("hans") {
                self = .simplifiedChinese
            } else if !rest.isDisjoint(with: ["tw", "hk", "mo"]) {
                self = .traditionalChinese
            } else {
                self = .simplifiedChinese
            }
        default: return nil
        }
    }

    /// The best supported language of an `Accept-Language` header (by q-value, then order); nil when none is supported.
    public init?(acceptLanguage header: String) {
        var best: (q: Double, language: CustomerLanguage)?
        for item in header.split(separator: ",") {
            let fields = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = fields.first, let language = CustomerLanguage(tag: tag) else { continue }
            var q = 1.0
            for parameter in fields.dropFirst() where parameter.lowercased().hasPrefix("q=") {
                q = Double(parameter.dropFirst(2)) ?? 0
            }
            if q > 0, q > (best?.q ?? 0) { best = (q, language) }
        }
        guard let best else { return nil }
        self = best.language
    }

    /// The language a customer reads: the one asked for, else the case's, else `Accept-Language`'s, else English.
    public static func negotiate(requested: CustomerLanguage?, caseLanguage: CustomerLanguage?, acceptLanguage: String?) -> CustomerLanguage {
        requested ?? caseLanguage ?? acceptLanguage.flatMap(CustomerLanguage.init(acceptLanguage:)) ?? .english
    }

    /// The language of a mail to the customer: the case's, else English (api.md v1.2): a mail has no reader's
    /// `Accept-Language` to ask, and the agent's is not the customer's.
    public static func ofMail(caseLanguage: CustomerLanguage?) -> CustomerLanguage {
        caseLanguage ?? .english
    }
}

extension UnlockKind {
    /// The step in the customer's words (the status page, the notice).
    public var customerText: CustomerText {
        switch self {
        case .removeRescueEmail: .unlockRemoveRescueEmail
        case .resetSecurityQuestions: .unlockResetSecurityQuestions
        case .removeActivationLock: .unlockRemoveActivationLock
        }
    }
}
