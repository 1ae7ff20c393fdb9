import Foundation
import ReclaimCore
import ReclaimTestSupport
import Testing

/// api.md v1.3 "The thief's other doors", each tried from outside as the thief or a colluding agent would: a second case
/// on the victim's account, a correction that empties the checklist, a freeze lifted during the cooling-off, the rescue
/// rule around two corrections, an erased case reopened.
@Suite(.serialized) struct ThiefDoorsTests {
    static let thiefContact = "someone.else@mail-drop.example"

    func patch(_ world: CaseWorld, _ number: String, as session: AgentSession, version: Int, _ json: [String: Any]) throws -> TestHTTPResponse {
        try world.client.request("PATCH", "/api/v1/cases/\(number)", headers: session.headers + [("If-Match", "\"\(version)\"")], json: json)
    }

    func version(_ world: CaseWorld, _ number: String, as session: AgentSession) throws -> Int {
        try world.get("/api/v1/cases/\(number)", as: session).json()["version"] as! Int
    }

    /// The seeds' thief again: with the victim's case open, he opens a second case on her account with her phone's serial
    /// and his own name and contact address. Both cases carry `parallel_case`, each lists the other in `related` with why,
    /// four eyes hold, and a step scheduled on one makes the other's answer `account_busy`.
    @Test func aSecondCaseOnTheVictimsAccountIsLinkedFlaggedAndWaitsItsTurn() throws {
        let w = try CoolingOffWorld()
        let (victims, _, _) = try w.engineeringCase()
        let thief = try w.world.post(
            "/api/v1/cases", as: w.tier1,
            json: [
                "kind": "account_takeover", "account_email": CoolingOffWorld.account,
                "customer": ["name": "Not The Owner", "contact_email": Self.thiefContact],
                "devices": [["serial": EvidenceWorld.onFileSerial, "model": "Phone"]],
                "facts": ["security_questions_changed": true],
            ] as [String: Any])
        #expect(thief.status == 201, "\(thief.text)")
        let created = try thief.json()
        let thiefNumber = created["case_number"] as! String
        // The 201 says it all: the victim's case as related (account, and not the same customer), the signal on it.
        let related = try #require(created["related"] as? [[String: Any]])
        let link = try #require(related.first { $0["number"] as? String == victims })
        #expect(link["why"] as? [String] == ["account"])
        #expect(link["same_customer"] as? Bool == false)
        #expect(link["state"] as? String == "engineering" && link["tier"] as? String == "engineering")
        #expect((created["risk_signals"] as? [[String: Any]])?.map { $0["signal"] as? String }.contains("parallel_case") == true)
        #expect(created["risk"] as? Bool == true)
        #expect((created["possible_duplicates"] as? [[String: Any]])?.map { $0["case_number"] as? String } == [victims])
        // The victim's case carries it too, naming the thief's, and lists it.
        let body = try w.caseBody(victims)
        #expect(body["risk"] as? Bool == true)
        let signal = try #require((body["risk_signals"] as? [[String: Any]])?.first { $0["signal"] as? String == "parallel_case" })
        #expect(signal["other_cases"] as? [String] == [thiefNumber])
        #expect((body["related"] as? [[String: Any]])?.first?["number"] as? String == thiefNumber)
        // Four eyes while it stands: no step on either case.
        let blocked = try w.world.scheduleUnlock(
            victims, "remove_rescue_email", as: w.engineer, version: try self.version(w.world, victims, as: w.engineer))
        #expect(blocked.status == 409)
        #expect(try blocked.problem().code == "risk_uncleared")
    }

    /// One recovery of an account at a time: two honest cases of one account (same customer, no signal), a step
    /// scheduled on the first, then the second's schedule is `account_busy` naming the first; the stop link of the
    /// first's notice stops, freezes and flags both and hands both back to tier 3.
    @Test func oneRecoveryOfAnAccountAtATimeAndOneStopLinkStopsThemAll() throws {
        let w = try CoolingOffWorld()
        let (first, _, firstVersion) = try w.engineeringCase()
        let (second, _, secondVersion) = try w.engineeringCase()
        #expect(try w.caseBody(first)["risk"] as? Bool == false)
        let related = try #require(try w.caseBody(first)["related"] as? [[String: Any]])
        #expect(related.first { $0["number"] as? String == second }?["same_customer"] as? Bool == true)
        _ = try w.schedule(first, "remove_rescue_email", version: firstVersion)
        let busy = try w.world.scheduleUnlock(second, "remove_rescue_email", as: w.engineer, version: secondVersion)
        #expect(busy.status == 409, "\(busy.text)")
        let problem = try busy.json()
        #expect(problem["code"] as? String == "account_busy" && problem["case_number"] as? String == first)
        // "This wasn't me" on the first case's notice: both cases stopped.
        let token = try #require(try w.notices(first).first?.token)
        #expect(try w.stop(token).status == 200)
        for number in [first, second] {
            let body = try w.caseBody(number)
            #expect(body["frozen"] as? Bool == true, "\(number)")
            #expect(body["state"] as? String == "document_review" && body["tier"] as? String == "tier3", "\(number)")
            #expect((body["risk_signals"] as? [[String: Any]])?.contains { $0["signal"] as? String == "repudiated" } == true, "\(number)")
            #expect(((body["unlocks"] as? [String: Any])?["scheduled"] as? [Any])?.isEmpty == true, "\(number)")
        }
    }

    /// The stop link used after its step took effect told the owner the change was stopped. It now says the change
    /// already happened and that the desk was alerted, and still raises `repudiated`.
    @Test func aStopLinkUsedAfterTheStepTookEffectSaysSo() throws {
        let w = try CoolingOffWorld(delay: 0.3)
        let (number, _, version) = try w.engineeringCase()
        _ = try w.schedule(number, "remove_rescue_email", version: version)
        #expect(
            try eventually(10) { (try w.caseBody(number)["unlocks"] as? [String: Any])?["done"] as? [String] == ["remove_rescue_email"] })
        let token = try #require(try w.notices(number).first?.token)
        let stopped = try w.stop(token)
        #expect(stopped.status == 200, "\(stopped.text)")
        let body = try stopped.json()
        #expect(body["message_key"] as? String == "stop.too_late")
        #expect(body["already_done"] as? [String] == ["remove_rescue_email"] && (body["cancelled"] as? [Any])?.isEmpty == true)
        #expect(body["message"] as? String == CustomerText.stopTooLate.text(.english, contact: body["support_contact"] as? String ?? ""))
        let signals = try w.caseBody(number)["risk_signals"] as? [[String: Any]] ?? []
        #expect(signals.contains { $0["signal"] as? String == "repudiated" })
    }

    /// One correction emptied the checklist and `complete` then reset the account at once. Now a tier-1 agent cannot
    /// correct what the thief changed once the case left tier 1, and with the list emptied by tier 2 `complete` still
    /// waits for a step done through the cooling-off.
    @Test func aCorrectionThatEmptiesTheChecklistResolvesNothing() throws {
        let w = try CoolingOffWorld()
        let (number, _, version) = try w.engineeringCase()
        let empty: [String: Any] = ["facts": ["rescue_email": NSNull(), "rescue_email_added": false, "security_questions_changed": false]]
        let byTier1 = try patch(w.world, number, as: w.tier1, version: version, empty)
        #expect(byTier1.status == 403, "\(byTier1.text)")
        #expect(try byTier1.problem().code == "insufficient_tier")
        let tier2 = try w.world.agent(.tier2)
        let emptied = try patch(w.world, number, as: tier2, version: version, empty)
        #expect(emptied.status == 200, "\(emptied.text)")
        let body = try emptied.json()
        #expect((body["unlocks"] as? [String: Any])?["required"] as? [String] == [])
        #expect((body["facts"] as? [String: Any])?["former_rescue_emails"] as? [String] == [CoolingOffWorld.rescue])
        for extra: [String: Any] in [["unlock": "reset_security_questions"], [:]] {
            let complete = try w.world.act(number, "complete", as: w.engineer, version: version + 1, extra: extra)
            #expect(complete.status == 409 || complete.status == 422, "\(complete.text)")
            #expect(["unlock_not_scheduled", "unlock_required"].contains(try complete.problem().code))
        }
        #expect(try w.caseBody(number)["state"] as? String == "engineering")
        #expect(try w.notices(number).isEmpty)
    }

    /// The freeze is not lifted during the cooling-off, and a correction of who is told while a step waits cancels the
    /// steps and raises `contact_changed`.
    @Test func theCoolingOffHoldsAgainstUnfreezeAndCorrections() throws {
        let w = try CoolingOffWorld()
        let (number, code, version) = try w.engineeringCase()
        _ = try w.schedule(number, "remove_rescue_email", version: version)
        let tier2 = try w.world.agent(.tier2)
        try w.world.verifyCaller(number, accessCode: code, as: tier2)
        let unfreeze = try w.world.post("/api/v1/cases/\(number)/actions/unfreeze", as: tier2, json: [String: Any](), ifMatch: version + 1)
        #expect(unfreeze.status == 409, "\(unfreeze.text)")
        #expect(try unfreeze.problem().code == "cooling_off")
        #expect(try w.caseBody(number)["frozen"] as? Bool == true)
        let corrected = try patch(w.world, number, as: tier2, version: version + 1, ["customer": ["contact_email": "new.address@example.net"]])
        #expect(corrected.status == 200, "\(corrected.text)")
        let body = try w.caseBody(number)
        #expect(((body["unlocks"] as? [String: Any])?["scheduled"] as? [Any])?.isEmpty == true)
        #expect((body["risk_signals"] as? [[String: Any]])?.contains { $0["signal"] as? String == "contact_changed" } == true)
        let cancelled = try w.world.events(number, as: w.engineer).filter { $0.type == "unlock_cancelled" }
        #expect(cancelled.count == 1 && cancelled.first?.actor.hasPrefix("agent:") == true)
        #expect(try w.world.get("/api/v1/cases/\(number)/events?limit=200", as: w.engineer).text.contains("\"reason\":\"correction\""))
    }

    /// The phone is who is called back: a correction of it while a step waits cancels the steps and raises
    /// `contact_changed`, as the contact address does (the thief's accomplice on the phone cannot move the call-back
    /// number during the cooling-off and let the step run).
    @Test func aPhoneCorrectedDuringTheCoolingOffCancelsTheStepsAndRaisesContactChanged() throws {
        let w = try CoolingOffWorld()
        let (number, code, version) = try w.engineeringCase()
        _ = try w.schedule(number, "remove_rescue_email", version: version)
        let tier2 = try w.world.agent(.tier2)
        try w.world.verifyCaller(number, accessCode: code, as: tier2)
        let corrected = try patch(w.world, number, as: tier2, version: version + 1, ["customer": ["phone": "+8613977440231"]])
        #expect(corrected.status == 200, "\(corrected.text)")
        let body = try w.caseBody(number)
        #expect((body["customer"] as? [String: Any])?["phone"] as? String == "+8613977440231")
        #expect(((body["unlocks"] as? [String: Any])?["scheduled"] as? [Any])?.isEmpty == true)
        let signal = try #require((body["risk_signals"] as? [[String: Any]])?.first { $0["signal"] as? String == "contact_changed" })
        #expect((signal["detail"] as? String)?.contains("customer.phone") == true)
        #expect(try w.world.events(number, as: w.engineer).filter { $0.type == "unlock_cancelled" }.count == 1)
    }

    /// One account, one story by phone: the thief opens a case on an account of his own with the victim's phone number
    /// (to be called back in her place); each case lists the other as related `["phone"]`, not the same customer, and
    /// without a shared account or device it is no `parallel_case`. A case whose phone is corrected away is no longer related.
    @Test func aCaseSharingThePhoneIsRelatedByPhone() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        var victims = CaseWorld.caseBody()
        victims.customer.phone = "+8613977440231"
        let victim = try world.openCase(as: tier1, victims)
        let thief = try world.post(
            "/api/v1/cases", as: tier1,
            json: [
                "kind": "account_takeover", "account_email": "thief.own@mail-drop.example",
                "customer": ["name": "Not The Owner", "contact_email": Self.thiefContact, "phone": "+8613977440231"],
            ] as [String: Any])
        #expect(thief.status == 201, "\(thief.text)")
        let created = try thief.json()
        let thiefNumber = created["case_number"] as! String
        let link = try #require((created["related"] as? [[String: Any]])?.first { $0["number"] as? String == victim.caseNumber })
        #expect(link["why"] as? [String] == ["phone"] && link["same_customer"] as? Bool == false)
        #expect((created["risk_signals"] as? [[String: Any]])?.isEmpty == true)
        let back = try world.caseBody(victim.caseNumber, as: tier1)
        #expect((back["related"] as? [[String: Any]])?.first { $0["number"] as? String == thiefNumber }?["why"] as? [String] == ["phone"])
        // Corrected away (on a verified call): no longer related.
        try world.verifyCaller(thiefNumber, accessCode: created["access_code"] as! String, as: tier1)
        let moved = try patch(world, thiefNumber, as: tier1, version: 1, ["customer": ["phone": "+447700900123"]])
        #expect(moved.status == 200, "\(moved.text)")
        #expect((try world.caseBody(victim.caseNumber, as: tier1)["related"] as? [[String: Any]])?.isEmpty == true)
    }

    /// The rescue rule around two corrections: the rescue address cleared, then given as the contact address, is refused,
    /// on that case and on a new case of the same account.
    @Test func aRescueAddressOnceRecordedStaysTheThiefs() throws {
        let w = try CoolingOffWorld()
        let opened = try w.world.openCase(
            as: w.tier1,
            CaseWorld.caseBody(accountEmail: CoolingOffWorld.account, contactEmail: CoolingOffWorld.contact, facts: [:], devices: []))
        let number = opened.caseNumber
        #expect(try patch(w.world, number, as: w.tier1, version: 1, ["facts": ["rescue_email": CoolingOffWorld.rescue]]).status == 200)
        let cleared = try patch(w.world, number, as: w.tier1, version: 2, ["facts": ["rescue_email": NSNull(), "rescue_email_added": false]])
        #expect(cleared.status == 200, "\(cleared.text)")
        #expect(((try cleared.json())["facts"] as? [String: Any])?["former_rescue_emails"] as? [String] == [CoolingOffWorld.rescue])
        let tagged = "Thief.Rescue+x@mail-drop.example"
        let contact = try patch(w.world, number, as: w.tier1, version: 3, ["customer": ["contact_email": tagged]])
        #expect(contact.status == 422, "\(contact.text)")
        #expect(try contact.problem().errors?.map(\.field) == ["customer.contact_email"])
        let another = try w.world.post(
            "/api/v1/cases", as: w.tier1,
            json: [
                "kind": "account_takeover", "account_email": CoolingOffWorld.account,
                "customer": ["name": "Victim", "contact_email": CoolingOffWorld.rescue],
            ] as [String: Any])
        #expect(another.status == 422, "\(another.text)")
    }

    /// An erased case is finished for good: every change is `case_erased` (409), an API client's look-up is 410.
    @Test func anErasedCaseTakesNoChangeAtAll() throws {
        let world = try CaseWorld()
        let (number, _) = try ErasureTests.finishedCase(world)
        let admin = try world.agent(.tier1, admin: true)
        #expect(try world.post("/api/v1/cases/\(number)/erasure", as: admin, json: ["reason": "The customer asked."]).status == 200)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        let current = try version(world, number, as: tier2)
        let attempts: [(String, TestHTTPResponse)] = [
            ("reopen", try world.act(number, "reopen", as: tier2, version: current, extra: ["reason": "The caller asked."])),
            ("close", try world.act(number, "close", as: tier2, version: current, extra: ["reason": "Done."])),
            ("note", try world.post("/api/v1/cases/\(number)/notes", as: tier2, json: ["body": "Called back.", "visibility": "internal"])),
            ("flag", try world.post("/api/v1/cases/\(number)/flags", as: tier2, json: ["reason": "Odd."])),
            ("clear", try world.post("/api/v1/cases/\(number)/risk/clear", as: tier3, json: ["reason": "Checked."])),
            ("correct", try patch(world, number, as: tier2, version: current, ["summary": "New words."])),
            ("access code", try world.post("/api/v1/cases/\(number)/access-code", as: tier2, json: [String: Any]())),
            ("evidence", try world.post("/api/v1/cases/\(number)/evidence", as: tier2, json: ["type": "transcript", "text": "hello"])),
        ]
        for (what, response) in attempts {
            #expect(response.status == 409, "\(what): \(response.text)")
            #expect(try response.problem().code == "case_erased", "\(what)")
        }
        #expect(try version(world, number, as: tier2) == current)
        // Agents still read it.
        #expect(try world.get("/api/v1/cases/\(number)", as: tier2).status == 200)
    }

    /// A partner's look-up of its erased case is gone (410), as the customer's is.
    @Test func aPartnersLookUpOfAnErasedCaseIsGone() throws {
        let world = try CaseWorld()
        let client = try world.service.addClient()
        let body = Array(
            #"{"kind":"account_takeover","account_email":"partner.victim@example.com","customer":{"name":"P V","contact_email":"pv@example.net"}}"#
                .utf8)
        let opened = try world.client.request(
            "POST", "/api/v1/cases",
            headers: world.service.clientHeaders(client, method: "POST", target: "/api/v1/cases", body: body)
                + [("Content-Type", "application/json")], body: body)
        #expect(opened.status == 201, "\(opened.text)")
        let number = try opened.json()["case_number"] as! String
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        try world.must(number, "escalate", as: tier1, version: 1)
        try world.must(number, "request_documents", as: tier2, version: 2, extra: ["reason": "Proof of purchase."])
        try world.must(number, "begin_review", as: tier3, version: 3)
        try world.must(number, "reject", as: tier3, version: 4, extra: ["reason": "Nothing arrived."])
        let target = "/api/v1/cases/\(number)/status"
        func lookUp() throws -> TestHTTPResponse {
            try world.client.request("GET", target, headers: world.service.clientHeaders(client, method: "GET", target: target, body: []))
        }
        #expect(try lookUp().status == 200)
        let admin = try world.agent(.tier1, admin: true)
        #expect(try world.post("/api/v1/cases/\(number)/erasure", as: admin, json: ["reason": "The customer asked."]).status == 200)
        let gone = try lookUp()
        #expect(gone.status == 410, "\(gone.text)")
        #expect(try gone.problem().code == "case_erased")
    }
}
