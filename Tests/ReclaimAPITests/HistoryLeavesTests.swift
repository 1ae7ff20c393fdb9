import Foundation
import Postgres
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport
import Testing

/// api.md v1.3 "History is its leaves": a change to an event after its leaf was logged fails `reclaim audit verify
/// --checkpoint` however the rows are set, `legacy_hash` included (only the events 0022 carried over hash to it, and
/// they recompute in their form before commitments); a committed value missing on a case never erased fails `reclaim
/// audit verify`. Each attack is the database superuser's (the test database's owner), from outside the service.
@Suite(.serialized) struct HistoryLeavesTests {
    /// What the CLI needs to verify this world's database and checkpoints.
    static func environment(_ world: CaseWorld) -> [String: String] {
        [
            "PATH": "/usr/bin:/bin", "DATABASE_URL": world.service.database.connectionString,
            "RECLAIM_KEY_FILE": world.service.directory + "/keys", "RECLAIM_LOG_ORIGIN": world.service.service.configuration.logOrigin,
        ]
    }

    /// `reclaim audit verify` with `arguments`.
    static func verify(_ world: CaseWorld, _ arguments: [String] = []) throws -> (status: Int32, output: String) {
        let run = try Shell.capture([RepositoryPaths.executable, "audit", "verify"] + arguments, environment: environment(world))
        return (run.status, run.output + run.error)
    }

    /// A case whose risk signal (a flag) tier 3 cleared: its number, id and the `risk_cleared` event's seq.
    static func clearedCase(_ world: CaseWorld) throws -> (number: String, id: UUID, seq: Int) {
        let tier1 = try world.agent(.tier1)
        let tier3 = try world.agent(.tier3)
        let number = try world.openCase(as: tier1).caseNumber
        let flagged = try world.post("/api/v1/cases/\(number)/flags", as: tier1, json: ["reason": "The caller could not name the model."])
        #expect(flagged.status == 200, "\(flagged.text)")
        let cleared = try world.post("/api/v1/cases/\(number)/risk/clear", as: tier3, json: ["reason": "Called the number on file."])
        #expect(cleared.status == 200, "\(cleared.text)")
        let seq = try #require(try world.events(number, as: tier1).last { $0.type == "risk_cleared" }?.seq)
        let connection = try world.database()
        defer { connection.close() }
        let id: UUID = try #require(try connection.query("SELECT id FROM cases WHERE case_number = \(number)").first?.decode("id"))
        return (number, id, seq)
    }

    /// The attack: as the superuser, with the timeline's triggers off, `change` applied to event `seq`'s row, the case's
    /// chain recomputed from there over the committed form, and each rewritten event's old hash put in `legacy_hash`
    /// (kept when it had one; unless `setLegacy` is false), so that the leaves' hashes still read `coalesce(legacy_hash,
    /// hash)`.
    static func rewrite(_ world: CaseWorld, caseID: UUID, seq: Int, actor: String? = nil, data: JSONValue? = nil, setLegacy: Bool = true) throws {
        let owner = try world.service.database.connect(as: .owner)
        defer { owner.close() }
        let events = try CaseEventStore.list(caseID: caseID, on: owner)
        try owner.withTransaction { connection in
            try connection.execute("ALTER TABLE case_events DISABLE TRIGGER USER")
            var previous = seq > 1 ? events[seq - 2].hash : nil
            for event in events where event.seq >= seq {
                var hashed = event.hashedData
                if event.seq == seq, let data { hashed = data }
                let who = event.seq == seq ? actor ?? event.actor : event.actor
                let hash = CaseEventChain.hash(previous: previous, seq: event.seq, at: event.at, actor: who, type: event.type, data: hashed)
                let legacy = setLegacy ? event.legacyHash ?? event.hash : event.legacyHash
                try connection.execute(
                    """
                    UPDATE case_events SET actor = \(who), data = \(hashed.canonical), prev_hash = \(previous), hash = \(hash),
                        legacy_hash = \(legacy) WHERE case_id = \(caseID) AND seq = \(event.seq)
                    """)
                previous = hash
            }
            try connection.execute("ALTER TABLE case_events ENABLE TRIGGER USER")
        }
    }

    @Test func aClearerRewrittenWithTheOldHashesAsLegacyFailsVerifyAndTheSavedCheckpoint() throws {
        let world = try CaseWorld()
        let (number, caseID, seq) = try Self.clearedCase(world)
        let saved = try TransparencyLogTests.checkpoint(world)
        let file = world.service.directory + "/saved-checkpoint"
        try saved.note.write(toFile: file, atomically: true, encoding: .utf8)
        let before = try Self.verify(world, ["--checkpoint", file])
        #expect(before.status == 0, "\(before.output)")

        // Someone else cleared it, says the row now: the four-eyes rule would let the real clearer record the unlock.
        try Self.rewrite(world, caseID: caseID, seq: seq, actor: "agent:\(try world.agent(.tier3).agentID.uuidString.lowercased())")
        let chains = try Self.verify(world)
        #expect(chains.status == 65, "\(chains.output)")
        #expect(
            chains.output.contains("BROKEN case \(number): event \(seq): legacy_hash is set but migration 0022 did not carry"), "\(chains.output)")
        let after = try Self.verify(world, ["--checkpoint", file])
        #expect(after.status == 65, "\(after.output)")
        #expect(after.output.contains("BROKEN case \(number): event \(seq)"), "\(after.output)")
        // The leaves hash the events' own hashes: the rewritten one no longer matches its leaf, whatever legacy_hash says.
        #expect(after.output.contains("TREE leaf ") && after.output.contains("(case \(number) event \(seq))"), "\(after.output)")

        // Widening the set of carried-over events is the owner's too: the events then recompute in their form before
        // commitments, which the rewritten history does not.
        let owner = try world.service.database.connect(as: .owner)
        defer { owner.close() }
        try owner.withTransaction { connection in
            try connection.execute("ALTER TABLE case_events DISABLE TRIGGER USER")
            try connection.execute("UPDATE case_events SET legacy_hash = hash WHERE case_id = \(caseID) AND legacy_hash IS NULL")
            try connection.execute("ALTER TABLE case_events ENABLE TRIGGER USER")
        }
        try owner.execute("INSERT INTO case_events_carried (case_id, seq) SELECT case_id, seq FROM case_events WHERE case_id = \(caseID)")
        let widened = try Self.verify(world, ["--checkpoint", file])
        #expect(widened.status == 65, "\(widened.output)")
        #expect(widened.output.contains("BROKEN case \(number): event "), "\(widened.output)")
        #expect(widened.output.contains("in its form before commitments"), "\(widened.output)")
    }

    @Test func theServiceRoleCannotWriteTheCarriedSetNorDeleteAValueOfACaseNotErased() throws {
        let world = try CaseWorld()
        let (_, caseID, seq) = try Self.clearedCase(world)
        let service = try world.database()
        defer { service.close() }
        #expect(throws: (any Error).self) {
            try service.execute("INSERT INTO case_events_carried (case_id, seq) VALUES (\(caseID), \(seq))")
        }
        #expect(throws: (any Error).self) { try service.execute("DELETE FROM case_event_values WHERE case_id = \(caseID)") }
        #expect(throws: (any Error).self) { try service.execute("UPDATE case_event_values SET value = '\"x\"' WHERE case_id = \(caseID)") }
        #expect(try service.query("SELECT count(*) AS n FROM case_event_values WHERE case_id = \(caseID)").first?.decode("n", as: Int.self) ?? 0 > 0)
    }

    @Test func aCommittedValueMissingOnACaseNeverErasedFailsVerify() throws {
        let world = try CaseWorld()
        let (number, caseID, seq) = try Self.clearedCase(world)
        #expect(try Self.verify(world).status == 0)
        // The superuser, past the trigger.
        let owner = try world.service.database.connect(as: .owner)
        defer { owner.close() }
        try owner.withTransaction { connection in
            try connection.execute("ALTER TABLE case_event_values DISABLE TRIGGER USER")
            try connection.execute("DELETE FROM case_event_values WHERE case_id = \(caseID) AND seq = \(seq)")
            try connection.execute("ALTER TABLE case_event_values ENABLE TRIGGER USER")
        }
        let verdict = try Self.verify(world)
        #expect(verdict.status == 65, "\(verdict.output)")
        #expect(
            verdict.output.contains(
                "BROKEN case \(number): event \(seq): the committed value of data.reason is missing and the case was never erased"),
            "\(verdict.output)")
        #expect(try Self.verify(world, [number]).status == 65)
    }

    /// Carried over by 0022 (ErasureTests.makeLegacy, then the carry-over), untouched: every verify passes, before and
    /// after an erasure. Rewritten: a carried event whose values are kept recomputes in its legacy form, so a changed
    /// one fails; one whose values were erased is bound by the `case_erased` event after it, whose leaf then fails.
    @Test func carriedOverEventsRecomputeInTheirLegacyForm() throws {
        let world = try CaseWorld()
        world.service.service.sequencer.stop()
        let (kept, _) = try ErasureTests.finishedCase(world)
        let (erased, _) = try ErasureTests.finishedCase(world)
        try ErasureTests.makeLegacy(world, kept)
        try ErasureTests.makeLegacy(world, erased)
        while try world.service.service.sequencer.runOnce()?.appended ?? 0 > 0 {}
        let owner = try world.service.database.connect(as: .owner)
        defer { owner.close() }
        let carried = try owner.withTransaction { try EventCommitments.carryOver(on: $0) }
        #expect(carried.cases == 2)
        #expect(try owner.query("SELECT count(*) AS n FROM case_events_carried").first?.decode("n", as: Int.self) == carried.events)
        let admin = try world.agent(.tier1, admin: true)
        #expect(try world.post("/api/v1/cases/\(erased)/erasure", as: admin, json: ["reason": "DSR-3"]).status == 200)
        let saved = try TransparencyLogTests.checkpoint(world)
        let file = world.service.directory + "/saved-checkpoint"
        try saved.note.write(toFile: file, atomically: true, encoding: .utf8)
        let clean = try Self.verify(world, ["--checkpoint", file])
        #expect(clean.status == 0, "\(clean.output)")
        #expect(try Self.verify(world).status == 0)

        // Kept values: the reason of `request_documents` changed, its commitment and the chain recomputed, legacy_hash kept.
        func ids(_ number: String) throws -> UUID {
            try #require(try owner.query("SELECT id FROM cases WHERE case_number = \(number)").first?.decode("id"))
        }
        let keptID = try ids(kept)
        let events = try CaseEventStore.list(caseID: keptID, on: owner)
        let target = try #require(events.first { $0.commitments["reason"] != nil })
        let salt = try #require(target.commitments["reason"]?.salt)
        guard case .object(var members) = target.hashedData else { throw CaseTestError("no object data") }
        members["reason"] = CaseEventCommitment.marker(CaseEventCommitment.commit("the documents were fine", salt: salt))
        try owner.withTransaction { connection in
            try connection.execute("ALTER TABLE case_event_values DISABLE TRIGGER USER")
            try connection.execute(
                "UPDATE case_event_values SET value = \(JSONValue.string("the documents were fine").canonical) WHERE case_id = \(keptID) AND seq = \(target.seq)"
            )
            try connection.execute("ALTER TABLE case_event_values ENABLE TRIGGER USER")
        }
        try Self.rewrite(world, caseID: keptID, seq: target.seq, data: .object(members))
        let rewritten = try Self.verify(world, ["--checkpoint", file])
        #expect(rewritten.status == 65, "\(rewritten.output)")
        #expect(
            rewritten.output.contains(
                "BROKEN case \(kept): event \(target.seq): legacy_hash does not match the event's content in its form before commitments"),
            "\(rewritten.output)")

        // Erased values: who froze the case changed, the carried events' legacy hashes kept and the erasure's event left
        // without one. Every chain holds; the legacy form cannot be recomputed, but the erasure's event, in the committed
        // form, covers the rewritten chain, and its leaf no longer matches.
        let erasedID = try ids(erased)
        let erasedEvents = try CaseEventStore.list(caseID: erasedID, on: owner)
        let frozen = try #require(erasedEvents.first { $0.type == "frozen" })
        try Self.rewrite(world, caseID: erasedID, seq: frozen.seq, actor: "customer", setLegacy: false)
        let last = try #require(erasedEvents.last)
        #expect(last.type == "case_erased" && !last.carried)
        let tree = try Self.verify(world, ["--checkpoint", file])
        #expect(tree.status == 65, "\(tree.output)")
        #expect(!tree.output.contains("BROKEN case \(erased)"), "\(tree.output)")
        #expect(tree.output.contains("(case \(erased) event \(last.seq))"), "\(tree.output)")
    }
}
