import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
            guard let converter = Iconv(from: name) else { return guessed(bytes) }
            return String(decoding: converter.convert(Array(bytes)), as: UTF8.self)
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
            guard var name = label?.trimmingCharacters(in: CharacterSet(charactersIn: " \t\"'")).lowercased(), !name.isEmpty else {
                self = .unlabelled
                return
            }
            // RFC 2231 language suffix (`utf-8*en`), as encoded words may carry it.
            if let star = name.firstIndex(of: "*") { name = String(name[..<star]) }
            switch name {
            case "utf-8", "utf8", "unicode-1-1-utf-8", "x-unicode20utf8", "unicode-2-0-utf-8": self = .utf8
            case "us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us", "us", "default", "unknown", "unknown-8bit", "x-unknown":
                self = .unlabelled  // often UTF-8 or Windows-1252 in practice
            case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "cp819", "ibm819", "iso-ir-100", "csisolatin1",
                 "windows-1252", "cp1252", "x-cp1252", "cp-1252", "windows1252", "iso_8859-1:1987":
                self = .windows1252
            case "gb2312", "gbk", "gb18030", "cp936", "x-gbk", "euc-cn", "x-euc-cn", "csgb2312", "chinese", "iso-ir-58", "gb_2312-80",
                 "gb_2312", "ms936", "windows-936", "csgbk", "gb18030-2000", "gb18030-2005", "x-gb18030":
                self = .iconv("GB18030")
            case "big5", "big-5", "big5-hkscs", "cn-big5", "x-x-big5", "csbig5", "x-big5", "cp950", "ms950", "windows-950", "big5hkscs":
                self = .iconv("BIG5-HKSCS")
            case "ks_c_5601-1987", "ks_c_5601", "ksc5601", "cp949", "windows-949", "euc-kr", "x-euc-kr", "csksc56011987":
                self = .iconv("CP949")
            case "shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "windows-31j", "cp932", "ms932", "csshiftjis":
                self = .iconv("CP932")
            default:
                let allowed = name.unicodeScalars.allSatisfy { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || "-_.:".unicodeScalars.contains($0) }
                self = allowed && name.count <= 40 ? .iconv(name.uppercased()) : .unlabelled
            }
        }
    }
}

/// glibc's iconv, from one charset to UTF-8: the only use of iconv in the project. Owns its descriptor (closed in
/// `deinit`); one per conversion, so nothing is shared between threads.
final class Iconv {
    private let descriptor: iconv_t

    /// nil when iconv does not know `charset`.
    init?(from charset: String) {
        let descriptor = iconv_open("UTF-8", charset)
        // iconv_open reports failure as (iconv_t)-1.
        guard let descriptor, Int(bitPattern: descriptor) != -1 else { return nil }
        self.descriptor = descriptor
    }

    deinit { iconv_close(descriptor) }

    /// The UTF-8 bytes of `input`; each byte iconv cannot read becomes U+FFFD (and the conversion goes on after it).
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
                    let result = flush ? iconv(descriptor, nil, nil, &outPointer, &outLeft) : iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
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
        return output
    }
}
