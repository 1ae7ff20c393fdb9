import Crypto
import Foundation
import Testing

/// Measures the costs quoted in docs; skipped unless CRYPTO_BENCH=1 (timings belong in reports, not in CI verdicts).
@Suite("Costs", .serialized, .enabled(if: ProcessInfo.processInfo.environment["CRYPTO_BENCH"] == "1"))
struct CostTests {
    func measure(_ iterations: Int, _ body: () throws -> Void) rethrows -> Duration {
        try body()  // warm up
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<iterations { try body() }
        return (clock.now - start) / iterations
    }

    func milliseconds(_ d: Duration) -> Double { Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15 }

    @Test func argon2id() throws {
        let hasher = PasswordHash()
        let stored = try hasher.hash("correct horse battery staple")
        let hash = try measure(20) { _ = try hasher.hash("correct horse battery staple") }
        let verify = measure(20) { _ = hasher.verify("correct horse battery staple", against: stored) }
        print("COST argon2id m=19MiB t=2 p=1: hash \(milliseconds(hash)) ms, verify \(milliseconds(verify)) ms")
    }

    @Test func secretBox10MiB() throws {
        let key = SymmetricKey()
        let document = SecureRandom.bytes(10 << 20)
        let ad = bytes("case:1/evidence:1")
        var sealed: [UInt8] = []
        let sealArray = measure(30) { sealed = SecretBox.seal(document, key: key, associatedData: ad) }
        let sealBuffer = measure(30) { sealed = document.withUnsafeBytes { SecretBox.seal($0, key: key, associatedData: ad) } }
        let open = try measure(30) { _ = try SecretBox.open(sealed, key: key, associatedData: ad) }
        func mbps(_ d: Duration) -> Double { 10.0 * 1.048576 / (milliseconds(d) / 1e3) }
        print(
            "COST XChaCha20-Poly1305 10 MiB: seal \(milliseconds(sealArray)) ms (\(mbps(sealArray)) MB/s), "
                + "seal(buffer) \(milliseconds(sealBuffer)) ms (\(mbps(sealBuffer)) MB/s), open \(milliseconds(open)) ms (\(mbps(open)) MB/s)")
    }

    @Test func hmac1KiB() throws {
        let key = SecureRandom.bytes(32)
        let symmetric = try SymmetricKey(bytes: key)
        let message = SecureRandom.bytes(1024)
        let sha256 = measure(100_000) { _ = HMACSHA256.authenticate(message: message, key: key) }
        let sha256Key = measure(100_000) { _ = HMACSHA256.authenticate(message: message, key: symmetric) }
        let sha1 = measure(100_000) { _ = HMACSHA1.authenticate(message: message, key: key) }
        let totp = try TOTP(secret: TOTP.generateSecret())
        let now = Date()
        let match = measure(20_000) { _ = totp.matchingCounter("123456", at: now) }
        print(
            "COST HMAC-SHA256 1 KiB: \(milliseconds(sha256) * 1e3) µs ([UInt8] key), \(milliseconds(sha256Key) * 1e3) µs (SymmetricKey); "
                + "HMAC-SHA1 1 KiB: \(milliseconds(sha1) * 1e3) µs; TOTP matchingCounter (window 1): \(milliseconds(match) * 1e3) µs")
    }
}
