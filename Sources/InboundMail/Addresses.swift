import Foundation

/// A mailbox from an address header: the address as written (no angle brackets, no comments) and the display
/// name, decoded.
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    /// `local@domain` as written.
    public let address: String
    /// The display name (`"Ada Lovelace" <…>`, or an old-style `addr (Ada)` comment), decoded; nil when none.
    public let displayName: String?

    public init(address: String, displayName: String? = nil) {
        self.address = address
        self.displayName = displayName
    }

    public var description: String { displayName.map { "\($0) <\(address)>" } ?? address }

    /// The mailboxes of an RFC 5322 address list, leniently: groups (`Undisclosed recipients:;`) flattened, comments
    /// and routes dropped, a `mailto:` prefix dropped, a bare `Name addr@x` split; entries with no address skipped.
    public static func list<Bytes: Collection>(_ raw: Bytes, fallbackCharset: String? = nil) -> [MailAddress] where Bytes.Element == UInt8 {
        let bytes = Array(raw)
        var result: [MailAddress] = []
        var phrase: [UInt8] = []  // display name (or bare address) bytes, quotes removed
        var comment: [UInt8]?  // the first comment's text, a name of last resort
        var angle: [UInt8]?  // what was between < and >
        func finish() {
            defer {
                phrase = []
                comment = nil
                angle = nil
            }
            var name = clean(EncodedWords.decodeKeepingSpaces(phrase, fallbackCharset: fallbackCharset))
            var address: String
            if let angle {
                address = String(decoding: angle.filter { $0 > 0x20 }, as: UTF8.self)
                // An obsolete source route (`<@relay,@relay:user@host>`).
                if address.hasPrefix("@"), let colon = address.firstIndex(of: ":") { address = String(address[address.index(after: colon)...]) }
            } else {
                // No angle brackets: the last word with an @ is the address, the words before it the name.
                let words = name.split(separator: " ")
                guard let at = words.lastIndex(where: { $0.contains("@" as Character) }) ?? (words.count == 1 ? 0 : nil) else { return }
                address = String(words[at])
                name = words[..<at].joined(separator: " ")
            }
            if address.lowercased().hasPrefix("mailto:") { address = String(address.dropFirst(7)) }
            guard !address.isEmpty else { return }
            if name.isEmpty, let comment { name = clean(EncodedWords.decodeKeepingSpaces(comment, fallbackCharset: fallbackCharset)) }
            if name == address || name == "<\(address)>" { name = "" }
            result.append(MailAddress(address: address, displayName: name.isEmpty ? nil : name))
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
                    phrase.append(bytes[index])
                    index += 1
                }
                index += 1
                continue
            case UInt8(ascii: "("):
                let end = ContentField.skipComment(bytes, from: index)
                if comment == nil { comment = Array(bytes[min(index + 1, end)..<max(index + 1, end - 1)]) }
                // A comment inside a word (`thief(x)@example.com`) is dropped whole: a space there would cut the address.
                let inWord =
                    phrase.last.map { $0 != 0x20 && $0 != 0x09 } == true && end < bytes.count
                    && ![0x20, 0x09, UInt8(ascii: "<"), UInt8(ascii: ","), UInt8(ascii: ";")].contains(bytes[end])
                if !inWord { phrase.append(0x20) }
                index = end
                continue
            case UInt8(ascii: "<"):
                var content: [UInt8] = []
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: ">") {
                    content.append(bytes[index])
                    index += 1
                }
                angle = content
                index += 1
                continue
            case UInt8(ascii: ","), UInt8(ascii: ";"):
                finish()
            case UInt8(ascii: ":") where angle == nil:
                phrase = []  // a group's name
                comment = nil
            default:
                phrase.append(byte)
            }
            index += 1
        }
        finish()
        return result
    }

    /// Blanks collapsed and trimmed, controls as spaces.
    private static func clean(_ text: String) -> String {
        EncodedWords.clean(text).split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }
}

/// `Message-ID`, `In-Reply-To` and `References` values.
public enum MessageIDs {
    /// The ids in a field (without angle brackets, blanks removed), in order, each once; comments and quoted
    /// phrases (`In-Reply-To: Your message of "…" <id>`) skipped. A value without brackets gives its words with an `@`.
    public static func list<Bytes: Collection>(_ raw: Bytes) -> [String] where Bytes.Element == UInt8 {
        let bytes = Array(raw)
        var ids: [String] = []
        var seen: Set<String> = []
        var sawAngle = false
        var index = 0
        func add(_ id: [UInt8]) {
            let text = String(decoding: id.filter { $0 > 0x20 }, as: UTF8.self)
            if !text.isEmpty && text.count <= 998 && seen.insert(text).inserted { ids.append(text) }
        }
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "("):
                index = ContentField.skipComment(bytes, from: index)
                continue
            case UInt8(ascii: "\""):
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\") { index += 1 }
                    index += 1
                }
            case UInt8(ascii: "<"):
                sawAngle = true
                let start = index + 1
                while index < bytes.count, bytes[index] != UInt8(ascii: ">") { index += 1 }
                add(Array(bytes[min(start, bytes.count)..<min(index, bytes.count)]))
            default: break
            }
            index += 1
        }
        if !sawAngle {
            for word in bytes.split(whereSeparator: { $0 <= 0x20 || $0 == UInt8(ascii: ",") }) where word.contains(UInt8(ascii: "@")) {
                add(Array(word))
            }
        }
        return ids
    }
}
