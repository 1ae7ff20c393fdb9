/// Base32 (RFC 4648 §6), the encoding of TOTP secrets in authenticator apps.
public enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Upper-case base32 text of `bytes`, with `=` padding only when `padding` is true.
    public static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes, padding: Bool = false) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 4) / 5 * 8)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int(buffer >> UInt32(bits) & 31)])
            }
        }
        if bits > 0 {
            out.append(alphabet[Int(buffer << UInt32(5 - bits) & 31)])
        }
        if padding {
            while out.count % 8 != 0 { out.append(UInt8(ascii: "=")) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Bytes of base32 text: case-insensitive, spaces ignored, padding optional; throws `invalidEncoding("base32")`.
    public static func decode(_ text: String) throws -> [UInt8] {
        var values = [UInt8]()
        values.reserveCapacity(text.utf8.count)
        var padded = 0
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: " "):
                continue
            case UInt8(ascii: "="):
                padded += 1
                continue
            default:
                break
            }
            // Data after padding is not base32.
            guard padded == 0 else { throw CryptoError.invalidEncoding("base32") }
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(c - UInt8(ascii: "a"))
            case UInt8(ascii: "2")...UInt8(ascii: "7"): values.append(c - UInt8(ascii: "2") + 26)
            default: throw CryptoError.invalidEncoding("base32")
            }
        }
        // A final group of 1, 3 or 6 characters cannot come from whole bytes.
        let tail = values.count % 8
        guard tail != 1, tail != 3, tail != 6 else { throw CryptoError.invalidEncoding("base32") }
        if padded > 0 {
            guard (values.count + padded) % 8 == 0, padded < 8 else { throw CryptoError.invalidEncoding("base32") }
        }
        var out = [UInt8]()
        out.reserveCapacity(values.count * 5 / 8)
        var buffer: UInt32 = 0
        var bits = 0
        for value in values {
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return out
    }
}
