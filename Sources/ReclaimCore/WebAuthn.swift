import Foundation

/// WebAuthn (Level 2/3) relying-party checks that need no cryptography: parsing the client data, the authenticator
/// data and the COSE key, and each rule a ceremony must meet. The API adds the hashes and the ES256 signature check.
public enum WebAuthn {
    /// Why a registration or a sign-in with a passkey was refused (one word each, for logs and tests).
    public enum Refusal: String, Error, Sendable, Equatable {
        case malformedClientData = "malformed_client_data"
        case wrongType = "wrong_type"
        case unknownChallenge = "unknown_challenge"
        case wrongOrigin = "wrong_origin"
        case malformedAuthenticatorData = "malformed_authenticator_data"
        case wrongRelyingParty = "wrong_relying_party"
        case userNotPresent = "user_not_present"
        case userNotVerified = "user_not_verified"
        case unsupportedAttestation = "unsupported_attestation"
        case unsupportedKey = "unsupported_key"
        case unknownCredential = "unknown_credential"
        case badSignature = "bad_signature"
        case signCountRegressed = "sign_count_regressed"
    }

    /// `clientDataJSON` as the browser wrote it.
    public struct ClientData: Sendable, Equatable {
        /// `webauthn.create` or `webauthn.get`.
        public let type: String
        /// The challenge, base64url as sent.
        public let challenge: String
        public let origin: String
        public let crossOrigin: Bool

        /// Parses the JSON; a missing or ill-typed member is `malformedClientData`.
        public init(json: [UInt8]) throws(Refusal) {
            guard json.count <= 4096, let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any],
                let type = object["type"] as? String, let challenge = object["challenge"] as? String, let origin = object["origin"] as? String
            else { throw .malformedClientData }
            self.type = type
            self.challenge = challenge
            self.origin = origin
            self.crossOrigin = object["crossOrigin"] as? Bool ?? false
        }

        /// The ceremony's rules on the client data: its type, a cross-origin frame refused, the origin exactly expected.
        public func check(type expectedType: String, origins: (String) -> Bool) throws(Refusal) {
            guard type == expectedType else { throw .wrongType }
            guard !crossOrigin, origins(origin) else { throw .wrongOrigin }
        }
    }

    /// An ES256 public key from a COSE_Key map (kty 2 EC2, alg -7 ES256, crv 1 P-256).
    public struct ES256Key: Sendable, Equatable {
        public let x: [UInt8]
        public let y: [UInt8]

        public init(x: [UInt8], y: [UInt8]) {
            self.x = x
            self.y = y
        }

        /// Reads the COSE map; any other key type, algorithm or curve is `unsupportedKey`.
        public init(cose: CBOR) throws(Refusal) {
            guard cose[.unsigned(1)]?.integer == 2, cose[.unsigned(3)]?.integer == -7, cose[.negative(0)]?.integer == 1,
                case .bytes(let x)? = cose[.negative(1)], case .bytes(let y)? = cose[.negative(2)], x.count == 32, y.count == 32
            else { throw .unsupportedKey }
            self.x = x
            self.y = y
        }

        /// The 65-byte uncompressed point, as stored.
        public var uncompressed: [UInt8] { [0x04] + x + y }

        /// From the stored 65 bytes.
        public init(uncompressed bytes: [UInt8]) throws(Refusal) {
            guard bytes.count == 65, bytes[0] == 0x04 else { throw .unsupportedKey }
            self.init(x: Array(bytes[1...32]), y: Array(bytes[33...64]))
        }
    }

    /// The authenticator data: RP ID hash, flags, sign count and, on registration, the new credential.
    public struct AuthenticatorData: Sendable, Equatable {
        public let rpIDHash: [UInt8]
        public let flags: UInt8
        public let signCount: UInt32
        /// Set when the AT flag is: the credential id and its public key.
        public let credentialID: [UInt8]?
        public let publicKey: ES256Key?

        public var userPresent: Bool { flags & 0x01 != 0 }
        public var userVerified: Bool { flags & 0x04 != 0 }

        /// Parses the bytes (WebAuthn §6.1); anything short, long or inconsistent is `malformedAuthenticatorData`.
        public init(_ bytes: [UInt8]) throws(Refusal) {
            guard bytes.count >= 37, bytes.count <= 4096 else { throw .malformedAuthenticatorData }
            rpIDHash = Array(bytes[0..<32])
            flags = bytes[32]
            signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
            var rest = Array(bytes[37...])
            if flags & 0x40 != 0 {
                // aaguid (16), credential id length (2), credential id, COSE key.
                guard rest.count >= 18 else { throw .malformedAuthenticatorData }
                let length = Int(rest[16]) << 8 | Int(rest[17])
                guard length >= 1, length <= 1023, rest.count >= 18 + length else { throw .malformedAuthenticatorData }
                credentialID = Array(rest[18..<(18 + length)])
                let keyBytes = Array(rest[(18 + length)...])
                let decoded: (CBOR, Int)
                do { decoded = try CBOR.decodePrefix(keyBytes) } catch { throw .malformedAuthenticatorData }
                publicKey = try ES256Key(cose: decoded.0)
                rest = Array(keyBytes[decoded.1...])
            } else {
                credentialID = nil
                publicKey = nil
            }
            // Extensions (ED flag) are one more CBOR map; without the flag nothing may follow.
            if flags & 0x80 != 0 {
                guard (try? CBOR.decode(rest)) != nil else { throw .malformedAuthenticatorData }
            } else if !rest.isEmpty {
                throw .malformedAuthenticatorData
            }
        }

        /// The rules every ceremony applies here: our RP ID's hash, the user present and verified (the device's biometrics
        /// or PIN, which is what stands in for the password and TOTP).
        public func check(rpIDHash expected: [UInt8]) throws(Refusal) {
            guard rpIDHash == expected else { throw .wrongRelyingParty }
            guard userPresent else { throw .userNotPresent }
            guard userVerified else { throw .userNotVerified }
        }
    }

    /// The attestation object of a registration, format `none` only (we trust the key, not the device's make).
    public static func authenticatorData(attestationObject: [UInt8]) throws(Refusal) -> AuthenticatorData {
        let object: CBOR
        do { object = try CBOR.decode(attestationObject) } catch { throw .malformedAuthenticatorData }
        guard object[.text("fmt")] == .text("none"), case .map(let statement)? = object[.text("attStmt")], statement.isEmpty else {
            throw .unsupportedAttestation
        }
        guard case .bytes(let data)? = object[.text("authData")] else { throw .malformedAuthenticatorData }
        let parsed = try AuthenticatorData(data)
        guard parsed.credentialID != nil, parsed.publicKey != nil else { throw .malformedAuthenticatorData }
        return parsed
    }

    /// The sign-count rule (§6.1.1): when either count is non-zero the new one must be greater, or the credential may
    /// have been cloned. Authenticators that always send 0 (most synced passkeys) pass.
    public static func checkSignCount(stored: UInt32, received: UInt32) throws(Refusal) {
        if (stored != 0 || received != 0) && received <= stored { throw .signCountRegressed }
    }

    /// Loopback origins (`http://localhost:<port>`), accepted when no origin is configured: development and tests only.
    public static func isLoopbackOrigin(_ origin: String) -> Bool {
        guard let components = URLComponents(string: origin), ["http", "https"].contains(components.scheme ?? ""),
            components.host == "localhost", components.path.isEmpty, components.query == nil
        else { return false }
        return true
    }
}
