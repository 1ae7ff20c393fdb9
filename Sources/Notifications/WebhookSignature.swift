import Crypto
import Foundation

/// Standard Webhooks 1.0 signing: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` under the secret's bytes
/// (the base64 after `whsec_`).
public enum WebhookSignature {
    /// The prefix of every secret.
    public static let secretPrefix = "whsec_"

    /// A fresh secret: 24 random bytes (the spec asks for 24 to 64), as `whsec_` + base64.
    public static func newSecret() -> (text: String, bytes: [UInt8]) {
        let bytes = SecureRandom.bytes(24)
        return (secretPrefix + Data(bytes).base64EncodedString(), bytes)
    }

    /// The `webhook-signature` header's value.
    public static func sign(id: String, timestamp: Int, body: [UInt8], secret: [UInt8]) -> String {
        let mac = HMACSHA256.authenticate(parts: [Array("\(id).\(timestamp).".utf8), body], key: secret)
        return "v1," + Data(mac).base64EncodedString()
    }
}
