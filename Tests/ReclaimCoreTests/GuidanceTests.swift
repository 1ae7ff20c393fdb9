import Foundation
import Testing

@testable import ReclaimCore

/// What the customer reads, derived in one place: table tests over every state × path × kind × facts × evidence mix.
@Suite struct GuidanceTests {
    /// Every evidence mix that matters: each requirement's evidence absent, pending or rejected (with a customer reason,
    /// each in turn, or none as on a review older than reasons), a transcript or not.
    static let mixes: [[FiledEvidence]] = {
        let kinds: [EvidenceKind] = [.invoice, .imeiPhoto, .lockScreenPhoto, .securityAnswers, .card, .device]
        var mixes: [[FiledEvidence]] = [[]]
        for (index, kind) in kinds.enumerated() {
            let reason: CustomerReason? = kind == .invoice ? nil : CustomerReason.allCases[index % CustomerReason.allCases.count]
            mixes = mixes.flatMap { mix in
                [
                    mix, mix + [FiledEvidence(kind: kind, status: .pending)],
                    mix + [FiledEvidence(kind: kind, status: .rejected, customerReason: reason)],
                ]
            }
        }
        return mixes.flatMap { [$0, $0 + [FiledEvidence(kind: .transcript, status: .pending), FiledEvidence(kind: .invoice, status: .accepted)]] }
    }()
    static let facts: [CaseFacts] = [
        CaseFacts(), CaseFacts(twoStepEnabled: true), CaseFacts(lostModeEnabled: true),
        CaseFacts(rescueEmailAdded: true, twoStepEnabled: true, lostModeEnabled: true),
    ]

    static let nothingToDo: Set<CustomerText> = [
        .nextWaitTriage, .nextWaitIdentity, .nextDocumentsComplete, .nextWaitReview,
        .nextWaitEngineeringAccess, .nextWaitEngineeringLock,
    ]
    static let uploads: Set<CustomerText> = [.nextUpload, .nextUploadPaused, .nextUploadAgain, .nextUploadAgainPaused]
    static let finished: Set<CustomerText> = [.nextDoneReset, .nextDoneAccess, .nextDoneLock, .nextRejected, .nextClosed]

    static func stageKey(_ stage: CustomerText) -> String {
        switch stage {
        case .stageReceived: "received"
        case .stageIdentityCheck: "identity_check"
        case .stageDocuments, .stageDocumentRejected: "documents"
        case .stageReview: "review"
        case .stageRestoringAccess, .stageRestoringLock: "restoring"
        default: "finished"
        }
    }

    /// One run per state (in parallel): every path, kind, facts and evidence mix.
    @Test(arguments: CaseState.allCases) func neverContradictsItselfInAnyPathOrEvidenceMix(state: CaseState) {
        var checked = 0
        var failures: [String] = []
        do {
            for path in RecoveryPath.allCases {
                for kind in CaseKind.allCases {
                    for facts in Self.facts {
                        for mix in Self.mixes {
                            let g = CustomerGuidance(state: state, path: path, kind: kind, facts: facts, evidence: mix)
                            // Plain checks, one #expect at the end: a million macro expansions would take minutes.
                            let broken = Self.brokenRules(g, state: state, kind: kind, facts: facts, mix: mix)
                            if !broken.isEmpty, failures.count < 20 {
                                failures.append(
                                    "\(state) \(path) \(kind) \(facts) \(mix.map { "\($0.kind.rawValue):\($0.status.rawValue)" }): \(broken)")
                            }
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(checked == RecoveryPath.allCases.count * CaseKind.allCases.count * Self.facts.count * Self.mixes.count)
    }

    /// The rules the customer's view keeps, by name, that `g` breaks.
    static func brokenRules(_ g: CustomerGuidance, state: CaseState, kind: CaseKind, facts: CaseFacts, mix: [FiledEvidence]) -> [String] {
        var broken: [String] = []
        func rule(_ holds: Bool, _ name: String) { if !holds { broken.append(name) } }
        // "Nothing to do" never sits above a list of things still needed, and a list always has its next step.
        if nothingToDo.contains(g.nextStep) { rule(g.missing.isEmpty, "nothing to do, yet something is missing") }
        if !g.missing.isEmpty { rule(uploads.contains(g.nextStep) || g.nextStep == .nextTellAgent, "missing without a step that asks for it") }
        // An upload step only when something uploadable is missing and the page offers the form.
        if uploads.contains(g.nextStep) { rule(g.canUpload && g.missing.contains(where: \.isUpload), "upload step with nothing to upload") }
        // Told to an agent only: what the page cannot take.
        if g.nextStep == .nextTellAgent { rule(!g.missing.isEmpty && g.missing.allSatisfy { !$0.isUpload }, "tell-agent step for uploads") }
        // Nothing filed (and not rejected) is still asked for.
        let counted = counted(mix)
        rule(g.missing.allSatisfy { counted.isDisjoint(with: $0.satisfiedBy) }, "asks again for what was received")
        // The heading names the progress line's current stage (the last one once finished).
        let current = state.isOpen ? g.progress.filter { $0.mark == .current } : [g.progress.last!]
        rule(current.count == 1, "not exactly one current stage")
        rule(current.first.map(\.key) == stageKey(g.stage), "heading and progress line disagree")
        // Finished: nothing needed, no uploads, the way to support is shown; open: never a finished sentence.
        if state.isOpen {
            rule(g.canUpload && !finished.contains(g.nextStep) && !g.notices.contains(.noticeContact), "open case reads as finished")
        } else {
            rule(
                g.missing.isEmpty && !g.canUpload && finished.contains(g.nextStep) && g.notices.contains(.noticeContact),
                "finished case reads as open")
            rule(!g.evidence.contains(.pending), "waits for a review that will never come")
        }
        // Typed details and transcripts are shown as received: never a review or match result.
        for (item, shown) in zip(mix, g.evidence) where item.kind.factor != nil || item.kind == .transcript {
            rule(shown == .received, "typed detail shown as \(shown)")
        }
        rule(g.evidence.count == mix.count, "evidence count")
        // A rejected document leads somewhere: its reason is beside it (and nothing else has one); while a document the
        // path needs was rejected and not replaced, the page never reads as under review or done with documents, and
        // its next step asks for another.
        rule(
            g.reasons.count == mix.count && zip(g.evidence, g.reasons).allSatisfy { ($0 == .rejected) == ($1 != nil) }, "rejection without its reason"
        )
        for (item, reason) in zip(mix, g.reasons) where reason != nil {
            rule(item.customerReason == nil || reason == item.customerReason, "another reason shown")
        }
        let resend = g.missing.filter { requirement in
            requirement.isUpload && mix.contains { $0.kind.isDocument && $0.status == .rejected && requirement.satisfiedBy.contains($0.kind) }
        }
        rule(g.resend == resend, "the documents to send again")
        if !resend.isEmpty {
            rule(g.stage != .stageReview && g.nextStep != .nextWaitReview, "reads as under review with a rejected document needed")
            rule(!g.progress.contains { $0.key == "documents" && $0.mark == .done }, "progress ticks the documents with a rejected one needed")
            rule([CustomerText.nextUploadAgain, .nextUploadAgainPaused].contains(g.nextStep), "a rejected document needed, yet no step asks again")
            rule(
                g.progress.contains { $0.key == "documents" } ? (g.stage == .stageDocumentRejected) == (current.first?.key == "documents") : true,
                "documents stage without the rejection heading")
        } else {
            rule(
                g.stage != .stageDocumentRejected && ![CustomerText.nextUploadAgain, .nextUploadAgainPaused].contains(g.nextStep),
                "asks again for nothing rejected")
        }
        // Never pay, always first; two-step on: the device-only explanation, and no identity check drawn.
        rule(g.notices.first == .noticeNeverPay, "never pay is not first")
        if facts.twoStepEnabled {
            rule(g.notices.contains(.noticeDeviceOnly), "two-step without the device-only explanation")
            rule(!g.progress.contains { $0.key == "identity_check" } && g.stage != .stageIdentityCheck, "two-step case shows an identity check")
            rule(!g.missing.contains { !$0.isUpload }, "device-only case asked for identity details")
        }
        if Workflow.isDeviceOnly(kind: kind, facts: facts) {
            rule(
                ![CustomerText.nextDoneAccess, .nextDoneReset, .nextWaitEngineeringAccess].contains(g.nextStep),
                "device-only case promises the account")
        }
        // Access restored: secure the account (or, device only, the new one).
        if state == .resolved { rule(g.notices.contains(.noticeSecureAccount) || g.notices.contains(.noticeNewAccount), "restored without advice") }
        return broken
    }

    static func counted(_ mix: [FiledEvidence]) -> Set<EvidenceKind> {
        Set(mix.filter { $0.kind.factor != nil || $0.status != .rejected }.map(\.kind))
    }

    @Test func whatEachPathAsksFor() {
        func missing(
            _ state: CaseState, _ path: RecoveryPath, _ kind: CaseKind = .accountTakeover, _ facts: CaseFacts = CaseFacts(),
            have: [EvidenceKind] = [], rejected: [EvidenceKind] = []
        ) -> [String] {
            missingEvidence(
                state: state, path: path, kind: kind, facts: facts,
                evidence: have.map { FiledEvidence(kind: $0, status: .pending) } + rejected.map { FiledEvidence(kind: $0, status: .rejected) })
        }
        #expect(missing(.awaitingDocuments, .documents) == ["proof_of_purchase", "imei_photo"])
        #expect(missing(.awaitingDocuments, .documents, have: [.boxPhoto]) == ["imei_photo"])
        #expect(missing(.documentReview, .documents, have: [.carrierContract, .imeiPhoto]) == [])
        #expect(missing(.awaitingDocuments, .documents, have: [.warrantyCard, .policeReport, .transcript]) == ["proof_of_purchase", "imei_photo"])
        #expect(missing(.awaitingDocuments, .documents, have: [.imeiPhoto], rejected: [.invoice]) == ["proof_of_purchase"])
        #expect(
            missing(.awaitingDocuments, .documents, .accountTakeover, CaseFacts(lostModeEnabled: true), have: [.invoice, .imeiPhoto]) == [
                "lock_screen_photo"
            ])
        #expect(missing(.new, .activationLock, .activationLock) == ["proof_of_purchase", "imei_photo", "lock_screen_photo"])
        #expect(
            missing(.new, .undetermined, .accountTakeover, CaseFacts(twoStepEnabled: true), have: [.invoice, .lockScreenPhoto]) == ["imei_photo"])
        #expect(missing(.new, .undetermined) == ["security_answer", "card", "device"])
        #expect(missing(.identityCheck, .undetermined, have: [.card, .invoice]) == ["security_answer", "device"])
        // A told detail stays told even if a reviewer set it aside: the page never asks again for what it shows as received.
        #expect(missing(.identityCheck, .undetermined, rejected: [.card]) == ["security_answer", "device"])
        #expect(missing(.identityCheck, .verifiedIdentity) == [] && missing(.new, .reset) == [])
        for state in [CaseState.engineering, .resolved, .rejected, .closed] { #expect(missing(state, .documents) == []) }
    }

    @Test func theIssuesContradictionsAreGone() {
        // "Nothing to do for now" above "What we still need: answers / card / serial".
        let new = CustomerGuidance(state: .new, path: .undetermined, kind: .accountTakeover, facts: CaseFacts(), evidence: [])
        #expect(new.nextStep == .nextTellAgent && new.missing == [.securityAnswer, .card, .device])
        #expect(new.nextStep.text(.english, contact: "help@example.org").contains("help@example.org"))
        // Answers, card and serial told to an agent: received, even on a resolved case.
        let told = [
            FiledEvidence(kind: .securityAnswers, status: .pending), FiledEvidence(kind: .card, status: .accepted),
            FiledEvidence(kind: .device, status: .rejected),
        ]
        #expect(
            CustomerGuidance(state: .resolved, path: .verifiedIdentity, kind: .accountTakeover, facts: CaseFacts(), evidence: told).evidence == [
                .received, .received, .received,
            ])
        // Two-step: the heading and the line agree (received), and the page says the account cannot be recovered.
        let twoStep = CustomerGuidance(
            state: .identityCheck, path: .activationLock, kind: .accountTakeover, facts: CaseFacts(twoStepEnabled: true), evidence: [])
        #expect(twoStep.stage == .stageReceived && twoStep.notices.contains(.noticeDeviceOnly) && twoStep.nextStep == .nextUpload)
        #expect(CustomerText.noticeDeviceOnly.text(.english, contact: "").contains("cannot be recovered"))
        // Restored: turn on two-step and change the mailbox password.
        let restored = CustomerGuidance(state: .resolved, path: .documents, kind: .accountTakeover, facts: CaseFacts(), evidence: [])
        #expect(restored.notices == [.noticeNeverPay, .noticeSecureAccount, .noticeContact])
        let advice = CustomerText.noticeSecureAccount.text(.english, contact: "")
        #expect(advice.contains("two-step verification") && advice.contains("password of the e-mail account"))
        #expect(CustomerText.noticeNeverPay.text(.english, contact: "").hasPrefix("Never pay"))
    }

    @Test func aRejectedDocumentLeadsSomewhere() {
        // The issue: "we are reviewing", "your documents" ticked, and "we still need" the same photo with no reason.
        let filed = [
            FiledEvidence(kind: .invoice, status: .accepted), FiledEvidence(kind: .imeiPhoto, status: .rejected, customerReason: .unreadable),
        ]
        let review = CustomerGuidance(state: .documentReview, path: .documents, kind: .accountTakeover, facts: CaseFacts(), evidence: filed)
        #expect(review.stage == .stageDocumentRejected && review.nextStep == .nextUploadAgain)
        #expect(
            review.progress.map { "\($0.key):\($0.mark.rawValue)" }.joined(separator: " ")
                == "received:done identity_check:done documents:current review:upcoming restoring:upcoming finished:upcoming")
        #expect(review.missing == [.imeiPhoto] && review.resend == [.imeiPhoto])
        #expect(review.evidence == [.accepted, .rejected] && review.reasons == [nil, .unreadable])
        // Back with the customer (the case returned by itself): the deadline is paused, and the page says so.
        let waiting = CustomerGuidance(state: .awaitingDocuments, path: .documents, kind: .accountTakeover, facts: CaseFacts(), evidence: filed)
        #expect(waiting.stage == .stageDocumentRejected && waiting.nextStep == .nextUploadAgainPaused)
        // Another photo sent: under review again, the rejected one still shown with its reason.
        let again = CustomerGuidance(
            state: .documentReview, path: .documents, kind: .accountTakeover, facts: CaseFacts(),
            evidence: filed + [FiledEvidence(kind: .imeiPhoto, status: .pending)])
        #expect(again.stage == .stageReview && again.resend.isEmpty && again.reasons == [nil, .unreadable, nil])
        // A rejection from before reasons existed still says something.
        let old = CustomerGuidance(
            state: .rejected, path: .documents, kind: .accountTakeover, facts: CaseFacts(),
            evidence: [FiledEvidence(kind: .invoice, status: .rejected)])
        #expect(old.reasons == [.other])
        for language in CustomerLanguage.allCases {
            #expect(CustomerReason.allCases.allSatisfy { !$0.text.text(language, contact: "").isEmpty })
        }
    }

    /// "key:mark" per stage, for compact comparisons.
    private func line(_ state: CaseState, _ path: RecoveryPath) -> String {
        CustomerGuidance.progress(state: state, path: path).map { "\($0.key):\($0.mark.rawValue)" }.joined(separator: " ")
    }

    @Test func progressLineFollowsThePath() {
        #expect(line(.new, .undetermined) == "received:current identity_check:upcoming restoring:upcoming finished:upcoming")
        #expect(line(.identityCheck, .undetermined) == "received:done identity_check:current restoring:upcoming finished:upcoming")
        #expect(line(.engineering, .verifiedIdentity) == "received:done identity_check:done restoring:current finished:upcoming")
        #expect(line(.resolved, .reset) == "received:done identity_check:done finished:done")
        #expect(
            line(.awaitingDocuments, .documents)
                == "received:done identity_check:done documents:current review:upcoming restoring:upcoming finished:upcoming")
        #expect(line(.documentReview, .activationLock) == "received:done documents:done review:current restoring:upcoming finished:upcoming")
        #expect(line(.identityCheck, .activationLock) == "received:current documents:upcoming review:upcoming restoring:upcoming finished:upcoming")
        #expect(line(.rejected, .documents) == "received:done identity_check:done documents:done review:done finished:done")
        #expect(line(.closed, .activationLock) == "received:done documents:done review:done finished:done")
        #expect(CustomerGuidance.progress(state: .rejected, path: .documents).last?.label == .progressNotConfirmed)
        #expect(CustomerGuidance.progress(state: .closed, path: .reset).last?.label == .progressClosed)
        #expect(CustomerGuidance.progress(state: .resolved, path: .reset).last?.label == .progressResetSent)
        #expect(CustomerGuidance.progress(state: .engineering, path: .activationLock).first { $0.mark == .current }?.label == .progressRestoringLock)
    }
}
