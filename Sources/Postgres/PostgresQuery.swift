/// SQL text with its bind parameters: every interpolated value becomes `$n`, never SQL text.
///
///     "SELECT * FROM cases WHERE id = \(id) AND assignee = \(agentID)"   // $1, $2
///     let open: PostgresQuery = "state = \(state)"                         // a fragment, its value a bind
///     "SELECT id FROM cases WHERE \([open, dated], separator: " AND ")"   // composed: binds renumbered
///
/// Text comes only from literals (`StaticString`: never a runtime string), quoted identifiers, composed fragments,
/// `literal:` integers and enum raw values (the code's own vocabularies, for plans that depend on them), or
/// `init(unsafeSQL:)`, spelled out where it is used.
public struct PostgresQuery: ExpressibleByStringInterpolation, Sendable, CustomStringConvertible {
    /// The statement with `$1`, `$2`... placeholders.
    public let sql: String
    /// The values for the placeholders, in order.
    public let binds: [PostgresBind]
    /// Where each placeholder starts in `sql` (UTF-8 offsets, in bind order; placeholder i is written `$(i + 1)`), so a
    /// fragment's placeholders can be renumbered when it is composed; nil for hand-numbered `unsafeSQL` text.
    let placeholders: [Int]?

    /// A statement and its binds, assembled by hand; `sql` must use `$1`...`$n` for them. It cannot be composed into
    /// another query if it has binds (its placeholders are not known).
    public init(unsafeSQL sql: String, binds: [PostgresBind] = []) {
        self.sql = sql
        self.binds = binds
        placeholders = binds.isEmpty ? [] : nil
    }

    /// Literal SQL text (compile-time only: a `StaticString`).
    public init(stringLiteral value: StaticString) {
        sql = value.description
        binds = []
        placeholders = []
    }

    public init(stringInterpolation: StringInterpolation) {
        sql = stringInterpolation.sql
        binds = stringInterpolation.binds
        placeholders = stringInterpolation.placeholders
    }

    /// The SQL only: bind values never appear in descriptions or logs.
    public var description: String { sql }

    /// Builds the SQL text and the bind list as the literal is read.
    public struct StringInterpolation: StringInterpolationProtocol {
        var sql: String
        var binds: [PostgresBind]
        var placeholders: [Int]

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql = ""
            sql.reserveCapacity(literalCapacity + interpolationCount * 3)
            binds = []
            binds.reserveCapacity(interpolationCount)
            placeholders = []
            placeholders.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: StaticString) {
            literal.withUTF8Buffer { sql += String(decoding: $0, as: UTF8.self) }
        }

        private mutating func appendBind(_ bind: PostgresBind) {
            binds.append(bind)
            placeholders.append(sql.utf8.count)
            sql += "$"
            sql += String(binds.count)
        }

        /// A bind parameter (`$n`); nil optionals bind NULL.
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value) {
            appendBind(value.postgresBind)
        }

        /// A bind parameter (`$n`) that is NULL when `value` is nil, typed as `Value`.
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value?) {
            appendBind(value.postgresBind)
        }

        /// One array bind parameter (`$n`, e.g. `text[]`) holding every element: `WHERE key = ANY(\(keys))`.
        public mutating func appendInterpolation<Element: PostgresArrayElement>(_ elements: [Element]) {
            appendBind(.array(elements))
        }

        /// Another query (a fragment) in place: its text, and its binds after this one's, their `$n` renumbered.
        public mutating func appendInterpolation(_ fragment: PostgresQuery) {
            guard let marks = fragment.placeholders else {
                preconditionFailure("a hand-numbered unsafeSQL query with binds cannot be composed into another")
            }
            guard !marks.isEmpty else {
                sql += fragment.sql
                return
            }
            let text = fragment.sql.utf8
            var copied = text.startIndex
            for (index, mark) in marks.enumerated() {
                let start = text.index(text.startIndex, offsetBy: mark)
                sql += String(Substring(text[copied..<start]))
                appendBind(fragment.binds[index])
                // Skip the fragment's own `$(index + 1)`.
                copied = text.index(start, offsetBy: 1 + String(index + 1).utf8.count)
            }
            sql += String(Substring(text[copied...]))
        }

        /// Fragments one after another with `separator` between (nothing for none): `WHERE \(conditions, separator: " AND ")`.
        public mutating func appendInterpolation(_ fragments: [PostgresQuery], separator: StaticString) {
            for (index, fragment) in fragments.enumerated() {
                if index > 0 { appendLiteral(separator) }
                appendInterpolation(fragment)
            }
        }

        /// An integer written into the text (`LIMIT \(literal: 51)`), not a bind: a plan may depend on it, and a cached
        /// generic plan would otherwise guess it (PostgreSQL prices `LIMIT $n` as a tenth of the rows).
        public mutating func appendInterpolation(literal value: Int) {
            sql += String(value)
        }

        /// A value of one of the code's own closed vocabularies (an enum's raw value, never input) written into the text
        /// as a quoted literal, not a bind, because a plan depends on it: the partial indexes' predicates are proven
        /// from constants, which a cached generic plan does not have.
        public mutating func appendInterpolation<Vocabulary: CaseIterable & RawRepresentable>(literal value: Vocabulary)
        where Vocabulary.RawValue == String {
            appendQuoted(value.rawValue)
        }

        /// Several of them as a literal array, `ARRAY['a', 'b']` (`ARRAY[]::text[]` for none).
        public mutating func appendInterpolation<Vocabulary: CaseIterable & RawRepresentable>(literal values: [Vocabulary])
        where Vocabulary.RawValue == String {
            guard !values.isEmpty else {
                sql += "ARRAY[]::text[]"
                return
            }
            sql += "ARRAY["
            for (index, value) in values.enumerated() {
                if index > 0 { sql += ", " }
                appendQuoted(value.rawValue)
            }
            sql += "]"
        }

        private mutating func appendQuoted(_ text: String) {
            sql += "'"
            for character in text {
                if character == "'" { sql += "''" } else { sql.append(character) }
            }
            sql += "'"
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
