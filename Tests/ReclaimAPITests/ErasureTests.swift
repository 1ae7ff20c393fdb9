import Crypto
import Foundation
import Postgres
import ReclaimAPI
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

/// api.md v1.2 "Personal data has an end; history cannot be rewritten": erasure leaves no erased value in a database dump,
/// the timeline, the admin log and the checkpoints still verify (the independent verifier too), the customer reads 410,
/// open cases and non-admins are refused; the retention worker erases by itself.
@Suite(.serialized) struct ErasureTests {
    // Values that identify this customer, each unique enough to grep a dump for.
    static let name = "Zelda Erasecanary"
    static let contact = "zelda.erasecanary@example.net"
    static let account = "zelda.accountcanary@example.com"
    static let rescue = "thief.rescuecanary@example.org"
    static let serial = "F9KERASE1234"
    static let imei = "358756091112222"
    static let summary = "SUMMARYCANARY the thief called twice"
    static let note = "NOTECANARY she lives at 12 Example Road"
    static let customerNote = "CUSTOMERNOTECANARY please send the invoice"
    static let reason = "REASONCANARY identity papers did not match"
    static let reviewReason = "REVIEWCANARY the invoice names Zelda"
    static let transcript = "TRANSCRIPTCANARY they asked for 500 yuan"
    static let document = "DOCUMENTCANARY-erasure-4e1b"
    static let phone = "+8613977440231"
    static var canaries: [String] {
        [name, contact, account, rescue, serial, imei, summary, note, customerNote, reason, reviewReason, transcript, document, phone]
    }

    /// A case holding every kind of personal value, taken to `rejected`; its number and access code.
    static func finishedCase(_ world: CaseWorld) throws -> (number: String, code: String) {
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        let opened = try world.post(
            "/api/v1/cases", as: tier1,
            json: [
                "kind": "account_takeover", "account_email": account, "customer": ["name": name, "contact_email": contact, "phone": phone],
                "devices": [["serial": serial, "imei": imei, "model": "Phone 12"]],
                "facts": ["rescue_email_added": true, "rescue_email": rescue], "summary": summary,
            ] as [String: Any])
        guard opened.status == 201 else { throw CaseTestError("open answered \(opened.status): \(opened.text)") }
        let created = try opened.decode(CaseView.self)
        let number = created.caseNumber
        let code = try #require(created.accessCode)
        func ok(_ response: TestHTTPResponse, _ what: String) throws {
            guard (200..<300).contains(response.status) else { throw CaseTestError("\(what) answered \(response.status): \(response.text)") }
        }
        try ok(try world.post("/api/v1/cases/\(number)/actions/freeze", as: tier2, json: [String: Any](), ifMatch: 1), "freeze")
        try ok(try world.post("/api/v1/cases/\(number)/notes", as: tier1, json: ["body": note, "visibility": "internal"]), "note")
        try ok(try world.post("/api/v1/cases/\(number)/notes", as: tier1, json: ["body": customerNote, "visibility": "customer"]), "customer note")
        try ok(try world.post("/api/v1/cases/\(number)/evidence", as: tier1, json: ["type": "device", "serial": serial, "imei": imei]), "device")
        try ok(try world.post("/api/v1/cases/\(number)/evidence", as: tier1, json: ["type": "transcript", "text": transcript]), "transcript")
        let upload = try world.client.request(
            "POST", "/api/v1/cases/\(number)/evidence",
            headers: tier1.headers + [("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)")],
            body: EvidenceWorld.form([("type", "invoice")], file: (EvidenceWorld.png(document), "image/png")))
        try ok(upload, "upload")
        let documentID = try upload.decode(EvidenceView.self).id
        var version = try world.get("/api/v1/cases/\(number)", as: tier1).decode(CaseView.self).version
        version = try world.must(number, "escalate", as: tier1, version: version).version
        version = try world.must(number, "request_documents", as: tier2, version: version, extra: ["reason": reason]).version
        version = try world.must(number, "begin_review", as: tier3, version: version).version
        try ok(
            try world.post("/api/v1/evidence/\(documentID)/review", as: tier3, json: ["decision": "accepted", "reason": reviewReason]), "review")
        version = try world.get("/api/v1/cases/\(number)", as: tier1).decode(CaseView.self).version
        // Open: erasure is refused.
        let admin = try world.agent(.tier1, admin: true)
        let open = try world.post("/api/v1/cases/\(number)/erasure", as: admin, json: ["reason": "request"])
        #expect(open.status == 409, "\(open.text)")
        #expect(try open.problem().code == "case_open")
        try world.must(number, "reject", as: tier3, version: version, extra: ["reason": reason])
        return (number, code)
    }

    static func dump(_ world: CaseWorld) throws -> String { try dump(world.service.database) }

    /// The whole database as `pg_dump --inserts` writes it: what a grep for an erased value reads.
    static func dump(_ database: TestDatabase) throws -> String {
        try Shell.run(["pg_dump", "--no-owner", "--inserts", "-d", database.connectionString])
    }

    @Test func anErasedCaseLeavesNoValueInADumpAndItsHistoryStillVerifies() throws {
        let world = try CaseWorld()
        let (number, code) = try Self.finishedCase(world)
        // The values were there, and the personal members of the timeline are commitments.
        let before = try Self.dump(world)
        for value in [Self.name, Self.contact, Self.serial, Self.note, Self.reason, Self.phone] { #expect(before.contains(value), "\(value) before") }
        let owner = try world.service.database.connect(as: .owner)
        defer { owner.close() }
        let sealed = try owner.query("SELECT encode(content, 'hex') AS hex FROM evidence WHERE content IS NOT NULL").map {
            try $0.decode("hex", as: String.self)
        }
        #expect(sealed.count == 2)
        let stored = try owner.query("SELECT data FROM case_events WHERE type = 'frozen'").map { try $0.decode("data", as: String.self) }
        #expect(stored.count == 1 && !stored[0].contains(Self.account) && stored[0].contains("\"commitment\""))
        let first = try TransparencyLogTests.checkpoint(world)
        #expect(try world.status(number, code).status == 200)
        // Signed in after the checkpoint moved the clock an hour on.
        let admin = try world.agent(.tier1, admin: true)

        // Not an admin: 403 (and recorded); then the admin erases.
        let tier3 = try world.agent(.tier3)
        #expect(try world.post("/api/v1/cases/\(number)/erasure", as: tier3, json: ["reason": "request"]).status == 403)
        let erased = try world.post("/api/v1/cases/\(number)/erasure", as: admin, json: ["reason": "Data-subject request DSR-1"])
        #expect(erased.status == 200, "\(erased.text)")
        let view = try erased.json()
        #expect(view["erased_at"] is String)
        #expect(view["account_email"] is NSNull && view["devices"] is NSNull && view["summary"] is NSNull)
        let customer = try #require(view["customer"] as? [String: Any])
        #expect(customer["name"] is NSNull && customer["contact_email"] is NSNull && customer["phone"] is NSNull)
        #expect((view["facts"] as? [String: Any])?["rescue_email"] is NSNull)
        #expect(view["state"] as? String == "rejected" && view["case_number"] as? String == number)
        let again = try world.post("/api/v1/cases/\(number)/erasure", as: admin, json: ["reason": "again"])
        #expect(again.status == 409)
        #expect(try again.problem().code == "already_erased")

        // The customer: 410 case_erased with the right code, 404 with a wrong one.
        let gone = try world.status(number, code)
        #expect(gone.status == 410, "\(gone.text)")
        #expect(try gone.problem().code == "case_erased")
        #expect(try world.status(number, "ABCD-EFGH-JKLM").status == 404)

        // The dump holds none of the values, in clear or hex, nor the documents' sealed bytes.
        let after = try Self.dump(world)
        func hex(_ text: String) -> String { Array(text.utf8).map { String(format: "%02x", $0) }.joined() }
        for value in Self.canaries {
            #expect(!after.lowercased().contains(value.lowercased()), "the dump holds \(value)")
            #expect(!after.contains(hex(value)), "the dump holds \(value) as hex")
        }
        for bytes in sealed { #expect(!after.contains(bytes), "the dump holds a document's sealed bytes") }
        #expect(after.contains(number))

        // The timeline: every event kept, erased members null, and the chain verifies (the service's own check).
        let events = try world.get("/api/v1/cases/\(number)/events?limit=200", as: admin).json()["items"] as! [[String: Any]]
        #expect(events.last?["type"] as? String == "case_erased")
        let frozen = try #require(events.first { $0["type"] as? String == "frozen" })
        #expect((frozen["data"] as? [String: Any])?["account_email"] is NSNull)
        let commitment = try #require((frozen["commitments"] as? [String: Any])?["account_email"] as? [String: Any])
        #expect(commitment["commitment"] is String && commitment["salt"] == nil)
        let service = try world.database()
        defer { service.close() }
        #expect(try CaseEventStore.verify(on: service).breaks.isEmpty)
        #expect(try AdminEventStore.verify(on: service).firstBreak == nil)
        let audit = try world.get("/api/v1/admin/audit", as: admin).json()["items"] as! [[String: Any]]
        let entry = try #require(audit.last { $0["type"] as? String == "case_erased" })
        #expect((entry["data"] as? [String: Any])?["case_number"] as? String == number)

        // The tree: today's checkpoint extends the one before the erasure (independent verifier), and every event of the
        // erased case is in it by its own hash.
        let second = try TransparencyLogTests.checkpoint(world)
        let proof = try TransparencyLogTests.hashes(
            try world.client.request("GET", "/api/v1/audit/consistency?from=\(first.size)&to=\(second.size)"))
        #expect(
            try AuditVerifier.ok([
                "kind": "consistency", "from": first.size, "to": second.size, "from_root": first.root, "to_root": second.root, "proof": proof,
            ]))
        #expect(
            try AuditVerifier.run([["kind": "root", "event_hashes": TransparencyLogTests.eventHashes(world)]])[0]["root"] as? String == second.root)
        let settled =
            try world.get("/api/v1/cases/\(number)/events?limit=200", as: try world.agent(.tier1, admin: true)).json()["items"] as! [[String: Any]]
        var checks: [[String: Any]] = []
        for event in settled {
            let leaf = try #require(event["leaf_index"] as? Int)
            let inclusion = try TransparencyLogTests.hashes(try world.client.request("GET", "/api/v1/audit/proof?leaf=\(leaf)&size=\(second.size)"))
            checks.append([
                "kind": "inclusion", "index": leaf, "size": second.size, "event_hash": event["hash"] as! String, "proof": inclusion,
                "root": second.root,
            ])
        }
        #expect(try AuditVerifier.run(checks).allSatisfy { $0["ok"] as? Bool == true })
        let verdict = try world.get("/api/v1/admin/checkpoint", as: try world.agent(.tier1, admin: true)).json()
        #expect(verdict["verified"] as? Bool == true)
    }

    /// api.md v1.3 "Smaller doors": the customer's replies keep no `Message-ID` (which carries their address or their
    /// domain, `<1733.zoe@zoe-domaincanary.example>`) once the case is erased; the same bytes are still kept once.
    @Test func anErasedCasesRepliesKeepNoMessageIDCarryingTheCustomersAddressOrDomain() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        let contact = "zoe.replycanary@zoe-domaincanary.example"
        let opened = try world.post(
            "/api/v1/cases", as: tier1,
            json: [
                "kind": "account_takeover", "account_email": "zoe.accountcanary@example.com",
                "customer": ["name": "Zoe Replycanary", "contact_email": contact],
            ] as [String: Any])
        #expect(opened.status == 201, "\(opened.text)")
        let number = try opened.decode(CaseView.self).caseNumber
        let operations = CaseOperations(keys: world.service.keys)
        let rules = InboundRules(replyAddress: "cases@reclaim.test")
        let replyTo = ReplyToken.address("cases@reclaim.test", for: try CaseNumber(parsing: number), keys: world.service.keys)
        func reply(_ id: String) -> [UInt8] {
            Array(
                ("From: Zoe <\(contact)>\r\nTo: \(replyTo)\r\nSubject: Re: your case\r\nMessage-ID: <\(id)>\r\n"
                    + "In-Reply-To: <earlier.zoe.replycanary@zoe-domaincanary.example>\r\nMIME-Version: 1.0\r\n"
                    + "Content-Type: text/plain\r\n\r\nHere it is.\r\n").utf8)
        }
        let replies = [reply("1733.zoe.replycanary@zoe-domaincanary.example"), reply("CAF1733x@mx.zoe-domaincanary.example")]
        for raw in replies {
            _ = try world.service.service.pool.withTransaction {
                try operations.receive(raw: raw, truncated: false, rules: rules, at: Date(), on: $0)
            }
        }
        #expect(try Self.dump(world).contains("1733.zoe.replycanary@zoe-domaincanary.example"), "the Message-ID was stored")

        var version = try world.get("/api/v1/cases/\(number)", as: tier1).decode(CaseView.self).version
        version = try world.must(number, "escalate", as: tier1, version: version).version
        version = try world.must(number, "request_documents", as: tier2, version: version, extra: ["reason": "papers"]).version
        version = try world.must(number, "begin_review", as: tier3, version: version).version
        try world.must(number, "reject", as: tier3, version: version, extra: ["reason": "no papers"])
        let admin = try world.agent(.tier1, admin: true)
        #expect(try world.post("/api/v1/cases/\(number)/erasure", as: admin, json: ["reason": "DSR-2"]).status == 200)

        let after = try Self.dump(world).lowercased()
        for value in ["zoe-domaincanary", "replycanary"] { #expect(!after.contains(value), "the dump holds \(value)") }
        // The mailbox's copy read again after the erasure is still the message already stored: removed, not stored again.
        let again = try world.service.service.pool.withTransaction {
            try operations.receive(raw: replies[0], truncated: false, rules: rules, at: Date(), on: $0)
        }
        #expect(again == .duplicate)
    }

    @Test func theRetentionWorkerErasesFinishedCasesOnceAcrossInstances() throws {
        // A tiny retention (about 0.09 s): the case is due as soon as it is finished.
        let world = try CaseWorld { $0.retentionDays = 0.000_001 }
        let (number, code) = try Self.finishedCase(world)
        let tier1 = try world.agent(.tier1)
        let open = try world.openCase(as: tier1).caseNumber
        world.service.clock.advance(by: 1)
        // Three workers at once, as three instances would: exactly one erasure.
        let clock = world.service.clock
        let workers = (0..<3).map { _ in
            RetentionWorker(
                retention: 0.086, pool: world.service.service.context.pool, operations: CaseOperations(keys: world.service.service.context.keys),
                logger: world.service.service.context.logger, pollInterval: 0.01, now: { clock.now() })
        }
        let group = DispatchGroup()
        let erasures = Mutex(0)
        for worker in workers {
            DispatchQueue.global().async(group: group) {
                while (try? worker.runOnce()) == true { erasures.withLock { $0 += 1 } }
            }
        }
        group.wait()
        #expect(erasures.withLock { $0 } == 1)
        let admin = try world.agent(.tier1, admin: true)
        let view = try world.get("/api/v1/cases/\(number)", as: admin).json()
        #expect(view["erased_at"] is String && view["account_email"] is NSNull)
        #expect(try world.get("/api/v1/cases/\(open)", as: admin).json()["erased_at"] is NSNull, "an open case is never erased")
        #expect(try world.status(number, code).problem().code == "case_erased")
        let events = try world.get("/api/v1/cases/\(number)/events?limit=200", as: admin).json()["items"] as! [[String: Any]]
        let last = try #require(events.last)
        #expect(last["type"] as? String == "case_erased" && last["actor"] as? String == "system")
        #expect((last["data"] as? [String: Any])?["cause"] as? String == "retention")
        let dump = try Self.dump(world)
        for value in Self.canaries { #expect(!dump.lowercased().contains(value.lowercased()), "the dump holds \(value)") }
    }

    /// `GET …/export` as `admin`, read by Python's zipfile: `case.json` and the other files (latin-1 text), by name.
    static func export(_ world: CaseWorld, _ number: String, as admin: AgentSession) throws -> (body: [String: Any], files: [String: String]) {
        let response = try world.get("/api/v1/cases/\(number)/export", as: admin)
        #expect(response.status == 200 && response.header("Content-Type") == "application/zip", "\(response.text)")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).zip").path
        try Data(response.body).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let script = """
            import json, sys, zipfile
            with zipfile.ZipFile(sys.argv[1]) as z:
                assert z.testzip() is None
                case = json.loads(z.read("case.json"))
                files = {name: z.read(name).decode("latin-1") for name in z.namelist() if name != "case.json"}
            print(json.dumps({"case": case, "files": files}))
            """
        let output = try Shell.run(["python3", "-c", script, path])
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        return (try #require(parsed["case"] as? [String: Any]), try #require(parsed["files"] as? [String: String]))
    }

    /// api.md v1.3 "Export both ways", from the thief's side: posing as the owner, he asks for her data. The export holds
    /// the customer's reply (text, To, Date, Message-ID, its attachment's evidence id) beside the mail sent, and nothing
    /// of what caught him: no flag or signal with its detail, no clearance with its reason, no `risk` member, no
    /// `case.risk_raised` webhook; `withheld` says what was left out, by kind and count.
    @Test func anExportHoldsTheMailBothWaysAndWithholdsWhatTheDeskRecordedAboutFraud() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier3 = try world.agent(.tier3)
        let number = try world.openCase(as: tier1).caseNumber
        let flag = "FLAGCANARY the caller could not name the model"
        let clearance = "CLEARCANARY called the number on file"
        #expect(try world.post("/api/v1/cases/\(number)/flags", as: tier1, json: ["reason": flag]).status == 200)
        #expect(try world.post("/api/v1/cases/\(number)/risk/clear", as: tier3, json: ["reason": clearance]).status == 200)

        let replyTo = ReplyToken.address("cases@reclaim.test", for: try CaseNumber(parsing: number), keys: world.service.keys)
        let png = Data(EvidenceWorld.png("ATTACHMENTCANARY")).base64EncodedString()
        let raw = Array(
            ("From: Ada <victim.home@example.net>\r\nTo: \(replyTo)\r\nSubject: Re: your case\r\n"
                + "Date: Tue, 03 Dec 2024 10:15:00 +0800\r\nMessage-ID: <reply.1@example.net>\r\nMIME-Version: 1.0\r\n"
                + "Content-Type: multipart/mixed; boundary=b1\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
                + "REPLYCANARY here is the photo.\r\n--b1\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename=box.png\r\n"
                + "Content-Transfer-Encoding: base64\r\n\r\n\(png)\r\n--b1--\r\n").utf8)
        let operations = CaseOperations(keys: world.service.keys)
        _ = try world.service.service.pool.withTransaction {
            try operations.receive(raw: raw, truncated: false, rules: InboundRules(replyAddress: "cases@reclaim.test"), at: Date(), on: $0)
        }

        let (body, files) = try Self.export(world, number, as: try world.agent(.tier1, admin: true))
        let messages = try #require(body["messages"] as? [[String: Any]])
        #expect(messages.contains { $0["direction"] as? String == "out" })
        let reply = try #require(messages.first { $0["direction"] as? String == "in" })
        #expect((reply["text"] as? String)?.contains("REPLYCANARY") == true)
        #expect(reply["from"] as? String == "victim.home@example.net" && reply["subject"] as? String == "Re: your case")
        #expect(reply["to"] as? [String] == [replyTo] && reply["message_id"] as? String == "reply.1@example.net")
        #expect(reply["date"] as? String == "2024-12-03T02:15:00.000Z")
        let attachments = try #require(reply["attachments"] as? [String])
        #expect(attachments.count == 1 && files.keys.contains { $0.hasPrefix("documents/\(attachments[0])") })
        #expect(reply["from_rescue_address"] == nil)
        // Nothing the desk recorded about fraud, anywhere in case.json; withheld counts it.
        let text = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        for value in ["FLAGCANARY", "CLEARCANARY", "risk_raised", "risk_cleared", "flagged", "risk_signals\":["] {
            #expect(!text.contains(value), "the export holds \(value)")
        }
        #expect((body["case"] as? [String: Any])?["risk"] == nil)
        #expect(body["withheld"] as? [String: Int] == ["risk_signals": 1, "risk_clearances": 1])
    }

    @Test func anExportIsAZipOfEverythingHeldReadByPythonsZipfile() throws {
        let world = try CaseWorld()
        let (number, _) = try Self.finishedCase(world)
        let admin = try world.agent(.tier1, admin: true)
        #expect(try world.get("/api/v1/cases/\(number)/export", as: try world.agent(.tier3)).status == 403)
        let (body, files) = try Self.export(world, number, as: admin)
        let kase = try #require(body["case"] as? [String: Any])
        #expect(kase["case_number"] as? String == number && (kase["customer"] as? [String: Any])?["name"] as? String == Self.name)
        #expect((kase["customer"] as? [String: Any])?["phone"] as? String == Self.phone)
        #expect((body["notes"] as? [[String: Any]])?.contains { $0["body"] as? String == Self.note } == true)
        let timeline = try #require(body["timeline"] as? [[String: Any]])
        #expect(timeline.contains { ($0["data"] as? [String: Any])?["reason"] as? String == Self.reason })
        #expect((body["evidence"] as? [[String: Any]])?.count == 3)
        #expect((body["messages"] as? [[String: Any]])?.isEmpty == false)
        #expect(files.count == 2 && files.keys.allSatisfy { $0.hasPrefix("documents/") })
        #expect(files.values.contains { $0.contains(Self.document) } && files.values.contains { $0.contains(Self.transcript) })
        let audit = try world.get("/api/v1/admin/audit", as: admin).json()["items"] as! [[String: Any]]
        #expect(audit.contains { $0["type"] as? String == "case_exported" && ($0["data"] as? [String: Any])?["case_number"] as? String == number })
    }

    /// Rewrites a case's timeline as a build before commitments wrote it (values hashed in clear, `committed` false), as
    /// the owner, before the sequencer has seen it: the state `reclaim migrate` finds on an upgraded database.
    static func makeLegacy(_ world: CaseWorld, _ number: String, tamper: Bool = false) throws {
        let owner = try world.service.database.connect(as: .owner)
        defer { owner.close() }
        let id: UUID = try #require(try owner.query("SELECT id FROM cases WHERE case_number = \(number)").first?.decode("id"))
        let events = try CaseEventStore.list(caseID: id, on: owner)
        try owner.withTransaction { connection in
            try connection.execute("ALTER TABLE case_events DISABLE TRIGGER case_events_append_only")
            // An old build had no values apart (0029 refuses deleting them from a case not erased).
            try connection.execute("ALTER TABLE case_event_values DISABLE TRIGGER USER")
            try connection.execute("DELETE FROM case_event_values WHERE case_id = \(id)")
            try connection.execute("ALTER TABLE case_event_values ENABLE TRIGGER USER")
            var previous: String?
            for event in events {
                let hash = CaseEventChain.hash(
                    previous: previous, seq: event.seq, at: event.at, actor: event.actor, type: event.type, data: event.data)
                var data = event.data
                if tamper, event.seq == 2, case .object(var members) = data {
                    members["tampered"] = true
                    data = .object(members)
                }
                try connection.execute(
                    """
                    UPDATE case_events SET data = \(data.canonical), prev_hash = \(previous), hash = \(hash), committed = false
                    WHERE case_id = \(id) AND seq = \(event.seq)
                    """)
                previous = hash
            }
            try connection.execute("ALTER TABLE case_events ENABLE TRIGGER case_events_append_only")
        }
    }

    @Test func timelinesWrittenBeforeCommitmentsAreVerifiedThenCarriedOver() throws {
        let world = try CaseWorld()
        world.service.service.sequencer.stop()
        let (number, _) = try Self.finishedCase(world)
        let broken = try world.openCase(as: try world.agent(.tier1)).caseNumber
        try world.must(broken, "escalate", as: try world.agent(.tier1), version: 1)
        try Self.makeLegacy(world, number)
        try Self.makeLegacy(world, broken, tamper: true)
        // The tree's leaves hash the old hashes, as on an upgraded database.
        while try world.service.service.sequencer.runOnce()?.appended ?? 0 > 0 {}
        let service = try world.database()
        defer { service.close() }
        #expect(try CaseEventStore.uncarriedCount(on: service) > 0)
        let owner = try world.service.database.connect(as: .owner)
        defer { owner.close() }

        // A broken chain stops the carry-over, naming it, and nothing changes.
        #expect(throws: EventCommitments.BrokenChain.self) { try owner.withTransaction { try EventCommitments.carryOver(on: $0) } }
        let before = try CaseEventStore.uncarriedCount(on: service)
        #expect(before > 0)
        // Mended (the tampered member removed, as a restore from backup would), it carries over.
        let brokenID: UUID = try #require(try owner.query("SELECT id FROM cases WHERE case_number = \(broken)").first?.decode("id"))
        let tampered = try CaseEventStore.list(caseID: brokenID, on: owner)[1]
        guard case .object(var members) = tampered.data else { throw CaseTestError("event 2 has no object data") }
        members["tampered"] = nil
        try owner.withTransaction { connection in
            try connection.execute("ALTER TABLE case_events DISABLE TRIGGER case_events_append_only")
            try connection.execute(
                "UPDATE case_events SET data = \(JSONValue.object(members).canonical) WHERE case_id = \(brokenID) AND seq = 2")
            try connection.execute("ALTER TABLE case_events ENABLE TRIGGER case_events_append_only")
        }
        let carried = try owner.withTransaction { try EventCommitments.carryOver(on: $0) }
        #expect(carried.cases == 2)
        #expect(try CaseEventStore.uncarriedCount(on: service) == 0)
        #expect(try CaseEventStore.verify(on: service).breaks.isEmpty)
        let tree = try TransparencyLogStore.recompute(on: service)
        #expect(tree.mismatchedLeaves.isEmpty && tree.missingEvents == 0)
        let admin = try world.agent(.tier1, admin: true)
        let events = try world.get("/api/v1/cases/\(number)/events?limit=200", as: admin).json()["items"] as! [[String: Any]]
        #expect(events.allSatisfy { $0["legacy_hash"] is String })
        let frozen = try #require(events.first { $0["type"] as? String == "frozen" })
        #expect((frozen["data"] as? [String: Any])?["account_email"] as? String == Self.account)
        #expect(((frozen["commitments"] as? [String: Any])?["account_email"] as? [String: Any])?["salt"] is String)

        // Erased afterwards: nothing in the dump, the chains and the tree still hold.
        #expect(try world.post("/api/v1/cases/\(number)/erasure", as: admin, json: ["reason": "DSR-2"]).status == 200)
        while try world.service.service.sequencer.runOnce()?.appended ?? 0 > 0 {}
        #expect(try CaseEventStore.verify(on: service).breaks.isEmpty)
        #expect(try TransparencyLogStore.recompute(on: service).mismatchedLeaves.isEmpty)
        let dump = try Self.dump(world)
        for value in Self.canaries { #expect(!dump.lowercased().contains(value.lowercased()), "the dump holds \(value)") }
    }

    /// A process killed mid-erasure (its database session dies before the commit) leaves the case whole: one
    /// transaction per case. The next pass erases it.
    @Test func anErasureCutOffBeforeItsCommitLeavesTheCaseWhole() throws {
        let world = try CaseWorld()
        let (number, _) = try Self.finishedCase(world)
        let victim = try world.database()
        let pid: Int32 = try #require(try victim.query("SELECT pg_backend_pid() AS pid").first?.decode("pid"))
        try victim.execute("BEGIN")
        _ = try CaseOperations(keys: world.service.service.context.keys).erase(
            try CaseNumber(parsing: number), reason: "cut off", by: "system", at: world.service.clock.now(), on: victim)
        // The erasure is done but not committed: the session dies, as with kill -9 of its process.
        let killer = try world.database()
        defer { killer.close() }
        _ = try killer.query("SELECT pg_terminate_backend(\(pid), 5000)")
        victim.close()
        let dump = try Self.dump(world)
        for value in [Self.name, Self.contact, Self.serial, Self.note, Self.reason] { #expect(dump.contains(value), "\(value) kept") }
        let admin = try world.agent(.tier1, admin: true)
        #expect(try world.get("/api/v1/cases/\(number)", as: admin).json()["erased_at"] is NSNull)
        let service = try world.database()
        defer { service.close() }
        #expect(try CaseEventStore.verify(on: service).breaks.isEmpty)
        // The next pass erases it, whole.
        let clock = world.service.clock
        clock.advance(by: 1)
        let worker = RetentionWorker(
            retention: 0.5, pool: world.service.service.context.pool, operations: CaseOperations(keys: world.service.service.context.keys),
            logger: world.service.service.context.logger, now: { clock.now() })
        #expect(try worker.runOnce())
        #expect(try !worker.runOnce())
        let after = try Self.dump(world)
        for value in Self.canaries { #expect(!after.lowercased().contains(value.lowercased()), "the dump holds \(value)") }
    }
}
