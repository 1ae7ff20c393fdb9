import Foundation
import HTTPServer

/// An RFC 5322 / MIME message with one UTF-8 text/plain part: the subject as an RFC 2047 encoded word, the body
/// base64 (safe for any script and any line length), a `Message-ID` from the outbox id, so a retried message is
/// recognisably the same one.
public struct MIMEMessage: Sendable {
    public var from: String
    public var to: String
    public var subject: String
    public var body: String
    /// The stable message id (`<id@domain>` is built from it).
    public var messageID: UUID
    public var date: Date
    /// The domain of the Message-ID (the sender's).
    public var domain: String
    /// Where the customer's reply goes (the case's `+token` address); nil writes no `Reply-To`.
    public var replyTo: String?

    public init(from: String, to: String, subject: String, body: String, messageID: UUID, date: Date) {
        self.from = from
        self.to = to
        self.subject = subject
        self.body = body
        self.messageID = messageID
        self.date = date
        domain = from.split(separator: "@").last.map(String.init) ?? "reclaim.invalid"
    }

    /// The Message-ID header's value.
    public var messageIDHeader: String { "<\(messageID.uuidString.lowercased())@\(domain)>" }

    /// RFC 5322 date-time in UTC, e.g. `Tue, 01 Dec 2026 10:37:33 +0000`.
    public static func rfc5322Date(_ date: Date) -> String {
        HTTPDate.format(Int(date.timeIntervalSince1970.rounded(.down)), zone: "+0000")
    }

    /// An RFC 2047 encoded word (`=?UTF-8?B?…?=`) when the text is not plain ASCII, split to keep lines short.
    public static func encodedWord(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) && text.count < 70 { return text }
        // Whole characters per word (never a split UTF-8 sequence), at most 45 bytes each (60 base64 characters).
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45 {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=") }
        return words.joined(separator: "\r\n ")
    }

    /// The whole message, CRLF line ends, ready for SMTP DATA or an .eml file.
    public func rendered() -> [UInt8] {
        // Header values come from the configuration and validated addresses; a line break would forge headers.
        func clean(_ value: String) -> String {
            value.utf8.contains { $0 == 0x0D || $0 == 0x0A } ? String(decoding: value.utf8.filter { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self) : value
        }
        // Every line break as CRLF: a bare LF gets its CR, a CRLF stays one (a lone CR is left alone).
        var normalizedBody: [UInt8] = []
        normalizedBody.reserveCapacity(body.utf8.count + body.utf8.count / 32)
        var afterCR = false
        for byte in body.utf8 {
            if byte == 0x0A && !afterCR { normalizedBody.append(0x0D) }
            normalizedBody.append(byte)
            afterCR = byte == 0x0D
        }
        let encodedBody = Data(normalizedBody).base64EncodedString(options: [
            .lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed,
        ])
        let headers =
            [
                "From: \(clean(from))",
                "To: \(clean(to))",
            ] + (replyTo.map { ["Reply-To: \(clean($0))"] } ?? []) + [
                "Subject: \(Self.encodedWord(clean(subject)))",
                "Date: \(Self.rfc5322Date(date))",
                "Message-ID: \(messageIDHeader)",
                "MIME-Version: 1.0",
                "Content-Type: text/plain; charset=UTF-8",
                "Content-Transfer-Encoding: base64",
                "Auto-Submitted: auto-generated",
            ]
        return Array((headers.joined(separator: "\r\n") + "\r\n\r\n" + encodedBody + "\r\n").utf8)
    }
}
