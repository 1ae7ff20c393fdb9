import Foundation
import InboundMail
import Notifications
import ReclaimAPI
import ReclaimCore
import ReclaimTestSupport
import Testing

/// The conversation over HTTP (api.md v1.2): a reply read from the service's Maildir shows on the case's messages
/// with the sent ones in time order, marks the case and its queue row `awaiting_reply` (and the filter finds it); an
/// unmatched mail is listed for tier 1 and attached or discarded, once.
@Suite(.serialized) final class ConversationAPITests {
    let world: CaseWorld
    let maildir: Maildir

    init() throws {
        let path = NSTemporaryDirectory() + "reclaim-conversation-" + UUID().uuidString
        maildir = Maildir(path: path)
        world = try CaseWorld {
            $0.inbound = .maildir(path)
            $0.inboundPollSeconds = 3600
            $0.mailFrom = "cases@reclaim.test"
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: maildir.path) }

    func mail(from: String, to: String, subject: String, id: String, body: String = "Here is the invoice.", _ extra: [String] = []) -> [UInt8] {
        Array(
            ("From: \(from)\r\nTo: \(to)\r\nSubject: \(subject)\r\nMessage-ID: <\(id)>\r\nDate: Wed, 02 Dec 2026 10:00:00 +0000\r\n"
                + extra.map { $0 + "\r\n" }.joined()
                + "Content-Type: text/html; charset=UTF-8\r\n\r\n<p>\(body)</p><script>alert(1)</script>\r\n").utf8)
    }

    func items(_ response: TestHTTPResponse) throws -> [[String: Any]] {
        try #require(try response.json()["items"] as? [[String: Any]], "\(response.text)")
    }

    /// The case's opening mail as written to the data directory: its Reply-To.
    func replyTo(_ number: String, agent: AgentSession) throws -> String {
        var replyTo = ""
        #expect(
            try eventually(10) {
                let sent = try self.items(try self.world.get("/api/v1/cases/\(number)/messages", as: agent))
                guard let id = sent.first(where: { $0["channel"] as? String == "mail" && $0["state"] as? String == "sent" })?["id"] as? String,
                    let data = FileManager.default.contents(atPath: self.world.service.directory + "/mail/\(id).eml"),
                    let address = try MailParser().parse(Array(data)).replyTo.first?.address
                else { return false }
                replyTo = address
                return true
            })
        return replyTo
    }

    @Test func aReplyJoinsTheCasesMessagesInTimeOrderAndMarksTheQueue() throws {
        let agent = try world.agent(.tier1)
        let opened = try world.openCase(as: agent)
        let token = try replyTo(opened.caseNumber, agent: agent)
        #expect(token.hasPrefix("cases+\(opened.caseNumber)-"))
        try maildir.deliver(mail(from: "victim.home@example.net", to: token, subject: "Re: your case", id: "reply-1@example.net"))
        #expect(try world.service.service.inboundWorker.runOnce() == 1)

        let listed = try items(try world.get("/api/v1/cases/\(opened.caseNumber)/messages", as: agent))
        #expect(listed.first?["direction"] as? String == "out")
        let received = try #require(listed.last)
        #expect(received["direction"] as? String == "in" && received["matched_by"] as? String == "reply_token")
        #expect(received["from"] as? String == "victim.home@example.net" && received["auto"] as? Bool == false)
        // An HTML-only mail is text: no tag, no script.
        let text = try #require(received["text"] as? String)
        #expect(text.contains("Here is the invoice.") && !text.contains("<") && !text.contains("alert"))
        #expect((received["attachments"] as? [Any])?.isEmpty == true)

        // The customer's page says the reply arrived (the time only).
        let status = try world.status(opened.caseNumber, try #require(opened.accessCode)).json()
        #expect(status["reply_received_at"] is String)
        #expect(!String(describing: status).contains("Here is the invoice"))

        let detail = try world.get("/api/v1/cases/\(opened.caseNumber)", as: agent).json()
        #expect(detail["awaiting_reply"] as? Bool == true)
        let waiting = try items(try world.get("/api/v1/cases?awaiting_reply=true", as: agent))
        #expect(waiting.map { $0["case_number"] as? String } == [opened.caseNumber])
        #expect(waiting.first?["awaiting_reply"] as? Bool == true)
        #expect(try items(try world.get("/api/v1/cases?awaiting_reply=false", as: agent)).isEmpty)
        #expect(try world.get("/api/v1/cases?awaiting_reply=maybe", as: agent).status == 422)

        // The agent answers (a customer note is mailed): the case no longer waits.
        let note = try world.post(
            "/api/v1/cases/\(opened.caseNumber)/notes", as: agent, json: ["body": "Thank you, received.", "visibility": "customer"])
        #expect(note.status == 201)
        #expect(try world.get("/api/v1/cases/\(opened.caseNumber)", as: agent).json()["awaiting_reply"] as? Bool == false)
    }

    /// api.md v1.3 "Inbound hygiene": the unmatched list shows each mail's text (as text: the HTML's script is gone),
    /// flags a sender reaching a rescue address some case recorded (the thief, tagged and re-cased), and keeps
    /// auto-submitted and bulk mail (`Auto-Submitted` other than `no`, `Precedence: bulk`, `List-Id`) for `?kind=auto`.
    @Test func theUnmatchedListShowsTheTextFlagsTheThiefAndKeepsBulkMailApart() throws {
        let agent = try world.agent(.tier1)
        let opened = try world.post(
            "/api/v1/cases", as: agent,
            json: [
                "kind": "account_takeover", "account_email": "owner@example.com",
                "customer": ["name": "Ada Victim", "contact_email": "ada@example.net"],
                "facts": ["rescue_email": "thief.rescue@evil.test"],
            ] as [String: Any])
        #expect(opened.status == 201, "\(opened.text)")
        try maildir.create()
        let desk = "cases@reclaim.test"
        try maildir.deliver(mail(from: "Thief.Rescue+owner@EVIL.test", to: desk, subject: "It is me, the owner", id: "h1@evil.test"))
        try maildir.deliver(mail(from: "ada.other@example.org", to: desk, subject: "My phone", id: "h2@example.org", ["Auto-Submitted: no"]))
        try maildir.deliver(mail(from: "news@shop.example", to: desk, subject: "Sale", id: "h3@shop.example", ["Precedence: bulk"]))
        try maildir.deliver(
            mail(from: "list@lists.example", to: desk, subject: "Digest", id: "h4@lists.example", ["List-Id: <owners.lists.example>"]))
        try maildir.deliver(mail(from: "ada.other@example.org", to: desk, subject: "Away", id: "h5@example.org", ["Auto-Submitted: auto-replied"]))
        #expect(try world.service.service.inboundWorker.runOnce() == 5)

        let unmatched = try items(try world.get("/api/v1/inbound", as: agent))
        #expect(Set(unmatched.compactMap { $0["subject"] as? String }) == ["It is me, the owner", "My phone"])
        let thief = try #require(unmatched.first { $0["subject"] as? String == "It is me, the owner" })
        #expect(thief["from_rescue_address"] as? Bool == true)
        #expect(unmatched.first { $0["subject"] as? String == "My phone" }?["from_rescue_address"] as? Bool == false)
        let text = try #require(thief["text"] as? String)
        #expect(text.contains("Here is the invoice.") && !text.contains("<") && !text.contains("alert"))

        let automatic = try items(try world.get("/api/v1/inbound?kind=auto", as: agent))
        #expect(Set(automatic.compactMap { $0["subject"] as? String }) == ["Sale", "Digest", "Away"])
        let wrong = try world.get("/api/v1/inbound?kind=junk", as: agent)
        #expect(wrong.status == 422)
        #expect(try wrong.problem().fields == ["kind"])
    }

    @Test func unmatchedMailIsListedForTierOneAndAttachedOrDiscardedOnce() throws {
        let agent = try world.agent(.tier1)
        let opened = try world.openCase(as: agent)
        try maildir.create()
        try maildir.deliver(mail(from: "someone@else.example", to: "cases@reclaim.test", subject: "My phone", id: "u1@else.example"))
        try maildir.deliver(mail(from: "spam@else.example", to: "cases@reclaim.test", subject: "Offer", id: "u2@else.example"))
        #expect(try world.service.service.inboundWorker.runOnce() == 2)
        #expect(try world.get("/api/v1/inbound", as: nil).status == 401)
        let unmatched = try items(try world.get("/api/v1/inbound", as: agent))
        #expect(Set(unmatched.compactMap { $0["subject"] as? String }) == ["My phone", "Offer"])
        #expect(unmatched.allSatisfy { $0["reason"] as? String == "no_match" })
        let phone = try #require(unmatched.first { $0["subject"] as? String == "My phone" }?["id"] as? String)
        let offer = try #require(unmatched.first { $0["subject"] as? String == "Offer" }?["id"] as? String)

        #expect(try world.post("/api/v1/inbound/\(phone)/attach", as: agent, json: ["case_number": "123"]).status == 422)
        let attached = try world.post("/api/v1/inbound/\(phone)/attach", as: agent, json: ["case_number": opened.caseNumber])
        #expect(attached.status == 200, "\(attached.text)")
        #expect(try attached.json()["matched_by"] as? String == "agent")
        #expect(try world.post("/api/v1/inbound/\(phone)/attach", as: agent, json: ["case_number": opened.caseNumber]).status == 409)
        #expect(try world.post("/api/v1/inbound/\(offer)/discard", as: agent, json: ["reason": ""]).status == 422)
        #expect(try world.post("/api/v1/inbound/\(offer)/discard", as: agent, json: ["reason": "Advertising"]).status == 204)
        #expect(try world.post("/api/v1/inbound/\(offer)/discard", as: agent, json: ["reason": "Again"]).status == 409)
        #expect(try world.post("/api/v1/inbound/\(UUID())/discard", as: agent, json: ["reason": "x"]).status == 404)
        #expect(try items(try world.get("/api/v1/inbound", as: agent)).isEmpty)

        let listed = try items(try world.get("/api/v1/cases/\(opened.caseNumber)/messages", as: agent))
        #expect(listed.filter { $0["direction"] as? String == "in" }.map { $0["matched_by"] as? String } == ["agent"])
        let events = try world.events(opened.caseNumber, as: agent).filter { $0.type == "message_received" }
        #expect(events.count == 1 && events.first?.actor == "agent:\(agent.agentID.uuidString.lowercased())")
    }

    /// api.md v1.3: her father's mail, attached to her case by an agent, is shown to her as a message from a masked
    /// sender added by our team, never as her reply; her own mail (attached too, from her contact mailbox written
    /// otherwise) reads as hers.
    @Test func aThirdPartysMailAttachedByAnAgentIsNeverTheCustomersReply() throws {
        let agent = try world.agent(.tier1)
        let opened = try world.openCase(as: agent)
        let (number, code) = (opened.caseNumber, try #require(opened.accessCode))
        try maildir.create()
        try maildir.deliver(mail(from: "father.of.ada@family.example", to: "cases@reclaim.test", subject: "My daughter", id: "f1@family.example"))
        #expect(try world.service.service.inboundWorker.runOnce() == 1)
        let father = try #require(try items(try world.get("/api/v1/inbound", as: agent)).first?["id"] as? String)
        #expect(try world.post("/api/v1/inbound/\(father)/attach", as: agent, json: ["case_number": number]).status == 200)

        let afterFather = try world.status(number, code)
        let status = try afterFather.json()
        #expect(status["reply_received_at"] is NSNull, "\(afterFather.text)")
        let added = try #require(status["messages_added"] as? [[String: Any]])
        #expect(added.count == 1 && added.first?["from"] as? String == "f***@f***.example" && added.first?["received_at"] is String)
        #expect(!afterFather.text.contains("father.of.ada") && !afterFather.text.contains("My daughter"))

        // Her own mail, from her contact address as another mailbox spelling of it, attached the same way: hers.
        try maildir.deliver(mail(from: "Victim.Home+phone@Example.net", to: "cases@reclaim.test", subject: "Me again", id: "v1@example.net"))
        #expect(try world.service.service.inboundWorker.runOnce() == 1)
        let own = try #require(try items(try world.get("/api/v1/inbound", as: agent)).first?["id"] as? String)
        #expect(try world.post("/api/v1/inbound/\(own)/attach", as: agent, json: ["case_number": number]).status == 200)
        let afterOwn = try world.status(number, code).json()
        #expect(afterOwn["reply_received_at"] is String)
        #expect((afterOwn["messages_added"] as? [[String: Any]])?.count == 1)
    }
}
