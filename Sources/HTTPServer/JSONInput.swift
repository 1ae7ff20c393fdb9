import Foundation

/// Checks on JSON request bodies that hold whatever parser a route then uses.
///
/// Foundation's JSONDecoder and JSONSerialization are lenient where RFC 8259 is not: they take a trailing comma
/// (`{"a":1,}`), and with a repeated key one value silently wins. `check` reads the body once, strictly, before any
/// of them sees it: the grammar of RFC 8259 §2–7 exactly (no trailing comma, no comment, no leading zero, no raw
/// control character in a string, nothing after the value), UTF-8 only (§8.1), and every key of an object once.
public enum JSONInput {
    /// What a strict reading of a body found.
    public struct Findings: Sendable, Equatable {
        /// Why the bytes are not JSON (RFC 8259), nil when they are.
        public var malformed: String?
        /// The paths (`customer.name`, `devices[0].imei`) of keys an object repeats, sorted; each once.
        public var duplicateKeys: [String] = []
        /// The paths of every member name or string value holding U+0000 (`\u0000`), sorted.
        public var fieldsHoldingNUL: [String] = []
    }

    /// Reads `body` as RFC 8259 JSON text; one pass, no tree built. Paths are only spelled out for what is found.
    public static func check(_ body: [UInt8]) -> Findings {
        body.withUnsafeBufferPointer { buffer in
            var reader = StrictReader(buffer)
            reader.read()
            var findings = Findings()
            findings.malformed = reader.failure
            if reader.failure == nil && !reader.duplicates.isEmpty { findings.duplicateKeys = Array(Set(reader.duplicates)).sorted() }
            if reader.failure == nil && !reader.nulFields.isEmpty { findings.fieldsHoldingNUL = reader.nulFields.sorted() }
            return findings
        }
    }

    /// A coding path as the client would spell the field: keys joined by dots, array indices in brackets.
    public static func fieldName(_ path: [any CodingKey]) -> String {
        name(path.map { key in key.intValue.map(PathComponent.index) ?? .key(key.stringValue) })
    }

    enum PathComponent {
        case key(String)
        case index(Int)
    }

    static func name(_ path: [PathComponent]) -> String {
        var text = ""
        for component in path {
            switch component {
            case .key(let key): text += text.isEmpty ? key : "." + key
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }
}

/// The one-pass reader behind `JSONInput.check`: an explicit stack, so nesting depth costs memory (bounded by the
/// body limit), never the thread's stack.
private struct StrictReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private(set) var failure: String?
    private(set) var duplicates: [String] = []
    private(set) var nulFields: [String] = []

    /// A key as the bytes between its quotes (`decoded`: in `decodedKeys`, its escapes resolved).
    private struct Key {
        var start = 0, end = 0
        var decoded = false
    }

    /// One open object or array. Plain values only: the reader's hot loop touches no reference count.
    private struct Frame {
        var isObject: Bool
        /// The member being read (objects) or the element's index (arrays).
        var key = Key()
        var element = 0
        /// Where this object's keys begin in `seen`, and its set in `largeObjects` once it has more than 16 keys.
        var keysStart: Int
        var set = -1
    }

    private var stack: [Frame] = []
    /// The keys of every open object, object after object.
    private var seen: [Key] = []
    private var decodedKeys: [UInt8] = []
    /// Keys of the open objects with many (an object of 10,000 keys stays linear); only ever the innermost ones.
    private var largeObjects: [Set<[UInt8]>] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        // Room for a typical body's nesting and keys at once, instead of growing one by one.
        stack.reserveCapacity(8)
        seen.reserveCapacity(16)
    }

    mutating func read() {
        skipWhitespace()
        guard value() else { return }
        skipWhitespace()
        if failure == nil && index < bytes.count { fail("there is more after the JSON value") }
    }

    // The grammar, iteratively: `value` reads a scalar or opens a container; the loop closes containers and
    // reads their separators, refusing a comma that no member or element follows.
    private mutating func value() -> Bool {
        while true {
            guard index < bytes.count else { return fail("it ends early") }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                stack.append(Frame(isObject: true, keysStart: seen.count))
                skipWhitespace()
                if peek(UInt8(ascii: "}")) {
                    index += 1
                    close()
                } else {
                    guard member() else { return false }
                    continue
                }
            case UInt8(ascii: "["):
                index += 1
                stack.append(Frame(isObject: false, keysStart: seen.count))
                skipWhitespace()
                if peek(UInt8(ascii: "]")) {
                    index += 1
                    close()
                } else {
                    continue
                }
            case UInt8(ascii: "\""):
                guard let text = string() else { return false }
                if text.holdsNUL { nulFields.append(path()) }
            case UInt8(ascii: "t"): guard literal("true") else { return false }
            case UInt8(ascii: "f"): guard literal("false") else { return false }
            case UInt8(ascii: "n"): guard literal("null") else { return false }
            default: guard number() else { return false }
            }
            // A value is complete: close what ends here, or move to the next member or element.
            while !stack.isEmpty {
                let isObject = stack[stack.count - 1].isObject
                skipWhitespace()
                guard index < bytes.count else { return fail("it ends early") }
                let byte = bytes[index]
                if byte == UInt8(ascii: isObject ? "}" : "]") {
                    index += 1
                    close()
                    continue
                }
                guard byte == UInt8(ascii: ",") else {
                    return fail(isObject ? "a member is not followed by ',' or '}'" : "an element is not followed by ',' or ']'")
                }
                index += 1
                skipWhitespace()
                if peek(UInt8(ascii: "}")) || peek(UInt8(ascii: "]")) { return fail("it has a trailing comma") }
                if isObject {
                    guard member() else { return false }
                } else {
                    stack[stack.count - 1].element += 1
                }
                break
            }
            if stack.isEmpty { return true }
        }
    }

    /// `"name" ws : ws`, noting the name as the member being read and refusing it if the object already has it.
    private mutating func member() -> Bool {
        guard peek(UInt8(ascii: "\"")), let name = string() else { return fail("a member name is not a string") }
        // Keys are compared as sent unless they hold escapes (`"\u0061"` is `"a"`): then decoded first.
        var key = Key(start: name.start, end: name.end)
        if name.escaped {
            key = Key(start: decodedKeys.count, end: decodedKeys.count, decoded: true)
            Self.unescape(bytes[name.start..<name.end], into: &decodedKeys)
            key.end = decodedKeys.count
        }
        let top = stack.count - 1
        stack[top].key = key
        if !insert(key, into: top) { duplicates.append(path()) }
        if name.holdsNUL { nulFields.append(path()) }
        skipWhitespace()
        guard peek(UInt8(ascii: ":")) else { return fail("a member name is not followed by ':'") }
        index += 1
        skipWhitespace()
        return true
    }

    /// Adds a key to the object at `frame` (the innermost); false when the object already has it.
    private mutating func insert(_ key: Key, into frame: Int) -> Bool {
        if stack[frame].set >= 0 { return largeObjects[stack[frame].set].insert(keyBytes(key)).inserted }
        for known in seen[stack[frame].keysStart...] where keysEqual(known, key) { return false }
        seen.append(key)
        if seen.count - stack[frame].keysStart > 16 {
            largeObjects.append(Set(seen[stack[frame].keysStart...].map(keyBytes)))
            stack[frame].set = largeObjects.count - 1
            seen.removeSubrange(stack[frame].keysStart...)
        }
        return true
    }

    /// The innermost container ends: its keys are forgotten.
    private mutating func close() {
        let frame = stack.removeLast()
        seen.removeSubrange(frame.keysStart...)
        if frame.set >= 0 { largeObjects.removeLast() }
    }

    private func keysEqual(_ a: Key, _ b: Key) -> Bool {
        guard a.end - a.start == b.end - b.start else { return false }
        if !a.decoded && !b.decoded { return memcmp(bytes.baseAddress! + a.start, bytes.baseAddress! + b.start, a.end - a.start) == 0 }
        return keyBytes(a) == keyBytes(b)
    }

    private func keyBytes(_ key: Key) -> [UInt8] {
        key.decoded ? Array(decodedKeys[key.start..<key.end]) : Array(bytes[key.start..<key.end])
    }

    /// A string at `index` (on its opening quote): where its contents lie, whether they hold escapes, and whether U+0000.
    private mutating func string() -> (start: Int, end: Int, escaped: Bool, holdsNUL: Bool)? {
        index += 1
        let start = index
        var escaped = false
        var holdsNUL = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return (start, index - 1, escaped, holdsNUL)
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                guard index + 1 < bytes.count else { break }
                switch bytes[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                    UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 2
                case UInt8(ascii: "u"):
                    guard index + 5 < bytes.count, let unit = Self.hex4(bytes, at: index + 2) else {
                        failure = "a \\u escape is not four hex digits"
                        return nil
                    }
                    if unit == 0 { holdsNUL = true }
                    index += 6
                default:
                    failure = "a string has an unknown escape"
                    return nil
                }
                continue
            }
            if byte < 0x20 {
                failure = byte == 0 ? "it holds a NUL byte" : "a string holds a raw control character"
                return nil
            }
            if byte < 0x80 {
                index += 1
                continue
            }
            guard let length = Self.utf8SequenceLength(bytes, at: index) else {
                failure = "it is not UTF-8"
                return nil
            }
            index += length
        }
        failure = "a string is not closed"
        return nil
    }

    private mutating func number() -> Bool {
        let start = index
        if peek(UInt8(ascii: "-")) { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            return fail(start == index ? "it holds something that is not a JSON value" : "a number has no digits")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count && isDigit(bytes[index]) { return fail("a number has a leading zero") }
        } else {
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if peek(UInt8(ascii: ".")) {
            index += 1
            guard digits() else { return fail("a number has no digits after its point") }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard digits() else { return fail("a number has no digits in its exponent") }
        }
        return true
    }

    private mutating func digits() -> Bool {
        let start = index
        while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        return index > start
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return fail("it holds something that is not a JSON value") }
        for offset in 0..<count where word.utf8Start[offset] != bytes[index + offset] {
            return fail("it holds something that is not a JSON value")
        }
        index += count
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func peek(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    @discardableResult
    private mutating func fail(_ reason: String) -> Bool {
        if failure == nil { failure = reason }
        return false
    }

    /// The field the reader is at, spelled as `JSONInput.name` spells paths.
    private func path() -> String {
        JSONInput.name(
            stack.map { frame in
                frame.isObject ? .key(String(decoding: keyBytes(frame.key), as: UTF8.self)) : .index(frame.element)
            })
    }

    private static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> UInt16? {
        var value: UInt16 = 0
        for offset in 0..<4 {
            let byte = bytes[start + offset]
            let nibble: UInt8
            switch byte {
            case 0x30...0x39: nibble = byte - 0x30
            case 0x41...0x46: nibble = byte - 0x41 + 10
            case 0x61...0x66: nibble = byte - 0x61 + 10
            default: return nil
            }
            value = value << 4 | UInt16(nibble)
        }
        return value
    }

    /// The length of the well-formed UTF-8 sequence starting at `start` (Unicode 15 Table 3-7), nil when ill-formed.
    private static func utf8SequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Int? {
        let lead = bytes[start]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: return nil
        }
        guard start + length <= bytes.count else { return nil }
        guard (low...high).contains(bytes[start + 1]) else { return nil }
        for offset in 2..<max(2, length) where !(0x80...0xBF).contains(bytes[start + offset]) { return nil }
        return length
    }

    /// Appends a key with its escapes decoded to UTF-8, so `"\u0061"` and `"a"` are the same key (unpaired surrogates
    /// become U+FFFD).
    private static func unescape(_ raw: Slice<UnsafeBufferPointer<UInt8>>, into out: inout [UInt8]) {
        var units: [UInt16] = []
        var i = raw.startIndex
        func flushUnits() {
            guard !units.isEmpty else { return }
            for scalar in String(decoding: units, as: UTF16.self).utf8 { out.append(scalar) }
            units = []
        }
        while i < raw.endIndex {
            let byte = raw[i]
            guard byte == UInt8(ascii: "\\") else {
                flushUnits()
                out.append(byte)
                i += 1
                continue
            }
            let code = raw[i + 1]
            if code == UInt8(ascii: "u") {
                var unit: UInt16 = 0
                for offset in 2..<6 {
                    let digit = raw[i + offset]
                    unit = unit << 4 | UInt16(digit <= 0x39 ? digit - 0x30 : (digit | 0x20) - 0x61 + 10)
                }
                units.append(unit)
                i += 6
                continue
            }
            flushUnits()
            switch code {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            default: out.append(code)
            }
            i += 2
        }
        flushUnits()
    }
}
