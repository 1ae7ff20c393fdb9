/// Percent-decoding for request targets, written over UTF-8 bytes because it runs on every request.
enum PercentEncoding {
    /// Decodes `%XX` escapes (and `+` as a space when `plusAsSpace`); nil when an escape is malformed.
    /// Invalid UTF-8 after decoding is repaired with U+FFFD, never rejected, so lookups simply miss.
    static func decode(_ text: Substring, plusAsSpace: Bool = false) -> String? {
        var needsWork = false
        for byte in text.utf8 where byte == 0x25 || (plusAsSpace && byte == 0x2B) {
            needsWork = true
            break
        }
        if !needsWork { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case 0x25:
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            case 0x2B where plusAsSpace:
                bytes.append(0x20)
            default:
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// Splits a raw path ("/a/b%20c") into its still-encoded segments; "/" gives no segments.
    static func rawSegments(of path: Substring) -> [Substring] {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if segments.first?.isEmpty == true { segments.removeFirst() }
        if segments.count == 1 && segments[0].isEmpty { return [] }
        return segments
    }

    /// Parses `a=1&b=two%20words` into decoded pairs, keeping order; malformed escapes are kept verbatim.
    static func queryItems(_ query: Substring) -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            let name: Substring
            let value: Substring
            if let equals = part.firstIndex(of: "=") {
                name = part[..<equals]
                value = part[part.index(after: equals)...]
            } else {
                name = part
                value = ""
            }
            items.append((decode(name, plusAsSpace: true) ?? String(name), decode(value, plusAsSpace: true) ?? String(value)))
        }
        return items
    }
}
