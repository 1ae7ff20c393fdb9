import CPostgres
import Foundation

/// One field of a row sent with `PostgresConnection.copyRow`, in PostgreSQL's binary COPY format.
public enum PostgresCopyField {
    /// A value as a bind parameter of its type carries it; the column must have that type (an `integer` column
    /// takes `Int32`, not `Int`), since binary COPY converts nothing. Text is sent as its UTF-8 bytes.
    case value(PostgresBind)
    /// A `jsonb` column's value, from JSON text.
    case jsonb(String)
    /// Bytes produced in pieces while they are sent (a sealed document), `length` of them in all: `produce` calls its
    /// argument with each piece in order. Only one piece is held at a time, here or in libpq.
    case streamed(length: Int, produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void)
}

extension PostgresConnection {
    /// Inserts one row with `COPY … FROM STDIN (FORMAT binary)` (`statement`, which takes no binds): the way to send a
    /// value too large to hold twice, since a bind parameter is copied whole into libpq's send buffer (which then keeps
    /// its size for the connection's life) while COPY data leaves in pieces. Throws the server's error (a constraint, a
    /// foreign key) as `query` does, or the error a `streamed` field's producer threw, after ending the COPY.
    public func copyRow(_ statement: PostgresQuery, _ fields: [PostgresCopyField]) throws {
        guard statement.binds.isEmpty else { throw PostgresError(.misuse, message: "COPY takes its values as fields, not binds") }
        try flushDeferred()
        let handle = try ensureOpen()
        guard let started = PQexec(handle, statement.sql) else {
            _ = try finish(nil, handle)
            return
        }
        guard PQresultStatus(started) == PGRES_COPY_IN else {
            _ = try finish(started, handle)
            throw PostgresError(.misuse, message: "the statement given to copyRow is not COPY … FROM STDIN")
        }
        PQclear(started)
        var writer = CopyWriter(handle: handle)
        do {
            // Header: signature, flags, no header extension; then the row; then the trailer (-1).
            writer.append(bytes: [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00])
            writer.append(int32: 0)
            writer.append(int32: 0)
            writer.append(int16: Int16(fields.count))
            for field in fields {
                switch field {
                case .value(let bind):
                    guard !bind.isNull else {
                        writer.append(int32: -1)
                        continue
                    }
                    var bytes = [UInt8](repeating: 0, count: bind.encodedLength)
                    let length = bytes.withUnsafeMutableBytes { bind.encode(into: $0.baseAddress!) }
                    guard let length else { throw PostgresError(.misuse, message: "a COPY text field contains a NUL character") }
                    writer.append(int32: length)
                    writer.append(bytes: bytes[..<Int(length)])
                case .jsonb(let text):
                    guard !text.utf8.contains(0) else { throw PostgresError(.misuse, message: "a COPY jsonb field contains a NUL character") }
                    // jsonb's binary form: a version byte (1), then the JSON text.
                    writer.append(int32: Int32(text.utf8.count + 1))
                    writer.append(bytes: [1])
                    writer.append(bytes: Array(text.utf8))
                case .streamed(let length, let produce):
                    writer.append(int32: Int32(length))
                    var sent = 0
                    try produce { piece in
                        sent += piece.count
                        try writer.append(piece)
                    }
                    guard sent == length else { throw PostgresError(.misuse, message: "a streamed COPY field produced \(sent) bytes, not \(length)") }
                }
                try writer.flushIfFull()
            }
            writer.append(int16: -1)
            try writer.flush()
        } catch {
            // End the COPY so the connection is usable (its transaction, aborted, then rolls back), and report the cause.
            _ = PQputCopyEnd(handle, "abandoned by the client")
            while let result = PQgetResult(handle) { PQclear(result) }
            throw error
        }
        guard PQputCopyEnd(handle, nil) == 1 else {
            _ = try finish(nil, handle)
            return
        }
        var failure: (any Error)?
        while let result = PQgetResult(handle) {
            do { _ = try finish(result, handle) } catch { if failure == nil { failure = error } }
        }
        if let failure { throw failure }
    }
}

/// Collects COPY data and hands it to libpq in pieces of about 64 KiB.
private struct CopyWriter {
    let handle: OpaquePointer
    var buffer: [UInt8] = []
    static let pieceSize = 64 * 1024

    init(handle: OpaquePointer) {
        self.handle = handle
        buffer.reserveCapacity(Self.pieceSize)
    }

    mutating func append(int16 value: Int16) { withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) } }
    mutating func append(int32 value: Int32) { withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) } }
    mutating func append<Bytes: Collection<UInt8>>(bytes: Bytes) { buffer.append(contentsOf: bytes) }

    /// A large piece goes straight to libpq after what is buffered, without being copied here first.
    mutating func append(_ piece: UnsafeRawBufferPointer) throws {
        if buffer.count + piece.count <= Self.pieceSize {
            buffer.append(contentsOf: piece)
            try flushIfFull()
            return
        }
        try flush()
        try put(piece)
    }

    mutating func flushIfFull() throws {
        if buffer.count >= Self.pieceSize { try flush() }
    }

    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try put($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func put(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard PQputCopyData(handle, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count)) == 1 else {
            throw PostgresError(
                PQstatus(handle) == CONNECTION_OK ? .server : .connectionLost,
                message: PostgresConnection.firstLine(PQerrorMessage(handle)))
        }
    }
}
