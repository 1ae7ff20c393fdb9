/// SQL text with its bind parameters: every interpolated value becomes `$n`, never SQL text.
///
///     "SELECT * FROM cases WHERE id = \(id) AND assignee = \(agentID)"   // $1, $2
///     "SELECT count(*) FROM \(unescaped: table)"                          // raw text: spelled out
public struct PostgresQuery: ExpressibleByStringInterpolation, Sendable, CustomStringConvertible {
    /// The statement with `$1`, `$2`... placeholders.
    public let sql: String
    /// The values for the placeholders, in order.
    public let binds: [PostgresBind]

    /// A statement and its binds, assembled by hand; `sql` must use `$1`...`$n` for them.
    public init(unsafeSQL sql: String, binds: [PostgresBind] = []) {
        self.sql = sql
        self.binds = binds
    }

    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value)
    }

    public init(stringInterpolation: StringInterpolation) {
        self.init(unsafeSQL: stringInterpolation.sql, binds: stringInterpolation.binds)
    }

    /// The SQL only: bind values never appear in descriptions or logs.
    public var description: String { sql }

    /// Builds the SQL text and the bind list as the literal is read.
    public struct StringInterpolation: StringInterpolationProtocol {
        var sql: String
        var binds: [PostgresBind]

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql = ""
            sql.reserveCapacity(literalCapacity + interpolationCount * 3)
            binds = []
            binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        /// A bind parameter (`$n`); nil optionals bind NULL.
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value) {
            binds.append(value.postgresBind)
            sql += "$"
            sql += String(binds.count)
        }

        /// A bind parameter (`$n`) that is NULL when `value` is nil, typed as `Value`.
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value?) {
            binds.append(value.postgresBind)
            sql += "$"
            sql += String(binds.count)
        }

        /// One array bind parameter (`$n`, e.g. `text[]`) holding every element: `WHERE key = ANY(\(keys))`.
        public mutating func appendInterpolation<Element: PostgresArrayElement>(_ elements: [Element]) {
            binds.append(.array(elements))
            sql += "$"
            sql += String(binds.count)
        }

        /// Raw SQL text, inserted as is: never pass user input.
        public mutating func appendInterpolation(unescaped text: String) {
            sql += text
        }

        /// An identifier (table, database, column name), double-quoted and escaped.
        public mutating func appendInterpolation(identifier: String) {
            sql += "\""
            for character in identifier {
                if character == "\"" { sql += "\"\"" } else { sql.append(character) }
            }
            sql += "\""
        }
    }
}
