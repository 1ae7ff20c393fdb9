import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

@testable import ReclaimStore

/// `cases` rows are read by column name and search terms are bound as one array.
@Suite struct CaseStoreTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func newCase(email: String) -> NewCase {
        let snapshot = Workflow().opening(kind: .accountTakeover, facts: CaseFacts(), at: t0)
        return NewCase(
            id: UUID(), number: try! CaseNumber(parsing: "100000000001"), accessCodeHash: [1, 2, 3], accessCodeKeyID: "k",
            snapshot: snapshot, dueAt: t0.addingTimeInterval(3600), accountEmail: email, customerName: "Ann",
            customerContactEmail: "ann@example.net", devices: [CaseDevice(serial: "C02XK1ZJH3QD", imei: nil, model: "Laptop")],
            summary: "Locked out", createdBy: "test", now: t0)
    }

    @Test func searchTermsWithSeparatorsAndQuotesAreStoredWhole() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        // Commas, braces, quotes and the old unit separator must not split a term.
        let email = "o'brien,\"x\"{y}\u{1F}z@example.com"
        let new = Self.newCase(email: email)
        try CaseStore.insert(new, on: connection)
        let terms = try connection.query("SELECT term FROM case_search WHERE case_id = \(new.id) ORDER BY term").map {
            try $0.decode("term", as: String.self)
        }
        #expect(
            terms
                == CaseSearch.indexTerms(
                    number: new.number.digits, accountEmail: email, contactEmail: new.customerContactEmail, name: new.customerName,
                    devices: new.devices
                ).sorted())
        let found = try CaseStore.queue(
            filter: CaseQueueFilter(search: CaseSearch.query(for: email)), after: nil, limit: 10, now: Self.t0, on: connection)
        #expect(found.map(\.id) == [new.id])
    }

    @Test func columnsAddedAroundTheListShiftNothing() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        let new = Self.newCase(email: "ann@example.com")
        try CaseStore.insert(new, on: connection)
        let expected = try #require(try CaseStore.find(id: new.id, on: connection))
        // Extra columns before, among (a second "name" from the join) and after the list: decoding is by name.
        let rows = try connection.query(
            """
            SELECT 'x' AS first_extra, a.name, \(CaseStore.columns), 42 AS version_hint
            FROM \(CaseStore.from) WHERE c.id = \(new.id)
            """)
        let record = try #require(try rows.decodeCases().first)
        #expect(record.id == expected.id && record.number == expected.number && record.accountEmail == "ann@example.com")
        #expect(record.summary == "Locked out" && record.version == 1 && record.devices == expected.devices)
        #expect(record.snapshot == expected.snapshot && record.dueAt == expected.dueAt && record.customerName == "Ann")
        // A list missing a column fails loudly instead of reading its neighbour.
        let short = try connection.query("SELECT c.id, c.case_number FROM cases c WHERE c.id = \(new.id)")
        #expect(throws: PostgresError.self) { try short.decodeCases() }
    }

    @Test func theStatusLookUpReadsTheCaseTheLockAndTheCustomerNotes() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        let new = Self.newCase(email: "ann@example.com")
        try CaseStore.insert(new, on: connection)
        try NoteStore.insert(
            CaseNote(id: UUID(), body: "We are on it, {\"really\"}", visibility: .customer, author: "agent:x", createdAt: Self.t0),
            caseID: new.id, on: connection)
        let key = ThrottleStore.caseKey(new.number.digits)
        try ThrottleStore.recordFailure(key: key, rule: ThrottleRule(limit: 1, window: 60, lockout: 600), now: Self.t0, on: connection)
        let (record, locked, thread, _) = try CaseStore.findForStatus(
            number: new.number.digits, throttleKeys: [key, "addr:x,y"], now: Self.t0, on: connection)
        #expect(record?.id == new.id)
        #expect(locked == Self.t0.addingTimeInterval(600))
        #expect(thread.notes.map(\.body) == ["We are on it, {\"really\"}"] && thread.received.isEmpty)
        let (none, unlocked, noThread, _) = try CaseStore.findForStatus(number: "999999999999", throttleKeys: [], now: Self.t0, on: connection)
        #expect(none == nil && unlocked == nil && noThread.notes.isEmpty)
    }
}
