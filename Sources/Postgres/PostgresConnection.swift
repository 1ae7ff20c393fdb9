import CPostgres
import Foundation
import Synchronization

/// Isolation level for `withTransaction(isolation:_:)`.
public enum PostgresIsolation: String, Sendable {
    case readCommitted = "READ COMMITTED"
    case repeatableRead = "REPEATABLE READ"
    case serializable = "SERIALIZABLE"

    /// `BEGIN ISOLATION LEVEL …` for this level.
    var begin: PostgresQuery {
        switch self {
        case .readCommitted: "BEGIN ISOLATION LEVEL READ COMMITTED"
        case .repeatableRead: "BEGIN ISOLATION LEVEL REPEATABLE READ"
        case .serializable: "BEGIN ISOLATION LEVEL SERIALIZABLE"
        }
    }
}

/// Counters shared by the connections of one pool (atomics: bumped from any thread).
final class ConnectionCounters: Sendable {
    let connects = Atomic<Int>(0)
    let connectFailures = Atomic<Int>(0)
    let reconnects = Atomic<Int>(0)
    /// Idle connections found dead before a statement was sent on them (and replaced).
    let deadOnCheckout = Atomic<Int>(0)
    /// While true, every statement (text and binds) is appended to `statements` (`PostgresPool.recordingStatements`).
    let recording = Atomic<Bool>(false)
    let statements = Mutex<[PostgresQuery]>([])

    func record(_ query: PostgresQuery) {
        guard recording.load(ordering: .relaxed) else { return }
        statements.withLock { $0.append(query) }
    }

    /// The recorded marks of a pipeline's ends, as pgbench writes them (`PostgresPool.recordingStatements` keeps them).
    static let pipelineStart: PostgresQuery = "\\startpipeline"
    static let pipelineEnd: PostgresQuery = "\\endpipeline"
}

/// One libpq connection. Not thread-safe: use it from one thread at a time (the pool guarantees that).
///
/// Statements run through `query`/`execute` are prepared once per connection and reused.
/// After the connection breaks, the failing call throws a connection error; the next call
/// outside a transaction reconnects by itself.
public final class PostgresConnection {
    /// Which result format to ask for; internal so tests and benchmarks can compare.
    enum ResultFormatPolicy { case automatic, text, binary }

    /// A prepared statement: its server-side name, parameter types and chosen result format.
    struct Statement {
        let name: String
        let parameterTypes: [UInt32]
        let parameterCount: Int
        let binaryResults: Bool

        /// Throws unless `binds` gives each of the statement's parameters a value.
        func check(_ binds: [PostgresBind]) throws {
            guard binds.count == parameterCount else {
                throw PostgresError(.misuse, message: "statement has \(parameterCount) parameters but \(binds.count) binds were given")
            }
        }
    }

    private var handle: OpaquePointer?
    private let keywords: [String]
    private let values: [String]
    private var statements: [String: Statement] = [:]
    private var statementCounter = 0
    private var transactionDepth = 0
    private var closedByUser = false
    /// Set when a call failed in a way only a lost connection explains; the next use reconnects.
    private var lostConnection = false
    let counters: ConnectionCounters?
    var resultFormatPolicy = ResultFormatPolicy.automatic
    /// Statements this connection prepared since it was created (across reconnects).
    private(set) var preparesTotal = 0
    /// Bounds the statement cache: dynamic SQL must not grow it forever.
    static let statementCacheLimit = 1000
    /// Statements given to `executeLater`, not sent yet: they leave in one pipeline with the next statement that needs
    /// an answer, or with COMMIT.
    private var deferred: [PipelineItem] = []

    /// Connects; `connectionString` is a libpq conninfo ("host=... dbname=...") or URI ("postgresql://...").
    /// Adds connect_timeout=3 unless given, and sets the session to UTC and ISO dates.
    public convenience init(connectionString: String) throws {
        try self.init(connectionString: connectionString, counters: nil)
    }

    init(connectionString: String, counters: ConnectionCounters?) throws {
        (keywords, values) = try PostgresConnection.parameters(connectionString)
        self.counters = counters
        try open()
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// True while the connection is usable (it may still find out it broke on the next call).
    public var isOpen: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Closes the connection for good; later calls throw `.misuse`.
    public func close() {
        closedByUser = true
        drop()
    }

    /// Closes the socket but allows the next call to reconnect (used after an unusable state).
    func drop() {
        if let handle { PQfinish(handle) }
        handle = nil
        statements.removeAll()
        deferred.removeAll()
    }

    // MARK: Running statements

    /// Runs a statement (prepared on first use) and returns its rows.
    public func query(_ query: PostgresQuery) throws -> PostgresRows {
        counters?.record(query)
        let handle = try ensureOpen()
        let statement = try prepared(query, handle)
        if !deferred.isEmpty {
            try statement.check(query.binds)
            return try runPipeline(then: .prepared(statement, query.binds), handle)
        }
        do {
            return try run(statement, query.binds, handle)
        } catch let error as PostgresError
            where error.sqlState == "0A000" && error.message.hasPrefix("cached plan must not change result type")
            && PQtransactionStatus(handle) == PQTRANS_IDLE
        {
            // "cached plan must not change result type" after DDL changed a table: prepare again, once.
            forget(query.sql, handle)
            let fresh = try prepared(query, handle)
            return try run(fresh, query.binds, handle)
        }
    }

    /// Runs a statement and returns the number of rows it affected.
    @discardableResult
    public func execute(_ query: PostgresQuery) throws -> Int {
        try self.query(query).affectedRows
    }

    /// Runs a statement whose answer nobody reads (an INSERT or UPDATE whose count does not matter) later: in one
    /// round trip with the next statement of this transaction that needs an answer, or with its COMMIT (libpq's
    /// pipeline mode). Statements still run in the order they were given, so every later statement sees its effect;
    /// its error is thrown by the call that sends it (the next `query`, `executeScript` or the commit) and rolls the
    /// transaction back as any error does. Only for statements whose error nobody catches on its own, and with no
    /// large answer (a command tag): the pipeline is written whole before anything is read. Outside a transaction it
    /// runs at once.
    public func executeLater(_ query: PostgresQuery) throws {
        guard transactionDepth > 0 else {
            try execute(query)
            return
        }
        let handle = try ensureOpen()
        let statement = try prepared(query, handle)
        try statement.check(query.binds)
        if deferred.isEmpty { counters?.record(ConnectionCounters.pipelineStart) }
        counters?.record(query)
        deferred.append(.prepared(statement, query.binds))
    }

    /// Runs one or more statements through the simple protocol, without binds (migrations, DDL).
    public func executeScript(_ script: PostgresQuery) throws {
        precondition(script.binds.isEmpty, "a script runs without binds: interpolate identifiers with identifier:")
        try flushDeferred()
        counters?.record(script)
        let handle = try ensureOpen()
        _ = try finish(PQexec(handle, script.sql), handle)
    }

    /// Sends what `executeLater` holds, alone (before a statement that cannot join a pipeline: a script, a COPY).
    func flushDeferred() throws {
        guard !deferred.isEmpty else { return }
        let handle = try ensureOpen()
        _ = try runPipeline(then: nil, handle)
    }

    /// Runs `body` in a transaction: COMMIT when it returns, ROLLBACK when it throws.
    /// Nested calls use savepoints. `body` must not keep the connection.
    @discardableResult
    public func withTransaction<T>(isolation: PostgresIsolation? = nil, _ body: (PostgresConnection) throws -> T) throws -> T {
        if transactionDepth > 0 { return try withSavepoint(body) }
        lastBeginFailed = true
        if let isolation {
            try executeScript(isolation.begin)
        } else {
            try executeScript("BEGIN")
        }
        lastBeginFailed = false
        transactionDepth = 1
        defer { transactionDepth = 0 }
        let value: T
        do {
            value = try body(self)
        } catch {
            rollbackQuietly()
            throw error
        }
        if let handle, PQtransactionStatus(handle) == PQTRANS_INERROR {
            // COMMIT would silently roll back: a statement failed and the body swallowed the error.
            rollbackQuietly()
            throw PostgresError(.misuse, message: "transaction aborted by an earlier error that the body caught; rolled back")
        }
        transactionDepth = 0  // COMMIT ends the transaction whether it succeeds or fails
        if deferred.isEmpty {
            try executeScript("COMMIT")
        } else {
            // The statements held for later and COMMIT in one round trip; after an error in them COMMIT is skipped.
            counters?.record("COMMIT")
            // The transaction's own connection or none: a reconnect here would commit the held writes alone.
            guard let handle, !lostConnection, PQstatus(handle) == CONNECTION_OK else {
                rollbackQuietly()
                throw PostgresError(.connectionLost, message: "connection lost inside a transaction")
            }
            do {
                _ = try runPipeline(then: .command("COMMIT"), handle)
            } catch {
                rollbackQuietly()
                throw error
            }
        }
        return value
    }

    private func withSavepoint<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let name = "reclaim_sp\(transactionDepth)"
        try executeScript("SAVEPOINT \(identifier: name)")
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        do {
            let value = try body(self)
            try executeScript("RELEASE SAVEPOINT \(identifier: name)")
            return value
        } catch {
            deferred.removeAll()  // never sent: rolled back with the savepoint
            if let handle, PQstatus(handle) == CONNECTION_OK {
                let rollback: PostgresQuery = "ROLLBACK TO SAVEPOINT \(identifier: name); RELEASE SAVEPOINT \(identifier: name)"
                _ = try? finish(PQexec(handle, rollback.sql), handle)
            }
            throw error
        }
    }

    private func rollbackQuietly() {
        deferred.removeAll()
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return }
        let status = PQtransactionStatus(handle)
        if status == PQTRANS_INTRANS || status == PQTRANS_INERROR {
            _ = try? finish(PQexec(handle, "ROLLBACK"), handle)
        }
    }

    /// For the pool on release: leaves no transaction open; a connection in an unknown state is dropped.
    func resetSessionState() {
        deferred.removeAll()
        guard let handle else { return }
        transactionDepth = 0
        switch PQtransactionStatus(handle) {
        case PQTRANS_IDLE: return
        case PQTRANS_INTRANS, PQTRANS_INERROR: rollbackQuietly()
        default: drop()
        }
    }

    /// True inside `withTransaction` (the pool must not hand the connection to anyone else then; row locks last until it ends).
    public var inTransaction: Bool { transactionDepth > 0 }

    /// True when the last `withTransaction` failed at BEGIN, before the body ran (the pool may retry then).
    private(set) var lastBeginFailed = false

    // MARK: Connecting

    private func open() throws {
        let connection: OpaquePointer? = withCStringArray(keywords) { keys in
            withCStringArray(values) { vals in PQconnectdbParams(keys, vals, 0) }
        }
        guard let connection else {
            counters?.connectFailures.add(1, ordering: .relaxed)
            throw PostgresError(.connectionFailed, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PostgresConnection.firstLine(PQerrorMessage(connection))
            PQfinish(connection)
            counters?.connectFailures.add(1, ordering: .relaxed)
            throw PostgresError(.connectionFailed, message: message)
        }
        // Notices (e.g. "relation already exists, skipping") would otherwise go to stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
        statements.removeAll()
        lostConnection = false
        counters?.connects.add(1, ordering: .relaxed)
    }

    /// The live handle, reconnecting first when the last call found the connection broken, or when an idle
    /// connection's socket says the server went away (restart, idle-session kill): nothing is sent on a dead one.
    func ensureOpen() throws -> OpaquePointer {
        if closedByUser { throw PostgresError(.misuse, message: "connection was closed") }
        if let handle, !lostConnection, PQstatus(handle) == CONNECTION_OK {
            if transactionDepth > 0 || PostgresConnection.idleSocketIsQuiet(handle) { return handle }
            counters?.deadOnCheckout.add(1, ordering: .relaxed)
            lostConnection = true
        }
        if transactionDepth > 0 {
            // Reconnecting here would run the rest of the transaction's statements outside it.
            throw PostgresError(.connectionLost, message: "connection lost inside a transaction")
        }
        drop()
        try open()
        counters?.reconnects.add(1, ordering: .relaxed)
        return handle!
    }

    /// True when an idle connection's socket has nothing to read: a server that ends a session (restart, shutdown,
    /// `pg_terminate_backend`) sends an error and closes, and an idle session is sent nothing else (no LISTEN here).
    /// One `poll` with no wait, ~1 µs; outside transactions only, since inside one a dead connection cannot be replaced.
    static func idleSocketIsQuiet(_ handle: OpaquePointer) -> Bool {
        guard PQtransactionStatus(handle) == PQTRANS_IDLE else { return true }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 0)
        if ready == 0 { return true }
        if ready < 0 { return errno == EINTR }
        // Something arrived unasked (an error before EOF, or EOF itself): libpq would read it as our statement's answer.
        return false
    }

    // MARK: Prepared statements

    private func prepared(_ query: PostgresQuery, _ handle: OpaquePointer) throws -> Statement {
        if let statement = statements[query.sql], statement.parameterTypes.count == query.binds.count,
            zip(statement.parameterTypes, query.binds).allSatisfy({ $0 == $1.typeOID })
        {
            return statement
        }
        if statements.count >= PostgresConnection.statementCacheLimit, PQtransactionStatus(handle) == PQTRANS_IDLE {
            if (try? finish(PQexec(handle, "DEALLOCATE ALL"), handle)) != nil { statements.removeAll() }
        }
        statementCounter += 1
        let name = "s\(statementCounter)"
        let types = query.binds.map(\.typeOID)
        _ = try finish(PQprepare(handle, name, query.sql, Int32(types.count), types), handle)
        preparesTotal += 1
        let description = try finish(PQdescribePrepared(handle, name), handle)
        guard let described = description.result else { throw PostgresError(.misuse, message: "no description for a prepared statement") }
        let columnCount = described.columnCount
        var binary: Bool
        switch resultFormatPolicy {
        case .text: binary = false
        case .binary: binary = true
        case .automatic:
            // Binary saves the server formatting and us parsing, but only for types we read in binary.
            binary = columnCount > 0
            for column in 0..<columnCount where !PostgresBinary.understands(PQftype(described.handle, Int32(column))) {
                binary = false
                break
            }
        }
        let statement = Statement(name: name, parameterTypes: types, parameterCount: Int(PQnparams(described.handle)), binaryResults: binary)
        statements[query.sql] = statement
        return statement
    }

    private func forget(_ sql: String, _ handle: OpaquePointer) {
        guard let statement = statements.removeValue(forKey: sql) else { return }
        let deallocate: PostgresQuery = "DEALLOCATE \(identifier: statement.name)"
        _ = try? finish(PQexec(handle, deallocate.sql), handle)
    }

    private func run(_ statement: Statement, _ binds: [PostgresBind], _ handle: OpaquePointer) throws -> PostgresRows {
        try statement.check(binds)
        let resultFormat: Int32 = statement.binaryResults ? 1 : 0
        let result = try Self.withEncoded(binds) { count, values, lengths, formats in
            PQexecPrepared(handle, statement.name, count, values, lengths, formats, resultFormat)
        }
        return try finish(result, handle)
    }

    /// Calls `body` with libpq's parameter arrays for `binds` (count, values, lengths, formats), valid during the call.
    private static func withEncoded<R>(
        _ binds: [PostgresBind],
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
    ) throws -> R {
        let count = binds.count
        if count == 0 { return body(0, nil, nil, nil) }
        var byteCount = 0
        for bind in binds { byteCount += bind.encodedLength }
        var unencodable: Int?
        let result: R? = withUnsafeTemporaryAllocation(byteCount: max(byteCount, 1), alignment: 8) { storage in
            withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: count) { pointers in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: 2 * count) { lengthsAndFormats in
                    var offset = 0
                    for (index, bind) in binds.enumerated() {
                        if bind.isNull {
                            pointers[index] = nil
                            lengthsAndFormats[index] = 0
                        } else {
                            let at = storage.baseAddress! + offset
                            guard let length = bind.encode(into: at) else {
                                unencodable = index + 1
                                return nil
                            }
                            lengthsAndFormats[index] = length
                            pointers[index] = UnsafePointer(at.assumingMemoryBound(to: CChar.self))
                            offset += bind.encodedLength
                        }
                        lengthsAndFormats[count + index] = bind.isBinary ? 1 : 0
                    }
                    let lengths = UnsafePointer(lengthsAndFormats.baseAddress!)
                    return body(Int32(count), UnsafePointer(pointers.baseAddress), lengths, lengths + count)
                }
            }
        }
        if let unencodable {
            throw PostgresError(.misuse, message: "text parameter $\(unencodable) contains a NUL character, which PostgreSQL text cannot hold")
        }
        return result!
    }

    // MARK: Pipelines

    /// One statement of a pipeline: a prepared one with its binds, or a command without any (COMMIT).
    private enum PipelineItem {
        case prepared(Statement, [PostgresBind])
        case command(String)
    }

    /// Sends the deferred statements and then `last` (if any) in one pipeline with one sync, reads every answer, and
    /// returns `last`'s rows (empty rows without one). Throws the first failure; the statements after it are skipped
    /// by the server (and the transaction is then aborted, as after any failed statement).
    private func runPipeline(then last: PipelineItem?, _ handle: OpaquePointer) throws -> PostgresRows {
        let items = deferred + (last.map { [$0] } ?? [])
        deferred.removeAll()
        guard PQenterPipelineMode(handle) == 1 else { throw connectionError(handle) }
        var sent = 0
        for item in items {
            let queued: Int32
            switch item {
            case .prepared(let statement, let binds):
                let format: Int32 = statement.binaryResults ? 1 : 0
                queued = try Self.withEncoded(binds) { count, values, lengths, formats in
                    PQsendQueryPrepared(handle, statement.name, count, values, lengths, formats, format)
                }
            case .command(let sql):
                queued = PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 0)
            }
            guard queued == 1 else { break }
            sent += 1
        }
        if sent < items.count || PQpipelineSync(handle) != 1 {
            // libpq could not even queue the statements: the socket is gone or the state is unknown; start afresh.
            let error = connectionError(handle)
            lostConnection = true
            throw PostgresError(.connectionLost, message: error.message)
        }
        var failure: PostgresError?
        var rows = PostgresRows(result: nil, affectedRows: 0)
        for index in 0..<sent {
            while let result = PQgetResult(handle) {
                let status = PQresultStatus(result)
                if status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY {
                    if index == sent - 1, last != nil {
                        rows = PostgresRows(result: PostgresResult(result), affectedRows: PostgresConnection.affectedRows(result))
                    } else {
                        PQclear(result)
                    }
                } else if status == PGRES_PIPELINE_ABORTED {
                    PQclear(result)
                } else {
                    if failure == nil { failure = serverError(result, handle) }
                    PQclear(result)
                }
            }
            if PQstatus(handle) != CONNECTION_OK { break }
        }
        if PQstatus(handle) == CONNECTION_OK, let sync = PQgetResult(handle) {
            let status = PQresultStatus(sync)
            PQclear(sync)
            if status != PGRES_PIPELINE_SYNC, failure == nil {
                failure = PostgresError(.misuse, message: "a pipeline's answers did not end at its sync")
            }
        }
        if PQstatus(handle) != CONNECTION_OK || PQexitPipelineMode(handle) != 1 {
            lostConnection = true
            throw failure ?? PostgresError(.connectionLost, message: PostgresConnection.firstLine(PQerrorMessage(handle)))
        }
        counters?.record(ConnectionCounters.pipelineEnd)
        if let failure { throw failure }
        return rows
    }

    // MARK: Results and errors

    /// Turns a PGresult into rows, or into a thrown error (freeing it).
    func finish(_ result: OpaquePointer?, _ handle: OpaquePointer) throws -> PostgresRows {
        guard let result else { throw connectionError(handle) }
        let status = PQresultStatus(result)
        if status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY {
            let owned = PostgresResult(result)
            return PostgresRows(result: owned, affectedRows: PostgresConnection.affectedRows(result))
        }
        let error = serverError(result, handle)
        PQclear(result)
        throw error
    }

    private static func affectedRows(_ result: OpaquePointer) -> Int {
        guard let text = PQcmdTuples(result) else { return 0 }
        var value = 0
        var pointer = text
        while pointer.pointee >= 0x30 && pointer.pointee <= 0x39 {
            value = value * 10 + Int(pointer.pointee - 0x30)
            pointer += 1
        }
        return value
    }

    private func serverError(_ result: OpaquePointer, _ handle: OpaquePointer) -> PostgresError {
        func field(_ code: Character) -> String? {
            guard let value = PQresultErrorField(result, Int32(code.asciiValue!)) else { return nil }
            return String(cString: value)
        }
        let sqlState = field("C")
        // A failure without SQLSTATE comes from libpq itself ("server closed the connection
        // unexpectedly"): the socket is gone even when PQstatus has not caught up yet.
        let lost = PQstatus(handle) != CONNECTION_OK || sqlState.map(PostgresError.isConnectionSQLState) ?? true
        if lost { lostConnection = true }
        let primary = field("M") ?? PostgresConnection.firstLine(PQresultErrorMessage(result) ?? PQerrorMessage(handle))
        return PostgresError(
            lost ? .connectionLost : .server,
            sqlState: sqlState,
            message: PostgresError.redacted(primary, sqlState: sqlState),
            constraint: field("n"))
    }

    private func connectionError(_ handle: OpaquePointer) -> PostgresError {
        let lost = PQstatus(handle) != CONNECTION_OK
        if lost { lostConnection = true }
        return PostgresError(lost ? .connectionLost : .server, message: PostgresConnection.firstLine(PQerrorMessage(handle)))
    }

    /// libpq messages end in newlines and sometimes carry a hint on a second line.
    static func firstLine(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown libpq error" }
        let message = String(cString: text)
        let line = message.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? ""
        return line.isEmpty ? "unknown libpq error" : line
    }

    // MARK: Connection strings

    /// The connection string's parameters plus our session defaults, as keyword/value lists.
    static func parameters(_ connectionString: String) throws -> ([String], [String]) {
        var parsed = try parse(connectionString)
        if parsed["connect_timeout"] == nil { parsed["connect_timeout"] = "3" }
        if parsed["fallback_application_name"] == nil { parsed["fallback_application_name"] = "reclaim" }
        parsed["client_encoding"] = "UTF8"
        // Timestamps in text results must be unambiguous: UTC, ISO.
        let session = "-c TimeZone=UTC -c DateStyle=ISO,YMD"
        parsed["options"] = parsed["options"].map { $0 + " " + session } ?? session
        let ordered = parsed.sorted { $0.key < $1.key }
        return (ordered.map(\.key), ordered.map(\.value))
    }

    /// The explicitly set parameters of a conninfo string or URI.
    static func parse(_ connectionString: String) throws -> [String: String] {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &errorMessage) else {
            if let errorMessage { PQfreemem(errorMessage) }
            // libpq's message can quote part of the string, which may be a password: keep it out.
            throw PostgresError(.connectionFailed, message: "the connection string is not a valid libpq conninfo or URI")
        }
        defer { PQconninfoFree(options) }
        var parsed: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { parsed[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return parsed
    }

    /// `connectionString` pointing at database `database` instead, and as `user` when given (keyword form).
    public static func connectionString(_ connectionString: String, replacingDatabase database: String, user: String? = nil) throws -> String {
        var parsed = try parse(connectionString)
        parsed["dbname"] = database
        if let user { parsed["user"] = user }
        return parsed.sorted { $0.key < $1.key }.map { key, value in
            var escaped = ""
            for character in value {
                if character == "\\" || character == "'" { escaped.append("\\") }
                escaped.append(character)
            }
            return "\(key)='\(escaped)'"
        }.joined(separator: " ")
    }
}

/// Calls `body` with a NULL-terminated C array of C strings (libpq's keyword/value lists).
private func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { for copy in copies { free(copy) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
