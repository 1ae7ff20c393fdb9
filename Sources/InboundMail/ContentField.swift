import Foundation

/// A `Content-Type` or `Content-Disposition` value: the lower-cased token (`text/plain`, `attachment`) and its
/// parameters, names lower-cased and values decoded: RFC 2231 (`filename*=charset'lang'%XX`, continuations
/// `filename*0*=` / `filename*1=`, assembled in order and decoded once, so a character split between two pieces
/// survives), quoted strings with their escapes, and the RFC 2047 words Outlook and Gmail put inside quotes.
public struct ContentField: Sendable, Equatable {
    /// The lower-cased token before the first `;` (empty when missing).
    public let value: String
    /// Decoded parameters by lower-cased name.
    public let parameters: [String: String]

    /// Parses a raw field value; raw 8-bit bytes are read as UTF-8, else in `fallbackCharset`.
    public init<Bytes: Collection>(parsing raw: Bytes, fallbackCharset: String? = nil) where Bytes.Element == UInt8 {
        let bytes = Array(raw)
        var index = 0
        var token: [UInt8] = []
        while index < bytes.count, bytes[index] != UInt8(ascii: ";") {
            let byte = bytes[index]
            if byte == UInt8(ascii: "(") {
                index = ContentField.skipComment(bytes, from: index)
                continue
            }
            if byte > 0x20 && byte != UInt8(ascii: "\"") { token.append(byte) }
            index += 1
        }
        value = String(decoding: token, as: UTF8.self).lowercased()

        // name → pieces (continuation number, extended?, raw value bytes); a plain name is piece -1.
        var pieces: [String: [(number: Int, extended: Bool, bytes: [UInt8])]] = [:]
        while index < bytes.count {
            index += 1  // the ";"
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0D || bytes[index] == 0x0A { index += 1 }
            var name: [UInt8] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: "="), bytes[index] != UInt8(ascii: ";") {
                if bytes[index] > 0x20 { name.append(bytes[index]) }
                index += 1
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { continue }
            index += 1
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
            var valueBytes: [UInt8] = []
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
                    valueBytes.append(bytes[index])
                    index += 1
                }
                // Skip the closing quote and anything up to the next ";".
                while index < bytes.count, bytes[index] != UInt8(ascii: ";") { index += 1 }
            } else {
                // Unquoted: to the next ";" (a file name with blanks in it, unquoted, is common enough).
                while index < bytes.count, bytes[index] != UInt8(ascii: ";") {
                    valueBytes.append(bytes[index])
                    index += 1
                }
                while let last = valueBytes.last, last == 0x20 || last == 0x09 || last == 0x0D || last == 0x0A { valueBytes.removeLast() }
            }
            var key = String(decoding: name, as: UTF8.self).lowercased()
            guard !key.isEmpty else { continue }
            var extended = false
            if key.hasSuffix("*") {
                extended = true
                key.removeLast()
            }
            var number = -1
            if let star = key.lastIndex(of: "*"), let piece = Int(key[key.index(after: star)...]), piece >= 0, piece < 1000 {
                number = piece
                key = String(key[..<star])
            } else if extended {
                number = -2  // `name*=`: a single extended value, preferred to a plain `name=`
            }
            pieces[key, default: []].append((number, extended, valueBytes))
        }

        var parameters: [String: String] = [:]
        for (name, list) in pieces {
            let continued = list.filter { $0.number >= 0 }.sorted { $0.number < $1.number }
            if !continued.isEmpty {
                parameters[name] = ContentField.assemble(continued.map { ($0.extended, $0.bytes) }, fallbackCharset: fallbackCharset)
            } else if let single = list.first(where: { $0.number == -2 }) {
                parameters[name] = ContentField.assemble([(true, single.bytes)], fallbackCharset: fallbackCharset)
            } else if let plain = list.first {
                parameters[name] = EncodedWords.decode(plain.bytes, fallbackCharset: fallbackCharset)
            }
        }
        self.parameters = parameters
    }

    /// The parameter `name` (lower case), if present.
    public subscript(_ name: String) -> String? { parameters[name] }

    /// RFC 2231 pieces in order: the first extended piece may start `charset'language'`; extended pieces are
    /// percent-decoded; all bytes are joined, then decoded in that charset.
    private static func assemble(_ pieces: [(extended: Bool, bytes: [UInt8])], fallbackCharset: String?) -> String {
        var charset: String?
        var joined: [UInt8] = []
        for (offset, piece) in pieces.enumerated() {
            var bytes = piece.bytes[...]
            if piece.extended && offset == 0 {
                let quotes = bytes.indices.filter { bytes[$0] == UInt8(ascii: "'") }
                if quotes.count >= 2 {
                    let label = String(decoding: bytes[bytes.startIndex..<quotes[0]], as: UTF8.self)
                    charset = label.isEmpty ? nil : label
                    bytes = bytes[(quotes[1] + 1)...]
                }
            }
            joined += piece.extended ? percentDecoded(bytes) : Array(bytes)
        }
        if let charset { return EncodedWords.clean(Charset.decode(joined, label: charset)) }
        return EncodedWords.decode(joined, fallbackCharset: fallbackCharset)
    }

    private static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
                let high = TransferEncoding.hexValue(bytes[index + 1]), let low = TransferEncoding.hexValue(bytes[index + 2])
            {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return output
    }

    /// The index after the comment starting at `start` (nested parentheses and escapes honoured).
    static func skipComment(_ bytes: [UInt8], from start: Int) -> Int {
        var depth = 0
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 1
            case UInt8(ascii: "("): depth += 1
            case UInt8(ascii: ")"):
                depth -= 1
                if depth == 0 { return index + 1 }
            default: break
            }
            index += 1
        }
        return bytes.count
    }
}
