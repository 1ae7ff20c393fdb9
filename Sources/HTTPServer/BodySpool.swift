import Crypto
import Foundation

/// The bytes of a request body or of a form's file: in memory, or spooled to disk once they pass the server's
/// `largeBodyThreshold` (on routes that take documents: `Route.spoolingLargeBodies`, `Route.acceptingMultipart`).
/// Read large ones in pieces; `bytes()` loads everything and is for small contents.
public struct BodyContent: Sendable {
    enum Storage: Sendable {
        case memory([UInt8])
        case spooled(SpooledBytes)
    }

    let storage: Storage

    /// Bytes held in memory (a small body, a test's document).
    public init(_ bytes: [UInt8]) {
        storage = .memory(bytes)
    }

    init(spooled: SpooledBytes) {
        storage = .spooled(spooled)
    }

    /// How many bytes there are.
    public var count: Int {
        switch storage {
        case .memory(let bytes): bytes.count
        case .spooled(let spool): spool.count
        }
    }

    /// True when the bytes are on disk rather than in memory.
    public var isSpooled: Bool {
        if case .spooled = storage { true } else { false }
    }

    /// Calls `body` with the bytes in order, in pieces of at most `SpooledBytes.pieceSize` (64 KiB) each, every piece but
    /// the last exactly that long; a spooled content is read back one piece at a time, so it never is in memory whole.
    public func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        switch storage {
        case .memory(let bytes):
            try bytes.withUnsafeBytes { all in
                var offset = 0
                while offset < all.count {
                    let end = min(all.count, offset + SpooledBytes.pieceSize)
                    try body(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                    offset = end
                }
            }
        case .spooled(let spool):
            try spool.forEachPiece(body)
        }
    }

    /// The first `count` bytes (or all, when there are fewer): what sniffing a media type needs.
    public func prefix(_ count: Int) throws -> [UInt8] {
        switch storage {
        case .memory(let bytes): return Array(bytes.prefix(count))
        case .spooled(let spool): return try spool.prefix(count)
        }
    }

    /// Every byte, in memory: for small contents (and tests); a spooled content is read whole.
    public func bytes() throws -> [UInt8] {
        switch storage {
        case .memory(let bytes): return bytes
        case .spooled(let spool): return try spool.prefix(spool.count)
        }
    }
}

/// Why a body could not be spooled (the directory is missing or full); answered 503.
struct SpoolError: Error, CustomStringConvertible {
    let operation: String
    let code: Int32
    var description: String { "\(operation): \(String(cString: strerror(code)))" }
}

/// A body written to an unlinked temporary file as it arrives, so memory holds one 64 KiB piece of it, not all of it.
///
/// The file holds only ciphertext: each piece is encrypted with a `SpoolCipher` made for this file alone, whose key
/// never leaves the process, before it is written. The file has no name (it is unlinked as soon as it is created),
/// so it disappears with its descriptor when the request is done, or with the process.
///
/// `@unchecked Sendable`: written only by the MHD worker thread that receives the body, until `finish()`; after that,
/// the request (which may travel to another thread with a deferred handler) only reads it, with `pread`.
final class SpooledBytes: @unchecked Sendable {
    /// Bytes written and read at a time; a multiple of the cipher's alignment, so every piece starts on a block.
    static let pieceSize = 64 * 1024

    private let descriptor: Int32
    private let cipher = SpoolCipher()
    /// The piece being filled (plaintext), written out encrypted each time it is full.
    private var pending: [UInt8] = []
    private var written = 0
    private(set) var count = 0

    /// A new spool file in `directory`.
    init(directory: String) throws {
        var template =
            Array((directory.hasSuffix("/") ? directory : directory + "/").utf8CString.dropLast()) + Array("reclaim-body-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw SpoolError(operation: "creating a spool file in \(directory)", code: errno) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        // Nameless from here on: nothing else can open it, and it goes when the descriptor is closed.
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
        pending.reserveCapacity(Self.pieceSize)
    }

    deinit {
        close(descriptor)
    }

    /// Appends the next bytes of the body.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let take = min(bytes.count - offset, Self.pieceSize - pending.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)]))
            offset += take
            count += take
            if pending.count == Self.pieceSize { try flush() }
        }
    }

    /// Writes what is still pending; the spool is complete and read-only afterwards.
    func finish() throws {
        if !pending.isEmpty { try flush() }
        pending = []
    }

    private func flush() throws {
        try pending.withUnsafeMutableBytes { piece in
            cipher.apply(piece, at: written)
            var done = 0
            while done < piece.count {
                let result = pwrite(descriptor, piece.baseAddress! + done, piece.count - done, off_t(written + done))
                if result < 0 {
                    if errno == EINTR { continue }
                    throw SpoolError(operation: "writing a spool file", code: errno)
                }
                done += result
            }
        }
        written += pending.count
        pending.removeAll(keepingCapacity: true)
    }

    /// Reads the piece at `offset` (a multiple of `pieceSize`) into `buffer` and decrypts it; returns its length.
    private func readPiece(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let length = min(buffer.count, written - offset)
        var done = 0
        while done < length {
            let result = pread(descriptor, buffer.baseAddress! + done, length - done, off_t(offset + done))
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { throw SpoolError(operation: "reading a spool file", code: result < 0 ? errno : EIO) }
            done += result
        }
        let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length])
        cipher.apply(piece, at: offset)
        return length
    }

    func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try readPieces(upTo: written, body)
    }

    func prefix(_ wanted: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(min(wanted, count))
        try readPieces(upTo: min(wanted, written)) { out.append(contentsOf: $0.prefix(wanted - out.count)) }
        return out
    }

    /// Reads, decrypts and hands over the pieces that cover the first `limit` bytes, one buffer for all of them.
    private func readPieces(upTo limit: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        precondition(pending.isEmpty, "SpooledBytes read before finish()")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.pieceSize, alignment: 16)
        defer {
            // The plaintext of the last piece read: wiped before the memory is given back.
            memset(buffer.baseAddress!, 0, buffer.count)
            buffer.deallocate()
        }
        var offset = 0
        while offset < limit {
            let length = try readPiece(at: offset, into: buffer)
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
            offset += length
        }
    }
}
