import Crypto
import Foundation
import Notifications
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport
import Testing

/// api.md v1.2 "Mail says what the page says": every customer mail's status line and promise come from the status
/// page's own guidance, for every kind and path; a device-only or two-step case is never promised its account back.
@Suite struct MailGuidanceTableTests {
    static let contact = "help@reclaim.test"

    /// What promises the account back, in each language: the account-only sentences of the page's catalogue, and the
    /// opening mail's old wording ("to recover your account").
    static func accountPromises(_ language: CustomerLanguage) -> [String] {
        let keys: [CustomerText] = [
            .stageRestoringAccess, .stageResolvedAccess, .stageResolvedReset, .nextWaitEngineeringAccess, .nextDoneAccess,
            .nextDoneReset, .noticeSecureAccount,
        ]
        let old =
            switch language {
            case .english: "recover your account"
            case .simplifiedChinese: "恢复您的账户"
            case .traditionalChinese: "恢復您的帳戶"
            }
        return keys.map { $0.text(language, contact: contact) } + [old]
    }

    /// Every state × path × kind × two-step × mail kind × language: the mail's status line, next step, missing list and
    /// notices are the page's; no other heading, next step, requirement or notice of the catalogue appears; a
    /// device-only case is promised no account.
    @Test func everyMailSaysWhatThePageSaysAndNeverPromisesWhatItDenies() {
        let pageKeys = CustomerText.allCases.filter { key in ["stage.", "next.", "notice.", "missing."].contains { key.rawValue.hasPrefix($0) } }
        var checked = 0
        for state in CaseState.allCases {
            for path in RecoveryPath.allCases {
                for kind in CaseKind.allCases {
                    for twoStep in [false, true] {
                        let facts = CaseFacts(rescueEmailAdded: true, twoStepEnabled: twoStep)
                        // Nothing filed yet: the longest missing list the state and path ask for.
                        let page = CustomerGuidance(state: state, path: path, kind: kind, facts: facts, evidence: [])
                        let status = CustomerMailStatus(page)
                        for mailKind in CustomerMailKind.allCases {
                            for language in CustomerLanguage.allCases {
                                let body = MailText.body(
                                    mailKind, caseNumber: "4821-0937-5519", status: status,
                                    accessCode: mailKind.carriesAccessCode ? "AAAA-BBBB-CCCC-DDDD" : nil,
                                    statusURL: "https://reclaim.test/status?case=482109375519", language: language, contact: Self.contact)
                                let label = "\(state) \(path) \(kind) two-step \(twoStep) \(mailKind) \(language)"
                                // The contact-change mail may reach a stranger (the typo corrected): the page's notices only.
                                let shown =
                                    mailKind == .contactChanged
                                    ? Set(page.notices)
                                    : Set([page.stage, page.nextStep] + page.notices + page.missing.map(\.text))
                                for key in shown {
                                    let sentence =
                                        key.rawValue.hasPrefix("stage.")
                                        ? MailText.state(key, language: language) : key.text(language, contact: Self.contact)
                                    #expect(body.contains(sentence), "\(label): \(key) missing")
                                }
                                for key in pageKeys where !shown.contains(key) {
                                    let sentence = key.text(language, contact: Self.contact)
                                    // A sentence of the page that is part of a shown one is not another claim.
                                    if shown.contains(where: { $0.text(language, contact: Self.contact).contains(sentence) }) { continue }
                                    #expect(!body.contains(sentence), "\(label): \(key) is not on the page")
                                }
                                if Workflow.isDeviceOnly(kind: kind, facts: facts) {
                                    for promise in Self.accountPromises(language) {
                                        #expect(!body.contains(promise), "\(label) promises the account: \(promise)")
                                    }
                                }
                                checked += 1
                            }
                        }
                    }
                }
            }
        }
        #expect(checked == CaseState.allCases.count * RecoveryPath.allCases.count * 2 * 2 * CustomerMailKind.allCases.count * 3)
    }

    /// A mail queued before next steps and notices were carried still renders, with its status line and never-pay.
    @Test func anOlderPayloadStillRenders() throws {
        let status = try #require(CustomerMailStatus(payload: ["stage": .string("stage.identity_check")]))
        #expect(status.nextStep == nil && status.notices == [.noticeNeverPay])
        #expect(CustomerMailStatus(payload: ["stage": .string("stage.unknown")]) == nil)
    }
}

/// The same rule end to end: the operations queue the page's guidance, the worker sends it over SMTP (a real receiver).
@Suite(.serialized) final class MailGuidanceDeliveryTests {
    let database: TestDatabase
    let pool: PostgresPool
    let keys = KeyFile.generate()
    let operations: CaseOperations
    let agent = "agent:00000000-0000-0000-0000-000000000001"
    let directory: String

    init() throws {
        database = try TestDatabase.create()
        pool = database.makePool()
        operations = CaseOperations(keys: keys)
        directory = try temporaryDirectory()
    }

    deinit {
        pool.close()
        database.drop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func open(kind: CaseKind, facts: CaseFacts, contact: String, language: CustomerLanguage) throws -> CaseOperations.Opened {
        let opening = CaseOperations.Opening(
            kind: kind, accountEmail: "victim@example.com", customerName: "Ada Victim", customerContactEmail: contact,
            devices: [.init(serial: "C02XK1ZJH3QD", imei: nil, model: "Phone")], facts: facts,
            summary: "Locked out.", rescueEmail: nil, language: language)
        return try pool.withTransaction { try operations.open(opening, by: agent, at: Date(), on: $0) }
    }

    func deliver(expecting count: Int) throws -> [ReceivedMail] {
        let inbox = directory + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let smtp = try PythonHelper("smtp_sink.py", [inbox])
        defer { smtp.stop() }
        var settings = testSettings(directory: directory, smtpURL: "smtp://127.0.0.1:\(smtp.port)")
        settings.supportContact = MailGuidanceTableTests.contact
        let delivery = DeliveryWorker(settings: settings, pool: pool, keys: keys, logger: .discard)
        delivery.start()
        defer { delivery.stop() }
        #expect(eventually { receivedMails(in: inbox).count == count })
        return receivedMails(in: inbox)
    }

    /// The defect: the opening mail of a device-only or two-step case said "to recover your account" (en, zh-Hant)
    /// while the page says the account cannot be. Now it carries the page's next step and device-only notice.
    @Test func theOpeningMailOfADeviceOnlyCaseNeverPromisesTheAccount() throws {
        var cases: [(CaseOperations.Opened, CaseKind, CaseFacts, CustomerLanguage)] = []
        for language in CustomerLanguage.allCases {
            for (kind, facts) in [
                (CaseKind.activationLock, CaseFacts()), (.accountTakeover, CaseFacts(rescueEmailAdded: true, twoStepEnabled: true)),
            ] {
                let contact = "\(kind.rawValue)-\(language.rawValue.lowercased())@example.net"
                cases.append((try open(kind: kind, facts: facts, contact: contact, language: language), kind, facts, language))
            }
        }
        let mails = try deliver(expecting: cases.count)
        for (opened, kind, facts, language) in cases {
            let mail = try #require(mails.first { $0.recipients == [opened.record.customerContactEmail] })
            let page = CustomerGuidance(state: .new, path: opened.record.snapshot.path, kind: kind, facts: facts, evidence: [])
            #expect(mail.body.contains(page.nextStep.text(language, contact: MailGuidanceTableTests.contact)), "\(kind) \(language)")
            #expect(mail.body.contains(MailText.state(page.stage, language: language)))
            // The next step says "listed below": the mail lists what the page lists.
            #expect(!page.missing.isEmpty)
            for requirement in page.missing { #expect(mail.body.contains(requirement.text.text(language, contact: ""))) }
            if facts.twoStepEnabled { #expect(mail.body.contains(CustomerText.noticeDeviceOnly.text(language, contact: ""))) }
            for promise in MailGuidanceTableTests.accountPromises(language) {
                #expect(!mail.body.contains(promise), "\(kind) \(language): \(promise)")
            }
        }
    }

    /// The defect: the merge mail said "Your case is closed" while the page showed the target's status. It states
    /// the status of the case it went into, in each language.
    @Test func theMergeMailStatesTheTargetsStatusAsThePageDoes() throws {
        var merged: [(CaseRecord, CustomerGuidance, CustomerLanguage)] = []
        for language in CustomerLanguage.allCases {
            let contact = "merge-\(language.rawValue.lowercased())@example.net"
            let target = try open(kind: .accountTakeover, facts: CaseFacts(rescueEmailAdded: true), contact: contact, language: language)
            let source = try open(kind: .accountTakeover, facts: CaseFacts(rescueEmailAdded: true), contact: contact, language: language)
            let page = try pool.withTransaction { connection in
                _ = try operations.transition(
                    try CaseNumber(parsing: target.record.number), expectedVersion: nil, .init(action: .escalate),
                    actorTier: .tier1, by: agent, at: Date(), on: connection)
                _ = try operations.merge(
                    try CaseNumber(parsing: source.record.number), expectedVersion: nil,
                    into: try CaseNumber(parsing: target.record.number), reason: nil, actorTier: .tier2, by: agent, at: Date(), on: connection)
                // What the merged number's page now shows: the target's guidance, with everything filed on it.
                let now = try operations.load(try CaseNumber(parsing: target.record.number), on: connection)
                return EvidenceRequirements.guidance(now, try EvidenceStore.list(caseID: now.id, on: connection))
            }
            #expect(page.stage == .stageIdentityCheck)
            merged.append((source.record, page, language))
        }
        // Per language: two openings, the target's state change, the merge.
        let mails = try deliver(expecting: 4 * merged.count)
        for (source, page, language) in merged {
            let display = try CaseNumber(parsing: source.number).description
            let mail = try #require(
                mails.first {
                    $0.subject == MailText.subject(.merged, caseNumber: display, language: language) && $0.recipients == [source.customerContactEmail]
                })
            #expect(mail.body.contains(MailText.state(.stageIdentityCheck, language: language)), "\(language)")
            #expect(!mail.body.contains(MailText.state(.stageClosed, language: language)), "\(language)")
            #expect(mail.body.contains(page.nextStep.text(language, contact: MailGuidanceTableTests.contact)), "\(language)")
        }
    }
}
