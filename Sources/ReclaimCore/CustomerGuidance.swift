import Foundation

/// Something a path still needs from the customer; the raw value is the word listed in the status `missing`.
public enum Requirement: String, Sendable, Codable, CaseIterable {
    /// An invoice, the box (photo of its back) or a carrier contract.
    case proofOfPurchase = "proof_of_purchase"
    /// A photo of the serial/IMEI (ideally the setup assistant's "Hello" screen).
    case imeiPhoto = "imei_photo"
    /// A photo of the activation-lock or lost-mode screen.
    case lockScreenPhoto = "lock_screen_photo"
    /// At least one security answer.
    case securityAnswer = "security_answer"
    /// The payment card on file.
    case card
    /// The device serial or IMEI.
    case device

    /// The evidence kinds that satisfy it (any one is enough).
    public var satisfiedBy: Set<EvidenceKind> {
        switch self {
        case .proofOfPurchase: [.invoice, .boxPhoto, .carrierContract]
        case .imeiPhoto: [.imeiPhoto]
        case .lockScreenPhoto: [.lockScreenPhoto]
        case .securityAnswer: [.securityAnswers]
        case .card: [.card]
        case .device: [.device]
        }
    }

    /// What to send, in plain words for the customer.
    public var plainText: String {
        switch self {
        case .proofOfPurchase: "Proof of purchase: an invoice, a photo of the back of the box, or your carrier contract"
        case .imeiPhoto: "A photo of the serial number or IMEI, ideally of the \"Hello\" setup screen, otherwise of the device itself"
        case .lockScreenPhoto: "A photo of the screen that shows the device is locked or lost"
        case .securityAnswer: "The answers to your security questions"
        case .card: "The payment card registered to your account"
        case .device: "The serial number or IMEI of a device registered to your account"
        }
    }
}

/// What a path still needs, as `Requirement`s, given the kinds of evidence filed and not rejected.
///
/// documents: proof of purchase + IMEI photo (+ lock-screen photo when lost mode was on);
/// activation_lock: proof of purchase + IMEI photo + lock-screen photo;
/// undetermined (the identity check): the identity factors not yet filed;
/// reset and verified_identity: nothing (identity is settled).
public func missingRequirements(path: RecoveryPath, kind: CaseKind, facts: CaseFacts, have: Set<EvidenceKind>) -> [Requirement] {
    let needed: [Requirement]
    switch path {
    case .undetermined:
        needed = Workflow.isDeviceOnly(kind: kind, facts: facts) ? [.proofOfPurchase, .imeiPhoto, .lockScreenPhoto] : [.securityAnswer, .card, .device]
    case .reset, .verifiedIdentity:
        needed = []
    case .documents:
        needed = facts.lostModeEnabled ? [.proofOfPurchase, .imeiPhoto, .lockScreenPhoto] : [.proofOfPurchase, .imeiPhoto]
    case .activationLock:
        needed = [.proofOfPurchase, .imeiPhoto, .lockScreenPhoto]
    }
    return needed.filter { have.isDisjoint(with: $0.satisfiedBy) }
}

/// The words for the status page's `missing` list (see `missingRequirements`).
public func missingEvidence(path: RecoveryPath, kind: CaseKind, facts: CaseFacts, have: Set<EvidenceKind>) -> [String] {
    missingRequirements(path: path, kind: kind, facts: facts, have: have).map(\.rawValue)
}

/// As `missingEvidence(path:kind:facts:have:)`, but empty once nothing more can help (engineering, resolved, rejected, closed).
public func missingEvidence(state: CaseState, path: RecoveryPath, kind: CaseKind, facts: CaseFacts, have: Set<EvidenceKind>) -> [String] {
    switch state {
    case .new, .identityCheck, .awaitingDocuments, .documentReview: missingEvidence(path: path, kind: kind, facts: facts, have: have)
    case .engineering, .resolved, .rejected, .closed, .merged: []
    }
}

/// Where the case stands, in plain words for the customer (e.g. "We are checking your identity").
public func plainState(_ state: CaseState) -> String {
    switch state {
    case .new: "We have received your case"
    case .identityCheck: "We are checking your identity"
    case .awaitingDocuments: "We are waiting for your documents"
    case .documentReview: "We are reviewing your documents"
    case .engineering: "Our engineers are restoring your access"
    case .resolved: "Your case is resolved"
    case .rejected: "We could not confirm that you are the owner"
    case .closed: "Your case is closed"
    case .merged: "Your case was joined with another of your cases"
    }
}

/// What the customer should do now, or until when to wait, in plain words.
/// Never mentions the thief's rescue address: resets go only to the verified primary address.
/// With `now`, a due date already passed is owned up to instead of promised again.
public func customerNextStep(state: CaseState, path: RecoveryPath, dueAt: Date?, now: Date? = nil) -> String {
    let wait: String
    switch (dueAt, now) {
    case (let due?, let now?) where due < now:
        wait = "This is taking longer than we promised (we aimed for \(plainDate(due))); your case is still being worked on and we will update this page as soon as there is news."
    case (let due?, _):
        wait = "We expect to have news for you by \(plainDate(due))."
    case (nil, _):
        wait = "We will update this page as soon as we can."
    }
    switch state {
    case .new:
        return "Nothing to do for now: an agent will look at your case soon. \(wait)"
    case .identityCheck:
        return "We are comparing what you told us with what is on file. If we need more, we will ask you here. \(wait)"
    case .awaitingDocuments:
        var items = [Requirement.proofOfPurchase, .imeiPhoto]
        if path == .activationLock { items.append(.lockScreenPhoto) }
        let list = items.map { $0.plainText.prefix(1).lowercased() + $0.plainText.dropFirst() }.joined(separator: "; ")
        return "Please upload: \(list). Our deadline is paused until your documents arrive."
    case .documentReview:
        return "Nothing to do for now: we are reviewing your documents. \(wait)"
    case .engineering:
        let what = path == .activationLock ? "removing the lock from your device" : "removing the changes made to your account"
        return "Nothing to do for now: our engineers are \(what). \(wait)"
    case .resolved:
        switch path {
        case .reset: return "We sent a reset link to your verified primary e-mail address. Follow it to choose a new password."
        case .activationLock: return "The activation lock is removed: you can set up your device as new."
        default: return "Your access is restored. Sign in, choose a new password and check your security settings."
        }
    case .rejected:
        return "We could not confirm that you own the account or device. If you have more proof, contact us quoting your case number."
    case .closed:
        return "Your case is closed. If the problem comes back, contact us quoting your case number."
    case .merged:
        return "This case was joined with another one about the same account: everything you sent is kept there. \(wait)"
    }
}

// "14 March 2026" in UTC: fixed English, no locale data, the same on every machine.
func plainDate(_ date: Date) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let parts = calendar.dateComponents([.year, .month, .day], from: date)
    let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
    return "\(parts.day!) \(months[parts.month! - 1]) \(parts.year!) (UTC)"
}
