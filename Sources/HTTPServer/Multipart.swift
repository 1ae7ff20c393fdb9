import CMicroHTTPD
import Foundation

/// Caps for a route that accepts `multipart/form-data` (see `Route.acceptingMultipart(_:)`).
public struct MultipartLimits: Sendable {
    /// Largest file part in bytes; one byte more is answered 413 while the body is still arriving.
    public var maxFileBytes: Int
    /// Largest text field in bytes (a part with no filename and no non-text content type).
    public var maxFieldBytes: Int
    /// Most parts in one form; one more is answered 413.
    public var maxParts: Int
    /// Largest whole multipart body (files, fields and framing); replaces the route's `bodyLimit` for forms.
    public var maxBodyBytes: Int

    /// Defaults: 10 MiB per file, 4 KiB per field, 16 parts, the file cap plus 128 KiB for fields and framing.
    public init(maxFileBytes: Int = 10 << 20, maxFieldBytes: Int = 4096, maxParts: Int = 16, maxBodyBytes: Int? = nil) {
        self.maxFileBytes = maxFileBytes
        self.maxFieldBytes = maxFieldBytes
        self.maxParts = maxParts
        self.maxBodyBytes = maxBodyBytes ?? maxFileBytes + 128 * 1024
    }
}

/// One part of a `multipart/form-data` body, in arrival order.
public struct MultipartPart: Sendable {
    /// The `name` of its `Content-Disposition`.
    public let name: String
    /// The `filename` of its `Content-Disposition`, as the client sent it (never trust it as a path).
    public let filename: String?
    /// The part's own `Content-Type`, as declared by the client (sniff the bytes before believing it).
    public let contentType: String?
    /// The part's bytes, exactly as sent: in memory, or spooled to disk for a file past `largeBodyThreshold`.
    public let content: BodyContent

    /// True for a file: it has a filename, or a content type other than `text/plain`.
    public var isFile: Bool { filename != nil || !MultipartPart.isTextContentType(contentType) }

    /// A part; for building forms in handler unit tests.
    public init(name: String, filename: String? = nil, contentType: String? = nil, bytes: [UInt8]) {
        self.init(name: name, filename: filename, contentType: contentType, content: BodyContent(bytes))
    }

    init(name: String, filename: String?, contentType: String?, content: BodyContent) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.content = content
    }

    static func isTextContentType(_ value: String?) -> Bool {
        guard let value else { return true }
        let media = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return media.equalsIgnoringASCIICase("text/plain")
    }
}

/// A file part of a form.
public struct MultipartFile: Sendable {
    /// The client's file name, if it sent one.
    public let filename: String?
    /// The content type the client declared for the part, if any.
    public let declaredContentType: String?
    /// The file's bytes, exactly as sent (spooled to disk when large: read them in pieces).
    public let content: BodyContent
}

/// A parsed `multipart/form-data` body.
public struct MultipartForm: Sendable {
    /// Every part in arrival order.
    public let parts: [MultipartPart]

    /// A form made of these parts; for handler unit tests.
    public init(parts: [MultipartPart]) {
        self.parts = parts
    }

    /// The first text field with this name, decoded as UTF-8 (invalid sequences become U+FFFD).
    public func field(_ name: String) -> String? {
        // Text fields are never spooled: `maxFieldBytes` keeps them small.
        for part in parts where part.name == name && !part.isFile {
            return String(decoding: (try? part.content.bytes()) ?? [], as: UTF8.self)
        }
        return nil
    }

    /// The first file part with this name.
    public func file(_ name: String) -> MultipartFile? {
        for part in parts where part.name == name && part.isFile {
            return MultipartFile(filename: part.filename, declaredContentType: part.contentType, content: part.content)
        }
        return nil
    }
}

extension Problem {
    /// 400 `malformed_multipart`: the body is not a well-formed `multipart/form-data` form.
    public static func malformedMultipart(_ detail: String) -> Problem {
        Problem(HTTPProblemCode.malformedMultipart, detail: detail)
    }
}

extension Route {
    /// This route also accepts `multipart/form-data`: such bodies are parsed while they arrive (not
    /// buffered whole) under `limits`, and handlers read them with `request.multipart()`. Other
    /// content types still arrive in `body` under `bodyLimit`.
    public func acceptingMultipart(_ limits: MultipartLimits = MultipartLimits()) -> Route {
        var copy = self
        copy.multipart = limits
        return copy
    }
}

extension HTTPRequest {
    /// The parsed form. Throws 415 `unsupported_media_type` unless the request is `multipart/form-data`,
    /// 400 `malformed_multipart` when the form is malformed (no boundary, truncated, no parts).
    /// Only routes made with `acceptingMultipart` parse forms; on others this throws 415.
    public func multipart() throws -> MultipartForm {
        switch multipartOutcome {
        case .success(let form)?: return form
        case .failure(let problem)?: throw problem
        case nil: throw Problem.unsupportedMediaType(expected: "multipart/form-data")
        }
    }

    /// True when `Content-Type` is `multipart/form-data` (any parameters).
    static func isMultipartFormData(_ value: String) -> Bool {
        let media = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return media.equalsIgnoringASCIICase("multipart/form-data")
    }
}

/// Drives libmicrohttpd's post processor for one request and collects the parts it reports.
///
/// Used only on the worker thread that owns the connection (MHD calls the access handler, and so the
/// iterator, there); the server hands the finished form to the request as an immutable value.
final class MultipartCollector {
    /// The post processor's buffer: each part header line must fit in it. MHD rescans a header line from its
    /// start whenever a few more bytes arrive, so a trickled line costs O(size²): 4 KiB keeps that small.
    /// 4, 16 and 64 KiB measured the same upload throughput (within noise, 16 clients, release).
    static let bufferSize = 4 * 1024

    let limits: MultipartLimits
    private var processor: OpaquePointer?
    private var parts: [MultipartPart] = []
    private var current: (name: String, filename: String?, contentType: String?, isFile: Bool)?
    private var currentBytes: [UInt8] = []
    /// The current file part once it passed `spooling.threshold`: its bytes go to disk from then on.
    private var currentSpool: SpooledBytes?
    /// Where and past what size file parts are spooled.
    private let spooling: (directory: String, threshold: Int)
    /// Body bytes given to the post processor so far, and the announced total (for reserving file buffers).
    private var fed = 0
    private var lastChunk = 0
    private let announcedLength: Int?
    /// The first failure; the rest of the body is then discarded without parsing.
    private(set) var failure: Problem?
    /// `--boundary`, which the body must start with, and how much of it has been checked. MHD skips a
    /// preamble one dash at a time, moving its whole buffer each time (~0.25 s of CPU per MiB of dashes);
    /// forms from browsers and HTTP libraries never have one, so it is refused instead.
    private let opening: [UInt8]
    private var openingChecked = 0

    /// Creates the post processor; MHD reads `Content-Type` (and its boundary) from the connection itself. File parts
    /// over `spoolThreshold` bytes are spooled to `spoolDirectory`.
    init(
        connection: OpaquePointer, contentType: String, limits: MultipartLimits, announcedLength: Int?, spoolDirectory: String,
        spoolThreshold: Int
    ) {
        self.limits = limits
        self.announcedLength = announcedLength
        self.spooling = (spoolDirectory, spoolThreshold)
        self.opening = Array(("--" + Self.boundary(in: contentType)).utf8)
        let me = Unmanaged.passUnretained(self).toOpaque()
        processor = MHD_create_post_processor(connection, Self.bufferSize, multipartIterator, me)
        if processor == nil {
            failure = .malformedMultipart("The Content-Type has no usable boundary parameter.")
        }
    }

    deinit {
        if let processor { MHD_destroy_post_processor(processor) }
    }

    /// Parses the next body chunk. True when the failure (if any) is a size limit or a spool failure that must be
    /// answered now, before reading the rest; malformed forms are reported by `finish()` instead.
    func feed(_ data: UnsafePointer<CChar>, count: Int) -> Bool {
        fed += count
        lastChunk = count
        guard failure == nil, let processor else { return false }
        if openingChecked < opening.count {
            let checked = min(count, opening.count - openingChecked)
            let matches = opening.withUnsafeBytes { memcmp($0.baseAddress! + openingChecked, data, checked) == 0 }
            guard matches else {
                failure = .malformedMultipart("The body does not start with its boundary.")
                abandon()
                return false
            }
            openingChecked += checked
        }
        if MHD_post_process(processor, data, count) == .NO {
            if failure == nil { failure = .malformedMultipart("The multipart body is malformed.") }
            abandon()
            // Size limits and a spool that cannot be written are answered at once; a malformed form at the end.
            return failure?.status == 413 || spoolError != nil
        }
        return false
    }

    /// The whole body is in: the form, or why there is none.
    func finish() -> Result<MultipartForm, Problem> {
        if let failure { return .failure(failure) }
        guard let processor else { return .failure(.malformedMultipart("The multipart body is malformed.")) }
        self.processor = nil
        if MHD_destroy_post_processor(processor) == .NO {
            abandon()
            return .failure(.malformedMultipart("The multipart body ends before its closing boundary."))
        }
        flush()
        if let failure { return .failure(failure) }
        guard !parts.isEmpty else { return .failure(.malformedMultipart("The multipart body has no parts.")) }
        let form = MultipartForm(parts: parts)
        parts = []
        return .success(form)
    }

    /// The boundary as MHD 0.9.75 reads it: everything after `boundary=`, without surrounding quotes.
    static func boundary(in contentType: String) -> String {
        guard let range = contentType.range(of: "boundary=") else { return "" }
        var value = contentType[range.upperBound...]
        if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
        return String(value)
    }

    /// Frees everything parsed so far; the request will not use it.
    private func abandon() {
        if let processor { MHD_destroy_post_processor(processor) }
        processor = nil
        parts = []
        current = nil
        currentBytes = []
        currentSpool = nil
    }

    private func flush() {
        guard let part = current else { return }
        var content = BodyContent(currentBytes)
        if let spool = currentSpool {
            do {
                try spool.finish()
                content = BodyContent(spooled: spool)
            } catch {
                failure = Self.spoolFailed(error)
            }
        }
        parts.append(MultipartPart(name: part.name, filename: part.filename, contentType: part.contentType, content: content))
        current = nil
        currentBytes = []
        currentSpool = nil
    }

    static func spoolFailed(_ error: any Error) -> Problem {
        Problem.unavailable(retryAfter: 5, detail: "The upload could not be stored for handling; try again later.")
    }

    /// Whether the spool refused a write (the disk is full, say): answered 503 while the body still arrives.
    private(set) var spoolError: (any Error)?

    /// One call per piece of a part's value. `offset` is the piece's position in the value: MHD calls with
    /// offset 0 (possibly with no data) when a part starts, so a new part is an offset-0 call that cannot
    /// continue the current one.
    fileprivate func receive(
        name key: UnsafePointer<CChar>?, filename: UnsafePointer<CChar>?, contentType: UnsafePointer<CChar>?,
        data: UnsafePointer<CChar>?, offset: UInt64, size: Int
    ) -> Bool {
        if offset == 0 {
            guard let key else {
                failure = .malformedMultipart("A part has no Content-Disposition name.")
                return false
            }
            let name = String(cString: key)
            let file = filename.map { String(cString: $0) }
            let continues = current.map { $0.name == name && $0.filename == file && currentBytes.isEmpty && currentSpool == nil } ?? false
            if !continues {
                flush()
                guard parts.count < limits.maxParts else {
                    failure = Problem(HTTPProblemCode.payloadTooLarge, detail: "The form has more than \(limits.maxParts) parts.")
                    return false
                }
                let type = contentType.map { String(cString: $0) }
                let isFile = file != nil || !MultipartPart.isTextContentType(type)
                current = (name, file, type, isFile)
                if isFile, let announcedLength {
                    // What remains of the announced body (unread, in this chunk, or in MHD's buffer) bounds
                    // this file: one allocation instead of doubling from zero, up to where it would be spooled.
                    let bound = announcedLength - fed + lastChunk + Self.bufferSize
                    currentBytes.reserveCapacity(max(0, min(bound, limits.maxFileBytes, spooling.threshold + Self.bufferSize)))
                }
            }
        }
        guard size > 0, let data, let part = current else { return true }
        let cap = part.isFile ? limits.maxFileBytes : limits.maxFieldBytes
        let held = currentSpool?.count ?? currentBytes.count
        guard held + size <= cap else {
            let what = part.isFile ? "file" : "field"
            failure = Problem(HTTPProblemCode.payloadTooLarge, detail: "The \(what) '\(part.name)' exceeds the limit of \(cap) bytes.")
            return false
        }
        let piece = UnsafeRawBufferPointer(start: data, count: size)
        do {
            if let spool = currentSpool {
                try spool.append(piece)
            } else {
                currentBytes.append(contentsOf: piece)
                if part.isFile && currentBytes.count > spooling.threshold {
                    // Past the threshold a file goes to disk: what is held moves there, and memory is given back.
                    let spool = try SpooledBytes(directory: spooling.directory)
                    try currentBytes.withUnsafeBytes { try spool.append($0) }
                    currentSpool = spool
                    currentBytes = []
                }
            }
        } catch {
            spoolError = error
            failure = Self.spoolFailed(error)
            return false
        }
        return true
    }
}

/// MHD's post-data iterator; `cls` is the unretained collector, which outlives its post processor.
private func multipartIterator(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ filename: UnsafePointer<CChar>?,
    _ contentType: UnsafePointer<CChar>?, _ transferEncoding: UnsafePointer<CChar>?, _ data: UnsafePointer<CChar>?,
    _ offset: UInt64, _ size: Int
) -> MHD_Result {
    guard let cls else { return .NO }
    let collector = Unmanaged<MultipartCollector>.fromOpaque(cls).takeUnretainedValue()
    return collector.receive(name: key, filename: filename, contentType: contentType, data: data, offset: offset, size: size) ? .YES : .NO
}
