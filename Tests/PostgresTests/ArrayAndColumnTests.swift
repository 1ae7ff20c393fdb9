import Foundation
import ReclaimTestSupport
import Testing

@testable import Postgres

/// Array parameters travel as one typed array; columns are found by name, so the select list's order does not matter.
@Suite struct ArrayAndColumnTests {
    /// Strings that a separator-joined or text-literal encoding would split, join or unescape.
    static let awkward = [
        "", "plain", "a,b", "{braces}", "{", "}", "\"quoted\"", "'single'", "back\\slash", "\\", "NULL", "null",
        "ünïcødé ✓ 🎉", "line\nbreak\ttab", "\u{1F}unit separator\u{1F}", " spaced ", "a,b,{c},\"d\"\\e",
    ]

    @Test func aStringArrayIsOneTextArrayParameter() {
        let keys = ["a", "b"]
        let query: PostgresQuery = "SELECT 1 WHERE key = ANY(\(keys)) AND other = \(1)"
        #expect(query.sql == "SELECT 1 WHERE key = ANY($1) AND other = $2")
        #expect(query.binds.count == 2)
        #expect(query.binds[0].typeOID == 1009)
        #expect("\(query.binds[0])" == "<bind oid 1009>")
        let ids: [UUID] = []
        let numbers: [Int] = [1]
        let small: [Int32] = [1]
        let typed: PostgresQuery = "\(ids) \(numbers) \(small)"
        #expect(typed.binds.map(\.typeOID) == [2951, 1016, 1007])
    }

    @Test(arguments: CodingTests.formats)
    func stringArraysRoundTripElementByElement(format: PostgresConnection.ResultFormatPolicy) throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        connection.resultFormatPolicy = format
        let rows = try connection.query("SELECT s, ordinality::int AS n FROM unnest(\(Self.awkward)) WITH ORDINALITY AS t(s, ordinality) ORDER BY n")
        var columns = rows.columns()
        let s = try columns("s")
        #expect(try rows.map { try $0.decode(s, as: String.self) } == Self.awkward)
        #expect(try connection.query("SELECT cardinality(\(Self.awkward))").first?.decode(0, as: Int.self) == Self.awkward.count)
    }

    @Test func anyMatchesExactlyTheGivenElements() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        try connection.executeScript("CREATE TABLE t (key text PRIMARY KEY, id uuid NOT NULL, n bigint NOT NULL)")
        var ids: [UUID] = []
        for (n, key) in (Self.awkward + ["a", "b", "c", "e"]).enumerated() {
            let id = UUID()
            ids.append(id)
            try connection.execute("INSERT INTO t VALUES (\(key), \(id), \(n))")
        }
        func keys(matching wanted: [String]) throws -> [String] {
            try connection.query("SELECT key FROM t WHERE key = ANY(\(wanted)) ORDER BY n").map { try $0.decode("key", as: String.self) }
        }
        // Each awkward string matches itself alone: "a,b" is not "a" and "b", "{" is not an array literal.
        for key in Self.awkward { #expect(try keys(matching: [key]) == [key]) }
        #expect(try keys(matching: ["a,b"]) == ["a,b"])
        #expect(try keys(matching: ["a", "b"]) == ["a", "b"])
        #expect(try keys(matching: []) == [])
        #expect(try keys(matching: ["absent", "e"]) == ["e"])
        let twoIDs = [ids[1], ids[3]]
        #expect(try connection.query("SELECT n FROM t WHERE id = ANY(\(twoIDs)) ORDER BY n").map { try $0.decode(0, as: Int.self) } == [1, 3])
        let noIDs: [UUID] = []
        #expect(try connection.query("SELECT n FROM t WHERE id = ANY(\(noIDs))").isEmpty)
        let numbers = [2, 4, Int.max, Int.min]
        #expect(try connection.query("SELECT n FROM t WHERE n = ANY(\(numbers)) ORDER BY n").map { try $0.decode(0, as: Int.self) } == [2, 4])
        // An array cast to an enum array matches enum columns.
        try connection.executeScript("CREATE TYPE mood AS ENUM ('happy', 'sad'); CREATE TABLE m (mood mood)")
        try connection.execute("INSERT INTO m VALUES ('happy'), ('sad')")
        let moods = ["sad"]
        #expect(try connection.query("SELECT mood FROM m WHERE mood = ANY(\(moods)::mood[])").map { try $0.decode(0, as: String.self) } == ["sad"])
        let flags = [true, false]
        let doubles = [1.5, -0.25]
        #expect(try connection.query("SELECT \(flags), \(doubles)").first?.decode(0, as: String.self) == "{t,f}")
    }

    @Test func anElementWithANulIsRefusedBeforeItIsSent() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        let keys = ["fine", "cut\u{0}here"]
        #expect(throws: PostgresError.self) { try connection.query("SELECT cardinality(\(keys))") }
        // The connection is still usable.
        #expect(try connection.query("SELECT 1").first?.decode(0, as: Int.self) == 1)
    }

    @Test(arguments: CodingTests.formats)
    func columnsAreFoundByNameWhateverTheirOrder(format: PostgresConnection.ResultFormatPolicy) throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        connection.resultFormatPolicy = format
        for sql: PostgresQuery in ["SELECT 1 AS a, 'two' AS b, NULL::text AS c", "SELECT NULL::text AS c, 'two' AS b, 0 AS x, 1 AS a"] {
            let rows = try connection.query(sql)
            var columns = rows.columns()
            // Looked up out of order too.
            let b = try columns("b")
            let a = try columns("a")
            let c = try columns("c")
            let row = try #require(rows.first)
            #expect(try row.decode(a, as: Int.self) == 1)
            #expect(try row.decode(b, as: String.self) == "two")
            #expect(try row.decode(c, as: String?.self) == nil)
            #expect(row.isNull(c) && !row.isNull(a))
            #expect(throws: PostgresError.self) { try columns("missing") }
            #expect(throws: PostgresError.self) { try columns("A") }  // exact names only
        }
        // A column found in one result is refused by another's rows.
        let first = try connection.query("SELECT 1 AS a")
        var lookup = first.columns()
        let a = try lookup("a")
        let other = try #require(try connection.query("SELECT 2 AS a").first)
        #expect(throws: PostgresError.self) { try other.decode(a, as: Int.self) }
        // Empty results still describe their columns.
        let empty = try connection.query("SELECT 1 AS a WHERE false")
        var emptyColumns = empty.columns()
        #expect(try emptyColumns("a").index == 0)
    }
}
