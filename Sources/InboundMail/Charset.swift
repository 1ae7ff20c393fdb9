import Foundation  // and, through it, glibc's iconv
import Synchronization

/// Bytes in a declared charset to text, never failing: UTF-8, US-ASCII, ISO-8859-1 and Windows-1252 in Swift, every
/// other label (GB2312/GBK/GB18030, Big5, Shift_JIS, KOI8-R, …) through glibc's iconv, which Foundation on Linux
/// does not expose. Labels are read as mail readers read them: GB2312 and GBK as GB18030 (their superset, which
/// Foxmail and Outlook really send), Big5 as Big5-HKSCS, ISO-8859-1 as Windows-1252. Undecodable bytes become U+FFFD.
public enum Charset {
    /// `bytes` as text in the charset `label` names; nil or an unknown label reads UTF-8, else Windows-1252.
    public static func decode<Bytes: Collection>(_ bytes: Bytes, label: String?) -> String where Bytes.Element == UInt8 {
        switch Name(label) {
        case .utf8: return String(decoding: bytes, as: UTF8.self)
        case .windows1252: return windows1252(bytes)
        case .unlabelled: return guessed(bytes)
        case .iconv(let name):
            if Name.extendsASCII(name) && bytes.allSatisfy({ $0 < 0x80 }) {
                return String(decoding: bytes, as: UTF8.self)  // the common case of a Chinese mail's ASCII parts
            }
            guard let converted = Iconv.convert(Array(bytes), from: name) else { return guessed(bytes) }
            return String(decoding: converted, as: UTF8.self)
        }
    }

    /// Whether `bytes` are well-formed UTF-8.
    static func isUTF8<Bytes: Collection>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// Unlabelled 8-bit text (and text labelled US-ASCII that is not): UTF-8 when it is well-formed, else Windows-1252.
    static func guessed<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        if bytes.allSatisfy({ $0 < 0x80 }) || isUTF8(bytes) { return String(decoding: bytes, as: UTF8.self) }
        return windows1252(bytes)
    }

    /// Windows-1252 (the five unassigned bytes as the C1 controls, as WHATWG's decoder does).
    static func windows1252<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var scalars = String.UnicodeScalarView()
        scalars.reserveCapacity(bytes.count)
        for byte in bytes {
            if byte >= 0x80 && byte < 0xA0 {
                scalars.append(Unicode.Scalar(windows1252High[Int(byte) - 0x80]) ?? "\u{FFFD}")
            } else {
                scalars.append(Unicode.Scalar(byte))
            }
        }
        return String(scalars)
    }

    /// 0x80–0x9F of Windows-1252.
    private static let windows1252High: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ]

    /// How a label is decoded.
    enum Name: Equatable {
        case utf8, windows1252, unlabelled
        /// An iconv name, upper case, only letters, digits and `-_.:`.
        case iconv(String)

        /// Whether ASCII bytes mean ASCII in the iconv charset `name` (not so in UTF-16, UTF-7, ISO-2022, EBCDIC).
        static func extendsASCII(_ name: String) -> Bool {
            ["GB18030", "BIG5-HKSCS", "CP949", "CP932", "EUC-JP", "EUC-TW", "KOI8-R", "KOI8-U", "TIS-620"].contains(name)
                || name.hasPrefix("ISO-8859-") || name.hasPrefix("WINDOWS-125") || name.hasPrefix("CP125")
        }

        init(_ label: String?) {
            // Quotes and blanks off, lower case, an RFC 2231 language suffix (`utf-8*en`) off: on bytes, it is ASCII.
            var bytes = Array((label ?? "").utf8)
            if let star = bytes.firstIndex(of: UInt8(ascii: "*")) { bytes.removeSubrange(star...) }
            func loose(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x22 || byte == 0x27 }
            let start = bytes.firstIndex { !loose($0) } ?? bytes.endIndex
            let end = bytes.lastIndex { !loose($0) }.map { $0 + 1 } ?? start
            let name = String(decoding: bytes[start..<max(start, end)].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
            if name.isEmpty {
                self = .unlabelled
            } else if let known = Name.aliases[name] {
                self = known
            } else {
                let allowed = name.utf8.allSatisfy {
                    ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E || $0 == 0x3A
                }
                self = allowed && name.utf8.count <= 40 ? .iconv(name.uppercased()) : .unlabelled
            }
        }

        /// The labels read otherwise than by their name, lower case.
        static let aliases: [String: Name] = {
            var table: [String: Name] = [:]
            let groups: [(Name, [String])] = [
                (.utf8, ["utf-8", "utf8", "unicode-1-1-utf-8", "x-unicode20utf8", "unicode-2-0-utf-8"]),
                // Often UTF-8 or Windows-1252 in practice.
                (.unlabelled, ["us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us", "us", "default", "unknown", "unknown-8bit", "x-unknown"]),
                (
                    .windows1252,
                    [
                        "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "cp819", "ibm819", "iso-ir-100", "csisolatin1",
                        "windows-1252", "cp1252", "x-cp1252", "cp-1252", "windows1252", "iso_8859-1:1987",
                    ]
                ),
                (
                    .iconv("GB18030"),
                    [
                        "gb2312", "gbk", "gb18030", "cp936", "x-gbk", "euc-cn", "x-euc-cn", "csgb2312", "chinese", "iso-ir-58",
                        "gb_2312-80", "gb_2312", "ms936", "windows-936", "csgbk", "gb18030-2000", "gb18030-2005", "x-gb18030",
                    ]
                ),
                (
                    .iconv("BIG5-HKSCS"),
                    ["big5", "big-5", "big5-hkscs", "cn-big5", "x-x-big5", "csbig5", "x-big5", "cp950", "ms950", "windows-950", "big5hkscs"]
                ),
                (.iconv("CP949"), ["ks_c_5601-1987", "ks_c_5601", "ksc5601", "cp949", "windows-949", "euc-kr", "x-euc-kr", "csksc56011987"]),
                (.iconv("CP932"), ["shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "windows-31j", "cp932", "ms932", "csshiftjis"]),
            ]
            for (name, labels) in groups { for label in labels { table[label] = name } }
            return table
        }()
    }
}

/// glibc's iconv, from one charset to UTF-8: the only use of iconv in the project. Owns its descriptor (closed in
/// `deinit`). Converters are pooled per charset (opening one makes glibc load the charset's module, closing the last
/// unloads it: a few milliseconds a part otherwise); a converter is used by one thread at a time, taken out of the
/// pool and put back, which is why it may be marked Sendable.
final class Iconv: @unchecked Sendable {
    private let descriptor: iconv_t

    /// Idle converters by charset (at most a few each).
    private static let idle = Mutex<[String: [Iconv]]>([:])
    /// Names iconv did not know (bounded: labels are short, but senders choose them).
    private static let unknown = Mutex<Set<String>>([])

    /// `input` converted from `charset` to UTF-8, or nil when iconv does not know the charset.
    static func convert(_ input: [UInt8], from charset: String) -> [UInt8]? {
        if unknown.withLock({ $0.contains(charset) }) { return nil }
        guard let converter = idle.withLock({ $0[charset]?.popLast() }) ?? Iconv(from: charset) else {
            unknown.withLock { if $0.count < 256 { $0.insert(charset) } }
            return nil
        }
        let output = converter.convert(input)
        idle.withLock { if $0[charset, default: []].count < 4 { $0[charset, default: []].append(converter) } }
        return output
    }

    /// nil when iconv does not know `charset`.
    init?(from charset: String) {
        let descriptor = iconv_open("UTF-8", charset)
        // iconv_open reports failure as (iconv_t)-1.
        guard let descriptor, Int(bitPattern: descriptor) != -1 else { return nil }
        self.descriptor = descriptor
    }

    deinit { iconv_close(descriptor) }

    /// The UTF-8 bytes of `input`; each byte iconv cannot read becomes U+FFFD (and the conversion goes on after it).
    /// Ends in the initial shift state, ready for the next input.
    func convert(_ input: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 2)
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
        var input = input
        input.withUnsafeMutableBufferPointer { source in
            var inPointer = source.baseAddress.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: CChar.self) }
            var inLeft = source.count
            // One call into a fresh chunk; a nil input flushes a stateful decoder's pending output.
            func step(flush: Bool) -> (result: Int, failure: Int32) {
                chunk.withUnsafeMutableBufferPointer { target in
                    var outPointer = target.baseAddress.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: CChar.self) }
                    var outLeft = target.count
                    let result =
                        flush ? iconv(descriptor, nil, nil, &outPointer, &outLeft) : iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                    let failure = result == -1 ? errno : 0
                    output.append(contentsOf: target[..<(target.count - outLeft)])
                    return (result, failure)
                }
            }
            while inLeft > 0 {
                let (result, failure) = step(flush: false)
                guard result == -1 else { continue }
                switch failure {
                case E2BIG: continue  // the chunk is full: go round again
                case EILSEQ:
                    output.append(contentsOf: replacement)
                    inPointer = inPointer.map { $0 + 1 }
                    inLeft -= 1
                default:  // EINVAL: a sequence cut off by the end of the input
                    output.append(contentsOf: replacement)
                    inLeft = 0
                }
            }
            _ = step(flush: true)
        }
        iconv(descriptor, nil, nil, nil, nil)  // back to the initial state, whatever happened above
        return output
    }
}
