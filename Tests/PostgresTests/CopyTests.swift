import Foundation
import Postgres
import ReclaimTestSupport
import Testing

/// `copyRow`: one row by binary COPY, a large field streamed in pieces, errors reported as for `query`.
@Suite struct CopyTests {
    static let statement: PostgresQuery = "COPY copied (id, label, n, flag, at, doc, blob) FROM STDIN (FORMAT binary)"

    func table(_ connection: PostgresConnection) throws {
        try connection.executeScript(
            """
            CREATE TABLE parent (id uuid PRIMARY KEY);
            CREATE TABLE copied (id uuid PRIMARY KEY REFERENCES parent (id), label text NOT NULL, n integer, flag boolean, at timestamptz,
                                 doc jsonb, blob bytea);
            """)
    }

    @Test func everyFieldTypeArrivesAsSentAndALargeFieldIsStreamed() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)  // it creates tables
        defer { connection.close() }
        try table(connection)
        let id = UUID()
        try connection.execute("INSERT INTO parent (id) VALUES (\(id))")
        let blob = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let at = Date(timeIntervalSince1970: 1_795_996_800.123456)
        try connection.copyRow(
            Self.statement,
            [
                .value(id.postgresBind), .value("héllo, wörld".postgresBind), .value(Int32(42).postgresBind), .value(true.postgresBind),
                .value(at.postgresBind), .jsonb(#"{"b":[1,2],"a":"x"}"#),
                .streamed(length: blob.count) { write in
                    // Uneven pieces: the writer buffers small ones and passes large ones straight on.
                    var offset = 0
                    for size in [1, 63, 70_000, 1 << 20] + Array(repeating: 100_000, count: 40) where offset < blob.count {
                        let end = min(blob.count, offset + size)
                        try blob[offset..<end].withUnsafeBytes { try write($0) }
                        offset = end
                    }
                    try blob[offset...].withUnsafeBytes { try write($0) }
                },
            ])
        let row = try #require(
            try connection.query("SELECT label, n, flag, at, doc::text AS doc, blob, length(blob) AS size FROM copied WHERE id = \(id)").first)
        #expect(try row.decode("label", as: String.self) == "héllo, wörld")
        #expect(try row.decode("n", as: Int.self) == 42)
        #expect(try row.decode("flag", as: Bool.self) == true)
        #expect(abs(try row.decode("at", as: Date.self).timeIntervalSince(at)) < 0.000_001)
        #expect(try row.decode("doc", as: String.self) == #"{"a": "x", "b": [1, 2]}"#)
        #expect(try row.decode("size", as: Int.self) == blob.count)
        #expect(try row.decode("blob", as: [UInt8].self) == blob)
        // NULLs, and the connection goes on as usual.
        let other = UUID()
        try connection.execute("INSERT INTO parent (id) VALUES (\(other))")
        try connection.copyRow(
            Self.statement,
            [
                .value(other.postgresBind), .value("x".postgresBind), .value(.null()), .value(.null()), .value(.null()),
                .value(.null()), .value(.null()),
            ])
        #expect(try connection.query("SELECT count(*) AS n FROM copied WHERE n IS NULL AND blob IS NULL")[0].decode("n", as: Int.self) == 1)
    }

    @Test func aRefusedRowOrAFailingProducerLeavesTheConnectionUsable() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)  // it creates tables
        defer { connection.close() }
        try table(connection)
        let fields: (UUID, PostgresCopyField) -> [PostgresCopyField] = { id, blob in
            [.value(id.postgresBind), .value("x".postgresBind), .value(.null()), .value(.null()), .value(.null()), .value(.null()), blob]
        }
        // No parent: the foreign key refuses the row, with its SQLSTATE, as a statement would.
        do {
            try connection.copyRow(Self.statement, fields(UUID(), .value([1, 2, 3].postgresBind)))
            Issue.record("the row was accepted")
        } catch let error as PostgresError {
            #expect(error.sqlState == "23503")
        }
        struct Broken: Error {}
        let id = UUID()
        try connection.execute("INSERT INTO parent (id) VALUES (\(id))")
        #expect(throws: Broken.self) {
            try connection.copyRow(
                Self.statement,
                fields(
                    id,
                    .streamed(length: 10) { write in
                        try [1, 2, 3].withUnsafeBytes { try write($0) }
                        throw Broken()
                    }))
        }
        // Fewer bytes than announced is the caller's mistake, refused before the server sees a short row.
        #expect(throws: PostgresError.self) {
            try connection.copyRow(Self.statement, fields(id, .streamed(length: 10) { write in try [1].withUnsafeBytes { try write($0) } }))
        }
        // Inside a transaction the failed COPY aborts it, which rolls back; outside, the next statement just runs.
        #expect(try connection.query("SELECT count(*) AS n FROM copied")[0].decode("n", as: Int.self) == 0)
        #expect(throws: PostgresError.self) { try connection.copyRow("SELECT 1", []) }
        #expect(try connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)
    }
}
