import Foundation

/// How much one message may hold before it is refused.
public struct MailLimits: Sendable, Equatable {
    /// Largest message: 25 MB (25 MiB, so a mail a provider calls 25 MB always fits).
    public var maximumBytes = 25 * 1024 * 1024
    /// Deepest nesting of multiparts and forwarded messages (real mail rarely goes past 4).
    public var maximumDepth = 12
    /// Most entities (the message, each part and each forwarded message's parts).
    public var maximumParts = 500

    public init() {}
}

/// The MIME parser for received mail: RFC 5322 headers (folds, bare LF), multipart (alternative, mixed, related,
/// signed, report, digest, unknown ones as mixed), nested `message/rfc822`, base64 and quoted-printable, RFC 2047
/// and RFC 2231, the charsets of `Charset`, HTML to text. Pure: bytes in, a value out, no I/O. It is lenient
/// where real mail is sloppy and refuses only what `MailLimits` bounds, or data without a header; it never traps.
public struct MailParser: Sendable {
    public var limits: MailLimits

    public init(limits: MailLimits = MailLimits()) {
        self.limits = limits
    }

    /// The whole message: header fields, text and attachments.
    public func parse(_ message: [UInt8]) throws(MailParseError) -> InboundMessage {
        guard message.count <= limits.maximumBytes else { throw .tooLarge(bytes: message.count, limit: limits.maximumBytes) }
        var parts = 0
        let root = try Entity.build(message, Entity.topRange(message), depth: 0, defaultType: "text/plain", limits: limits, parts: &parts)
        guard !root.headers.fields.isEmpty else { throw .notAMessage }
        var result = Self.headerFields(root.headers, fallbackCharset: root.firstCharset())
        var extraction = Extraction()
        extraction.walk(root, wanted: true, inRelated: false, topLevel: true)
        result.text = extraction.texts.filter { !$0.isEmpty }.joined(separator: "\n\n")
        result.attachments = extraction.attachments
        return result
    }

    /// Only the top-level header fields (no body is read, whatever the size): enough to record a refused message.
    public func parseHeader(_ message: [UInt8]) throws(MailParseError) -> InboundMessage {
        let headers = message.withUnsafeBufferPointer { MailHeaders.parse($0, in: Entity.topRange(message)).headers }
        guard !headers.fields.isEmpty else { throw .notAMessage }
        let charset = ContentField(parsing: headers.value("content-type") ?? [])["charset"]
        return Self.headerFields(headers, fallbackCharset: charset)
    }

    static func headerFields(_ headers: MailHeaders, fallbackCharset: String?) -> InboundMessage {
        var message = InboundMessage()
        message.headers = headers
        func addresses(_ name: String) -> [MailAddress] {
            headers.values(name).flatMap { MailAddress.list($0, fallbackCharset: fallbackCharset) }
        }
        message.messageID = headers.value("message-id").flatMap { MessageIDs.list($0).first }
        message.inReplyTo = headers.value("in-reply-to").map { MessageIDs.list($0) } ?? []
        message.references = headers.value("references").map { MessageIDs.list($0) } ?? []
        message.from = addresses("from").first
        message.replyTo = addresses("reply-to")
        message.to = addresses("to")
        message.cc = addresses("cc")
        message.deliveredTo = addresses("delivered-to").map(\.address)
        message.originalTo = addresses("x-original-to").map(\.address)
        message.subject = headers.text("subject", fallbackCharset: fallbackCharset)
        message.date = headers.text("date").flatMap(MailDate.parse)
        func keyword(_ name: String) -> String? {
            guard let text = headers.text(name) else { return nil }
            let word = text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? text
            let trimmed = word.filter { $0 != " " && $0 != "\t" }.lowercased()
            return trimmed.isEmpty ? nil : trimmed
        }
        message.autoSubmitted = keyword("auto-submitted")
        message.precedence = keyword("precedence")
        return message
    }
}

/// One MIME entity: its header, its declared type and where its body is; a multipart's parts, a forwarded
/// message's inner message. Ranges index `source` (a forwarded message sent base64 gets a source of its own).
struct Entity {
    let source: [UInt8]
    let headers: MailHeaders
    let contentType: ContentField
    let disposition: ContentField?
    let body: Range<Int>
    var children: [Entity] = []
    /// The inner message of a `message/rfc822` part (zero or one).
    var inner: [Entity] = []
    /// The inner message's bytes (a `message/rfc822` part).
    var innerBytes: [UInt8] = []

    var type: String { contentType.value }

    /// The top-level message's range: leading blank lines and an mbox `From ` line skipped.
    static func topRange(_ message: [UInt8]) -> Range<Int> {
        var start = 0
        while start < message.count, message[start] == 0x0D || message[start] == 0x0A { start += 1 }
        if message.count - start > 5, message[start..<(start + 5)].elementsEqual("From ".utf8) {
            start = message[start...].firstIndex(of: 0x0A).map { $0 + 1 } ?? message.count
        }
        return start..<message.count
    }

    static func build(
        _ source: [UInt8], _ range: Range<Int>, depth: Int, defaultType: String, limits: MailLimits,
        parts: inout Int
    ) throws(MailParseError) -> Entity {
        parts += 1
        guard parts <= limits.maximumParts else { throw .tooManyParts(limit: limits.maximumParts) }
        let (headers, bodyStart) = source.withUnsafeBufferPointer { MailHeaders.parse($0, in: range) }
        var contentType = ContentField(parsing: headers.value("content-type") ?? [])
        if headers.value("content-type") == nil || !contentType.value.contains("/" as Character) {
            contentType = ContentField(parsing: Array(defaultType.utf8) + (contentType["charset"].map { Array("; charset=\"\($0)\"".utf8) } ?? []))
        }
        let disposition = headers.value("content-disposition").map { ContentField(parsing: $0) }
        var entity = Entity(source: source, headers: headers, contentType: contentType, disposition: disposition, body: bodyStart..<range.upperBound)

        if contentType.value.hasPrefix("multipart/"), let boundary = contentType["boundary"], !boundary.isEmpty,
            let ranges = source.withUnsafeBufferPointer({ splitMultipart($0, in: entity.body, boundary: Array(boundary.utf8)) })
        {
            guard depth + 1 <= limits.maximumDepth else { throw .tooDeep(limit: limits.maximumDepth) }
            let childDefault = contentType.value == "multipart/digest" ? "message/rfc822" : "text/plain"
            for childRange in ranges {
                entity.children.append(try build(source, childRange, depth: depth + 1, defaultType: childDefault, limits: limits, parts: &parts))
            }
            return entity
        }
        if contentType.value.hasPrefix("multipart/") {
            // No boundary, or none found: read the body as text rather than lose it.
            entity = Entity(
                source: source, headers: headers, contentType: ContentField(parsing: Array("text/plain".utf8)),
                disposition: disposition, body: entity.body)
        }
        if contentType.value == "message/rfc822" || contentType.value == "message/global" {
            guard depth + 1 <= limits.maximumDepth else { throw .tooDeep(limit: limits.maximumDepth) }
            let bytes = entity.decodedBody()
            let inner = try build(bytes, topRange(bytes), depth: depth + 1, defaultType: "text/plain", limits: limits, parts: &parts)
            if !inner.headers.fields.isEmpty {
                entity.inner = [inner]
                entity.innerBytes = bytes
            }
        }
        return entity
    }

    /// The body with its Content-Transfer-Encoding undone.
    func decodedBody() -> [UInt8] {
        let encoding = headers.text("content-transfer-encoding")?.lowercased() ?? ""
        let raw = source[body]
        if encoding.hasPrefix("base64") { return TransferEncoding.base64(raw) }
        if encoding.hasPrefix("quoted-printable") { return TransferEncoding.quotedPrintable(raw) }
        return Array(raw)
    }

    /// The first charset any part declares, for raw 8-bit header bytes (Foxmail writes GBK file names raw).
    func firstCharset() -> String? {
        if let charset = contentType["charset"] { return charset }
        for child in children { if let charset = child.firstCharset() { return charset } }
        return nil
    }

    /// The file name given for it, decoded, without any folder a sender's client left in it.
    var fileName: String? {
        guard let name = disposition?["filename"] ?? contentType["name"] else { return nil }
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let trimmed = EncodedWords.clean(last)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Body text rather than an attachment: text/plain or text/html, not sent as an attachment, not named.
    func isBodyText(topLevel: Bool) -> Bool {
        guard type == "text/plain" || type == "text/html" else { return false }
        if disposition?.value == "attachment" { return false }
        return topLevel || fileName == nil
    }

    /// The text of a body-text part: charset applied, format=flowed undone, HTML converted, LF line ends.
    func text() -> String {
        let bytes = decodedBody()
        var label = contentType["charset"]
        if label == nil && type == "text/html" { label = Entity.metaCharset(bytes) }
        var text = Entity.normalised(Charset.decode(bytes, label: label))
        if type == "text/html" { return HTMLText.text(text) }
        if contentType["format"]?.lowercased() == "flowed" { text = Entity.unflowed(text, deleteSpace: contentType["delsp"]?.lowercased() == "yes") }
        return text
    }

    /// How well a part serves as the text of an alternative: plain text with words 3, HTML 2, blank plain text 1.
    func textRank() -> Int {
        if type.hasPrefix("multipart/") {
            if type == "multipart/related" { return children.first.map { $0.textRank() } ?? 0 }
            return children.map { $0.textRank() }.max() ?? 0
        }
        guard isBodyText(topLevel: false) else { return 0 }
        if type == "text/html" { return 2 }
        return text().contains(where: { !$0.isWhitespace }) ? 3 : 1
    }

    /// LF line ends; NUL and other controls but tab out; blank lines and blanks trimmed at both ends.
    static func normalised(_ text: String) -> String {
        // On UTF-8 bytes: the characters touched are all ASCII.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var previousCR = false
        for byte in text.utf8 {
            switch byte {
            case 0x0D:
                bytes.append(0x0A)
                previousCR = true
                continue
            case 0x0A: if !previousCR { bytes.append(0x0A) }
            case 0x09: bytes.append(byte)
            case 0..<0x20, 0x7F: break
            default: bytes.append(byte)
            }
            previousCR = false
        }
        func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A }
        let start = bytes.firstIndex { !blank($0) } ?? bytes.endIndex
        let end = bytes.lastIndex { !blank($0) }.map { $0 + 1 } ?? start
        return String(decoding: bytes[start..<max(start, end)], as: UTF8.self)
    }

    /// RFC 3676: a line ending in a space continues on the next (same quote depth); space-stuffing removed.
    static func unflowed(_ text: String, deleteSpace: Bool) -> String {
        var lines: [String] = []
        var open = false  // the last line flows into the next
        var openDepth = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let depth = raw.prefix { $0 == ">" }.count
            var content = raw.dropFirst(depth)
            if content.hasPrefix(" ") { content = content.dropFirst() }
            let flowed = content.hasSuffix(" ") && content != "-- "
            if flowed && deleteSpace { content = content.dropLast() }
            if open && depth == openDepth, !lines.isEmpty {
                lines[lines.count - 1] += content
            } else {
                lines.append(String(repeating: ">", count: depth) + (depth > 0 ? " " : "") + content)
            }
            open = flowed
            openDepth = depth
        }
        return lines.joined(separator: "\n")
    }

    /// An HTML part's `<meta charset=…>` or `http-equiv` charset, from its first 2 KB.
    static func metaCharset(_ bytes: [UInt8]) -> String? {
        let head = bytes.prefix(2048).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        guard let found = head.firstRange(of: Array("charset=".utf8)) else { return nil }
        let name = head[found.upperBound...].drop { $0 == 0x22 || $0 == 0x27 || $0 == 0x20 }
            .prefix { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F }
        return name.isEmpty ? nil : String(decoding: name, as: UTF8.self)
    }
}

/// The parts of a multipart body: between `--boundary` lines, up to `--boundary--` (or the end when it is missing);
/// nil when no delimiter line is there. The line break before a delimiter belongs to the delimiter.
func splitMultipart(_ bytes: UnsafeBufferPointer<UInt8>, in range: Range<Int>, boundary: [UInt8]) -> [Range<Int>]? {
    let delimiter: [UInt8] = [0x2D, 0x2D] + boundary
    var parts: [Range<Int>] = []
    var partStart: Int?
    var line = range.lowerBound
    let end = range.upperBound
    while line < end {
        let lineEnd = firstLineFeed(bytes, from: line, to: end)
        let next = lineEnd < end ? lineEnd + 1 : end
        if bytes[line] == 0x2D, lineEnd - line >= delimiter.count,
            UnsafeBufferPointer(rebasing: bytes[line..<(line + delimiter.count)]).elementsEqual(delimiter)
        {
            var after = line + delimiter.count
            let closing = after + 1 < lineEnd && bytes[after] == 0x2D && bytes[after + 1] == 0x2D
            if closing { after += 2 }
            // Only blanks (transport padding) may follow the boundary on its line.
            if (after..<lineEnd).allSatisfy({ bytes[$0] == 0x20 || bytes[$0] == 0x09 || bytes[$0] == 0x0D }) {
                if let start = partStart {
                    var partEnd = line
                    if partEnd > start, bytes[partEnd - 1] == 0x0A { partEnd -= 1 }
                    if partEnd > start, bytes[partEnd - 1] == 0x0D { partEnd -= 1 }
                    parts.append(start..<partEnd)
                }
                if closing { return parts }
                partStart = next
            }
        }
        line = next
    }
    guard let start = partStart else { return nil }
    parts.append(start..<end)
    return parts
}

/// What a walk over the entity tree gathers: body text pieces and attachments.
struct Extraction {
    var texts: [String] = []
    var attachments: [MailAttachment] = []

    /// `wanted`: this entity is on the path of the chosen text (not a losing alternative).
    mutating func walk(_ entity: Entity, wanted: Bool, inRelated: Bool, topLevel: Bool) {
        if !entity.children.isEmpty {
            switch entity.type {
            case "multipart/alternative":
                // The prefer-text/plain rule: the best-ranked alternative (the first of equals) gives the text.
                let ranks = entity.children.map { $0.textRank() }
                let best = ranks.indices.max { ranks[$0] < ranks[$1] || (ranks[$0] == ranks[$1] && $0 > $1) } ?? 0
                for (index, child) in entity.children.enumerated() {
                    walk(child, wanted: wanted && index == best, inRelated: inRelated, topLevel: false)
                }
            case "multipart/related":
                // The root is the part named by `start`, else the first; the others are what it shows inline.
                let start = entity.contentType["start"].flatMap { MessageIDs.list(Array($0.utf8)).first }
                let root =
                    start.flatMap { id in entity.children.firstIndex { $0.headers.value("content-id").flatMap { MessageIDs.list($0).first } == id } }
                    ?? 0
                for (index, child) in entity.children.enumerated() {
                    walk(child, wanted: wanted && index == root, inRelated: index != root, topLevel: false)
                }
            default:
                for child in entity.children { walk(child, wanted: wanted, inRelated: inRelated, topLevel: false) }
            }
            return
        }
        if let inner = entity.inner.first {
            attachments.append(
                MailAttachment(
                    fileName: entity.fileName ?? inner.headers.text("subject").map { "\($0).eml" },
                    mediaType: "message/rfc822", bytes: entity.innerBytes,
                    contentID: contentID(entity), inline: entity.disposition?.value != "attachment"))
            var nested = Extraction()
            nested.walk(inner, wanted: wanted, inRelated: false, topLevel: true)
            if wanted {
                let body = nested.texts.filter { !$0.isEmpty }.joined(separator: "\n\n")
                texts.append(Extraction.forwardedHeading(inner.headers) + (body.isEmpty ? "" : "\n\n" + body))
            }
            attachments += nested.attachments
            return
        }
        if entity.isBodyText(topLevel: topLevel) && !inRelated {
            if wanted { texts.append(entity.text()) }
            return
        }
        let bytes = entity.decodedBody()
        guard !bytes.isEmpty else { return }
        let mediaType = entity.type.contains("/" as Character) ? entity.type : "application/octet-stream"
        attachments.append(
            MailAttachment(
                fileName: entity.fileName, mediaType: mediaType, bytes: bytes, contentID: contentID(entity),
                inline: inRelated || entity.disposition?.value == "inline"))
    }

    private func contentID(_ entity: Entity) -> String? {
        entity.headers.value("content-id").flatMap { MessageIDs.list($0).first }
    }

    /// The lines a mail client writes above a forwarded message.
    static func forwardedHeading(_ headers: MailHeaders) -> String {
        var lines = ["---------- Forwarded message ----------"]
        for name in ["From", "Date", "Subject", "To"] {
            if let value = headers.text(name), !value.isEmpty { lines.append("\(name): \(value)") }
        }
        return lines.joined(separator: "\n")
    }
}
