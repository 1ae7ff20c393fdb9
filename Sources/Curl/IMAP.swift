import CCurl

/// A mailbox on an IMAP server, from `imap://user:password@host:port/MAILBOX` or `imaps://…` (user and password
/// percent-encoded where they hold `@ : / %`; no MAILBOX means INBOX). The password is kept apart from the URL curl
/// is given, and `description` shows it as `***`: the form logs and errors may carry.
public struct IMAPMailbox: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// `imaps://` (TLS from the first byte); `imap://` upgrades with STARTTLS whenever the server offers it.
    public let tls: Bool
    /// The host as written (an IPv6 address in brackets).
    public let host: String
    public let port: Int
    public let user: String
    let password: String
    /// The mailbox name, decoded (`INBOX`, `Replies`).
    public let mailbox: String

    /// Parses and checks a mailbox URL.
    public init(url: String) throws(IMAPURLError) {
        let lowered = url.lowercased()
        if lowered.hasPrefix("imaps://") {
            tls = true
        } else if lowered.hasPrefix("imap://") {
            tls = false
        } else {
            throw IMAPURLError(reason: "The mailbox URL must start with imap:// or imaps://.")
        }
        let rest = url.dropFirst(tls ? 8 : 7)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        let path = rest[slash...].dropFirst()
        guard let at = authority.lastIndex(of: "@") else {
            throw IMAPURLError(reason: "The mailbox URL must name the user and password (imap://user:password@host/MAILBOX).")
        }
        let userInfo = authority[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { throw IMAPURLError(reason: "The mailbox URL has no password (user:password@).") }
        guard let user = percentDecoded(userInfo[..<colon]), let password = percentDecoded(userInfo[userInfo.index(after: colon)...]),
            !user.isEmpty, !password.isEmpty
        else {
            throw IMAPURLError(reason: "The mailbox URL's user and password must both be given, percent-encoded.")
        }
        var hostPort = authority[authority.index(after: at)...]
        var port = tls ? 993 : 143
        if let portColon = hostPort.lastIndex(of: ":"), !hostPort[portColon...].contains("]") {
            guard let number = Int(hostPort[hostPort.index(after: portColon)...]), (1...65535).contains(number) else {
                throw IMAPURLError(reason: "The mailbox URL's port is not a number from 1 to 65535.")
            }
            port = number
            hostPort = hostPort[..<portColon]
        }
        guard !hostPort.isEmpty, hostPort.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "%" && $0 != "?" && $0 != "#" }) else {
            throw IMAPURLError(reason: "The mailbox URL's host is missing or not a host name.")
        }
        // `;` and `?` would be read by curl as its own URL parameters (UID, search); the service adds those itself.
        guard !path.contains(";"), !path.contains("?"), !path.contains("#") else {
            throw IMAPURLError(reason: "The mailbox name may not contain ; ? or # (percent-encode them).")
        }
        guard let mailbox = percentDecoded(path.hasSuffix("/") ? path.dropLast() : path),
            mailbox.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != "\\" })
        else {
            throw IMAPURLError(reason: "The mailbox name must be printable ASCII without quotes or backslashes.")
        }
        self.host = String(hostPort)
        self.port = port
        self.user = user
        self.password = password
        self.mailbox = mailbox.isEmpty ? "INBOX" : mailbox
    }

    public var description: String {
        "\(tls ? "imaps" : "imap")://\(percentEncoded(user)):***@\(host):\(port)/\(percentEncoded(mailbox))"
    }

    /// What `dump` and debuggers show: no password.
    public var customMirror: Mirror { Mirror(self, children: ["url": description]) }

    /// The server's URL, no credentials, no mailbox.
    var serverURL: String { "\(tls ? "imaps" : "imap")://\(host):\(port)/" }

    /// The mailbox's URL (no credentials), pinned to `uidValidity`, with curl's `/;UID=` when a message is meant.
    func url(uidValidity: UInt32, uid: UInt32? = nil) -> String {
        serverURL + percentEncoded(mailbox) + ";UIDVALIDITY=\(uidValidity)" + (uid.map { "/;UID=\($0)" } ?? "")
    }
}

/// Why a mailbox URL was refused (its text never includes the URL, which may hold the password).
public struct IMAPURLError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}

/// The messages in a mailbox: its UIDVALIDITY, how many it holds, and the UIDs of the oldest (all, up to the limit
/// asked for), in ascending order.
public struct IMAPListing: Sendable, Equatable {
    /// UIDs are only meaningful with it: a mailbox recreated under the same name has another.
    public let uidValidity: UInt32
    /// How many messages the mailbox held (`STATUS MESSAGES`): more than `uids.count` when the limit cut the list.
    public let messages: Int
    public let uids: [UInt32]
}

/// One message's raw bytes as the server holds them (at most the limit asked for).
public struct IMAPMessage: Sendable {
    public let uid: UInt32
    public let bytes: [UInt8]
    /// The message is larger than `bytes` (the fetch stopped at the limit).
    public let truncated: Bool
}

/// A conversation with one IMAP mailbox over libcurl: list, fetch by UID, mark `\Deleted`, expunge. One easy handle
/// for all of it, so curl keeps one logged-in connection (with the mailbox selected) from call to call. Every call
/// after the listing is pinned to the listing's UIDVALIDITY: if the mailbox was recreated meanwhile, curl refuses
/// the call rather than fetch or delete another message under a reused UID. Used by one thread at a time.
public final class IMAPSession {
    public let mailbox: IMAPMailbox
    private var transfer: Transfer
    private let caFile: String?
    private let timeouts: CurlTimeouts
    /// Whether the server has UIDPLUS (`UID EXPUNGE`), once asked.
    private var uidPlus: Bool?

    /// The most bytes a listing's answer may have (a UID SEARCH of 100,000 messages is under 1 MB).
    static let maximumListingBytes = 16 * 1024 * 1024
    /// The most UIDs one listing returns (its SEARCH answer, one line, stays under curl's receive buffer).
    public static let maximumListing = 10_000
    /// curl's receive buffer (its maximum). With the default 16 KB, libcurl 7.88 garbles a `* SEARCH` line longer than
    /// the buffer (10,000 messages came back as 954 UIDs, some wrong): measured against Dovecot 2.3. It also fails an
    /// answer of a few hundred lines (an EXPUNGE of 200 to 400 messages) with "Too large response headers", which a
    /// larger buffer only postpones: hence `delete`, one message per answer.
    static let receiveBufferBytes = 512 * 1024

    /// `caFile`: the CA certificates to verify the server with instead of the system's (for a private CA).
    public init(mailbox: IMAPMailbox, timeouts: CurlTimeouts, caFile: String? = nil) throws(CurlError) {
        self.mailbox = mailbox
        self.caFile = caFile
        self.timeouts = timeouts
        transfer = try Transfer(timeouts: timeouts, protocols: "imap,imaps")
    }

    /// `STATUS (MESSAGES UIDVALIDITY)`, then `UID SEARCH ALL` (or `UID SEARCH 1:limit`, the oldest, in a larger
    /// mailbox) in the mailbox pinned to that UIDVALIDITY. The rest come in a later listing, once these are gone.
    public func listing(limit: Int = IMAPSession.maximumListing) throws(CurlError) -> IMAPListing {
        let status = try run(url: mailbox.serverURL, command: "STATUS \"\(mailbox.mailbox)\" (MESSAGES UIDVALIDITY)").body
        guard let uidValidity = Self.number(after: "UIDVALIDITY", in: status), let messages = Self.number(after: "MESSAGES", in: status) else {
            throw CurlError(code: -1, message: "The IMAP server did not say the mailbox's UIDVALIDITY and size")
        }
        guard messages > 0 else { return IMAPListing(uidValidity: uidValidity, messages: 0, uids: []) }
        let limit = min(max(1, limit), Self.maximumListing)
        let range = Int(messages) <= limit ? "ALL" : "1:\(limit)"
        let search = try run(url: mailbox.url(uidValidity: uidValidity), command: "UID SEARCH \(range)").body
        var uids: [UInt32] = []
        for line in search.split(separator: 0x0A) where line.starts(with: Array("* SEARCH".utf8)) {
            uids += line.dropFirst(8).split(whereSeparator: { $0 == 0x20 || $0 == 0x0D }).compactMap { UInt32(String(decoding: $0, as: UTF8.self)) }
        }
        return IMAPListing(uidValidity: uidValidity, messages: Int(messages), uids: uids.sorted())
    }

    /// The raw message (`UID FETCH n BODY[]`); past `maximumBytes` the transfer stops and the result says so.
    public func fetch(uid: UInt32, uidValidity: UInt32, maximumBytes: Int) throws(CurlError) -> IMAPMessage {
        let (body, truncated) = try run(
            url: mailbox.url(uidValidity: uidValidity, uid: uid), command: nil, bodyLimit: maximumBytes,
            stopAtLimit: true)
        return IMAPMessage(uid: uid, bytes: body, truncated: truncated)
    }

    /// `UID STORE n +FLAGS (\Deleted)`: call it only once the message is stored.
    public func markDeleted(uid: UInt32, uidValidity: UInt32) throws(CurlError) {
        _ = try run(url: mailbox.url(uidValidity: uidValidity), command: "UID STORE \(uid) +FLAGS (\\Deleted)")
    }

    /// `EXPUNGE`: removes every message marked `\Deleted`, by anyone. The server answers one line per message, and
    /// libcurl 7.88 fails an answer of a few hundred lines (the messages are expunged all the same): prefer `delete`.
    public func expunge(uidValidity: UInt32) throws(CurlError) {
        _ = try run(url: mailbox.url(uidValidity: uidValidity), command: "EXPUNGE")
    }

    /// Removes one message once it is stored: `UID STORE n +FLAGS (\Deleted)`, then `UID EXPUNGE n` (RFC 4315, which
    /// leaves other clients' `\Deleted` messages alone) or, on a server without UIDPLUS, `EXPUNGE`.
    public func delete(uid: UInt32, uidValidity: UInt32) throws(CurlError) {
        try markDeleted(uid: uid, uidValidity: uidValidity)
        if uidPlus == nil {
            let capabilities = try run(url: mailbox.serverURL, command: "CAPABILITY").body
            uidPlus = String(decoding: capabilities, as: UTF8.self).uppercased().split(whereSeparator: { $0 == " " || $0 == "\r" || $0 == "\n" })
                .contains("UIDPLUS")
        }
        _ = try run(url: mailbox.url(uidValidity: uidValidity), command: uidPlus == true ? "UID EXPUNGE \(uid)" : "EXPUNGE")
    }

    /// One command on the kept connection; errors carry no password.
    private func run(
        url: String, command: String?, bodyLimit: Int = IMAPSession.maximumListingBytes,
        stopAtLimit: Bool = false
    ) throws(CurlError) -> (body: [UInt8], truncated: Bool) {
        do throws(CurlError) {
            try transfer.reset()
            try transfer.set(CURLOPT_URL, url)
            try transfer.set(CURLOPT_USERNAME, mailbox.user)
            try transfer.set(CURLOPT_PASSWORD, mailbox.password)
            if let caFile { try transfer.set(CURLOPT_CAINFO, caFile) }
            try transfer.set(CURLOPT_BUFFERSIZE, Self.receiveBufferBytes)
            if let command { try transfer.set(CURLOPT_CUSTOMREQUEST, command) }
            // imap://: STARTTLS whenever the server offers it (verified like imaps://); imaps:// is TLS from the start.
            try transfer.set(CURLOPT_USE_SSL, Int(CURLUSESSL_TRY.rawValue))
            transfer.buffers.bodyLimit = bodyLimit
            transfer.buffers.abortWhenFull = stopAtLimit
            do throws(CurlError) {
                try transfer.perform()
            } catch {
                // The limit reached: curl stopped on our word (and will not reuse that connection).
                guard stopAtLimit, transfer.buffers.truncated, error.code == Int(CURLE_WRITE_ERROR.rawValue) else { throw error }
            }
            return (transfer.buffers.body, transfer.buffers.truncated)
        } catch {
            // Whatever state the connection was left in, the next call starts on a fresh handle and connection.
            if let fresh = try? Transfer(timeouts: timeouts, protocols: "imap,imaps") { transfer = fresh }
            throw CurlError(code: error.code, message: redacted(error.message))
        }
    }

    /// `text` without the password, raw or percent-encoded.
    private func redacted(_ text: String) -> String {
        var text = text
        for secret in Set([mailbox.password, percentEncoded(mailbox.password)]) where !secret.isEmpty {
            text = text.replacing(secret, with: "***")
        }
        return text
    }

    /// The number after `keyword` in a STATUS answer's list (`(MESSAGES 3 UIDVALIDITY 1796160704)`).
    static func number(after keyword: String, in answer: [UInt8]) -> UInt32? {
        let line = String(decoding: answer, as: UTF8.self)
        // After the last "(": the mailbox name before it may hold any word.
        let text = line.lastIndex(of: "(").map { line[$0...] } ?? line[...]
        guard let range = text.firstRange(of: keyword + " ") else { return nil }
        return UInt32(text[range.upperBound...].prefix { $0.isASCII && $0.isNumber })
    }
}

/// `%XX` decoded as UTF-8; nil when malformed.
private func percentDecoded(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    var utf8 = Array(text.utf8)[...]
    while let byte = utf8.popFirst() {
        guard byte == UInt8(ascii: "%") else {
            bytes.append(byte)
            continue
        }
        guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else { return nil }
        bytes.append(value)
        utf8 = utf8.dropFirst(2)
    }
    return String(validating: bytes, as: UTF8.self)
}

/// Every byte but the unreserved ones (RFC 3986) as `%XX`.
private func percentEncoded(_ text: String) -> String {
    var result = ""
    for byte in text.utf8 {
        let scalar = Unicode.Scalar(byte)
        if (byte < 0x80) && (scalar.properties.isAlphabetic || (byte >= 0x30 && byte <= 0x39) || "-._~".unicodeScalars.contains(scalar)) {
            result.unicodeScalars.append(scalar)
        } else {
            result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
    }
    return result
}
