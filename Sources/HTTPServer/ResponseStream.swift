import CMicroHTTPD
import Foundation
import Logging

/// A response body made while it is sent (`HTTPResponse(status:headers:stream:)`): `produce` runs on a thread of its
/// own once the response is queued and hands its bytes to the writer piece by piece; the body goes out chunked. A
/// `produce` that throws ends the body with an error (the client sees the connection close before the last chunk).
public struct HTTPBodyStream: Sendable {
    let produce: @Sendable (HTTPBodyWriter) throws -> Void

    /// A body written by `produce`, on its own thread, after the head is queued.
    public init(_ produce: @escaping @Sendable (HTTPBodyWriter) throws -> Void) {
        self.produce = produce
    }
}

/// Where a streamed body is written. `write` waits while a piece already waits for the client, so a slow client holds
/// the producer, not memory: at most one waiting piece and the one being sent. It throws `HTTPBodyWriter.Cancelled`
/// once the client is gone or the server stops.
///
/// MHD reads it from its own threads through `read`; with nothing to give, `read` suspends the connection (no busy
/// loop, no MHD thread blocked) and the next `write` or the end resumes it.
public final class HTTPBodyWriter: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is read and written only while holding `condition`.
    /// The client went away or the server stopped: the producer should stop.
    public struct Cancelled: Error {}

    /// Bytes that may wait beyond the piece being sent before `write` waits (one piece is always accepted).
    static let waitingLimit = 1 << 20

    private let condition = NSCondition()
    private var waiting: [[UInt8]] = []
    private var waitingHead = 0
    private var waitingBytes = 0
    private var current: [UInt8] = []
    private var offset = 0
    private var ended = false
    private var failed = false
    private var cancelled = false
    private var suspended = false
    /// The connection, set when the response is queued; used only while MHD still holds it (never after `release`).
    private var connection: OpaquePointer?

    init() {}

    /// Hands `bytes` to the client, waiting while an earlier piece is still waiting.
    public func write(_ bytes: [UInt8]) throws {
        condition.lock()
        while !cancelled && waitingBytes > 0 && waitingBytes + bytes.count > Self.waitingLimit { condition.wait() }
        guard !cancelled else {
            condition.unlock()
            throw Cancelled()
        }
        if !bytes.isEmpty {
            waiting.append(bytes)
            waitingBytes += bytes.count
        }
        let resume = takeSuspension()
        condition.unlock()
        if let resume { MHD_resume_connection(resume) }
    }

    /// The producer returned (or threw: `failed`); MHD ends the body once the waiting bytes are sent.
    func end(failed: Bool) {
        condition.lock()
        ended = true
        self.failed = failed
        let resume = takeSuspension()
        condition.unlock()
        if let resume { MHD_resume_connection(resume) }
    }

    /// The client is gone (MHD released the response) or the server stops: the producer's next `write` throws, a
    /// suspended connection is resumed so MHD ends it.
    func cancel() {
        condition.lock()
        cancelled = true
        waiting = []
        waitingHead = 0
        waitingBytes = 0
        let resume = takeSuspension()
        condition.broadcast()
        condition.unlock()
        if let resume { MHD_resume_connection(resume) }
    }

    /// MHD released the response: the connection is no longer to be touched.
    func release() {
        condition.lock()
        connection = nil
        suspended = false
        condition.unlock()
        cancel()
    }

    func attach(_ connection: OpaquePointer) {
        condition.lock()
        self.connection = connection
        condition.unlock()
    }

    /// The connection to resume, if `read` suspended it; called holding `condition`. MHD is resumed after unlocking:
    /// a suspended connection stays alive until it is resumed, so the pointer is still good then.
    private func takeSuspension() -> OpaquePointer? {
        guard suspended, let connection else { return nil }
        suspended = false
        return connection
    }

    /// MHD's content reader: up to `capacity` bytes into `buffer`, 0 after suspending the connection when none wait yet,
    /// or the end of the stream.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        if cancelled { return reclaim_mhd_end_with_error }
        if offset == current.count {
            current = []
            offset = 0
            if waitingHead < waiting.count {
                current = waiting[waitingHead]
                waiting[waitingHead] = []
                waitingHead += 1
                if waitingHead == waiting.count {
                    waiting.removeAll(keepingCapacity: true)
                    waitingHead = 0
                }
                waitingBytes -= current.count
                condition.broadcast()
            } else if ended {
                return failed ? reclaim_mhd_end_with_error : reclaim_mhd_end_of_stream
            } else {
                // MHD allows suspending from its content reader; 0 then means "nothing yet", not a busy loop.
                guard let connection else { return reclaim_mhd_end_with_error }
                suspended = true
                MHD_suspend_connection(connection)
                return 0
            }
        }
        let count = min(capacity, current.count - offset)
        current.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}

extension HTTPServer {
    /// The MHD response for a streamed body; its producer starts once the response is queued (`startStream`).
    func streamedResponse(_ stream: HTTPBodyStream, context: RequestContext, connection: OpaquePointer) -> (OpaquePointer, HTTPBodyWriter)? {
        let writer = HTTPBodyWriter()
        writer.attach(connection)
        let retained = Unmanaged.passRetained(StreamSlot(writer: writer, server: self))
        guard let response = reclaim_mhd_create_streamed_response(64 * 1024, streamReaderCallback, retained.toOpaque(), streamReleaseCallback)
        else {
            retained.release()
            return nil
        }
        state.withLock { $0.streams[ObjectIdentifier(writer)] = writer }
        return (response, writer)
    }

    /// Runs the producer on a thread of its own (it may wait on PostgreSQL and on the client: never on MHD's threads).
    func startStream(_ stream: HTTPBodyStream, writer: HTTPBodyWriter, context: RequestContext) {
        let logger = self.logger
        let requestID = context.requestID
        let thread = Thread {
            var failed = false
            do {
                try stream.produce(writer)
            } catch is HTTPBodyWriter.Cancelled {
                failed = true
            } catch {
                failed = true
                logger.error(
                    "response_stream_failed",
                    ["request_id": .string(requestID), "error_type": .string(String(reflecting: type(of: error)))])
            }
            writer.end(failed: failed)
        }
        thread.name = "reclaim-http-stream"
        thread.start()
    }

    /// Cancels every stream still being sent (shutdown): MHD must not be stopped with a connection suspended.
    func cancelStreams() {
        let writers = state.withLock { state -> [HTTPBodyWriter] in
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for writer in writers { writer.cancel() }
    }

    fileprivate func streamReleased(_ writer: HTTPBodyWriter) {
        state.withLock { _ = $0.streams.removeValue(forKey: ObjectIdentifier(writer)) }
        writer.release()
    }
}

/// What MHD's `cls` points to for a streamed response: the writer and the server that registered it.
private final class StreamSlot {
    let writer: HTTPBodyWriter
    let server: HTTPServer

    init(writer: HTTPBodyWriter, server: HTTPServer) {
        self.writer = writer
        self.server = server
    }
}

private func streamReaderCallback(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int)
    -> Int
{
    guard let cls, let buffer else { return reclaim_mhd_end_with_error }
    return Unmanaged<StreamSlot>.fromOpaque(cls).takeUnretainedValue().writer.read(into: buffer, capacity: capacity)
}

private func streamReleaseCallback(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    let slot = Unmanaged<StreamSlot>.fromOpaque(cls).takeRetainedValue()
    slot.server.streamReleased(slot.writer)
}
