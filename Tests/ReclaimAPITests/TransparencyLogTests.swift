import Crypto
import Foundation
import Postgres
import ReclaimStore
import ReclaimTestSupport
import Testing

/// The independent RFC 9162 / signed-note verifier (Tests/Audit/verify.py, PyPI `cryptography` for Ed25519), run by the
/// venv deploy/test makes (`RECLAIM_TEST_AUDIT_PYTHON`, default .build/audit-venv/bin/python).
enum AuditVerifier {
    static var python: String {
        ProcessInfo.processInfo.environment["RECLAIM_TEST_AUDIT_PYTHON"] ?? RepositoryPaths.root + "/.build/audit-venv/bin/python"
    }

    /// Runs the checks; one result object each.
    static func run(_ checks: [[String: Any]]) throws -> [[String: Any]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [RepositoryPaths.root + "/Tests/Audit/verify.py"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: ["checks": checks]))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let results = object["results"] as? [[String: Any]]
        else {
            throw CaseTestError("verify.py failed (\(process.terminationStatus)); is \(python) there? run deploy/test once")
        }
        return results
    }

    static func ok(_ check: [String: Any]) throws -> Bool { try run([check])[0]["ok"] as? Bool == true }
}

/// The transparency log over HTTP, checked by the independent verifier: signed checkpoints, the key, inclusion proofs
/// of the timelines' own events and consistency proofs; bad parameters; the `audit.checkpoint` webhook; and from the
/// attacker's side, a history rewritten by the database's owner with every chain and the tree rebuilt.
@Suite(.serialized) struct TransparencyLogTests {
    /// Sequencer passes until nothing is pending (a pass may find the service's own sequencer holding the lock).
    static func settle(_ world: CaseWorld) throws {
        let connection = try world.database()
        defer { connection.close() }
        for _ in 0..<1000 {
            if try world.service.service.sequencer.runOnce()?.appended == 0, try TransparencyLogStore.pendingCount(on: connection) == 0 { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw CaseTestError("the sequencer did not catch up")
    }

    /// A new checkpoint of today's tree: the interval passed, the sequencer signs.
    static func checkpoint(_ world: CaseWorld) throws -> (note: String, size: Int, root: String) {
        try settle(world)
        world.service.clock.advance(by: 3601)
        try settle(world)
        let response = try world.client.request("GET", "/api/v1/audit/checkpoint")
        #expect(response.status == 200 && response.header("Content-Type")?.hasPrefix("text/plain") == true)
        let lines = response.text.split(separator: "\n")
        return (response.text, Int(lines[1])!, String(lines[2]))
    }

    static func key(_ world: CaseWorld) throws -> String { try world.client.request("GET", "/api/v1/audit/key").text }

    static func hashes(_ response: TestHTTPResponse) throws -> [String] {
        #expect(response.status == 200, "\(response.text)")
        return try response.json()["hashes"] as? [String] ?? []
    }

    /// Some cases with events, and admin-log entries (each agent added is one).
    static func activity(_ world: CaseWorld) throws -> [String] {
        let tier1 = try world.agent(.tier1)
        var numbers: [String] = []
        for _ in 0..<3 {
            let number = try world.openCase(as: tier1).caseNumber
            try world.must(number, "escalate", as: tier1, version: 1)
            _ = try world.post("/api/v1/cases/\(number)/notes", as: tier1, json: ["body": "called back", "visibility": "internal"])
            numbers.append(number)
        }
        return numbers
    }

    /// Every event's hash, in leaf order, as the database holds them.
    static func eventHashes(_ world: CaseWorld) throws -> [String] {
        let connection = try world.database()
        defer { connection.close() }
        return try eventHashes(on: connection)
    }

    /// Every leaf's event hash (hex), in leaf order.
    static func eventHashes(on connection: PostgresConnection) throws -> [String] {
        try connection.query(
            """
            SELECT coalesce(c.hash, a.hash) AS hash FROM log_leaves l LEFT JOIN case_events c ON c.case_id = l.case_id AND c.seq = l.seq
            LEFT JOIN admin_events a ON l.case_id IS NULL AND a.seq = l.seq ORDER BY l.leaf_index
            """
        ).map { try $0.decode("hash", as: String.self) }
    }

    @Test func checkpointsAndProofsVerifyInAnIndependentVerifier() throws {
        let world = try CaseWorld()
        let numbers = try Self.activity(world)
        let first = try Self.checkpoint(world)
        let key = try Self.key(world)
        #expect(key.hasPrefix(world.service.service.configuration.logOrigin + "+"))
        let note = try AuditVerifier.run([["kind": "note", "note": first.note, "key": key]])[0]
        #expect(note["ok"] as? Bool == true, "\(note)")
        #expect(note["origin"] as? String == world.service.service.configuration.logOrigin)
        #expect(note["size"] as? Int == first.size && note["root"] as? String == first.root)
        // The root, recomputed from the events themselves by the RFC's definition.
        #expect(try AuditVerifier.run([["kind": "root", "event_hashes": Self.eventHashes(world)]])[0]["root"] as? String == first.root)

        // Every event of every timeline carries its leaf, whose inclusion proof verifies against the checkpoint.
        let admin = try world.agent(.tier1, admin: true)
        var checks: [[String: Any]] = []
        for number in numbers {
            let events = try world.get("/api/v1/cases/\(number)/events", as: admin).json()["items"] as! [[String: Any]]
            #expect(events.count >= 3)
            for event in events {
                let leaf = try #require(event["leaf_index"] as? Int)
                let proof = try Self.hashes(try world.client.request("GET", "/api/v1/audit/proof?leaf=\(leaf)&size=\(first.size)"))
                checks.append([
                    "kind": "inclusion", "index": leaf, "size": first.size, "event_hash": event["hash"] as! String, "proof": proof,
                    "root": first.root,
                ])
                // The same proof does not prove another event there.
                checks.append([
                    "kind": "inclusion", "index": leaf, "size": first.size, "event_hash": String(repeating: "0", count: 64), "proof": proof,
                    "root": first.root,
                ])
            }
        }
        let audit = try world.get("/api/v1/admin/audit", as: admin).json()["items"] as! [[String: Any]]
        #expect(audit.allSatisfy { $0["leaf_index"] is Int || $0["leaf_index"] is NSNull })
        let results = try AuditVerifier.run(checks)
        #expect(results.enumerated().allSatisfy { ($0.element["ok"] as? Bool) == ($0.offset % 2 == 0) })

        // More history, a second checkpoint: every consistency proof from an earlier size verifies.
        _ = try Self.activity(world)
        let second = try Self.checkpoint(world)
        #expect(second.size > first.size)
        var roots: [Int: String] = [:]
        let hashes = try Self.eventHashes(world)
        for size in [1, first.size / 2, first.size] {
            roots[size] = try AuditVerifier.run([["kind": "root", "event_hashes": Array(hashes.prefix(size))]])[0]["root"] as? String
        }
        for from in [1, first.size / 2, first.size] {
            let proof = try Self.hashes(try world.client.request("GET", "/api/v1/audit/consistency?from=\(from)&to=\(second.size)"))
            #expect(
                try AuditVerifier.ok([
                    "kind": "consistency", "from": from, "to": second.size, "from_root": roots[from]!, "to_root": second.root, "proof": proof,
                ]))
        }
        #expect(try Self.hashes(try world.client.request("GET", "/api/v1/audit/consistency?from=\(second.size)&to=\(second.size)")).isEmpty)

        // The dashboard's verdict: today's tree extends the latest checkpoint (a fresh session: the clock moved two hours).
        let admin2 = try world.agent(.tier1, admin: true)
        let answer = try world.get("/api/v1/admin/checkpoint", as: admin2)
        let verdict = try answer.json()
        #expect(verdict["verified"] as? Bool == true, "\(answer.text)")
        #expect((verdict["checkpoint"] as? [String: Any])?["note"] as? String == second.note)
        #expect(try world.get("/api/v1/admin/checkpoint", as: try world.agent(.tier3)).status == 403)
        #expect(try world.client.request("GET", "/api/v1/admin/checkpoint").status == 401)
    }

    @Test func badParametersAre422NamingTheField() throws {
        let world = try CaseWorld()
        _ = try Self.activity(world)
        try Self.settle(world)
        let size = try world.database().query("SELECT count(*) AS n FROM log_leaves").first!.decode("n", as: Int.self)
        let cases: [(String, String)] = [
            ("/api/v1/audit/proof?size=1", "leaf"), ("/api/v1/audit/proof?leaf=0", "size"), ("/api/v1/audit/proof?leaf=x&size=1", "leaf"),
            ("/api/v1/audit/proof?leaf=-1&size=1", "leaf"), ("/api/v1/audit/proof?leaf=0&size=0", "size"),
            ("/api/v1/audit/proof?leaf=0&size=\(size + 1)", "size"), ("/api/v1/audit/proof?leaf=\(size)&size=\(size)", "leaf"),
            ("/api/v1/audit/proof?leaf=0&size=99999999999999999999999", "size"),
            ("/api/v1/audit/consistency?from=0&to=1", "from"), ("/api/v1/audit/consistency?from=2&to=1", "from"),
            ("/api/v1/audit/consistency?from=1&to=\(size + 1)", "to"), ("/api/v1/audit/consistency?to=1", "from"),
            ("/api/v1/audit/consistency?from=1&to=1e3", "to"),
        ]
        for (target, field) in cases {
            let response = try world.client.request("GET", target)
            #expect(response.status == 422, "\(target): \(response.text)")
            let errors = try response.json()["errors"] as? [[String: Any]] ?? []
            #expect(errors.contains { $0["field"] as? String == field }, "\(target): \(response.text)")
        }
        #expect(try world.client.request("GET", "/api/v1/audit/proof?leaf=0&size=\(size)").status == 200)
    }

    /// Partners subscribed to `audit.checkpoint` get each new checkpoint queued with it, whoever opened what.
    @Test func eachCheckpointIsQueuedForItsSubscribers() throws {
        let world = try CaseWorld { $0.webhookAllow = "127.0.0.1" }
        try Self.settle(world)  // the first checkpoint (made at start) before anyone subscribes
        let client = try world.service.addClient()
        let body = Array(try JSONSerialization.data(withJSONObject: ["url": "http://127.0.0.1:9/checkpoints", "events": ["audit.checkpoint"]]))
        var headers = world.service.clientHeaders(client, method: "POST", target: "/api/v1/webhooks", body: body)
        headers.append(("Content-Type", "application/json"))
        #expect(try world.client.request("POST", "/api/v1/webhooks", headers: headers, body: body).status == 201)
        _ = try Self.activity(world)
        let checkpoint = try Self.checkpoint(world)
        let connection = try world.database()
        defer { connection.close() }
        let payloads = try connection.query("SELECT payload FROM outbox WHERE kind = 'audit.checkpoint' AND case_id IS NULL")
            .map { try JSONSerialization.jsonObject(with: Data(try $0.decode("payload", as: String.self).utf8)) as! [String: Any] }
        #expect(payloads.count == 1)
        let data = payloads.first?["data"] as? [String: Any]
        #expect(payloads.first?["type"] as? String == "audit.checkpoint")
        #expect(data?["checkpoint"] as? String == checkpoint.note && data?["tree_size"] as? Int == checkpoint.size)
        #expect(data?["root_hash"] as? String == checkpoint.root)
    }

    /// The database's owner rewrites a case's history: one event's data edited, that case's whole chain recomputed,
    /// the append-only triggers switched off for it, and the tree rebuilt consistently from the rewritten events. Every
    /// chain verifies again; a checkpoint a partner saved before does not: `verify --checkpoint` fails, every
    /// consistency proof from its size fails the independent verifier, and the dashboard says so.
    @Test func aRewrittenHistoryFailsTheSavedCheckpoint() throws {
        let world = try CaseWorld()
        let numbers = try Self.activity(world)
        let saved = try Self.checkpoint(world)
        let file = world.service.directory + "/saved-checkpoint"
        try saved.note.write(toFile: file, atomically: true, encoding: .utf8)
        let environment = [
            "PATH": "/usr/bin:/bin", "DATABASE_URL": world.service.database.connectionString,
            "RECLAIM_KEY_FILE": world.service.directory + "/keys", "RECLAIM_LOG_ORIGIN": world.service.service.configuration.logOrigin,
        ]
        let before = try Shell.capture([RepositoryPaths.executable, "audit", "verify", "--checkpoint", file], environment: environment)
        #expect(before.status == 0, "\(before.output)\(before.error)")
        #expect(before.output.contains("ok: today's tree extends the checkpoint"))

        // The key rotates: the old checkpoint still verifies under the old key, the new key is served.
        let oldKey = try Self.key(world)
        let rotated = try Shell.capture([RepositoryPaths.executable, "keys", "rotate", "checkpoint"], environment: environment)
        #expect(rotated.status == 0, "\(rotated.error)")
        #expect(try Shell.capture([RepositoryPaths.executable, "audit", "verify", "--checkpoint", file], environment: environment).status == 0)
        let newKeys = try KeyFile.load(path: world.service.directory + "/keys")
        #expect(newKeys.activeKey(for: .checkpoint).id == "checkpoint-2" && newKeys.entries(for: .checkpoint).count == 2)
        #expect(oldKey.hasPrefix(world.service.service.configuration.logOrigin + "+"))

        // The attack, as the owner (the service's own role may not switch a trigger off).
        let connection = try world.service.database.connect(as: .owner)
        defer { connection.close() }
        let caseID: UUID = try connection.query("SELECT id FROM cases WHERE case_number = \(numbers[0])").first!.decode("id")
        try connection.execute("ALTER TABLE case_events DISABLE TRIGGER USER")
        try connection.execute("UPDATE case_events SET data = \(#"{"body_length":0,"visibility":"customer"}"#) WHERE case_id = \(caseID) AND seq = 1")
        var previous: String?
        for event in try CaseEventStore.list(caseID: caseID, on: connection) {
            let hash = CaseEventChain.hash(previous: previous, seq: event.seq, at: event.at, actor: event.actor, type: event.type, data: event.data)
            try connection.execute("UPDATE case_events SET prev_hash = \(previous), hash = \(hash) WHERE case_id = \(caseID) AND seq = \(event.seq)")
            previous = hash
        }
        try connection.execute("ALTER TABLE case_events ENABLE TRIGGER USER")
        for table in ["log_leaves", "log_nodes"] {
            try connection.execute("ALTER TABLE \(identifier: table) DISABLE TRIGGER USER")
            try connection.execute("DELETE FROM \(identifier: table)")
        }
        try connection.execute(
            """
            INSERT INTO log_pending (case_id, seq)
            SELECT case_id, seq FROM (SELECT case_id, seq, at FROM case_events UNION ALL SELECT NULL, seq, at FROM admin_events) e ORDER BY at, case_id NULLS FIRST, seq
            """)
        try connection.withTransaction { connection in
            _ = try TransparencyLogStore.trySequencerLock(on: connection)
            while try TransparencyLogStore.sequence(limit: 1000, on: connection).appended > 0 {}
        }
        for table in ["log_leaves", "log_nodes"] { try connection.execute("ALTER TABLE \(identifier: table) ENABLE TRIGGER USER") }

        // Every chain holds again and the tree matches the events: what the chains alone cannot see.
        let chains = try Shell.capture([RepositoryPaths.executable, "audit", "verify"], environment: environment)
        #expect(chains.status == 0, "\(chains.output)")
        let after = try Shell.capture([RepositoryPaths.executable, "audit", "verify", "--checkpoint", file], environment: environment)
        #expect(after.status == 65, "\(after.output)\(after.error)")
        #expect(after.output.contains("CHECKPOINT") && after.output.contains("not an extension"), "\(after.output)")
        #expect(!after.output.contains("BROKEN") && !after.output.contains("TREE"), "\(after.output)")

        // Any consistency proof from the saved size, to any size of today's tree, fails the independent verifier.
        let hashes = try Self.eventHashes(world)
        var checks: [[String: Any]] = []
        for to in saved.size...hashes.count {
            let root = try AuditVerifier.run([["kind": "root", "event_hashes": Array(hashes.prefix(to))]])[0]["root"] as! String
            let proof = try Self.hashes(try world.client.request("GET", "/api/v1/audit/consistency?from=\(saved.size)&to=\(to)"))
            checks.append(["kind": "consistency", "from": saved.size, "to": to, "from_root": saved.root, "to_root": root, "proof": proof])
        }
        #expect(try AuditVerifier.run(checks).allSatisfy { $0["ok"] as? Bool == false })
        let admin = try world.agent(.tier1, admin: true)
        let verdict = try world.get("/api/v1/admin/checkpoint", as: admin).json()
        #expect(verdict["verified"] as? Bool == false, "\(verdict)")
        #expect((verdict["problem"] as? String)?.contains("not an extension") == true)
    }
}
