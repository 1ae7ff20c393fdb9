import Crypto
import Testing

@Suite("PasswordHash (argon2id)")
struct PasswordHashTests {
    @Test func roundTripWithDefaultParameters() throws {
        let hasher = PasswordHash()
        let stored = try hasher.hash("correct horse battery staple")
        #expect(stored.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(hasher.verify("correct horse battery staple", against: stored))
        #expect(!hasher.verify("correct horse battery stapl", against: stored))
        #expect(!hasher.verify("", against: stored))
        #expect(!hasher.needsRehash(stored))
        // A fresh salt each time.
        #expect(try hasher.hash("correct horse battery staple") != stored)
    }

    @Test func needsRehashWhenParametersDiffer() throws {
        let cheap = PasswordHash(opsLimit: 1, memLimit: 8 * 1024 * 1024)
        let stored = try cheap.hash("pw")
        #expect(stored.contains("m=8192,t=1,p=1"))
        #expect(!cheap.needsRehash(stored))
        #expect(PasswordHash().needsRehash(stored))
        #expect(PasswordHash(opsLimit: 1).needsRehash(stored))
        #expect(PasswordHash(opsLimit: 2, memLimit: 8 * 1024 * 1024).needsRehash(stored))
        // Verification reads the parameters from the string, whatever the hasher's own.
        #expect(PasswordHash().verify("pw", against: stored))
        #expect(PasswordHash().needsRehash("not a hash"))
        #expect(PasswordHash().needsRehash(""))
    }

    @Test func argon2iStringsNeedRehash() {
        // crypto_pwhash_argon2i_str("pw", t=3, m=19 MiB): same parameters, older algorithm.
        let stored = "$argon2i$v=19$m=19456,t=3,p=1$jbAZnyBvQR7bnYogZXxybA$DR3kDSeHu+RgeqcC53M+8wHztDAWucUfBq3sVpjvekI"
        #expect(PasswordHash(opsLimit: 3).needsRehash(stored))
        #expect(PasswordHash().verify("pw", against: stored))
    }

    @Test func unicodeLongAndEmptyPasswords() throws {
        let hasher = PasswordHash(opsLimit: 1, memLimit: 8 * 1024 * 1024)
        let unicode = "pässwörd 🔑 パスワード"
        #expect(hasher.verify(unicode, against: try hasher.hash(unicode)))
        // No truncation (bcrypt stops at 72 bytes): passwords differing only at byte 200 are different.
        let long = String(repeating: "a", count: 199)
        let stored = try hasher.hash(long + "b")
        #expect(hasher.verify(long + "b", against: stored))
        #expect(!hasher.verify(long + "c", against: stored))
        #expect(!hasher.verify(long, against: stored))
        let empty = try hasher.hash("")
        #expect(hasher.verify("", against: empty))
        #expect(!hasher.verify(" ", against: empty))
        // Composed and decomposed "é" are different bytes, so different passwords (no normalisation).
        #expect(!hasher.verify("e\u{301}", against: try hasher.hash("\u{e9}")))
    }

    @Test func garbageStoredStringsDoNotVerify() {
        for stored in ["", "$argon2id$", "plain", "$argon2id$v=19$m=19456,t=2,p=1$AAAA$AAAA"] {
            #expect(!PasswordHash().verify("pw", against: stored))
        }
    }

    @Test func dummyHashIsAValidDefaultHash() {
        let dummy = PasswordHash.dummyHash
        #expect(dummy.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(!PasswordHash().needsRehash(dummy))
        #expect(!PasswordHash().verify("anything", against: dummy))
        #expect(PasswordHash.dummyHash == dummy)
    }

    @Test func parametersOutOfRangeThrow() {
        #expect(throws: CryptoError.self) { try PasswordHash(opsLimit: 0).hash("pw") }
        #expect(throws: CryptoError.self) { try PasswordHash(memLimit: 1024).hash("pw") }
    }
}
