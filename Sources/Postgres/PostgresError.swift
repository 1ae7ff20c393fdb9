/// A failure talking to PostgreSQL; its description never holds row data or bind values.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, broadly.
    public enum Kind: Sendable, Equatable {
        /// Could not open a connection (server down, bad conninfo, pool exhausted).
        case connectionFailed
        /// The connection broke while in use.
        case connectionLost
        /// The server refused the statement; see `sqlState`.
        case server
        /// A column could not be decoded as the requested Swift type.
        case decoding
        /// The API was used wrongly (closed connection, unknown column).
        case misuse
    }

    /// What went wrong, broadly.
    public let kind: Kind
    /// The five-character SQLSTATE, e.g. "23505", when the server sent one.
    public let sqlState: String?
    /// The server's primary message (never DETAIL, which may quote row data); quoted values of data exceptions (class 22) are elided.
    public let message: String
    /// The violated constraint's name (PG_DIAG_CONSTRAINT_NAME), when present.
    public let constraint: String?

    /// Makes an error; `message` must not contain row data or bind values.
    public init(_ kind: Kind, sqlState: String? = nil, message: String, constraint: String? = nil) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.constraint = constraint
    }

    /// True when the connection (not the statement) failed: retrying on a new connection may work.
    public var isConnectionError: Bool {
        if kind == .connectionFailed || kind == .connectionLost { return true }
        guard let sqlState else { return false }
        return Self.isConnectionSQLState(sqlState)
    }

    /// Connection exceptions (class 08) and the server shutting down or refusing (57P01–57P03).
    static func isConnectionSQLState(_ sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || sqlState == "57P01" || sqlState == "57P02" || sqlState == "57P03"
    }

    /// True for serialization failures and deadlocks: the whole transaction may be retried.
    public var isRetryableTransactionFailure: Bool { sqlState == "40001" || sqlState == "40P01" }

    public var description: String {
        var text = "PostgresError(\(kind)"
        if let sqlState { text += ", \(sqlState)" }
        if let constraint { text += ", constraint: \(constraint)" }
        return text + "): " + message
    }

    /// Server messages of data exceptions quote the offending input ("invalid input syntax for type uuid: \"…\""); elide it.
    static func redacted(_ message: String, sqlState: String?) -> String {
        guard let sqlState, sqlState.hasPrefix("22") else { return message }
        var out = ""
        var inQuote = false
        for character in message {
            if character == "\"" {
                if !inQuote { out += "\"…\"" }
                inQuote.toggle()
            } else if !inQuote {
                out.append(character)
            }
        }
        return out
    }
}
