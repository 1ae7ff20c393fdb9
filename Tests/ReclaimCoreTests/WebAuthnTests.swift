import Foundation
import Testing

@testable import ReclaimCore

/// The WebAuthn rules that need no cryptography: client data, authenticator data, the COSE key and the sign count.
@Suite struct WebAuthnTests {
    static let x = Array(repeating: UInt8(0x11), count: 32), y = Array(repeating: UInt8(0x22), count: 32)

    /// COSE_Key {1: 2, 3: -7, -1: 1, -2: x, -3: y}.
    static func coseKey(alg: UInt8 = 0x26, x: [UInt8] = x) -> [UInt8] {
        [0xA5, 0x01, 0x02, 0x03, alg, 0x20, 0x01, 0x21, 0x58, UInt8(x.count)] + x + [0x22, 0x58, 0x20] + y
    }

    static func authenticatorData(flags: UInt8, signCount: UInt32 = 7, credential: [UInt8]? = [9, 9, 9], key: [UInt8] = coseKey()) -> [UInt8] {
        var bytes = Array(repeating: UInt8(0xAB), count: 32) + [flags] + withUnsafeBytes(of: signCount.bigEndian) { Array($0) }
        if let credential {
            bytes += Array(repeating: 0, count: 16) + [UInt8(credential.count >> 8), UInt8(credential.count & 0xFF)] + credential + key
        }
        return bytes
    }

    @Test func registrationDataYieldsTheCredentialAndItsKey() throws {
        let data = try WebAuthn.AuthenticatorData(Self.authenticatorData(flags: 0x45))
        #expect(data.credentialID == [9, 9, 9])
        #expect(data.publicKey == WebAuthn.ES256Key(x: Self.x, y: Self.y))
        #expect(data.signCount == 7 && data.userPresent && data.userVerified)
        try data.check(rpIDHash: Array(repeating: 0xAB, count: 32))
        #expect(throws: WebAuthn.Refusal.wrongRelyingParty) { try data.check(rpIDHash: Array(repeating: 0xAC, count: 32)) }
        #expect(try WebAuthn.ES256Key(uncompressed: data.publicKey!.uncompressed) == data.publicKey)
    }

    @Test func presenceAndVerificationAreBothRequired() throws {
        let hash = Array(repeating: UInt8(0xAB), count: 32)
        #expect(throws: WebAuthn.Refusal.userNotPresent) {
            try WebAuthn.AuthenticatorData(Self.authenticatorData(flags: 0x04, credential: nil)).check(rpIDHash: hash)
        }
        #expect(throws: WebAuthn.Refusal.userNotVerified) {
            try WebAuthn.AuthenticatorData(Self.authenticatorData(flags: 0x01, credential: nil)).check(rpIDHash: hash)
        }
    }

    @Test func otherKeysAndMalformedDataAreRefused() {
        #expect(throws: WebAuthn.Refusal.unsupportedKey) {
            try WebAuthn.AuthenticatorData(Self.authenticatorData(flags: 0x45, key: Self.coseKey(alg: 0x27)))
        }
        #expect(throws: WebAuthn.Refusal.unsupportedKey) {
            try WebAuthn.AuthenticatorData(Self.authenticatorData(flags: 0x45, key: Self.coseKey(x: [1, 2])))
        }
        #expect(throws: WebAuthn.Refusal.malformedAuthenticatorData) { try WebAuthn.AuthenticatorData(Array(repeating: 0, count: 36)) }
        #expect(throws: WebAuthn.Refusal.malformedAuthenticatorData) {
            try WebAuthn.AuthenticatorData(Self.authenticatorData(flags: 0x05, credential: nil) + [0])
        }
        let full = Self.authenticatorData(flags: 0x45)
        for length in 37..<full.count {
            #expect(throws: WebAuthn.Refusal.self) { try WebAuthn.AuthenticatorData(Array(full.prefix(length))) }
        }
    }

    @Test func onlyNoneAttestationIsTaken() throws {
        let data = Self.authenticatorData(flags: 0x45)
        func object(_ format: String) -> [UInt8] {
            [0xA3, 0x63] + Array("fmt".utf8) + [0x60 + UInt8(format.utf8.count)] + Array(format.utf8) + [0x67] + Array("attStmt".utf8) + [0xA0]
                + [0x68] + Array("authData".utf8) + [0x58, UInt8(data.count)] + data
        }
        #expect(try WebAuthn.authenticatorData(attestationObject: object("none")).credentialID == [9, 9, 9])
        #expect(throws: WebAuthn.Refusal.unsupportedAttestation) { try WebAuthn.authenticatorData(attestationObject: object("packed")) }
        #expect(throws: WebAuthn.Refusal.malformedAuthenticatorData) { try WebAuthn.authenticatorData(attestationObject: [0xA0, 0x00]) }
    }

    @Test func clientDataNamesTypeOriginAndChallenge() throws {
        let json = Array(#"{"type":"webauthn.get","challenge":"abc","origin":"https://reclaim.example","crossOrigin":false}"#.utf8)
        let data = try WebAuthn.ClientData(json: json)
        try data.check(type: "webauthn.get") { $0 == "https://reclaim.example" }
        #expect(throws: WebAuthn.Refusal.wrongType) { try data.check(type: "webauthn.create") { _ in true } }
        #expect(throws: WebAuthn.Refusal.wrongOrigin) { try data.check(type: "webauthn.get") { $0 == "https://evil.example" } }
        let framed = try WebAuthn.ClientData(
            json: Array(#"{"type":"webauthn.get","challenge":"abc","origin":"https://reclaim.example","crossOrigin":true}"#.utf8))
        #expect(throws: WebAuthn.Refusal.wrongOrigin) { try framed.check(type: "webauthn.get") { _ in true } }
        #expect(throws: WebAuthn.Refusal.malformedClientData) { try WebAuthn.ClientData(json: Array(#"{"type":1}"#.utf8)) }
    }

    @Test(arguments: [(UInt32(0), UInt32(0), true), (0, 1, true), (5, 6, true), (5, 5, false), (5, 4, false), (5, 0, false)])
    func signCountsMustRiseUnlessBothAreZero(stored: UInt32, received: UInt32, accepted: Bool) {
        #expect(((try? WebAuthn.checkSignCount(stored: stored, received: received)) != nil) == accepted)
    }

    @Test func loopbackOriginsOnlyWhenNoneIsConfigured() {
        #expect(WebAuthn.isLoopbackOrigin("http://localhost:8080"))
        #expect(WebAuthn.isLoopbackOrigin("https://localhost"))
        #expect(!WebAuthn.isLoopbackOrigin("http://localhost.evil.example"))
        #expect(!WebAuthn.isLoopbackOrigin("http://127.0.0.1:8080"))
        #expect(!WebAuthn.isLoopbackOrigin("http://localhost:8080/path"))
    }
}
