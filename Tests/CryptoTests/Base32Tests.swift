import Crypto
import Testing

@Suite("Base32")
struct Base32Tests {
    // RFC 4648 §10.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "MY======"), ("fo", "MZXQ===="), ("foo", "MZXW6==="),
        ("foob", "MZXW6YQ="), ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI======"),
    ]

    @Test("RFC 4648 vectors", arguments: vectors)
    func rfc4648(plain: String, encoded: String) throws {
        #expect(Base32.encode(bytes(plain), padding: true) == encoded)
        let unpadded = encoded.replacingOccurrences(of: "=", with: "")
        #expect(Base32.encode(bytes(plain)) == unpadded)
        #expect(try Base32.decode(encoded) == bytes(plain))
        #expect(try Base32.decode(unpadded) == bytes(plain))
        #expect(try Base32.decode(unpadded.lowercased()) == bytes(plain))
    }

    @Test func decodeIgnoresSpacesAndCase() throws {
        #expect(try Base32.decode("mzxw 6ytb oi") == bytes("foobar"))
        #expect(try Base32.decode(" MZXW6YTBOI====== ") == bytes("foobar"))
    }

    @Test func decodeRejectsGarbage() {
        for bad in ["MZXW1", "MZ=XW", "M", "MZX", "MZXW6Y", "MZXW6YTBO!", "MY=======", "MY==", "ABCDEFGH========"] {
            #expect(throws: CryptoError.invalidEncoding("base32"), "\(bad)") { try Base32.decode(bad) }
        }
    }

    @Test func roundTripRandom() throws {
        for count in 0..<64 {
            let data = SecureRandom.bytes(count)
            #expect(try Base32.decode(Base32.encode(data)) == data)
            #expect(try Base32.decode(Base32.encode(data, padding: true)) == data)
        }
    }
}
