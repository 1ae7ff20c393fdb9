import Foundation

/// One header field, unfolded: the name as written and the value's bytes (the CRLF of each fold removed, the
/// folding blank kept), not yet decoded.
public struct MailHeaderField: Sendable, Equatable {
    /// The field name as written (`Message-ID`).
    public let name: String
    /// The raw value after the colon.
    public let value: [UInt8]
    /// The name lower-cased, for look-ups.
    let key: String
}

/// An RFC 5322 header block: fields in order, looked up by name regardless of case.
public struct MailHeaders: Sendable, Equatable {
    /// Every field, in the order written.
    public let fields: [MailHeaderField]

    /// The first field called `name`, raw.
    public func value(_ name: String) -> [UInt8]? {
        let key = name.lowercased()
        return fields.first { $0.key == key }?.value
    }

    /// Every field called `name`, raw, in order.
    public func values(_ name: String) -> [[UInt8]] {
        let key = name.lowercased()
        return fields.filter { $0.key == key }.map(\.value)
    }

    /// The first field called `name` as text: RFC 2047 words decoded, raw 8-bit bytes read as UTF-8 (else in
    /// `fallbackCharset`), control characters as spaces, trimmed. nil when there is no such field.
    public func text(_ name: String, fallbackCharset: String? = nil) -> String? {
        value(name).map { EncodedWords.decode($0, fallbackCharset: fallbackCharset) }
    }

    /// Reads the header block starting at `range.lowerBound`: up to the first empty line (CRLF or a bare LF), or up
    /// to the first line that is neither a field nor a fold (a missing blank line: that line starts the body).
    /// Returns the headers and where the body starts.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, in range: Range<Int>) -> (headers: MailHeaders, bodyStart: Int) {
        var fields: [MailHeaderField] = []
        var name: String?
        var value: [UInt8] = []
        func finish() {
            if let name { fields.append(MailHeaderField(name: name, value: value, key: name.lowercased())) }
            name = nil
            value = []
        }
        var position = range.lowerBound
        let end = range.upperBound
        while position < end {
            let lineEnd = firstLineFeed(bytes, from: position, to: end)
            let next = lineEnd < end ? lineEnd + 1 : end
            var contentEnd = lineEnd
            if contentEnd > position && bytes[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            if contentEnd == position {
                finish()
                return (MailHeaders(fields: fields), next)
            }
            let first = bytes[position]
            if first == 0x20 || first == 0x09 {
                // A fold: the line belongs to the field before it (a fold before any field is dropped).
                if name != nil { value.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<contentEnd])) }
                position = next
                continue
            }
            guard let colon = (position..<contentEnd).first(where: { bytes[$0] == UInt8(ascii: ":") }) else {
                finish()
                return (MailHeaders(fields: fields), position)
            }
            var nameEnd = colon
            while nameEnd > position, bytes[nameEnd - 1] == 0x20 || bytes[nameEnd - 1] == 0x09 { nameEnd -= 1 }
            let nameBytes = UnsafeBufferPointer(rebasing: bytes[position..<nameEnd])
            guard !nameBytes.isEmpty, nameBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                finish()
                return (MailHeaders(fields: fields), position)
            }
            finish()
            name = String(decoding: nameBytes, as: UTF8.self)
            value = Array(UnsafeBufferPointer(rebasing: bytes[(colon + 1)..<contentEnd]))
            position = next
        }
        finish()
        return (MailHeaders(fields: fields), end)
    }
}

/// The index of the next LF in `bytes[from..<to]`, or `to`.
func firstLineFeed(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int {
    guard from < to, let base = bytes.baseAddress else { return to }
    guard let found = memchr(base + from, 0x0A, to - from) else { return to }
    return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
}
