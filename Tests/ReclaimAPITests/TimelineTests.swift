import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

/// A JSON value decoded strictly (booleans are not numbers), for an independent JCS implementation.
private indirect enum TestJSON: Decodable {
    case null
    case bool(Bool)
    case int(Int64)
    case string(String)
    case array([TestJSON])
    case object([String: TestJSON])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let v = try? c.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? c.decode(Int64.self) {
            self = .int(v)
        } else if let v = try? c.decode(String.self) {
            self = .string(v)
        } else if let v = try? c.decode([TestJSON].self) {
            self = .array(v)
        } else {
            self = .object(try c.decode([String: TestJSON].self))
        }
    }

    /// RFC 8785, written from the RFC for the test: sorted keys (UTF-16), no spaces, minimal escapes.
    var jcs: String {
        switch self {
        case .null: return "null"
        case .bool(let v): return v ? "true" : "false"
        case .int(let v): return String(v)
        case .string(let s): return Self.quote(s)
        case .array(let items): return "[" + items.map(\.jcs).joined(separator: ",") + "]"
        case .object(let members):
            let keys = members.keys.sorted { Array($0.utf16).lexicographicallyPrecedes(Array($1.utf16)) }
            return "{" + keys.map { Self.quote($0) + ":" + members[$0]!.jcs }.joined(separator: ",") + "}"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x08: out += "\\b"
            case 0x09: out += "\\t"
            case 0x0A: out += "\\n"
            case 0x0C: out += "\\f"
            case 0x0D: out += "\\r"
            case 0..<0x20: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}

@Suite(.serialized) struct TimelineTests {
    /// Recomputes every hash from the events exactly as the API returns them.
    @Test func theChainRecomputesFromTheAPIsEvents() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        try world.must(number, "escalate", as: tier1, version: 1)
        _ = try world.post(
            "/api/v1/cases/\(number)/notes", as: tier1, json: ["body": "Quote \" backslash \\ tab \t newline \n ünïcödé 🙂", "visibility": "internal"])
        _ = try world.act(number, "reopen", as: tier1, version: 2, extra: ["reason": "x"])  // 403 (reopen is tier2+): recorded as denied
        _ = try world.act(number, "close", as: tier1, version: 2, extra: ["reason": "x"])  // 409 invalid_transition: not recorded
        _ = try world.act(number, "verify", as: tier1, version: 2)  // 403: recorded as denied
        try world.must(number, "request_documents", as: tier2, version: 2, extra: ["reason": "Nothing matched \"at all\"."])

        let response = try world.get("/api/v1/cases/\(number)/events?limit=200", as: tier1)
        let list = try JSONDecoder().decode([String: TestJSON].self, from: Data(response.body))
        guard case .array(let items)? = list["items"] else {
            Issue.record("no items")
            return
        }
        #expect(items.count == 6)
        var previous: String?
        for (index, item) in items.enumerated() {
            guard case .object(let event) = item, case .int(let seq)? = event["seq"], case .string(let hash)? = event["hash"] else {
                Issue.record("bad event")
                return
            }
            #expect(seq == Int64(index + 1))
            if case .string(let prev)? = event["prev_hash"] { #expect(prev == previous) } else { #expect(previous == nil) }
            // Exactly {seq, at, actor, type, data}: the leaf index (given once the event is in the tree) is not hashed, and
            // each committed member (a free-text reason) is hashed as {"commitment": hex SHA-256(salt ‖ JCS(value))}.
            var body = event.filter { ["seq", "at", "actor", "type", "data"].contains($0.key) }
            if case .object(let commitments)? = event["commitments"], case .object(var data)? = body["data"] {
                for (key, member) in commitments {
                    guard case .object(let parts) = member, case .string(let commitment)? = parts["commitment"],
                        case .string(let salt)? = parts["salt"], let value = data[key]
                    else {
                        Issue.record("event \(seq): commitment of \(key) without its salt or value")
                        continue
                    }
                    #expect(Hex.encode(SHA256.hash(salt + value.jcs)) == commitment, "event \(seq): \(key)")
                    data[key] = .object(["commitment": .string(commitment)])
                }
                body["data"] = .object(data)
            }
            let expected = Hex.encode(SHA256.hash((previous ?? "") + TestJSON.object(body).jcs))
            #expect(hash == expected, "event \(seq)")
            #expect(hash == hash.lowercased() && hash.count == 64)
            previous = hash
        }
        // Names of the agents who acted come beside the events, so every event stays exactly what its hash covers.
        let actors = try response.decode(ListView<EventView>.self).actors
        #expect(
            actors == [
                "agent:\(tier1.agentID.uuidString.lowercased())": "Test Agent", "agent:\(tier2.agentID.uuidString.lowercased())": "Test Agent",
            ])
        let types = items.compactMap { item -> String? in if case .object(let e) = item, case .string(let t)? = e["type"] { t } else { nil } }
        #expect(types == ["case_opened", "transition", "note_added", "denied", "denied", "transition"])
    }

    @Test func theDatabaseRefusesToChangeOrDeleteEvents() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        _ = try world.openCase(as: tier1)
        let connection = try world.database()
        defer { connection.close() }
        for statement: PostgresQuery in ["UPDATE case_events SET actor = 'agent:someone-else'", "DELETE FROM case_events", "TRUNCATE case_events"] {
            do {
                try connection.execute(statement)
                Issue.record("\(statement) was allowed")
            } catch let error as PostgresError {
                #expect(error.sqlState == "42501", "\(error)")
            }
        }
        #expect(try connection.query("SELECT count(*) FROM case_events").first!.decode(0, as: Int.self) == 1)
    }

    /// The admin log is a chain like the timelines: `reclaim audit verify` recomputes it too, without a checkpoint, and
    /// names its first broken link; one case's check leaves it out.
    @Test func auditVerifyChecksTheAdminLogToo() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        _ = try world.agent(.tier2)  // each agent added is an admin-log entry: two so far
        let environment = [
            "PATH": "/usr/bin:/bin", "DATABASE_URL": world.service.database.connectionString,
            "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public", "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
        ]
        let clean = try Shell.capture([RepositoryPaths.executable, "audit", "verify"], environment: environment)
        #expect(clean.status == 0, "\(clean.output)\(clean.error)")
        #expect(clean.output.contains("2 admin-log entries; every chain holds"), "\(clean.output)")

        let connection = try world.service.database.connect(as: .owner)
        defer { connection.close() }
        try connection.withTransaction { transaction in
            try transaction.execute("ALTER TABLE admin_events DISABLE TRIGGER admin_events_append_only")
            try transaction.execute("UPDATE admin_events SET actor = 'cli:someone-else' WHERE seq = 1")
            try transaction.execute("ALTER TABLE admin_events ENABLE TRIGGER admin_events_append_only")
        }
        let tampered = try Shell.capture([RepositoryPaths.executable, "audit", "verify"], environment: environment)
        #expect(tampered.status == 65, "\(tampered.output)")
        #expect(tampered.output.contains("BROKEN admin log: event 1: hash does not match"), "\(tampered.output)")
        #expect(!tampered.output.contains("BROKEN case"), "\(tampered.output)")
        let one = try Shell.capture([RepositoryPaths.executable, "audit", "verify", number], environment: environment)
        #expect(one.status == 0, "one case's check is about that case: \(one.output)")
    }

    /// The owner can bypass the trigger; `reclaim audit verify` then names the first broken link.
    @Test func auditVerifyNamesTheFirstBrokenLink() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let first = try world.openCase(as: tier1).caseNumber
        let second = try world.openCase(as: tier1).caseNumber
        try world.must(first, "escalate", as: tier1, version: 1)
        _ = try world.post("/api/v1/cases/\(first)/notes", as: tier1, json: ["body": "n", "visibility": "internal"])

        let environment = [
            "PATH": "/usr/bin:/bin", "DATABASE_URL": world.service.database.connectionString,
            "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public", "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
        ]
        let clean = try Shell.capture([RepositoryPaths.executable, "audit", "verify"], environment: environment)
        #expect(clean.status == 0, "\(clean.error)")
        #expect(clean.output.contains("ok: 2 case(s), 4 event(s)"))

        let connection = try world.service.database.connect(as: .owner)
        defer { connection.close() }
        try connection.withTransaction { transaction in
            try transaction.execute("ALTER TABLE case_events DISABLE TRIGGER case_events_append_only")
            try transaction.execute(
                """
                UPDATE case_events SET data = '{"action":"escalate","due_at":null,"from":"new","path":"undetermined","reason":"covered up","to":"identity_check"}'
                  WHERE seq = 2 AND case_id = (SELECT id FROM cases WHERE case_number = \(first))
                """)
            try transaction.execute("ALTER TABLE case_events ENABLE TRIGGER case_events_append_only")
        }
        let tampered = try Shell.capture([RepositoryPaths.executable, "audit", "verify"], environment: environment)
        #expect(tampered.status == 65)
        #expect(tampered.output.contains("BROKEN case \(first): event 2: hash does not match"), "\(tampered.output)")
        #expect(!tampered.output.contains("case \(second)"))
        let one = try Shell.capture([RepositoryPaths.executable, "audit", "verify", second], environment: environment)
        #expect(one.status == 0)

        // Deleting an event breaks the sequence at the gap.
        try connection.withTransaction { transaction in
            try transaction.execute("ALTER TABLE case_events DISABLE TRIGGER case_events_append_only")
            try transaction.execute("DELETE FROM case_events WHERE seq = 1 AND case_id = (SELECT id FROM cases WHERE case_number = \(second))")
            try transaction.execute("ALTER TABLE case_events ENABLE TRIGGER case_events_append_only")
        }
        let gap = try Shell.capture([RepositoryPaths.executable, "audit", "verify", second], environment: environment)
        #expect(gap.status == 65)
        #expect(gap.output.contains("BROKEN case \(second): event"), "\(gap.output)")
    }
}
