import CPostgres
import Foundation

/// Owns one PGresult. A PGresult is never modified after libpq hands it over, and libpq
/// documents that reading one from several threads is safe, hence `@unchecked Sendable`.
final class PostgresResult: @unchecked Sendable {
    let handle: OpaquePointer
    let rowCount: Int
    let columnCount: Int
    let isBinary: Bool

    init(_ handle: OpaquePointer) {
        self.handle = handle
        rowCount = Int(PQntuples(handle))
        columnCount = Int(PQnfields(handle))
        isBinary = columnCount > 0 && PQfformat(handle, 0) == 1
    }

    deinit { PQclear(handle) }

    /// Index of the column named exactly `name`, or nil; the search starts at `start` and wraps around, so
    /// names looked up in select-list order cost one comparison each.
    func columnIndex(_ name: String, from start: Int = 0) -> Int? {
        guard columnCount > 0 else { return nil }
        return name.withCString { wanted in
            var column = start < columnCount ? max(start, 0) : 0
            for _ in 0..<columnCount {
                if strcmp(PQfname(handle, Int32(column)), wanted) == 0 { return column }
                column = column + 1 == columnCount ? 0 : column + 1
            }
            return nil
        }
    }

    func columnName(_ column: Int) -> String { String(cString: PQfname(handle, Int32(column))) }
}

/// One cell of a result row, handed to `PostgresDecodable.decode(from:)`.
public struct PostgresCell: Sendable {
    let result: PostgresResult
    let row: Int32
    let column: Int32

    /// True for SQL NULL.
    public var isNull: Bool { PQgetisnull(result.handle, row, column) == 1 }
    /// The column's type OID.
    public var typeOID: UInt32 { PQftype(result.handle, column) }
    /// True when the value is in PostgreSQL's binary format rather than text.
    public var isBinary: Bool { result.isBinary }
    /// The column's name, for error messages.
    public var columnName: String { result.columnName(Int(column)) }

    /// Calls `body` with the value's bytes (text format: without the NUL); they must not escape it.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let length = Int(PQgetlength(result.handle, row, column))
        guard let value = PQgetvalue(result.handle, row, column) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: UnsafeRawPointer(value), count: length))
    }

    /// A `.decoding` error naming the column and its type, never its value.
    public func error(_ problem: String) -> PostgresError {
        PostgresError(.decoding, message: "column \(column) \"\(columnName)\" (type oid \(typeOID)) \(problem)")
    }
}

/// One row of a result; valid as long as it is kept (it retains the result).
public struct PostgresRow: Sendable {
    let result: PostgresResult
    let row: Int

    /// Number of columns.
    public var columnCount: Int { result.columnCount }

    /// Decodes column `column` (0-based); throws `.decoding` on NULL unless `T` is Optional.
    public func decode<T: PostgresDecodable>(_ column: Int, as type: T.Type = T.self) throws -> T {
        guard column >= 0, column < result.columnCount else {
            throw PostgresError(.misuse, message: "column index \(column) out of range (\(result.columnCount) columns)")
        }
        let cell = PostgresCell(result: result, row: Int32(row), column: Int32(column))
        return cell.isNull ? try T.decodeNull(from: cell) : try T.decode(from: cell)
    }

    /// Decodes the column named `column` (exact, case-sensitive match of the result's column name).
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard let index = result.columnIndex(column) else {
            throw PostgresError(.misuse, message: "no column named \"\(column)\" in the result")
        }
        return try decode(index, as: type)
    }

    /// Decodes a column found by name once for this result (`PostgresRows.columns()`); as fast as an index.
    public func decode<T: PostgresDecodable>(_ column: PostgresColumn, as type: T.Type = T.self) throws -> T {
        guard column.result == ObjectIdentifier(result) else {
            throw PostgresError(.misuse, message: "column \"\(column.name)\" was looked up in another result")
        }
        let cell = PostgresCell(result: result, row: Int32(row), column: Int32(column.index))
        return cell.isNull ? try T.decodeNull(from: cell) : try T.decode(from: cell)
    }

    /// True when the column found by name is NULL.
    public func isNull(_ column: PostgresColumn) -> Bool {
        column.result == ObjectIdentifier(result) ? isNull(column.index) : true
    }

    /// True when column `column` is NULL (or does not exist).
    public func isNull(_ column: Int) -> Bool {
        guard column >= 0, column < result.columnCount else { return true }
        return PQgetisnull(result.handle, Int32(row), Int32(column)) == 1
    }
}

/// The rows a statement returned, and how many rows it affected.
public struct PostgresRows: RandomAccessCollection, Sendable {
    let result: PostgresResult?

    /// Rows inserted, updated, deleted or selected (the command tag's count; 0 when it has none).
    public let affectedRows: Int

    init(result: PostgresResult?, affectedRows: Int) {
        self.result = result
        self.affectedRows = affectedRows
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { result?.rowCount ?? 0 }
    public subscript(position: Int) -> PostgresRow {
        precondition(position >= 0 && position < endIndex, "row index out of range")
        return PostgresRow(result: result!, row: position)
    }

    /// Finds columns by name in this result, once, for every row to read by index:
    ///
    ///     var columns = rows.columns()
    ///     let id = try columns("id"), name = try columns("name")
    ///     for row in rows { ... try row.decode(id, as: UUID.self) ... }
    ///
    /// Adding, removing or reordering select-list columns then shifts nothing; a missing name throws `.misuse`.
    public func columns() -> PostgresColumnLookup { PostgresColumnLookup(result: result) }
}

/// A result column found by name (`PostgresRows.columns()`); valid only for rows of that result.
public struct PostgresColumn: Sendable {
    /// The column's name in the result.
    public let name: String
    /// Its 0-based position in the result.
    public let index: Int
    let result: ObjectIdentifier
}

/// Looks up the columns of one result by name; each search starts after the previous match, so a decoder
/// that names its columns in select-list order pays one comparison per column.
public struct PostgresColumnLookup {
    let result: PostgresResult?
    private var next = 0

    init(result: PostgresResult?) { self.result = result }

    /// The column named exactly `name` (case-sensitive, as in the select list's aliases); throws `.misuse` when absent.
    public mutating func callAsFunction(_ name: String) throws -> PostgresColumn {
        guard let result, let index = result.columnIndex(name, from: next) else {
            throw PostgresError(.misuse, message: "no column named \"\(name)\" in the result")
        }
        next = index + 1
        return PostgresColumn(name: name, index: index, result: ObjectIdentifier(result))
    }
}
