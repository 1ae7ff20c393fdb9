import CCurl

/// Why a transfer failed: curl's error code and message (never a header or body, which may hold secrets).
public struct CurlError: Error, Sendable, CustomStringConvertible {
    /// curl's `CURLcode`.
    public let code: Int
    /// curl's message for it, with the detail of its error buffer.
    public let message: String
    /// Whether the connect or total timeout ran out.
    public var timedOut: Bool { code == Int(CURLE_OPERATION_TIMEDOUT.rawValue) }
    /// Whether the server's certificate did not verify (unknown CA, wrong host name, expired).
    public var certificateRefused: Bool { code == Int(CURLE_PEER_FAILED_VERIFICATION.rawValue) }
    /// Whether the server refused the user name or password.
    public var loginDenied: Bool { code == Int(CURLE_LOGIN_DENIED.rawValue) }
    public var description: String { "curl error \(code): \(message)" }
}

/// Limits every transfer has: on connecting and on the whole exchange.
public struct CurlTimeouts: Sendable {
    public var connectSeconds: Double
    public var totalSeconds: Double
    public init(connectSeconds: Double, totalSeconds: Double) {
        self.connectSeconds = connectSeconds
        self.totalSeconds = totalSeconds
    }
}

/// A receiver's answer to a POST.
public struct HTTPClientResponse: Sendable {
    public let status: Int
    /// Header lines as received (names lower-cased).
    public let headers: [(name: String, value: String)]
    /// At most `maximumResponseBytes` of the body.
    public let body: [UInt8]

    /// The first header named `name` (lower case).
    public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// libcurl's easy interface for the transfers the service makes: an HTTP(S) POST, an SMTP(S) send, and reading a
/// mailbox over IMAP(S) (`IMAPSession`, IMAP.swift). The only importer of CCurl; every handle is owned by one `Transfer` and freed in its `deinit`. TLS peer and host
/// verification stay on (curl's default, set explicitly so no one turns them off by accident).
public enum Curl {
    /// curl_global_init, once, before any handle (not thread-safe itself, so behind a `static let`).
    static let ready: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// The most body bytes kept from an answer (receivers' bodies are only logged).
    public static let maximumResponseBytes = 4096

    /// POSTs `body` to `url` (http or https only, no redirects followed). `pin` (`host:port:address`) makes curl connect
    /// to an address already checked instead of resolving the name again (no DNS rebinding between check and use).
    public static func post(
        url: String, headers: [(String, String)], body: [UInt8], timeouts: CurlTimeouts,
        pin: String? = nil
    ) throws(CurlError) -> HTTPClientResponse {
        let transfer = try Transfer(timeouts: timeouts, protocols: "http,https")
        try transfer.set(CURLOPT_URL, url)
        try transfer.set(CURLOPT_POST, 1)
        if let pin { try transfer.resolve([pin]) }
        try transfer.headers(headers.map { "\($0.0): \($0.1)" } + ["Expect:"])
        return try transfer.upload(body, asPOST: true)
    }

    /// Sends one message over SMTP (`smtp://host:port`, STARTTLS when offered, or `smtps://`; `user:pass@` in the URL
    /// logs in). `message` is the whole RFC 5322 message with CRLF line ends.
    public static func sendMail(url: String, from: String, to recipients: [String], message: [UInt8], timeouts: CurlTimeouts) throws(CurlError) {
        let transfer = try Transfer(timeouts: timeouts, protocols: "smtp,smtps")
        try transfer.set(CURLOPT_URL, url)
        try transfer.set(CURLOPT_MAIL_FROM, "<\(from)>")
        try transfer.recipients(recipients.map { "<\($0)>" })
        // Use TLS whenever the server offers STARTTLS; smtps:// is TLS from the first byte.
        try transfer.set(CURLOPT_USE_SSL, Int(CURLUSESSL_TRY.rawValue))
        _ = try transfer.upload(message, asPOST: false)
    }
}

/// What the C callbacks read and write: owned by a `Transfer`, passed to curl as an unretained pointer that lives
/// as long as the transfer runs.
final class TransferBuffers {
    var upload: [UInt8] = []
    var uploadOffset = 0
    var body: [UInt8] = []
    var headerLines: [String] = []
    /// The most body bytes kept.
    var bodyLimit = Curl.maximumResponseBytes
    /// Whether a body over the limit stops the transfer (a download) or is cut silently (an answer only logged).
    var abortWhenFull = false
    /// Whether body bytes were dropped because of the limit.
    var truncated = false

    /// Empty again, for the next transfer on the same handle.
    func reset() {
        upload = []
        uploadOffset = 0
        body = []
        headerLines = []
        bodyLimit = Curl.maximumResponseBytes
        abortWhenFull = false
        truncated = false
    }
}

private func receiveBody(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?) -> Int {
    let total = size * count
    guard let buffer, let userdata else { return total }
    let buffers = Unmanaged<TransferBuffers>.fromOpaque(userdata).takeUnretainedValue()
    let room = max(0, buffers.bodyLimit - buffers.body.count)
    buffer.withMemoryRebound(to: UInt8.self, capacity: total) { bytes in
        buffers.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: min(room, total)))
    }
    if total > room {
        buffers.truncated = true
        if buffers.abortWhenFull { return 0 }  // curl stops with CURLE_WRITE_ERROR
    }
    return total
}

private func receiveHeader(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?) -> Int {
    let total = size * count
    guard let buffer, let userdata else { return total }
    let buffers = Unmanaged<TransferBuffers>.fromOpaque(userdata).takeUnretainedValue()
    if buffers.headerLines.count < 100 {
        let line = buffer.withMemoryRebound(to: UInt8.self, capacity: total) {
            String(decoding: UnsafeBufferPointer(start: $0, count: total), as: UTF8.self)
        }
        buffers.headerLines.append(line)
    }
    return total
}

private func sendUpload(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?) -> Int {
    guard let buffer, let userdata else { return 0 }
    let buffers = Unmanaged<TransferBuffers>.fromOpaque(userdata).takeUnretainedValue()
    let n = min(size * count, buffers.upload.count - buffers.uploadOffset)
    guard n > 0 else { return 0 }
    buffers.upload.withUnsafeBufferPointer { source in
        UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + buffers.uploadOffset, byteCount: n)
    }
    buffers.uploadOffset += n
    return n
}

/// One easy handle, its header lists and its buffers; freed together. Used by one thread at a time: for one transfer,
/// or (after `reset()`) for several in a row on the connection curl keeps open in the handle.
final class Transfer {
    let handle: UnsafeMutableRawPointer
    var lists: [UnsafeMutablePointer<curl_slist>] = []
    let buffers = TransferBuffers()
    /// curl writes its detailed message here during the transfer; owned, freed in deinit.
    let errorBuffer: UnsafeMutablePointer<CChar>
    let timeouts: CurlTimeouts
    let protocols: String

    init(timeouts: CurlTimeouts, protocols: String) throws(CurlError) {
        guard Curl.ready, let handle = curl_easy_init() else { throw CurlError(code: -1, message: "curl could not be initialised") }
        self.handle = handle
        self.timeouts = timeouts
        self.protocols = protocols
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        try configure()
    }

    /// Every option back to its default (curl keeps the open connection), buffers emptied, the common options set again.
    func reset() throws(CurlError) {
        curl_easy_reset(handle)
        for list in lists { curl_slist_free_all(list) }
        lists = []
        buffers.reset()
        errorBuffer[0] = 0
        try configure()
    }

    /// The options every transfer has.
    private func configure() throws(CurlError) {
        // Threads: no signals for timeouts (the resolver's alarm would hit any thread).
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_PROTOCOLS_STR, protocols)
        try set(CURLOPT_FOLLOWLOCATION, 0)
        try set(CURLOPT_SSL_VERIFYPEER, 1)
        try set(CURLOPT_SSL_VERIFYHOST, 2)
        try set(CURLOPT_CONNECTTIMEOUT_MS, Int(timeouts.connectSeconds * 1000))
        try set(CURLOPT_TIMEOUT_MS, Int(timeouts.totalSeconds * 1000))
        try set(CURLOPT_USERAGENT, "Reclaim")
        try check(reclaim_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
    }

    deinit {
        curl_easy_cleanup(handle)
        for list in lists { curl_slist_free_all(list) }
        errorBuffer.deallocate()
    }

    func check(_ code: CURLcode) throws(CurlError) {
        guard code != CURLE_OK else { return }
        let detail = String(cString: errorBuffer)
        let message = String(cString: curl_easy_strerror(code))
        throw CurlError(code: Int(code.rawValue), message: detail.isEmpty ? message : "\(message): \(detail)")
    }

    func set(_ option: CURLoption, _ value: Int) throws(CurlError) { try check(reclaim_curl_setopt_long(handle, option, value)) }

    func set(_ option: CURLoption, _ value: String) throws(CurlError) {
        // curl copies string options (since 7.17), so the temporary C string may go.
        try check(value.withCString { reclaim_curl_setopt_string(handle, option, $0) })
    }

    func makeList(_ items: [String]) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for item in items { list = curl_slist_append(list, item) }
        if let list { lists.append(list) }
        return list
    }

    func headers(_ lines: [String]) throws(CurlError) { try check(reclaim_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, makeList(lines))) }
    func recipients(_ addresses: [String]) throws(CurlError) { try check(reclaim_curl_setopt_slist(handle, CURLOPT_MAIL_RCPT, makeList(addresses))) }
    func resolve(_ pins: [String]) throws(CurlError) { try check(reclaim_curl_setopt_slist(handle, CURLOPT_RESOLVE, makeList(pins))) }

    /// Runs the transfer with `bytes` as the request body (POST) or the upload (SMTP).
    func upload(_ bytes: [UInt8], asPOST: Bool) throws(CurlError) -> HTTPClientResponse {
        buffers.upload = bytes
        if asPOST {
            try check(reclaim_curl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)))
        } else {
            try set(CURLOPT_UPLOAD, 1)
            try check(reclaim_curl_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(bytes.count)))
        }
        try perform()
        var status = 0
        _ = reclaim_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var headers: [(name: String, value: String)] = []
        for line in buffers.headerLines {
            guard let colon = line.firstIndex(of: ":") else {
                if line.hasPrefix("HTTP/") { headers.removeAll() }  // a 100 Continue's headers are not the answer's
                continue
            }
            // By Character, not CharacterSet: "\r\n" is one Character, which trimmingCharacters(in:) leaves in place.
            headers.append(
                (
                    line[..<colon].lowercased(),
                    String(line[line.index(after: colon)...].drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
                ))
        }
        return HTTPClientResponse(status: status, headers: headers, body: buffers.body)
    }

    /// Points curl's callbacks at the buffers and runs the transfer.
    func perform() throws(CurlError) {
        let context = Unmanaged.passUnretained(buffers).toOpaque()
        try check(reclaim_curl_setopt_callback(handle, CURLOPT_READFUNCTION, sendUpload))
        try check(reclaim_curl_setopt_pointer(handle, CURLOPT_READDATA, context))
        try check(reclaim_curl_setopt_callback(handle, CURLOPT_WRITEFUNCTION, receiveBody))
        try check(reclaim_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context))
        try check(reclaim_curl_setopt_callback(handle, CURLOPT_HEADERFUNCTION, receiveHeader))
        try check(reclaim_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context))
        // The buffers outlive the call: `self` holds them until deinit, after curl_easy_perform returned.
        try check(withExtendedLifetime(buffers) { curl_easy_perform(handle) })
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: Set<Character>) -> String {
        var s = Substring(self)
        while let first = s.first, set.contains(first) { s = s.dropFirst() }
        while let last = s.last, set.contains(last) { s = s.dropLast() }
        return String(s)
    }
}
