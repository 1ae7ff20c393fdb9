import Foundation
import ReclaimCore
import ReclaimTestSupport
import Testing

/// The thief on the phone (api.md v1.2): risk signals raised by the operations that create the facts, and four eyes on
/// approve and unlock steps, driven from the attacker's side over HTTP.
@Suite struct RiskSignalTests {
    let victimDevice = CaseBody.Device(serial: "C02XK1ZJH3QD", imei: "490154203237518", model: "Phone 12")

    func version(_ world: CaseWorld, _ number: String, as session: AgentSession) throws -> Int {
        try world.caseBody(number, as: session)["version"] as! Int
    }

    func signals(_ world: CaseWorld, _ number: String, as session: AgentSession) throws -> [[String: Any]] {
        try world.caseBody(number, as: session)["risk_signals"] as? [[String: Any]] ?? []
    }

    func uncleared(_ world: CaseWorld, _ number: String, as session: AgentSession) throws -> [String] {
        try signals(world, number, as: session).filter { $0["cleared_at"] is NSNull }.compactMap { $0["signal"] as? String }
    }

    /// Drives a case to document_review with its two documents accepted (the documents path).
    func toReview(_ world: CaseWorld, _ created: CaseView, tier1: AgentSession, tier2: AgentSession, tier3: AgentSession) throws {
        let number = created.caseNumber
        try world.must(number, "escalate", as: tier1, version: 1)
        try world.must(number, "request_documents", as: tier2, version: 2, extra: ["reason": "Answers did not match."])
        try world.customerUpload(number, code: created.accessCode!, type: "invoice")
        try world.customerUpload(number, code: created.accessCode!, type: "imei_photo")
        for id in try world.pendingDocuments(number, as: tier3) { try world.mustReview(id, "accepted", as: tier3) }
    }

    /// The activation-lock fraud: the thief opens a second case on the victim's phone under another account. Both cases
    /// carry the signal naming each other; approve is refused until tier 3 clears; the clearer cannot approve, a second can.
    @Test func aThiefsSecondCaseOnTheSameDeviceRaisesOnBothAndBlocksApproval() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        let second = try world.agent(.tier3)
        let victim = try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: "victim@example.com", devices: [victimDevice]))
        #expect(victim["risk"] as? Bool == false)
        // The thief's case: same IMEI, another account (serial left out: one identifier is enough).
        let thief = try world.openCase(
            as: tier1,
            CaseWorld.caseBody(
                accountEmail: "thief.account@example.org", contactEmail: "thief@evil.example", devices: [.init(imei: "490154203237518")]))
        #expect(thief["risk"] as? Bool == true)
        // Two signals on each: the device claimed by another account, and (api.md v1.3) a case sharing a device with
        // another customer, `parallel_case`.
        let onThief = try signals(world, thief.caseNumber, as: tier1)
        #expect(Set(onThief.compactMap { $0["signal"] as? String }) == ["device_claimed_elsewhere", "parallel_case"])
        let claimed = onThief.first { $0["signal"] as? String == "device_claimed_elsewhere" }
        #expect(claimed?["other_cases"] as? [String] == [victim.caseNumber])
        #expect((claimed?["detail"] as? String)?.contains(victim.caseNumber) == true)
        // The earlier case is at risk too: one of the two claims is the thief's.
        let onVictim = try signals(world, victim.caseNumber, as: tier1)
        #expect(Set(onVictim.compactMap { $0["signal"] as? String }) == ["device_claimed_elsewhere", "parallel_case"])
        #expect(onVictim.allSatisfy { $0["other_cases"] as? [String] == [thief.caseNumber] })
        #expect(try world.caseBody(victim.caseNumber, as: tier1)["risk"] as? Bool == true)
        // Each raise is a timeline event; a third look at the same fact raises nothing new.
        #expect(try world.events(thief.caseNumber, as: tier1).filter { $0.type == "risk_raised" }.count == 2)
        #expect(try world.events(victim.caseNumber, as: tier1).filter { $0.type == "risk_raised" }.count == 2)

        try toReview(world, thief, tier1: tier1, tier2: tier2, tier3: tier3)
        let version = try version(world, thief.caseNumber, as: tier3)
        let refused = try world.act(thief.caseNumber, "approve", as: tier3, version: version)
        #expect(refused.status == 409)
        #expect(try refused.problem().code == "risk_uncleared")
        #expect(Set(try refused.json()["signals"] as? [String] ?? []) == ["device_claimed_elsewhere", "parallel_case"])

        // Tier 2 may not clear; tier 3 clears with a reason, and is then not the one who approves.
        let byTier2 = try world.post("/api/v1/cases/\(thief.caseNumber)/risk/clear", as: tier2, json: ["reason": "looks fine"])
        #expect(byTier2.status == 403)
        #expect(try world.post("/api/v1/cases/\(thief.caseNumber)/risk/clear", as: tier3, json: ["reason": " "]).status == 422)
        let cleared = try world.post(
            "/api/v1/cases/\(thief.caseNumber)/risk/clear", as: tier3, json: ["reason": "Called the number on file; the owner sold the phone."])
        #expect(cleared.status == 200, "\(cleared.text)")
        let clearedBody = try cleared.json()
        #expect(clearedBody["risk"] as? Bool == false)
        let record = (clearedBody["risk_signals"] as? [[String: Any]])?.first
        #expect(record?["cleared_by"] as? String != nil && record?["clear_reason"] as? String != nil)
        #expect(try world.events(thief.caseNumber, as: tier1).contains { $0.type == "risk_cleared" })
        let sameAgent = try world.act(thief.caseNumber, "approve", as: tier3, version: version)
        #expect(sameAgent.status == 409)
        #expect(try sameAgent.problem().code == "four_eyes")
        let approved = try world.must(thief.caseNumber, "approve", as: second, version: version)
        #expect(approved.state == "engineering")
        // The victim's case keeps its own signal until someone looks at it.
        #expect(Set(try uncleared(world, victim.caseNumber, as: tier1)) == ["device_claimed_elsewhere", "parallel_case"])
    }

    /// A flag (tier 1) blocks an unlock step; an engineer who cleared it may not record the step, another engineer may.
    @Test func aFlagBlocksUnlockStepsAndTheClearerMayNotRecordThem() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        let engineer = try world.agent(.engineering)
        let colleague = try world.agent(.engineering)
        let created = try world.openCase(as: tier1)
        try toReview(world, created, tier1: tier1, tier2: tier2, tier3: tier3)
        let number = created.caseNumber
        try world.must(number, "approve", as: tier3, version: try version(world, number, as: tier3))

        #expect(try world.post("/api/v1/cases/\(number)/flags", as: tier1, json: ["reason": ""]).status == 422)
        let flagged = try world.post("/api/v1/cases/\(number)/flags", as: tier1, json: ["reason": "The caller could not name the phone's model."])
        #expect(flagged.status == 200, "\(flagged.text)")
        #expect(try flagged.json()["risk"] as? Bool == true)
        // A second flag while it stands raises nothing new.
        #expect(try world.post("/api/v1/cases/\(number)/flags", as: tier1, json: ["reason": "Again."]).status == 200)
        #expect(try world.events(number, as: tier1).filter { $0.type == "risk_raised" }.count == 1)

        let step: [String: Any] = ["step": "remove_rescue_email"]
        let blocked = try world.post("/api/v1/cases/\(number)/unlocks", as: engineer, json: step, ifMatch: try version(world, number, as: tier1))
        #expect(blocked.status == 409)
        #expect(try blocked.problem().code == "risk_uncleared")
        let clear = try world.post("/api/v1/cases/\(number)/risk/clear", as: engineer, json: ["reason": "Spoke to the victim on the number on file."])
        #expect(clear.status == 200)
        let byClearer = try world.post("/api/v1/cases/\(number)/unlocks", as: engineer, json: step, ifMatch: try version(world, number, as: tier1))
        #expect(byClearer.status == 409)
        #expect(try byClearer.problem().code == "four_eyes")
        let done = try world.post("/api/v1/cases/\(number)/unlocks", as: colleague, json: step, ifMatch: try version(world, number, as: tier1))
        #expect(done.status == 200, "\(done.text)")
    }

    /// One invoice file on cases of two accounts: both carry `document_reused`; the same file on the same account's
    /// second case raises nothing.
    @Test func aReusedInvoiceRaisesOnBothCases() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        func opened(_ account: String, serial: String) throws -> CaseView {
            let created = try world.openCase(
                as: tier1, CaseWorld.caseBody(accountEmail: account, devices: [.init(serial: serial)]))
            try world.must(created.caseNumber, "escalate", as: tier1, version: 1)
            try world.must(created.caseNumber, "request_documents", as: tier2, version: 2, extra: ["reason": "Proof of purchase."])
            return created
        }
        let first = try opened("owner@example.com", serial: "F2LXK1ZJH3QA")
        let same = try opened("Owner@example.com", serial: "F2LXK1ZJH3QB")
        let other = try opened("buyer@example.org", serial: "F2LXK1ZJH3QC")
        try world.customerUpload(first.caseNumber, code: first.accessCode!, type: "invoice")
        try world.customerUpload(same.caseNumber, code: same.accessCode!, type: "invoice")
        #expect(try uncleared(world, first.caseNumber, as: tier1).isEmpty)
        #expect(try uncleared(world, same.caseNumber, as: tier1).isEmpty)
        try world.customerUpload(other.caseNumber, code: other.accessCode!, type: "invoice")
        let onOther = try signals(world, other.caseNumber, as: tier1)
        #expect(onOther.map { $0["signal"] as? String } == ["document_reused"])
        #expect(Set(onOther.first?["other_cases"] as? [String] ?? []) == [first.caseNumber, same.caseNumber])
        #expect(try uncleared(world, first.caseNumber, as: tier1) == ["document_reused"])
        #expect(try uncleared(world, same.caseNumber, as: tier1) == ["document_reused"])
        // The customer never sees a signal.
        let status = try world.status(other.caseNumber, other.accessCode!)
        #expect(status.status == 200)
        #expect(!status.text.contains("risk") && !status.text.contains("document_reused") && !status.text.contains(first.caseNumber))
    }

    /// Device evidence and accounts on file raise `device_claimed_elsewhere` too.
    @Test func deviceEvidenceAndAccountsOnFileRaiseTheSignal() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let admin = try world.agent(.tier1, admin: true)
        let victim = try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: "victim@example.com", devices: []))
        let thief = try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: "thief@example.org", devices: []))
        #expect(thief["risk"] as? Bool == false)
        // The thief files the victim's serial as device evidence: both cases hear of it.
        try world.post("/api/v1/cases/\(victim.caseNumber)/evidence", as: tier1, json: ["type": "device", "serial": "DNPXK1ZJH3QF"]).expect201()
        try world.post("/api/v1/cases/\(thief.caseNumber)/evidence", as: tier1, json: ["type": "device", "serial": "DNPXK1ZJH3QF"]).expect201()
        #expect(try uncleared(world, thief.caseNumber, as: tier1) == ["device_claimed_elsewhere"])
        #expect(try uncleared(world, victim.caseNumber, as: tier1) == ["device_claimed_elsewhere"])

        // A phone on file for the victim's account, claimed by a third account's case opened before the import.
        let third = try world.openCase(
            as: tier1, CaseWorld.caseBody(accountEmail: "third@example.net", devices: [.init(serial: "GHJXK1ZJH3QK")]))
        #expect(third["risk"] as? Bool == false)
        let account: [String: Any] = [
            "email": "owner.on.file@example.com", "security_questions": [["id": "q1", "question": "Pet?", "answer": "Rex"]],
            "devices": [["serial": "GHJXK1ZJH3QK", "model": "Phone"]],
        ]
        let put = try world.post("/api/v1/accounts", as: admin, json: account)
        #expect(put.status == 201, "\(put.text)")
        let onThird = try signals(world, third.caseNumber, as: tier1)
        #expect(onThird.map { $0["signal"] as? String } == ["device_claimed_elsewhere"])
        #expect((onThird.first?["detail"] as? String)?.contains("on file for another account") == true)
        // And a later case claiming that phone for yet another account is at risk from the start.
        let fourth = try world.openCase(
            as: tier1, CaseWorld.caseBody(accountEmail: "fourth@example.net", devices: [.init(serial: "GHJXK1ZJH3QK")]))
        #expect(fourth["risk"] as? Bool == true)
        // Its owner's own case is not.
        let owner = try world.openCase(
            as: tier1, CaseWorld.caseBody(accountEmail: "owner.on.file@example.com", devices: [.init(serial: "GHJXK1ZJH3QL")]))
        #expect(owner["risk"] as? Bool == false)
    }

    /// `?risk=true` lists only cases at risk, across pages; rows carry `risk`; a bad value is 422.
    @Test func theQueueFiltersByRisk() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        var flagged: Set<String> = []
        for index in 0..<5 {
            let created = try world.openCase(
                as: tier1, CaseWorld.caseBody(accountEmail: "q\(index)@example.com", devices: [.init(serial: "QUEXK1ZJH3Q\(index)")]))
            if index % 2 == 0 {
                #expect(
                    try world.post("/api/v1/cases/\(created.caseNumber)/flags", as: tier1, json: ["reason": "Story does not hold."]).status == 200)
                flagged.insert(created.caseNumber)
            }
        }
        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = try world.get("/api/v1/cases?risk=true&limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""), as: tier1)
            #expect(page.status == 200)
            let body = try page.json()
            for item in body["items"] as? [[String: Any]] ?? [] {
                #expect(item["risk"] as? Bool == true)
                #expect(item["risk_signals"] == nil)  // the list only in the case's own GET
                seen.append(item["case_number"] as! String)
            }
            cursor = body["next_cursor"] as? String
        } while cursor != nil
        #expect(Set(seen) == flagged && seen.count == flagged.count)
        let calm = try world.get("/api/v1/cases?risk=false", as: tier1).json()["items"] as? [[String: Any]] ?? []
        #expect(calm.count == 2 && calm.allSatisfy { $0["risk"] as? Bool == false })
        let bad = try world.get("/api/v1/cases?risk=maybe", as: tier1)
        #expect(bad.status == 422)
    }
}

extension TestHTTPResponse {
    /// Fails the test unless the answer is 201.
    func expect201(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(status == 201, "\(text)", sourceLocation: sourceLocation)
    }
}
