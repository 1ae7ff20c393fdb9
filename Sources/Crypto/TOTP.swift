import Foundation

/// Time-based one-time passwords (RFC 6238) with HMAC-SHA-1, as authenticator apps expect.
public struct TOTP: Sendable, CustomStringConvertible, CustomReflectable {
    /// Digits per code (6 to 8).
    public let digits: Int
    /// Seconds per time step.
    public let period: Int
    private let secret: [UInt8]

    /// A generator for `secret`; throws `invalidParameter` for digits outside 6...8, a period < 1 or a secret under 128 bits.
    public init(secret: [UInt8], digits: Int = 6, period: Int = 30) throws {
        guard (6...8).contains(digits) else { throw CryptoError.invalidParameter("TOTP digits must be 6 to 8") }
        guard period >= 1 else { throw CryptoError.invalidParameter("TOTP period must be at least 1 second") }
        // RFC 4226 R6: the shared secret must be at least 128 bits.
        guard secret.count >= 16 else { throw CryptoError.invalidParameter("TOTP secret must be at least 16 bytes") }
        self.secret = secret
        self.digits = digits
        self.period = period
    }

    /// A fresh 160-bit secret (the length RFC 4226 recommends for SHA-1).
    public static func generateSecret() -> [UInt8] { SecureRandom.bytes(20) }

    /// The time step containing `date` (0 before 1970).
    public func counter(at date: Date) -> UInt64 {
        let steps = (date.timeIntervalSince1970 / Double(period)).rounded(.down)
        guard steps > 0 else { return 0 }
        // Clamped far below UInt64.max so the window arithmetic cannot overflow, even for absurd dates.
        return steps < 0x1p62 ? UInt64(steps) : 1 << 62
    }

    /// The code for the step containing `date`, zero-padded to `digits`.
    public func code(at date: Date) -> String { code(counter: counter(at: date)) }

    /// The code for time step `counter`, zero-padded to `digits`.
    public func code(counter: UInt64) -> String {
        let text = String(truncatedValue(counter: counter))
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// The step (within ±`window` of `date`) whose code equals `code`, or nil; every candidate is compared in
    /// constant time. Steps at or before `lastUsed` are refused, so a code cannot be replayed: store the result.
    public func matchingCounter(_ code: String, at date: Date, window: Int = 1, lastUsed: UInt64? = nil) -> UInt64? {
        precondition(window >= 0, "TOTP window must not be negative")
        // Authenticator apps show "123 456": spaces are presentation, not part of the code.
        let typed = Array(code.utf8.filter { $0 != UInt8(ascii: " ") })
        let now = counter(at: date)
        // Nearest steps first, so a collision between steps resolves to the most plausible one.
        var candidates: [UInt64] = [now]
        if window > 0 {
            for distance in 1...window {
                if now >= UInt64(distance) { candidates.append(now - UInt64(distance)) }
                candidates.append(now + UInt64(distance))
            }
        }
        var match: UInt64?
        for candidate in candidates {
            // Compare every candidate (no early exit) so timing does not tell which step matched.
            let equal = ConstantTime.equals(Array(self.code(counter: candidate).utf8), typed)
            let fresh = lastUsed.map { candidate > $0 } ?? true
            if equal && fresh && match == nil { match = candidate }
        }
        return match
    }

    /// An `otpauth://` URI for enrolment by QR code (Key URI Format), issuer and account percent-encoded.
    public func provisioningURI(issuer: String, account: String) -> String {
        let label = Self.percentEncode(issuer, extra: "@") + ":" + Self.percentEncode(account, extra: "@")
        let issuerValue = Self.percentEncode(issuer, extra: "")
        return "otpauth://totp/\(label)?secret=\(Base32.encode(secret))&issuer=\(issuerValue)"
            + "&algorithm=SHA1&digits=\(digits)&period=\(period)"
    }

    /// Redacted: digits and period only, never the secret.
    public var description: String { "TOTP(digits: \(digits), period: \(period), secret: redacted)" }

    /// Hides the secret from `dump` and mirrors.
    public var customMirror: Mirror { Mirror(self, children: ["digits": digits, "period": period]) }

    // RFC 4226 §5.3 dynamic truncation.
    private func truncatedValue(counter: UInt64) -> UInt32 {
        let message = withUnsafeBytes(of: counter.bigEndian) { Array($0) }
        let mac = HMACSHA1.authenticate(message: message, key: secret)
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary =
            UInt32(mac[offset] & 0x7F) << 24 | UInt32(mac[offset + 1]) << 16
            | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        return binary % modulus
    }

    // Keeps RFC 3986 unreserved characters (plus `extra`); everything else becomes %XX of its UTF-8 bytes.
    private static func percentEncode(_ text: String, extra: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        let allowedExtra = Array(extra.utf8)
        var out = [UInt8]()
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                if allowedExtra.contains(byte) {
                    out.append(byte)
                } else {
                    out.append(UInt8(ascii: "%"))
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0x0F)])
                }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
