import Foundation

/// What a received message says, parsed: the threading ids, the parties, the decoded subject, the plain text and
/// the attachments. Text only: nothing in it is meant to be rendered as HTML.
public struct InboundMessage: Sendable, Equatable {
    /// `Message-ID`, without angle brackets.
    public var messageID: String?
    /// The ids in `In-Reply-To`.
    public var inReplyTo: [String] = []
    /// The ids in `References`, oldest first as written.
    public var references: [String] = []
    /// The first mailbox of `From`.
    public var from: MailAddress?
    /// `Reply-To`'s mailboxes.
    public var replyTo: [MailAddress] = []
    /// `To`'s mailboxes.
    public var to: [MailAddress] = []
    /// `Cc`'s mailboxes.
    public var cc: [MailAddress] = []
    /// Every `Delivered-To` address (one per hop that wrote one).
    public var deliveredTo: [String] = []
    /// Every `X-Original-To` address.
    public var originalTo: [String] = []
    /// The subject, decoded.
    public var subject: String?
    /// `Date`, when it reads as one.
    public var date: Date?
    /// `Auto-Submitted`'s keyword, lower case (`auto-replied`, `no`), without parameters.
    public var autoSubmitted: String?
    /// `Precedence`, lower case (`bulk`, `list`, `junk`).
    public var precedence: String?
    /// The text: the text/plain part of each alternative (an HTML-only part converted), body parts joined in order,
    /// a forwarded message's text after a separator; LF line ends.
    public var text: String = ""
    /// Every part that is not body text, in order, forwarded messages' attachments included.
    public var attachments: [MailAttachment] = []
    /// The top-level header fields, raw, for anything not above.
    public var headers: MailHeaders = MailHeaders(fields: [])

    public init() {}

    /// Every recipient address the message names (`To`, `Cc`, `Delivered-To`, `X-Original-To`), each once, in that order.
    public var recipientAddresses: [String] {
        var seen: Set<String> = []
        return (to.map(\.address) + cc.map(\.address) + deliveredTo + originalTo).filter { seen.insert($0.lowercased()).inserted }
    }

    /// RFC 3834 and the contract (api.md v1.3 "Inbound hygiene"): `Auto-Submitted` other than `no`, `Precedence` bulk,
    /// junk or list, or a `List-Id` (RFC 2919: a mailing list's copy).
    public var isAutomatic: Bool {
        if let autoSubmitted, autoSubmitted != "no" { return true }
        if headers.value("list-id") != nil { return true }
        return ["bulk", "junk", "list"].contains(precedence ?? "")
    }
}

/// One attachment (or inline picture): its decoded file name, its declared media type and its bytes.
public struct MailAttachment: Sendable, Equatable {
    /// The file name (`Content-Disposition` filename, else `Content-Type` name), decoded; nil when none was given.
    public var fileName: String?
    /// The declared media type, lower case, without parameters (`image/jpeg`); not yet sniffed.
    public var mediaType: String
    /// The decoded content.
    public var bytes: [UInt8]
    /// `Content-ID` without angle brackets (a picture the HTML refers to), if any.
    public var contentID: String?
    /// Whether it was sent inline (`Content-Disposition: inline`, or a part of a multipart/related).
    public var inline: Bool

    public init(fileName: String?, mediaType: String, bytes: [UInt8], contentID: String? = nil, inline: Bool = false) {
        self.fileName = fileName
        self.mediaType = mediaType
        self.bytes = bytes
        self.contentID = contentID
        self.inline = inline
    }
}

/// Why a message was refused: a stable `reason` (kept with the unmatched mail) and a sentence.
public enum MailParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Larger than the limit.
    case tooLarge(bytes: Int, limit: Int)
    /// Multiparts or forwarded messages nested deeper than the limit.
    case tooDeep(limit: Int)
    /// More parts than the limit.
    case tooManyParts(limit: Int)
    /// No header field at all: not a message.
    case notAMessage

    /// The stable reason code.
    public var reason: String {
        switch self {
        case .tooLarge: "too_large"
        case .tooDeep: "nested_too_deep"
        case .tooManyParts: "too_many_parts"
        case .notAMessage: "not_a_message"
        }
    }

    public var description: String {
        switch self {
        case .tooLarge(let bytes, let limit): "The message has \(bytes) bytes, more than the \(limit) accepted."
        case .tooDeep(let limit): "The message nests parts more than \(limit) deep."
        case .tooManyParts(let limit): "The message has more than \(limit) parts."
        case .notAMessage: "The data has no header fields: it is not a message."
        }
    }
}
