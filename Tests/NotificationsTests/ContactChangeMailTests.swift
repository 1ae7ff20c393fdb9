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
    /// Each opened case's access code, by number.
    var codes: [String: String] = [:]

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
        let number = try #require(try response.json()["case_number"] as? String)
        codes[number] = try response.json()["access_code"] as? String
        return number
    }

    /// The victim on the phone reads her customer code to `agent`: a change of contact address needs it (api.md v1.3).
    func verified(_ agent: AgentSession, _ number: String) throws {
        try service.verifyCaller(number, accessCode: try #require(codes[number]), as: agent)
    }

    func patch(_ agent: AgentSession, _ number: String, version: Int, _ json: [String: Any]) throws -> TestHTTPResponse {
        try service.client().request("PATCH", "/api/v1/cases/\(number)", headers: agent.headers + [("If-Match", "\"\(version)\"")], json: json)
    }

    @Test func thePreviousAddressIsToldInTheCasesLanguageWithTheNewOneMaskedAndNoCaseDetail() throws {
        // Tier 2: the three cases share one account with different addresses (parallel_case), and a case at risk needs
        // tier 2 for a verified call's correction (api.md v1.3).
        let agent = try service.signIn(tier: .tier2)
        var cases: [(number: String, language: CustomerLanguage)] = []
        for language in CustomerLanguage.allCases {
            let tag = language.rawValue.lowercased()
            let number = try open(agent, contact: "old-\(tag)@example.net", language: language.rawValue)
            try verified(agent, number)
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
        try verified(agent, number)
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

    /// api.md v1.3 "The call, verified both ways", the mailbox way: the agent mails a one-time code to the contact address
    /// (in the case's language, over real SMTP), the caller reads it out, and the agent may then correct the address. The
    /// code works once; a guess is 422 and counts.
    @Test func aCallerWhoReadsTheMailedCodeIsVerifiedAndTheCodeWorksOnce() throws {
        let agent = try service.signIn(tier: .tier1)
        let number = try open(agent, contact: "ada.mailbox@example.net", language: "zh-Hant")
        let path = "/api/v1/cases/\(number)/caller-verification"
        let client = service.client()
        // Before any code was mailed, nothing matches: a guess is refused and counted.
        let early = try client.request("POST", path, headers: agent.headers, json: ["mailed_code": "123456"])
        #expect(try early.status == 422 && early.problem().code == "caller_code_wrong", "\(early.text)")
        let mailed = try client.request("POST", path, headers: agent.headers, json: ["method": "mailed_code"])
        #expect(mailed.status == 202, "\(mailed.text)")
        #expect(try mailed.json()["mailed"] as? Bool == true)
        #expect(eventually { receivedMails(in: self.inbox).contains { $0.subject.contains("一次性驗證碼") } })
        let mail = try #require(receivedMails(in: inbox).first { $0.subject.contains("一次性驗證碼") })
        #expect(mail.recipients == ["ada.mailbox@example.net"])
        #expect(mail.body.contains("您的驗證碼") && mail.body.contains(Self.support))
        let line = try #require(mail.body.range(of: #"您的驗證碼：[0-9]{6}"#, options: .regularExpression).map { String(mail.body[$0]) })
        let code = String(line.suffix(6))
        // Stored only as a keyed hash: the code is nowhere in the database in clear.
        let connection = try service.database.connect()
        defer { connection.close() }
        let stored = try connection.query("SELECT count(*)::int AS n FROM caller_mailed_codes").first?.decode("n", as: Int.self)
        #expect(stored == 1)
        let outbox = try connection.query("SELECT payload::text AS p FROM outbox WHERE kind = 'caller_code'").first?.decode("p", as: String.self)
        #expect(outbox?.contains(code) == false)

        // Not yet verified: the change of address is refused, naming the two ways.
        let refused = try patch(agent, number, version: 1, ["customer": ["contact_email": "ada.new@example.net"]])
        #expect(try refused.status == 409 && refused.problem().code == "caller_not_verified", "\(refused.text)")
        let verified = try client.request(
            "POST", path, headers: agent.headers, json: ["mailed_code": String(code.prefix(3)) + " " + code.dropFirst(3)])
        #expect(verified.status == 200, "\(verified.text)")
        #expect(try verified.json()["method"] as? String == "mailed_code")
        let events = try client.request("GET", "/api/v1/cases/\(number)/events?limit=200", headers: [("Cookie", agent.cookie)]).json()
        let verifiedEvent = (events["items"] as? [[String: Any]] ?? []).last { $0["type"] as? String == "caller_verified" }
        #expect((verifiedEvent?["data"] as? [String: Any])?["method"] as? String == "mailed_code")
        #expect(verifiedEvent?["actor"] as? String == "agent:" + agent.agentID.uuidString.lowercased())
        #expect(try patch(agent, number, version: 1, ["customer": ["contact_email": "ada.new@example.net"]]).status == 200)
        // Used once: the same code again is a wrong code.
        let again = try client.request("POST", path, headers: agent.headers, json: ["mailed_code": code])
        #expect(again.status == 422, "\(again.text)")
    }
}
