import Foundation
import Testing

@testable import Crypto

/// Ed25519 against RFC 8032's first test vector; signed notes against `golang.org/x/mod/sumdb/note`'s tests (the
/// PeterNeumann key, its verifier key, and the note its Sign produces byte for byte); checkpoints' bodies.
@Suite struct SignedNoteTests {
    /// RFC 8032 §7.1, TEST 1 (empty message).
    @Test func ed25519IsRFC8032() throws {
        let seed = try SymmetricKey(bytes: hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
        let publicKey = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let signature = hex(
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        #expect(Ed25519.publicKey(seed: seed) == publicKey)
        #expect(Ed25519.sign([], seed: seed) == signature)
        #expect(Ed25519.verify(signature: signature, message: [], publicKey: publicKey))
        #expect(!Ed25519.verify(signature: signature, message: [0], publicKey: publicKey))
        #expect(!Ed25519.verify(signature: Array(signature.dropLast()), message: [], publicKey: publicKey))
    }

    // golang.org/x/mod/sumdb/note note_test.go: PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz.
    static let peterSeed = try! SymmetricKey(bytes: Data(base64Encoded: "AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz")!.dropFirst())
    static let peterKey = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
    static let enochKey = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
    static let text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
    static let peterSignature = "\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
    static let enochSignature = "\u{2014} EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n"

    @Test func signingIsGosNoteByteForByte() throws {
        let key = try #require(NoteVerifierKey(name: "PeterNeumann", publicKey: Ed25519.publicKey(seed: Self.peterSeed)))
        #expect(key.description == Self.peterKey)
        #expect(SignedNote.sign(Self.text, name: "PeterNeumann", seed: Self.peterSeed) == Self.text + "\n" + Self.peterSignature)
    }

    @Test func openingVerifiesAKnownKeyAndIgnoresOthers() throws {
        let peter = try #require(NoteVerifierKey(parsing: Self.peterKey))
        let enoch = try #require(NoteVerifierKey(parsing: Self.enochKey))
        let note = Self.text + "\n" + Self.peterSignature + Self.enochSignature
        #expect(try SignedNote.open(note, keys: [peter]).text == Self.text)
        #expect(try SignedNote.open(note, keys: [enoch]).key == enoch)
        #expect(throws: SignedNoteError.unknownKey) { try SignedNote.open(note, keys: []) }
        let forged = Self.text.replacingOccurrences(of: "answer", with: "question") + "\n" + Self.peterSignature
        #expect(throws: SignedNoteError.invalidSignature) { try SignedNote.open(forged, keys: [peter]) }
        let peterSig = Self.peterSignature
        let broken = peterSig.prefix(60) + "ABCD" + peterSig.dropFirst(60)
        #expect(throws: SignedNoteError.invalidSignature) { try SignedNote.open(Self.text + "\n" + broken, keys: [peter]) }
        // The malformed notes of Go's TestOpen.
        for bad in [
            Self.text, Self.text + "\n", Self.text + "\n" + String(peterSig.dropLast()), "\u{01}" + Self.text + "\n" + peterSig,
            Self.text + "\n" + "\u{2014} Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=",
            Self.text + "\n" + peterSig + "Unexpected line.\n",
        ] {
            #expect(throws: SignedNoteError.self) { try SignedNote.open(bad, keys: [peter]) }
        }
    }

    @Test func verifierKeysRejectManglings() {
        #expect(NoteVerifierKey(parsing: Self.peterKey) != nil)
        let key = Array(Self.peterKey.utf8)
        for index in key.indices {
            var mangled = key
            mangled[index] &+= 1
            #expect(NoteVerifierKey(parsing: String(decoding: mangled, as: UTF8.self)) == nil)
        }
        #expect(NoteVerifierKey(parsing: "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==") == nil)
        #expect(NoteVerifierKey(parsing: "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW") == nil)
        #expect(NoteVerifierKey(name: "a b", publicKey: [UInt8](repeating: 1, count: 32)) == nil)
        #expect(NoteVerifierKey(name: "a+b", publicKey: [UInt8](repeating: 1, count: 32)) == nil)
    }

    /// A base64 key may contain `+`: only the first two separate name, id and key (as Go's NewVerifier reads them).
    @Test func keysWhoseBase64HoldsAPlusParse() throws {
        var found = 0
        for _ in 0..<200 where found < 5 {
            let key = try #require(NoteVerifierKey(name: "reclaim.example/reclaim", publicKey: Ed25519.publicKey(seed: SymmetricKey())))
            guard key.description.split(separator: "+").count > 3 else { continue }
            found += 1
            #expect(NoteVerifierKey(parsing: key.description) == key)
        }
        #expect(found == 5)
    }

    @Test func checkpointBodiesRoundTrip() throws {
        let root = SHA256.hash(Array("root".utf8))
        let checkpoint = TreeCheckpoint(origin: "reclaim.example/reclaim", size: 12_345, root: root)
        #expect(checkpoint.body == "reclaim.example/reclaim\n12345\n\(Data(root).base64EncodedString())\n")
        #expect(TreeCheckpoint(body: checkpoint.body) == checkpoint)
        #expect(TreeCheckpoint(body: checkpoint.body + "extension line\n") == checkpoint)
        for bad in [
            "reclaim.example/reclaim\n12345\n", "o\n012\n\(Data(root).base64EncodedString())\n", "o\n-1\n\(Data(root).base64EncodedString())\n",
            "o\n1\nAAAA\n", "o\n1\n\(Data(root).base64EncodedString())",
        ] {
            #expect(TreeCheckpoint(body: bad) == nil, "\(bad)")
        }
        let seed = SymmetricKey()
        let note = SignedNote.sign(checkpoint.body, name: checkpoint.origin, seed: seed)
        let key = try #require(NoteVerifierKey(name: checkpoint.origin, publicKey: Ed25519.publicKey(seed: seed)))
        #expect(TreeCheckpoint(body: try SignedNote.open(note, keys: [key]).text) == checkpoint)
    }
}
