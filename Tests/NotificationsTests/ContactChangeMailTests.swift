import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

/// api.md v1.2 "A case can be corrected": a new contact address is told to the previous one, in the case's language,
/// over a real SMTP server (aiosmtpd), through the service's own delivery worker; never to the rescue address.
@Suite(.serialized) final class ContactChangeMailTests {
    static let support = "+44 20 7946 0000 (Reclaim support)"
    let inbox: String
    let smtp: PythonHelper
    let service: TestService

    init() throws {
        inbox = try temporaryDirectory()
        smtp = try PythonHelper("smtp_sink.py", [inbox])
        let port = smtp.port
        service = try TestService {
            $0.smtpURL = "smtp://127.0.0.1:\(port)"
            $0.supportContact = ContactChangeMailTests.support
        }
    }

    deinit {
        service.stop()
        smtp.stop()
        try? FileManager.default.removeItem(atPath: inbox)
    }

    func open(_ agent: AgentSession, contact: String, rescue: String? = nil, language: String) throws -> String {
        var facts: [String: Any] = ["rescue_email_added": true]
        if let rescue { facts["rescue_email"] = rescue }
        let body: [String: Any] = [
            "kind": "account_takeover", "account_email": "victim@example.com", "language": language,
            "customer": ["name": "Ada Victim", "contact_email": contact], "facts": facts,
        ]
        let response = try service.client().request("POST", "/api/v1/cases", headers: agent.headers, json: body)
        #expect(response.status == 201, "\(response.text)")
        return try #require(try response.json()["case_number"] as? String)
    }

    func patch(_ agent: AgentSession, _ number: String, version: Int, _ json: [String: Any]) throws -> TestHTTPResponse {
        try service.client().request("PATCH", "/api/v1/cases/\(number)", headers: agent.headers + [("If-Match", "\"\(version)\"")], json: json)
    }

    @Test func thePreviousAddressIsToldInTheCasesLanguageWithTheNewOneMaskedAndNoCaseDetail() throws {
        let agent = try service.signIn(tier: .tier1)
        var cases: [(number: String, language: CustomerLanguage)] = []
        for language in CustomerLanguage.allCases {
            let tag = language.rawValue.lowercased()
            let number = try open(agent, contact: "old-\(tag)@example.net", language: language.rawValue)
            let response = try patch(agent, number, version: 1, ["customer": ["contact_email": "jane.new-\(tag)@mail.example.org"]])
            #expect(response.status == 200, "\(response.text)")
            cases.append((number, language))
        }
        // Each case: its opening mail to the old address, then the notice to it; nothing about the change to the new one.
        #expect(eventually { receivedMails(in: self.inbox).count == 6 }, "\(receivedMails(in: inbox).map(\.recipients))")
        let mails = receivedMails(in: inbox)
        for (number, language) in cases {
            let tag = language.rawValue.lowercased()
            let old = mails.filter { $0.recipients == ["old-\(tag)@example.net"] }
            #expect(old.count == 2)
            let notice = try #require(old.first { $0.body.contains("***@") }, "\(number)")
            #expect(notice.body.contains("j***@m***.org"), "\(notice.body)")
            #expect(!notice.body.contains("jane.new") && !notice.body.contains("mail.example.org"), "never the new address in full")
            #expect(notice.body.contains(Self.support))
            #expect(!notice.body.contains("/status"), "no link: the old address may be a stranger's typo")
            #expect(!notice.body.contains(try #require(CustomerCatalogue.catalogue(language)[.stageReceived])), "no state")
            switch language {
            case .english:
                #expect(
                    notice.subject.contains("contact address was changed") && notice.body.contains("If you did not ask for this, contact support"))
            case .simplifiedChinese: #expect(notice.subject.contains("联系邮箱已更改") && notice.body.contains("请立即联系客服"))
            case .traditionalChinese: #expect(notice.subject.contains("聯絡電子郵件地址已變更") && notice.body.contains("請立即聯絡客服"))
            }
            #expect(!mails.contains { $0.recipients == ["jane.new-\(tag)@mail.example.org"] })
        }
        // The messages list shows the notice with its kind, to the previous address.
        let listed = try service.client().request("GET", "/api/v1/cases/\(cases[0].number)/messages", headers: [("Cookie", agent.cookie)]).json()
        let kinds = (listed["items"] as? [[String: Any]] ?? []).map { ($0["kind"] as? String, ($0["to"] as? [String: Any])?["email"] as? String) }
        #expect(kinds.contains { $0.0 == "contact_changed" && $0.1 == "old-en@example.net" })
    }

    /// From the attacker's side: the thief's address recorded as the contact (a case from before the rule) is corrected;
    /// the thief, reading that old address, must learn nothing, not even that the case moved to another address.
    @Test func aPreviousAddressThatReachesTheRescueMailboxIsNeverTold() throws {
        let agent = try service.signIn(tier: .tier1)
        let number = try open(agent, contact: "ada@example.net", rescue: "Evil@example.com", language: "en")
        let connection = try service.database.connect()
        defer { connection.close() }
        try connection.execute("UPDATE cases SET customer_contact_email = 'evil+x@example.com' WHERE case_number = \(number)")
        // The correction removes the rescue address too: the rule still reads the address the case had.
        let response = try patch(
            agent, number, version: 1, ["customer": ["contact_email": "ada.real@example.net"], "facts": ["rescue_email": NSNull()]])
        #expect(response.status == 200, "\(response.text)")
        #expect(eventually { receivedMails(in: self.inbox).count == 1 })
        #expect(receivedMails(in: inbox).map(\.recipients) == [["ada@example.net"]], "the opening mail only")
        // Nothing queued for the old address: the notice is listed as refused, and the timeline says so without the address.
        let listed = try service.client().request("GET", "/api/v1/cases/\(number)/messages", headers: [("Cookie", agent.cookie)]).json()
        let notices = (listed["items"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "contact_changed" }
        #expect(notices.count == 1 && notices.first?["state"] as? String == "refused" && notices.first?["reason"] as? String == "rescue_address")
        // Not listed as refused to the new address, which is the customer's and had nothing refused.
        #expect((notices.first?["to"] as? [String: Any])?["email"] is NSNull, "\(notices)")
        let events = try service.client().request("GET", "/api/v1/cases/\(number)/events", headers: [("Cookie", agent.cookie)])
        let refused = (try events.json()["items"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "mail_refused" }
        #expect(refused.count == 1 && (refused.first?["data"] as? [String: Any])?["mail"] as? String == "contact_changed")
        #expect(!events.text.contains("evil") && !events.text.contains("ada.real"))
    }
}
