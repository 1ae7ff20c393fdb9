import Foundation
import Postgres
import ReclaimTestSupport
import Testing

/// Fragments compose into one statement with their values still binds, renumbered in the order they appear.
@Suite struct QueryCompositionTests {
    @Test func aFragmentsBindsFollowTheOuterOnes() {
        let condition: PostgresQuery = "state = \("open") AND tier = \(2)"
        let query: PostgresQuery = "SELECT id FROM cases WHERE id > \(7) AND \(condition) LIMIT \(50)"
        #expect(query.sql == "SELECT id FROM cases WHERE id > $1 AND state = $2 AND tier = $3 LIMIT $4")
        #expect(query.binds.map(\.typeOID) == [20, 0, 20, 20])
        #expect(condition.sql == "state = $1 AND tier = $2", "the fragment itself is unchanged")
    }

    @Test func fragmentsNestAndRenumberPastNine() {
        // Placeholders of one digit become two, and a fragment inside a fragment keeps its order.
        let inner: PostgresQuery = "b = \(2) AND c = \(3)"
        let middle: PostgresQuery = "a = \(1) AND \(inner) AND d = \(4)"
        let query: PostgresQuery = "\(5) \(6) \(7) \(8) \(9) \(10) \(11) \(12) \(13) WHERE \(middle) AND e = \(14)"
        #expect(query.sql == "$1 $2 $3 $4 $5 $6 $7 $8 $9 WHERE a = $10 AND b = $11 AND c = $12 AND d = $13 AND e = $14")
        #expect(query.binds.count == 14)
        // Composed again: the numbers written by the first composition are renumbered as well.
        let twice: PostgresQuery = "SELECT \(0), \(query)"
        #expect(twice.sql.hasPrefix("SELECT $1, $2 $3") && twice.sql.hasSuffix("d = $14 AND e = $15"))
    }

    @Test func aDollarInTheFragmentsTextIsNotAPlaceholder() {
        // Only the placeholders interpolation wrote are renumbered; text that looks like one is left alone.
        let fragment: PostgresQuery = "x = '$1' AND y = \(1) AND z = $$a$1$$"
        let query: PostgresQuery = "SELECT \(0) WHERE \(fragment)"
        #expect(query.sql == "SELECT $1 WHERE x = '$1' AND y = $2 AND z = $$a$1$$")
        #expect(query.binds.count == 2)
    }

    @Test func aListOfFragmentsIsJoinedBySeparator() {
        let conditions: [PostgresQuery] = ["a = \(1)", "b IS NULL", "c = \(3)"]
        let query: PostgresQuery = "SELECT 1 WHERE \(conditions, separator: " AND ") LIMIT \(9)"
        #expect(query.sql == "SELECT 1 WHERE a = $1 AND b IS NULL AND c = $2 LIMIT $3")
        let none: [PostgresQuery] = []
        let empty: PostgresQuery = "[\(none, separator: ", ")]"
        #expect(empty.sql == "[]" && empty.binds.isEmpty)
    }

    @Test func aStringIsABindNeverText() {
        // A string (even a literal) interpolates as a value; only a PostgresQuery is text.
        let text = "1; DROP TABLE cases"
        let query: PostgresQuery = "SELECT \(text), \("literal")"
        #expect(query.sql == "SELECT $1, $2")
    }

    @Test func aComposedStatementRunsWithItsBinds() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        let wanted: [PostgresQuery] = ["n >= \(3)", "n % \(2) = \(0)"]
        let rows = try connection.query(
            "SELECT n FROM generate_series(\(1), \(10)) AS g(n) WHERE \(wanted, separator: " AND ") ORDER BY n LIMIT \(3)")
        #expect(try rows.map { try $0.decode(0, as: Int.self) } == [4, 6, 8])
    }
}
