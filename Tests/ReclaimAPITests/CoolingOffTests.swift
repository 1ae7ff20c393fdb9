import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport
import Testing

/// A service with an account on file (with notice addresses) and a case of it walked to engineering.
final class CoolingOffWorld {
    let world: CaseWorld
    let tier1: AgentSession
    let engineer: AgentSession
    static let account = "owner@example.com"
    static let noticeAddresses = ["owner.before@example.org", "owner.work@example.net"]
    static let contact = "victim.home@example.net"
    static let rescue = "thief.rescue@mail-drop.example"

    init(delay: TimeInterval = 86400, poll: TimeInterval = 0.05) throws {
        world = try CaseWorld { configuration in
            configuration.unlockDelay = delay
            configuration.unlockPollSeconds = poll
        }
        tier1 = try world.agent(.tier1)
        engineer = try world.agent(.engineering)
        let admin = try world.agent(.tier1, admin: true)
        let account: [String: Any] = [
            "email": Self.account, "notice_addresses": Self.noticeAddresses + ["OWNER.BEFORE@example.org"],
            "cards": [["number": EvidenceWorld.onFileCard, "exp_month": 12, "exp_year": 2031]],
            "devices": [["serial": EvidenceWorld.onFileSerial, "model": "Phone"]],
        ]
        let added = try world.post("/api/v1/accounts", as: admin, json: account)
        guard added.status == 201 else { throw CaseTestError("account answered \(added.status): \(added.text)") }
        #expect(try added.json()["notice_addresses"] as? [String] == Self.noticeAddresses)
    }

    /// A case with both changes (and the thief's rescue address) in engineering, verified by card and device.
    func engineeringCase(language: String? = nil) throws -> (number: String, code: String, version: Int) {
        var body = CaseWorld.caseBody(
            accountEmail: Self.account, contactEmail: Self.contact,
            facts: ["rescue_email_added": true, "security_questions_changed": true], devices: [])
        body.language = language
        let opened = try world.openCase(as: tier1, body)
        let number = opened.caseNumber
        let tier2 = try world.agent(.tier2)
        #expect(
            try world.client.request(
                "PATCH", "/api/v1/cases/\(number)", headers: tier1.headers + [("If-Match", "\"1\"")],
                json: ["facts": ["rescue_email": Self.rescue]]
            ).status == 200)
        try world.must(number, "escalate", as: tier1, version: 2)
        for json: [String: Any] in [
            ["type": "card", "number": EvidenceWorld.onFileCard, "exp_month": 12, "exp_year": 2031],
            ["type": "device", "serial": EvidenceWorld.onFileSerial],
        ] {
            #expect(try world.post("/api/v1/cases/\(number)/evidence", as: tier2, json: json).status == 201)
        }
        let verified = try world.must(number, "verify", as: tier2, version: 3)
        #expect(verified["state"] as? String == "engineering")
        return (number, opened.accessCode ?? "", verified["version"] as! Int)
    }

    func schedule(_ number: String, _ step: String, version: Int) throws -> [String: Any] {
        let response = try world.post(
            "/api/v1/cases/\(number)/unlocks", as: engineer, json: ["step": step, "reason": "Caller verified."], ifMatch: version)
        guard response.status == 200 else { throw CaseTestError("unlock answered \(response.status): \(response.text)") }
        return try response.json()
    }

    func caseBody(_ number: String) throws -> [String: Any] { try world.get("/api/v1/cases/\(number)", as: engineer).json() }

    /// The notices queued for a case: each recipient with its stop token, opened as the delivery worker does.
    static func notices(_ database: PostgresConnection, keys: KeyFile, number: String) throws -> [(
        recipient: String, token: String, language: String
    )] {
        try database.query(
            """
            SELECT o.id, o.recipient, o.secret_sealed, o.secret_key_id, o.payload FROM outbox o JOIN cases c ON c.id = o.case_id
            WHERE c.case_number = \(number) AND o.kind = 'unlock_scheduled' ORDER BY o.created_at, o.recipient
            """
        ).map { row in
            let id: UUID = try row.decode("id")
            let key = try #require(keys.key(id: try row.decode("secret_key_id", as: String.self), purpose: .documents))
            let token = try SecretBox.open(
                try row.decode("secret_sealed", as: [UInt8].self), key: key, associatedData: CaseMessages.secretAssociatedData(id))
            guard case .object(let payload) = try JSONValue.parse(try row.decode("payload", as: String.self)),
                case .string(let language)? = payload["language"]
            else { throw CaseTestError("payload") }
            return (try row.decode("recipient"), String(decoding: token, as: UTF8.self), language)
        }
    }

    func notices(_ number: String) throws -> [(recipient: String, token: String, language: String)] {
        let database = try world.database()
        defer { database.close() }
        return try Self.notices(database, keys: world.service.keys, number: number)
    }

    func stop(_ token: String) throws -> TestHTTPResponse {
        try world.client.request("POST", "/api/v1/status/stop", json: ["token": token])
    }
}

@Suite(.serialized) struct CoolingOffTests {
    /// The case row's `unlocks_pending` (0026's trigger): whether a step of it is scheduled.
    func pending(_ w: CoolingOffWorld, _ number: String) throws -> Bool {
        let database = try w.world.database()
        defer { database.close() }
        return try #require(try database.query("SELECT unlocks_pending FROM cases WHERE case_number = \(number)").first).decode("unlocks_pending")
    }

    @Test func recordingAStepSchedulesItFreezesTheCaseAndTellsEveryAddressOnFile() throws {
        let w = try CoolingOffWorld()
        let (number, code, version) = try w.engineeringCase()
        let before = Date()
        let scheduled = try w.schedule(number, "remove_rescue_email", version: version)
        let unlocks = try #require(scheduled["unlocks"] as? [String: Any])
        #expect(unlocks["done"] as? [String] == [])
        let waiting = try #require((unlocks["scheduled"] as? [[String: Any]])?.first)
        #expect(waiting["step"] as? String == "remove_rescue_email" && waiting["status"] as? String == "scheduled")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let effective = try #require(formatter.date(from: waiting["effective_at"] as? String ?? ""))
        #expect(abs(effective.timeIntervalSince(before) - 86400) < 5)
        #expect(scheduled["frozen"] as? Bool == true)
        #expect(scheduled["version"] as? Int == version + 1)
        // The same step again, done or waiting: already_done. Completing while it waits: unlocks_outstanding, even with it
        // (complete never performs a step: `completeWithAnUnlockIsRefusedAndSchedulesNothing`).
        let again = try w.world.post(
            "/api/v1/cases/\(number)/unlocks", as: w.engineer, json: ["step": "remove_rescue_email"], ifMatch: version + 1)
        #expect(try again.status == 409 && (again.json()["code"] as? String) == "already_done")
        for extra: [String: Any] in [[:], ["unlock": "remove_rescue_email"]] {
            let complete = try w.world.act(number, "complete", as: w.engineer, version: version + 1, extra: extra)
            #expect(complete.status == 409, "\(complete.text)")
            #expect(try complete.json()["code"] as? String == "unlocks_outstanding")
        }
        #expect(try w.caseBody(number)["state"] as? String == "engineering")
        let events = try w.world.events(number, as: w.engineer)
        let event = try #require(events.first { $0["type"] as? String == "unlock_scheduled" })
        #expect((event["data"] as? [String: Any])?["notified"] as? Int == 4)
        #expect(events.contains { $0["type"] as? String == "frozen" })
        // Contact address, the account's email and each notice address once; never the rescue address.
        let notices = try w.notices(number)
        #expect(
            Set(notices.map(\.recipient))
                == Set([CoolingOffWorld.contact, CoolingOffWorld.account] + CoolingOffWorld.noticeAddresses))
        #expect(notices.count == 4 && Set(notices.map(\.token)).count == 1)
        #expect(!notices.contains { $0.recipient == CoolingOffWorld.rescue })
        // Never in clear in the database: only the hash of the token is stored.
        let database = try w.world.database()
        defer { database.close() }
        let token = notices[0].token
        let stored = try database.query("SELECT token_hash FROM unlock_stop_tokens").map { try $0.decode("token_hash", as: [UInt8].self) }
        #expect(stored == [SHA256.hash(token)])
        let payloads = try database.query("SELECT payload FROM outbox").map { try $0.decode("payload", as: String.self) }
        #expect(!payloads.contains { $0.contains(token) })
        // The customer's page shows what will be undone and when.
        let status = try w.world.status(number, code).json()
        let shown = try #require((status["unlocks_scheduled"] as? [[String: Any]])?.first)
        #expect(shown["step"] as? String == "remove_rescue_email" && shown["effective_at"] as? String == waiting["effective_at"] as? String)
        #expect(shown["text"] as? String == CustomerText.unlockRemoveRescueEmail.text(.english, contact: ""))
        // The queue's row says so too (it reads the steps only where the case's `unlocks_pending` says there are some).
        let rows = try w.world.get("/api/v1/cases?state=engineering", as: w.engineer).json()["items"] as? [[String: Any]] ?? []
        let row = try #require(rows.first { $0["case_number"] as? String == number })
        #expect(((row["unlocks"] as? [String: Any])?["scheduled"] as? [[String: Any]])?.map { $0["step"] as? String } == ["remove_rescue_email"])
    }

    /// The attacker's side: the thief on the phone has an engineer "complete, with the rescue address removed". The
    /// workflow action never performs a step (api.md v1.3): refused, nothing scheduled, nothing sent, nothing resolved.
    @Test func completeWithAnUnlockIsRefusedAndSchedulesNothing() throws {
        let w = try CoolingOffWorld(delay: 600)
        let (number, _, version) = try w.engineeringCase()
        for step in ["remove_rescue_email", "reset_security_questions"] {
            let complete = try w.world.act(
                number, "complete", as: w.engineer, version: version, extra: ["unlock": step, "reason": "The caller asked."])
            #expect(complete.status == 409, "\(complete.text)")
            #expect(try complete.json()["code"] as? String == "unlock_not_scheduled")
        }
        let body = try w.caseBody(number)
        #expect(body["state"] as? String == "engineering" && body["version"] as? Int == version)
        let unlocks = try #require(body["unlocks"] as? [String: Any])
        #expect(unlocks["done"] as? [String] == [] && (unlocks["scheduled"] as? [Any])?.isEmpty == true)
        #expect(try w.notices(number).isEmpty)
        let types = try w.world.events(number, as: w.engineer).compactMap { $0["type"] as? String }
        #expect(!types.contains("unlock_scheduled") && !types.contains("unlock_done"))
    }

    @Test func theServiceDoesTheStepWhenItsTimeComesWithNobodyActing() throws {
        // Long enough for the second step to be scheduled before the first is done, on a loaded machine too.
        let w = try CoolingOffWorld(delay: 3)
        let (number, _, version) = try w.engineeringCase()
        _ = try w.schedule(number, "remove_rescue_email", version: version)
        _ = try w.schedule(number, "reset_security_questions", version: version + 1)
        #expect(
            try eventually(10) {
                let unlocks = try w.caseBody(number)["unlocks"] as? [String: Any]
                return (unlocks?["done"] as? [String])?.count == 2 && (unlocks?["scheduled"] as? [Any])?.isEmpty == true
            })
        #expect(try pending(w, number) == false)
        let events = try w.world.events(number, as: w.engineer)
        let done = events.filter { $0["type"] as? String == "unlock_done" }
        #expect(done.count == 2)
        #expect(done.allSatisfy { $0["actor"] as? String == "system" })
        #expect((done.first?["data"] as? [String: Any])?["reason"] as? String == "Caller verified.")
        let body = try w.caseBody(number)
        #expect(try w.world.must(number, "complete", as: w.engineer, version: body["version"] as! Int)["state"] as? String == "resolved")
    }

    @Test func theServiceClockPassingTheDelayDoesTheStep() throws {
        // Ten minutes: well within a session's idle limit, so the engineer can still look.
        let w = try CoolingOffWorld(delay: 600)
        let (number, _, version) = try w.engineeringCase()
        _ = try w.schedule(number, "remove_rescue_email", version: version)
        Thread.sleep(forTimeInterval: 0.3)
        #expect((try w.caseBody(number)["unlocks"] as? [String: Any])?["done"] as? [String] == [])
        w.world.service.clock.advance(by: 601)
        #expect(try eventually(10) { (try w.caseBody(number)["unlocks"] as? [String: Any])?["done"] as? [String] == ["remove_rescue_email"] })
    }

    @Test func engineeringCancelsAScheduledStep() throws {
        let w = try CoolingOffWorld()
        let (number, _, version) = try w.engineeringCase()
        _ = try w.schedule(number, "remove_rescue_email", version: version)
        let path = "/api/v1/cases/\(number)/unlocks/remove_rescue_email"
        func cancel(_ session: AgentSession, _ json: [String: Any], ifMatch: Int) throws -> TestHTTPResponse {
            try w.world.client.request("DELETE", path, headers: session.headers + [("If-Match", "\"\(ifMatch)\"")], json: json)
        }
        let tier3 = try w.world.agent(.tier3)
        #expect(try cancel(tier3, ["reason": "No."], ifMatch: version + 1).status == 403)
        #expect(try cancel(w.engineer, [:], ifMatch: version + 1).status == 422)
        #expect(try cancel(w.engineer, ["reason": "Wrong step."], ifMatch: version).status == 412)
        let cancelled = try cancel(w.engineer, ["reason": "The owner called back: not them."], ifMatch: version + 1)
        #expect(cancelled.status == 200, "\(cancelled.text)")
        let body = try cancelled.json()
        #expect((body["unlocks"] as? [String: Any])?["scheduled"] as? [Any] != nil)
        #expect(((body["unlocks"] as? [String: Any])?["scheduled"] as? [Any])?.isEmpty == true)
        #expect(body["frozen"] as? Bool == true)
        let again = try cancel(w.engineer, ["reason": "Again."], ifMatch: version + 2)
        #expect(try again.status == 409 && (again.json()["code"] as? String) == "unlock_not_scheduled")
        let event = try #require(try w.world.events(number, as: w.engineer).last { $0["type"] as? String == "unlock_cancelled" })
        #expect((event["data"] as? [String: Any])?["reason"] as? String == "The owner called back: not them.")
        #expect(try pending(w, number) == false)
        // It may be scheduled again.
        _ = try w.schedule(number, "remove_rescue_email", version: version + 2)
        #expect(try pending(w, number) == true)
    }

    @Test func theStopLinkCancelsEverythingOnceAndAForgedOneIs404() throws {
        let w = try CoolingOffWorld()
        let (number, _, version) = try w.engineeringCase(language: "zh-Hant")
        _ = try w.schedule(number, "remove_rescue_email", version: version)
        _ = try w.schedule(number, "reset_security_questions", version: version + 1)
        let notices = try w.notices(number)
        #expect(notices.allSatisfy { $0.language == "zh-Hant" })
        let forged = try w.stop((notices[0].token.first == "A" ? "B" : "A") + notices[0].token.dropFirst())
        #expect(try forged.status == 404 && (forged.json()["code"] as? String) == "stop_link_unknown")
        let stopped = try w.stop(notices[0].token)
        #expect(stopped.status == 200, "\(stopped.text)")
        let answer = try stopped.json()
        #expect(answer["language"] as? String == "zh-Hant" && answer["first_use"] as? Bool == true)
        #expect(Set(answer["cancelled"] as? [String] ?? []) == ["remove_rescue_email", "reset_security_questions"])
        #expect(answer["message"] as? String == CustomerText.stopDone.text(.traditionalChinese, contact: NotificationSettingsContact.value))
        let body = try w.caseBody(number)
        #expect(body["state"] as? String == "document_review" && body["frozen"] as? Bool == true)
        #expect(((body["unlocks"] as? [String: Any])?["scheduled"] as? [Any])?.isEmpty == true)
        let events = try w.world.events(number, as: w.engineer)
        let cancelled = events.filter { $0["type"] as? String == "unlock_cancelled" }
        #expect(cancelled.count == 2 && cancelled.allSatisfy { $0["actor"] as? String == "customer" })
        #expect(events.contains { $0["type"] as? String == "handed_back" })
        // The same token again (from another of the notices): 200, nothing changes.
        let versionAfter = body["version"] as? Int
        let again = try w.stop(notices[3].token)
        #expect(try again.status == 200 && (again.json()["first_use"] as? Bool) == false)
        #expect(try w.caseBody(number)["version"] as? Int == versionAfter)
        #expect(try w.world.events(number, as: w.engineer).count == events.count)
    }
}

/// The support contact a test service answers with (RECLAIM_SUPPORT_CONTACT unset).
enum NotificationSettingsContact {
    static let value = "support@reclaim.example"
}

@Suite(.serialized) struct CoolingOffClusterTests {
    @Test func twoInstancesDoEachDueStepExactlyOnce() throws {
        let cluster = try TestCluster(instances: 2)
        defer { cluster.stop() }
        let admin = try cluster.signIn(on: 0, tier: .tier1, admin: true)
        let tier1 = try cluster.signIn(on: 0, tier: .tier1)
        let tier2 = try cluster.signIn(on: 1, tier: .tier2)
        let engineer = try cluster.signIn(on: 1, tier: .engineering)
        let client = cluster.client(0)
        var numbers: [String] = []
        for index in 0..<4 {
            // Four accounts: one recovery of an account at a time (api.md v1.3 `account_busy`).
            let owner = "owner\(index)@example.com"
            let serial = "C02XK1ZJH3Q\(index)"  // each account's own device: a shared one would be `device_claimed_elsewhere`
            let account: [String: Any] = [
                "email": owner, "cards": [["number": EvidenceWorld.onFileCard, "exp_month": 12, "exp_year": 2031]],
                "devices": [["serial": serial]],
            ]
            #expect(try client.request("POST", "/api/v1/accounts", headers: admin.headers, json: account).status == 201)
            let body = CaseWorld.caseBody(
                accountEmail: owner, facts: ["rescue_email_added": true, "security_questions_changed": true], devices: [])
            let opened = try client.request("POST", "/api/v1/cases", headers: tier1.headers, encoded: body)
            let number = try #require(try opened.json()["case_number"] as? String)
            func act(_ action: String, _ session: AgentSession, _ version: Int) throws {
                let response = try client.request(
                    "POST", "/api/v1/cases/\(number)/transitions", headers: session.headers + [("If-Match", "\"\(version)\"")],
                    json: ["action": action])
                #expect(response.status == 200, "\(response.text)")
            }
            try act("escalate", tier1, 1)
            for json: [String: Any] in [
                ["type": "card", "number": EvidenceWorld.onFileCard, "exp_month": 12, "exp_year": 2031],
                ["type": "device", "serial": serial],
            ] {
                #expect(try client.request("POST", "/api/v1/cases/\(number)/evidence", headers: tier2.headers, json: json).status == 201)
            }
            try act("verify", tier2, 2)
            for (offset, step) in ["remove_rescue_email", "reset_security_questions"].enumerated() {
                let response = try cluster.client(1).request(
                    "POST", "/api/v1/cases/\(number)/unlocks", headers: engineer.headers + [("If-Match", "\"\(3 + offset)\"")], json: ["step": step])
                #expect(response.status == 200, "\(response.text)")
            }
            numbers.append(number)
        }
        // Both instances' schedulers see every step due at once.
        cluster.clock.advance(by: 86_401)
        let database = try cluster.database.connect()
        defer { database.close() }
        #expect(
            try eventually(20) {
                try database.query("SELECT count(*)::int AS n FROM scheduled_unlocks WHERE status = 'done'").first?.decode("n", as: Int.self) == 8
            })
        Thread.sleep(forTimeInterval: 1.5)  // another pass of each scheduler: nothing more happens
        let reader = try cluster.signIn(on: 0, tier: .engineering)  // a day later: the first sessions have expired
        let done = try database.query("SELECT count(*)::int AS n FROM case_events WHERE type = 'unlock_done'").first?.decode("n", as: Int.self)
        #expect(done == 8)
        for number in numbers {
            let body = try client.request("GET", "/api/v1/cases/\(number)", headers: [("Cookie", reader.cookie)]).json()
            #expect(((body["unlocks"] as? [String: Any])?["done"] as? [String])?.count == 2)
        }
    }
}
