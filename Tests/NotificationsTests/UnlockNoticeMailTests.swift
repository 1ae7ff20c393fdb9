import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

/// api.md v1.2 "Notice to every address the victim had": scheduling an unlock mails, over a real SMTP server (aiosmtpd)
/// through the service's own delivery worker, the contact address, the account's email on file and each of its notice
/// addresses, never the rescue address, in the case's language, with a stop link that works.
@Suite(.serialized) final class UnlockNoticeMailTests {
    static let card = "4111111111111111"
    /// One phone per account: the same serial on two accounts would raise `device_claimed_elsewhere` (four eyes).
    static let serials = ["en": "C02XK1ZJH3QD", "hans": "F2LXK9ABCD12"]
    static let rescue = "thief.rescue@mail-drop.example"
    let inbox: String
    let smtp: PythonHelper
    let service: TestService

    init() throws {
        inbox = try temporaryDirectory()
        smtp = try PythonHelper("smtp_sink.py", [inbox])
        let port = smtp.port
        service = try TestService { $0.smtpURL = "smtp://127.0.0.1:\(port)" }
    }

    deinit {
        service.stop()
        smtp.stop()
        try? FileManager.default.removeItem(atPath: inbox)
    }

    func post(_ agent: AgentSession, _ path: String, _ json: [String: Any], ifMatch: Int? = nil) throws -> TestHTTPResponse {
        try service.client().request("POST", path, headers: agent.headers + (ifMatch.map { [("If-Match", "\"\($0)\"")] } ?? []), json: json)
    }

    /// A case of `account` (with the thief's rescue address) walked to engineering by card and device; its number.
    func engineeringCase(account: String, contact: String, language: String, serial: String) throws -> String {
        let tier1 = try service.signIn(tier: .tier1)
        let tier2 = try service.signIn(tier: .tier2)
        let body: [String: Any] = [
            "kind": "account_takeover", "account_email": account, "language": language,
            "customer": ["name": "Ada Victim", "contact_email": contact],
            "facts": ["rescue_email_added": true, "rescue_email": Self.rescue],
        ]
        let opened = try post(tier1, "/api/v1/cases", body)
        #expect(opened.status == 201, "\(opened.text)")
        let number = try #require(try opened.json()["case_number"] as? String)
        #expect(try post(tier1, "/api/v1/cases/\(number)/transitions", ["action": "escalate"], ifMatch: 1).status == 200)
        for json: [String: Any] in [
            ["type": "card", "number": Self.card, "exp_month": 12, "exp_year": 2031], ["type": "device", "serial": serial],
        ] {
            #expect(try post(tier2, "/api/v1/cases/\(number)/evidence", json).status == 201)
        }
        #expect(try post(tier2, "/api/v1/cases/\(number)/transitions", ["action": "verify"], ifMatch: 2).status == 200)
        return number
    }

    @Test func everyAddressOnFileGetsTheNoticeInTheCasesLanguageAndItsLinkStopsTheChange() throws {
        let admin = try service.signIn(tier: .tier1, admin: true)
        let engineer = try service.signIn(tier: .engineering)
        for (language, tag) in [(CustomerLanguage.english, "en"), (.simplifiedChinese, "hans")] {
            let account = "owner-\(tag)@example.com"
            let notice = ["before-\(tag)@example.org", "work-\(tag)@example.net"]
            let added = try post(
                admin, "/api/v1/accounts",
                [
                    "email": account, "notice_addresses": notice, "cards": [["number": Self.card, "exp_month": 12, "exp_year": 2031]],
                    "devices": [["serial": Self.serials[tag]!]],
                ])
            #expect(added.status == 201, "\(added.text)")
            let contact = "home-\(tag)@example.net"
            let number = try engineeringCase(account: account, contact: contact, language: language.rawValue, serial: Self.serials[tag]!)
            let scheduled = try post(engineer, "/api/v1/cases/\(number)/unlocks", ["step": "remove_rescue_email"], ifMatch: 3)
            #expect(scheduled.status == 200, "\(scheduled.text)")
            let isNotice: (ReceivedMail) -> Bool = { $0.body.contains("/status/stop#") }
            let expected = Set([contact, account] + notice)
            #expect(
                eventually { Set(receivedMails(in: self.inbox).filter(isNotice).flatMap(\.recipients)).isSuperset(of: expected) },
                "\(receivedMails(in: inbox).map(\.recipients))")
            let notices = receivedMails(in: inbox).filter { isNotice($0) && !Set($0.recipients).isDisjoint(with: expected) }
            #expect(notices.count == 4)
            #expect(Set(notices.flatMap(\.recipients)) == expected)
            #expect(!receivedMails(in: inbox).contains { $0.recipients.contains(Self.rescue) }, "never the rescue address")
            let mail = try #require(notices.first)
            let step = CustomerText.unlockRemoveRescueEmail.text(language, contact: "")
            #expect(mail.body.contains(step), "\(mail.body)")
            switch language {
            case .english: #expect(mail.subject.contains("stop it if this wasn't you") && mail.body.contains("Never pay"))
            default: #expect(mail.subject.contains("请立即停止") && mail.body.contains("切勿"))
            }
            // The link from the mail, as the victim's browser would post it.
            let link = try #require(mail.body.split(whereSeparator: \.isWhitespace).first { $0.contains("/status/stop#") })
            let token = String(link.split(separator: "#", maxSplits: 1)[1])
            let stopped = try service.client().request("POST", "/api/v1/status/stop", json: ["token": token])
            #expect(stopped.status == 200, "\(stopped.text)")
            #expect(try stopped.json()["language"] as? String == language.rawValue)
            #expect(try stopped.json()["cancelled"] as? [String] == ["remove_rescue_email"])
        }
    }
}
