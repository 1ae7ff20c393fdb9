import Foundation
import ReclaimTestSupport
import Testing

@testable import Postgres

@Suite struct CodingTests {
    static let formats: [PostgresConnection.ResultFormatPolicy] = [.automatic, .text, .binary]

    @Test(arguments: formats)
    func everyTypeRoundTrips(format: PostgresConnection.ResultFormatPolicy) throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        connection.resultFormatPolicy = format
        try connection.executeScript(
            """
            CREATE TABLE everything (
                id serial PRIMARY KEY, s text, i bigint, i32 integer, i64 bigint, d double precision,
                b boolean, bytes bytea, data bytea, at timestamptz, u uuid)
            """)
        let strings = ["", "plain", "'; DROP TABLE everything; --", "quote \" back\\slash", "ünïcødé ✓ 🎉", "line\nbreak\ttab"]
        let ints = [0, 1, -1, Int.max, Int.min, 42]
        let doubles: [Double] = [0, -0.0, 1.5, -2.25e-300, 1e300, .pi, .infinity, -.infinity, .greatestFiniteMagnitude]
        let byteValues: [[UInt8]] = [[], [0], Array(0...255), [0x5c, 0x78, 0x00, 0xff]]
        let dates = [
            Date(timeIntervalSince1970: 0),
            Date(timeIntervalSince1970: 1_796_022_181.123456),
            Date(timeIntervalSince1970: -1_234_567_890.5),  // before 1970
            Date(timeIntervalSince1970: 946_684_799.999999),  // just before PostgreSQL's epoch
            Date(timeIntervalSince1970: 4_102_444_800),  // 2100-01-01
        ]
        let uuids = [UUID(), UUID(uuidString: "00000000-0000-0000-0000-000000000000")!, UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!]

        let count = max(strings.count, ints.count, doubles.count, byteValues.count, dates.count, uuids.count)
        for n in 0..<count {
            let s = strings[n % strings.count]
            let i = ints[n % ints.count]
            let d = doubles[n % doubles.count]
            let bytes = byteValues[n % byteValues.count]
            let at = dates[n % dates.count]
            let u = uuids[n % uuids.count]
            let i32 = Int32(truncatingIfNeeded: i)
            let i64 = Int64(i)
            let inserted = try connection.query(
                """
                INSERT INTO everything (s, i, i32, i64, d, b, bytes, data, at, u)
                VALUES (\(s), \(i), \(i32), \(i64), \(d), \(n % 2 == 0), \(bytes), \(Data(bytes)), \(at), \(u))
                RETURNING id
                """)
            let id = try inserted.first!.decode(0, as: Int.self)
            let row = try connection.query("SELECT s, i, i32, i64, d, b, bytes, data, at, u FROM everything WHERE id = \(id)").first!
            #expect(try row.decode(0, as: String.self) == s)
            #expect(try row.decode(1, as: Int.self) == i)
            #expect(try row.decode(2, as: Int32.self) == i32)
            #expect(try row.decode(3, as: Int64.self) == i64)
            let decodedDouble = try row.decode(4, as: Double.self)
            #expect(decodedDouble == d && decodedDouble.sign == d.sign)
            #expect(try row.decode(5, as: Bool.self) == (n % 2 == 0))
            #expect(try row.decode(6, as: [UInt8].self) == bytes)
            #expect(try row.decode(7, as: Data.self) == Data(bytes))
            let decodedDate = try row.decode(8, as: Date.self)
            #expect(abs(decodedDate.timeIntervalSince(at)) < 0.000_001, "\(decodedDate) vs \(at)")
            // Microseconds survive exactly: encoding the decoded date again gives the same bind.
            #expect(micros(decodedDate) == micros(at))
            #expect(try row.decode(9, as: UUID.self) == u)
            #expect(try row.decode("u", as: UUID.self) == u)
        }
        // NaN does not equal itself: checked apart.
        #expect(try connection.query("SELECT \(Double.nan)").first!.decode(0, as: Double.self).isNaN)

        // NULL binds (typed by the Optional's wrapped type) and Optional decoding.
        let nullString: String? = nil
        let nullInt: Int? = nil
        let nullInt32: Int32? = nil
        let nullDouble: Double? = nil
        let nullBool: Bool? = nil
        let nullBytes: [UInt8]? = nil
        let nullData: Data? = nil
        let nullDate: Date? = nil
        let nullUUID: UUID? = nil
        let id = try connection.query(
            """
            INSERT INTO everything (s, i, i32, i64, d, b, bytes, data, at, u)
            VALUES (\(nullString), \(nullInt), \(nullInt32), \(nullInt), \(nullDouble), \(nullBool), \(nullBytes), \(nullData), \(nullDate), \(nullUUID))
            RETURNING id
            """
        ).first!.decode(0, as: Int.self)
        let row = try connection.query("SELECT s, i, i32, i64, d, b, bytes, data, at, u FROM everything WHERE id = \(id)").first!
        for column in 0..<10 { #expect(row.isNull(column)) }
        #expect(try row.decode(0, as: String?.self) == nil)
        #expect(try row.decode(1, as: Int?.self) == nil)
        #expect(try row.decode(2, as: Int32?.self) == nil)
        #expect(try row.decode(4, as: Double?.self) == nil)
        #expect(try row.decode(5, as: Bool?.self) == nil)
        #expect(try row.decode(6, as: [UInt8]?.self) == nil)
        #expect(try row.decode(7, as: Data?.self) == nil)
        #expect(try row.decode(8, as: Date?.self) == nil)
        #expect(try row.decode(9, as: UUID?.self) == nil)
        let error = #expect(throws: PostgresError.self) { try row.decode(1, as: Int.self) }
        #expect(error?.kind == .decoding)
        // Typed NULLs work where the server cannot infer a type.
        #expect(try connection.query("SELECT \(nullInt) IS NULL, \(nullDate) IS NULL").first!.decode(1, as: Bool.self))

        // The injection-looking string was stored verbatim and the table is still there.
        let stored = try connection.query("SELECT count(*) FROM everything WHERE s = \("'; DROP TABLE everything; --")").first!.decode(
            0, as: Int.self)
        #expect(stored >= 1)
    }

    @Test(arguments: formats)
    func stringDecodesAnyColumnAlike(format: PostgresConnection.ResultFormatPolicy) throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        connection.resultFormatPolicy = format
        let row = try connection.query(
            """
            SELECT 42::int2, 42::int4, 42::int8, true, 1.5::float8, '\\x00ff'::bytea,
                   '2026-11-30 07:03:01.1234+00'::timestamptz, '2026-11-30'::date,
                   '2026-11-30 07:03:01'::timestamp, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid,
                   'x'::varchar, 'y'::name, 'infinity'::timestamptz
            """
        ).first!
        let expected = [
            "42", "42", "42", "t", "1.5", "\\x00ff", "2026-11-30 07:03:01.1234+00", "2026-11-30",
            "2026-11-30 07:03:01", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "x", "y", "infinity",
        ]
        for (column, text) in expected.enumerated() {
            #expect(try row.decode(column, as: String.self) == text, "column \(column)")
        }
        #expect(try row.decode(12, as: Date.self) == .distantFuture)
        #expect(try row.decode(7, as: Date.self) == Date(timeIntervalSince1970: 1_795_996_800))
        #expect(try row.decode(0, as: Double.self) == 42)
    }

    @Test func numericAndOtherTypesComeAsText() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        let row = try connection.query("SELECT 12.50::numeric, '{1,2}'::int[], interval '1 day', 7::numeric").first!
        #expect(try row.decode(0, as: String.self) == "12.50")
        #expect(try row.decode(0, as: Double.self) == 12.5)
        #expect(try row.decode(1, as: String.self) == "{1,2}")
        #expect(try row.decode(2, as: String.self) == "1 day")
        #expect(try row.decode(3, as: Int.self) == 7)
        #expect(throws: PostgresError.self) { try row.decode(0, as: Int.self) }
    }

    enum Tier: String, PostgresEncodable, PostgresDecodable { case gold, silver }

    @Test func rawRepresentableEnumsNeedOnlyTheConformance() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        let row = try connection.query("SELECT \(Tier.gold)::text, 'bronze'::text").first!
        #expect(try row.decode(0, as: Tier.self) == .gold)
        let error = #expect(throws: PostgresError.self) { try row.decode(1, as: Tier.self) }
        #expect(error?.kind == .decoding)
        #expect(error?.description.contains("bronze") == false)
    }

    @Test func timestampTextParsing() {
        func parse(_ text: String) -> Int64? {
            Array(text.utf8).withUnsafeBytes { PostgresText.parseTimestamp($0) }
        }
        let base = parse("2026-11-30 07:03:01+00")!
        #expect(parse("2026-11-30 07:03:01.123456+00") == base + 123_456)
        #expect(parse("2026-11-30 07:03:01.1+00") == base + 100_000)
        #expect(parse("2026-11-30 12:33:01+05:30") == base)
        #expect(parse("2026-11-30 02:03:01-05") == base)
        #expect(parse("2026-11-30T07:03:01Z") == nil)
        #expect(parse("2026-11-30 07:03:01") == base)
        #expect(parse("2000-01-01") == 0)
        #expect(parse("2000-01-01 00:00:00+00") == 0)
        #expect(parse("1999-12-31 23:59:59.999999+00") == -1)
        #expect(parse("infinity") == Int64.max)
        #expect(parse("-infinity") == Int64.min)
        #expect(parse("0001-01-01 00:00:00+00 BC")! < parse("0001-01-01 00:00:00+00")!)
        #expect(parse("garbage") == nil)
        #expect(parse("2026-13-01") == nil)
        #expect(PostgresTime.format(micros: base + 120_000) == "2026-11-30 07:03:01.12+00")
        #expect(PostgresTime.format(micros: -1) == "1999-12-31 23:59:59.999999+00")
    }

    @Test func queryInterpolation() {
        let id = 7
        let name: String? = nil
        let query: PostgresQuery = "SELECT * FROM cases WHERE id = \(id) AND name = \(name) AND \(identifier: "we\"ird") = \("x")"
        #expect(query.sql == "SELECT * FROM cases WHERE id = $1 AND name = $2 AND \"we\"\"ird\" = $3")
        #expect(query.binds.count == 3)
        #expect(query.binds[1].isNull)
        #expect(query.binds[0].typeOID == 20)
        #expect(!"\(query)".contains("x\""))
        #expect("\(query.binds[2])" == "<bind oid 0>")
    }

    /// A closed vocabulary, as the service's enums are; one raw value holds a quote to show it is doubled.
    enum Shade: String, CaseIterable {
        case red
        case odd = "o'dd"
    }

    @Test func literalsAreWrittenIntoTheTextQuoted() {
        let query: PostgresQuery =
            "SELECT 1 WHERE s = \(literal: Shade.odd) AND s <> ALL(\(literal: Shade.allCases)) AND t = \(7) LIMIT \(literal: 51)"
        #expect(query.sql == "SELECT 1 WHERE s = 'o''dd' AND s <> ALL(ARRAY['red', 'o''dd']) AND t = $1 LIMIT 51")
        #expect(query.binds.count == 1)
        let none: [Shade] = []
        let empty: PostgresQuery = "SELECT \(literal: none)"
        #expect(empty.sql == "SELECT ARRAY[]::text[]")
        // A composed fragment keeps its literal text and renumbers only the binds after it.
        let composed: PostgresQuery = "SELECT \(8) WHERE \(query)"
        #expect(composed.sql.hasSuffix("AND t = $2 LIMIT 51") && composed.binds.count == 2)
    }

    private func micros(_ date: Date) -> Int64? {
        if case .timestamp(let value) = date.postgresBind.value { return value }
        return nil
    }
}
