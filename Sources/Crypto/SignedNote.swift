import Foundation

/// A C2SP `signed-note` verifier key, `<name>+<hex key id>+<base64(0x01 ‖ Ed25519 public key)>`: what a partner keeps
/// to check the service's notes (the form `golang.org/x/mod/sumdb/note.NewVerifier` reads).
public struct NoteVerifierKey: Sendable, Equatable, CustomStringConvertible {
    /// The key's name: the log's origin.
    public let name: String
    /// The 32-byte Ed25519 public key.
    public let publicKey: [UInt8]

    /// The signed-note algorithm byte of Ed25519.
    static let ed25519: UInt8 = 0x01

    /// The key `publicKey` under `name`; nil when the name is not a valid note key name or the key is not 32 bytes.
    public init?(name: String, publicKey: [UInt8]) {
        guard SignedNote.isValidName(name), publicKey.count == Ed25519.publicKeyByteCount else { return nil }
        self.name = name
        self.publicKey = publicKey
    }

    /// Parses `<name>+<hex key id>+<base64 key>`; nil unless the id matches the name and key.
    public init?(parsing text: String) {
        // The base64 key may itself contain `+`: the name and the id end at the first two.
        let parts = text.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].count == 8, let id = Hex.decode(String(parts[1])),
            let encoded = Data(base64Encoded: String(parts[2])), encoded.count == 1 + Ed25519.publicKeyByteCount,
            encoded.first == Self.ed25519, let key = NoteVerifierKey(name: String(parts[0]), publicKey: Array(encoded.dropFirst())),
            key.keyID == id
        else { return nil }
        self = key
    }

    /// First 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key).
    public var keyID: [UInt8] {
        Array(SHA256.hash(Array(name.utf8) + [0x0A, Self.ed25519] + publicKey).prefix(4))
    }

    /// `<name>+<hex key id>+<base64(0x01 ‖ public key)>`.
    public var description: String {
        "\(name)+\(Hex.encode(keyID))+\(Data([Self.ed25519] + publicKey).base64EncodedString())"
    }
}

/// Why a signed note was refused.
public enum SignedNoteError: Error, Equatable, CustomStringConvertible {
    /// Not the note format: no blank line before the signatures, a control character, a bad signature line.
    case malformed(String)
    /// No signature line by a key the verifier knows (name and key id).
    case unknownKey
    /// A known key's signature does not verify.
    case invalidSignature

    /// One line.
    public var description: String {
        switch self {
        case .malformed(let why): "not a signed note: \(why)"
        case .unknownKey: "no signature by a known key"
        case .invalidSignature: "the signature does not verify"
        }
    }
}

/// C2SP `signed-note` with Ed25519: text ending in a newline, a blank line, then lines `— <name> <base64(key id ‖
/// signature)>`. The signature covers the text, final newline included.
public enum SignedNote {
    /// A signature line's first characters: an em dash and a space.
    static let signaturePrefix = "\u{2014} "

    /// Whether `name` may name a note key: non-empty, no spaces of any kind, no `+`, no control characters.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.unicodeScalars.contains { $0 == "+" || $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }
    }

    /// The note: `text` (which must end with a newline), a blank line and the signature line of `seed` under `name`.
    public static func sign(_ text: String, name: String, seed: SymmetricKey) -> String {
        precondition(text.hasSuffix("\n") && isValidName(name), "a note's text ends with a newline and its key has a valid name")
        guard let key = NoteVerifierKey(name: name, publicKey: Ed25519.publicKey(seed: seed)) else { preconditionFailure("invalid note key name") }
        let signature = Ed25519.sign(Array(text.utf8), seed: seed)
        return text + "\n" + signaturePrefix + name + " " + Data(key.keyID + signature).base64EncodedString() + "\n"
    }

    /// The text of `note` once a signature by one of `keys` verifies; other signatures are ignored, as the spec says.
    public static func open(_ note: String, keys: [NoteVerifierKey]) throws(SignedNoteError) -> (text: String, key: NoteVerifierKey) {
        guard note.unicodeScalars.allSatisfy({ $0 == "\n" || ($0.value >= 0x20 && $0.value != 0x7F) }) else {
            throw .malformed("a control character")
        }
        guard note.hasSuffix("\n"), let split = note.range(of: "\n\n", options: .backwards) else { throw .malformed("no signature block") }
        let text = String(note[..<split.lowerBound]) + "\n"
        let lines = note[split.upperBound...].dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty, !text.isEmpty else { throw .malformed("no signature") }
        // Every line must be a signature line before any is believed.
        var signatures: [(name: String, id: [UInt8], signature: [UInt8])] = []
        for line in lines {
            guard line.hasPrefix(signaturePrefix) else { throw .malformed("a line after the blank line is not a signature") }
            let fields = line.dropFirst(signaturePrefix.count).split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 2, isValidName(String(fields[0])), let bytes = Data(base64Encoded: String(fields[1])), bytes.count > 4 else {
                throw .malformed("a signature line is not `— name base64`")
            }
            signatures.append((String(fields[0]), Array(bytes.prefix(4)), Array(bytes.dropFirst(4))))
        }
        var known = false
        for signature in signatures {
            for key in keys where key.name == signature.name && key.keyID == signature.id {
                known = true
                if Ed25519.verify(signature: signature.signature, message: Array(text.utf8), publicKey: key.publicKey) { return (text, key) }
            }
        }
        throw known ? .invalidSignature : .unknownKey
    }
}

/// A C2SP `tlog-checkpoint` body: the origin line, the tree size in decimal and the base64 root hash, one a line.
public struct TreeCheckpoint: Sendable, Equatable {
    /// The log's origin (also the note key's name).
    public let origin: String
    /// Leaves in the tree.
    public let size: Int
    /// RFC 9162 root of those leaves.
    public let root: MerkleTree.Hash

    /// A checkpoint of `size` leaves with `root` for `origin`.
    public init(origin: String, size: Int, root: MerkleTree.Hash) {
        self.origin = origin
        self.size = size
        self.root = root
    }

    /// `origin\nsize\nbase64 root\n`: the text the note signs.
    public var body: String { "\(origin)\n\(size)\n\(Data(root).base64EncodedString())\n" }

    /// Parses a note's text; extension lines after the root are allowed and ignored, as the spec says.
    public init?(body text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 4, lines.last == "", !lines[0].isEmpty,
            lines[1].allSatisfy(\.isASCII), lines[1].allSatisfy(\.isNumber), lines[1] == "0" || !lines[1].hasPrefix("0"),
            let size = Int(lines[1]), let root = Data(base64Encoded: String(lines[2])), root.count == SHA256.byteCount
        else { return nil }
        self.init(origin: String(lines[0]), size: size, root: Array(root))
    }
}
