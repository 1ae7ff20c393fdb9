import Foundation

/// RFC 2047 encoded words (`=?charset?B|Q?text?=`) in header text, read as mail clients read them: the blank
/// between two adjacent words dropped, adjacent words in one charset joined before decoding (senders split a
/// multi-byte character between words), a `*language` suffix ignored, words inside quotes and words stuck to text
/// decoded too. Anything that is not a well-formed word stays as written.
public enum EncodedWords {
    /// `value` as text: words decoded, other bytes as UTF-8 (else in `fallbackCharset`), control characters as
    /// spaces, trimmed.
    public static func decode<Bytes: Collection>(_ value: Bytes, fallbackCharset: String? = nil) -> String where Bytes.Element == UInt8 {
        clean(decodeKeepingSpaces(Array(value), fallbackCharset: fallbackCharset))
    }

    /// One run of the value: plain bytes (no charset), or adjacent encoded words' decoded bytes and their charset.
    private struct Segment {
        var charset: String?
        var bytes: [UInt8]
    }

    /// The decoded value, blanks and controls untouched.
    static func decodeKeepingSpaces(_ bytes: [UInt8], fallbackCharset: String?) -> String {
        guard bytes.count >= 8, containsWordStart(bytes) else { return plainText(bytes, fallbackCharset: fallbackCharset) }
        var segments: [Segment] = []
        var plain: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "="), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "?"),
                let (word, end) = encodedWord(bytes, at: index)
            {
                // Blanks between two encoded words are folding, not text.
                let onlyBlanks = plain.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
                if !plain.isEmpty && !(onlyBlanks && segments.last?.charset != nil) { segments.append(Segment(charset: nil, bytes: plain)) }
                plain = []
                if let last = segments.last, last.charset == word.charset {
                    segments[segments.count - 1].bytes += word.bytes
                } else {
                    segments.append(Segment(charset: word.charset, bytes: word.bytes))
                }
                index = end
                continue
            }
            plain.append(bytes[index])
            index += 1
        }
        if !plain.isEmpty { segments.append(Segment(charset: nil, bytes: plain)) }
        return segments.map { segment in
            segment.charset.map { Charset.decode(segment.bytes, label: $0) } ?? plainText(segment.bytes, fallbackCharset: fallbackCharset)
        }.joined()
    }

    private static func containsWordStart(_ bytes: [UInt8]) -> Bool {
        for index in 0..<(bytes.count - 1) where bytes[index] == UInt8(ascii: "=") && bytes[index + 1] == UInt8(ascii: "?") { return true }
        return false
    }

    /// Raw header bytes: UTF-8 when well-formed (RFC 6532), else the fallback charset (Windows-1252 when none).
    static func plainText(_ bytes: [UInt8], fallbackCharset: String?) -> String {
        if bytes.allSatisfy({ $0 < 0x80 }) || Charset.isUTF8(bytes) { return String(decoding: bytes, as: UTF8.self) }
        return Charset.decode(bytes, label: fallbackCharset ?? "windows-1252")
    }

    /// The word starting at `start` (its `=?`), decoded, and the index after its `?=`; nil when it is not one.
    private static func encodedWord(_ bytes: [UInt8], at start: Int) -> (word: (charset: String, bytes: [UInt8]), end: Int)? {
        var index = start + 2
        let charsetStart = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "?") {
            let byte = bytes[index]
            guard byte > 0x20, byte < 0x7F, index - charsetStart < 40 else { return nil }
            index += 1
        }
        guard index > charsetStart, index + 2 < bytes.count, bytes[index + 2] == UInt8(ascii: "?") else { return nil }
        let charset = String(decoding: bytes[charsetStart..<index], as: UTF8.self).lowercased()
        let encoding = bytes[index + 1] | 0x20
        guard encoding == UInt8(ascii: "b") || encoding == UInt8(ascii: "q") else { return nil }
        let textStart = index + 3
        var textEnd = textStart
        // The text runs to the next "?=" (blanks tolerated: some senders leave them in Q words).
        while textEnd + 1 < bytes.count, !(bytes[textEnd] == UInt8(ascii: "?") && bytes[textEnd + 1] == UInt8(ascii: "=")) {
            if bytes[textEnd] == 0x0D || bytes[textEnd] == 0x0A { return nil }
            textEnd += 1
        }
        guard textEnd + 1 < bytes.count else { return nil }
        let text = bytes[textStart..<textEnd]
        let decoded = encoding == UInt8(ascii: "b") ? TransferEncoding.base64(text) : qDecode(text)
        return ((charset, decoded), textEnd + 2)
    }

    /// The Q encoding: `_` is a space, `=XX` a byte.
    private static func qDecode(_ text: ArraySlice<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            if byte == UInt8(ascii: "_") {
                output.append(0x20)
            } else if byte == UInt8(ascii: "="), index + 2 < text.endIndex,
                let high = TransferEncoding.hexValue(text[index + 1]), let low = TransferEncoding.hexValue(text[index + 2])
            {
                output.append(high << 4 | low)
                index += 2
            } else {
                output.append(byte)
            }
            index += 1
        }
        return output
    }

    /// Control characters (a decoded word may carry CR, LF or NUL) as spaces; blanks trimmed at both ends.
    static func clean(_ text: String) -> String {
        // On UTF-8 bytes: every control character and blank is ASCII, except C1 controls (U+0080–U+009F: C2 80–C2 9F).
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F {
                bytes.append(0x20)
            } else if previous == 0xC2 && byte >= 0x80 && byte < 0xA0 {
                bytes[bytes.count - 1] = 0x20
            } else {
                bytes.append(byte)
            }
            previous = byte
        }
        let start = bytes.firstIndex { $0 != 0x20 } ?? bytes.endIndex
        let end = bytes.lastIndex { $0 != 0x20 }.map { $0 + 1 } ?? start
        return String(decoding: bytes[start..<max(start, end)], as: UTF8.self)
    }
}
