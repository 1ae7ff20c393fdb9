import Crypto
import Foundation
import Testing

@Suite("KeyFile")
struct KeyFileTests {
    /// Runs `body` with a private directory that is removed afterwards.
    func withDirectory(_ body: (String) throws -> Void) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory)
    }

    func mode(of path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    func writeRaw(_ text: String, to path: String, mode: Int = 0o600) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode])
    }

    func base64Keys(_ file: KeyFile) -> [String] {
        file.entries.map { $0.key.withUnsafeBytes { Data($0).base64EncodedString() } }
    }

    @Test func generateWriteLoadRoundTrip() throws {
        try withDirectory { directory in
            let path = directory + "/keys.json"
            let generated = KeyFile.generate()
            #expect(generated.entries.count == KeyPurpose.allCases.count)
            try generated.write(to: path)
            #expect(try mode(of: path) == 0o600)
            // Only the key file is left: the temporary file is gone.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["keys.json"])

            let loaded = try KeyFile.load(path: path)
            for purpose in KeyPurpose.allCases {
                let (id, key) = loaded.activeKey(for: purpose)
                #expect(id == "\(purpose.rawValue)-1")
                #expect(key == generated.activeKey(for: purpose).key)
                #expect(loaded.key(id: id) == key)
                #expect(loaded.key(id: id, purpose: purpose) == key)
            }
            #expect(loaded.entries.map(\.createdAt) == generated.entries.map(\.createdAt))
            // Every purpose has its own key.
            #expect(Set(base64Keys(loaded)).count == KeyPurpose.allCases.count)
            #expect(loaded.key(id: "nope") == nil)
            #expect(loaded.key(id: "totp-1", purpose: .documents) == nil)

            let json = try String(contentsOfFile: path, encoding: .utf8)
            #expect(json.contains("\"format\" : 1"))
            #expect(json.contains("\"card_fingerprint\" : \"card_fingerprint-1\""))
            #expect(json.contains("\"created_at\""))
        }
    }

    @Test func refusesToOverwriteUnlessAsked() throws {
        try withDirectory { directory in
            let path = directory + "/keys.json"
            let first = KeyFile.generate()
            try first.write(to: path)
            let second = KeyFile.generate()
            #expect(throws: KeyFileError.alreadyExists(path: path)) { try second.write(to: path) }
            #expect(try KeyFile.load(path: path).activeKey(for: .documents).key == first.activeKey(for: .documents).key)
            try second.write(to: path, overwrite: true)
            #expect(try KeyFile.load(path: path).activeKey(for: .documents).key == second.activeKey(for: .documents).key)
            #expect(try mode(of: path) == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["keys.json"])
        }
    }

    @Test("group- or world-accessible files are refused", arguments: [0o644, 0o640, 0o604, 0o660, 0o602, 0o620])
    func insecureModeRefused(mode: Int) throws {
        try withDirectory { directory in
            let path = directory + "/keys.json"
            let file = KeyFile.generate()
            try file.write(to: path)
            #expect(chmod(path, mode_t(mode)) == 0)
            #expect(throws: KeyFileError.insecurePermissions(path: path, mode: UInt32(mode))) { try KeyFile.load(path: path) }
            #expect(chmod(path, 0o400) == 0)
            #expect(try KeyFile.load(path: path).entries.count == file.entries.count)
        }
    }

    @Test func rotationKeepsOldKeysReadable() throws {
        try withDirectory { directory in
            let path = directory + "/keys.json"
            var file = KeyFile.generate()
            let old = file.activeKey(for: .documents)
            let sealed = SecretBox.seal(bytes("evidence"), key: old.key, associatedData: bytes(old.id))

            let newID = file.rotate(.documents)
            #expect(newID == "documents-2")
            try file.write(to: path)
            let loaded = try KeyFile.load(path: path)
            let active = loaded.activeKey(for: .documents)
            #expect(active.id == "documents-2")
            #expect(active.key != old.key)
            #expect(loaded.activeKey(for: .totp).id == "totp-1")

            // Data sealed under the old key still opens through its stored id.
            let oldKey = try #require(loaded.key(id: old.id, purpose: .documents))
            #expect(try SecretBox.open(sealed, key: oldKey, associatedData: bytes(old.id)) == bytes("evidence"))

            var again = loaded
            #expect(again.rotate(.documents) == "documents-3")
            #expect(again.entries.filter { $0.purpose == .documents }.count == 3)
        }
    }

    /// A file written before the `checkpoint` purpose existed: `load` refuses it naming the command that repairs it,
    /// which loads it anyway, adds the purpose and writes it back; every older key is untouched.
    @Test func aPurposeAddedLaterIsAddedByRotation() throws {
        try withDirectory { directory in
            let path = directory + "/keys.json"
            try KeyFile.generate().write(to: path)
            let json = try String(contentsOfFile: path, encoding: .utf8)
            var object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            object["keys"] = (object["keys"] as? [[String: Any]])?.filter { $0["purpose"] as? String != "checkpoint" }
            object["active"] = (object["active"] as? [String: String])?.filter { $0.key != "checkpoint" }
            try? FileManager.default.removeItem(atPath: path)
            writeRaw(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self), to: path)

            #expect(throws: KeyFileError.missingPurpose(path: path, purpose: .checkpoint)) { try KeyFile.load(path: path) }
            #expect(KeyFileError.missingPurpose(path: path, purpose: .checkpoint).description.contains("reclaim keys rotate checkpoint"))
            var old = try KeyFile.load(path: path, allowingMissing: true)
            let documents = old.activeKey(for: .documents)
            #expect(old.rotate(.checkpoint) == "checkpoint-1")
            try old.write(to: path, overwrite: true)
            let repaired = try KeyFile.load(path: path)
            #expect(repaired.activeKey(for: .checkpoint).id == "checkpoint-1")
            #expect(repaired.activeKey(for: .documents).key == documents.key)
            #expect(repaired.entries(for: .checkpoint).count == 1)
        }
    }

    @Test func clearErrors() throws {
        try withDirectory { directory in
            let path = directory + "/keys.json"
            #expect(throws: KeyFileError.notFound(path: path)) { try KeyFile.load(path: path) }
            #expect(throws: KeyFileError.notARegularFile(path: directory)) { try KeyFile.load(path: directory) }

            let good = KeyFile.generate()
            try good.write(to: path)
            let json = try String(contentsOfFile: path, encoding: .utf8)
            let anyKey = base64Keys(good)[0]
            func check(_ text: String, _ expected: KeyFileError) {
                try? FileManager.default.removeItem(atPath: path)
                writeRaw(text, to: path)
                #expect(throws: expected) { try KeyFile.load(path: path) }
            }

            check("{ not json " + anyKey, .malformed(path: path, reason: "not valid JSON"))
            check("[]", .malformed(path: path, reason: "wrong type at top level"))
            check(#"{"format": 2, "keys": [], "active": {}}"#, .unsupportedFormat(path: path, format: 2))
            check(#"{"format": 1, "active": {}}"#, .malformed(path: path, reason: "missing field \"keys\" at top level"))
            check(
                json.replacingOccurrences(of: "\"session\" : \"session-1\"", with: "\"sessionx\" : \"session-1\""),
                .unknownPurpose(path: path, name: "sessionx"))
            check(
                json.replacingOccurrences(of: "\"session\" : \"session-1\",", with: "")
                    .replacingOccurrences(of: ",\n    \"session\" : \"session-1\"", with: ""),
                .missingPurpose(path: path, purpose: .session))
            check(
                json.replacingOccurrences(of: "\"totp\" : \"totp-1\"", with: "\"totp\" : \"totp-9\""),
                .unknownKeyID(path: path, id: "totp-9"))
            check(
                json.replacingOccurrences(of: "\"totp\" : \"totp-1\"", with: "\"totp\" : \"session-1\""),
                .purposeMismatch(path: path, id: "session-1", purpose: .totp))
            let shortKey = Data(SecureRandom.bytes(16)).base64EncodedString()
            check(
                json.replacingOccurrences(of: anyKey, with: shortKey),
                .invalidKeyLength(path: path, id: good.entries[0].id, length: 16))
            check(
                json.replacingOccurrences(of: anyKey, with: "%%%" + anyKey),
                .invalidKeyEncoding(path: path, id: good.entries[0].id))
            check(
                json.replacingOccurrences(of: "\"id\" : \"signing-1\"", with: "\"id\" : \"totp-1\""),
                .duplicateKeyID(path: path, id: "totp-1"))
        }
    }

    @Test func keyBytesNeverInDescriptionsOrErrors() throws {
        try withDirectory { directory in
            let path = directory + "/keys.json"
            let file = KeyFile.generate()
            try file.write(to: path)
            let secrets = base64Keys(file) + file.entries.map { $0.key.withUnsafeBytes { Hex.encode($0) } }

            var texts = [file.description, String(reflecting: file), "\(file.entries)", "\(file.activeKey(for: .totp))"]
            var dumped = ""
            dump(file, to: &dumped)
            texts.append(dumped)

            // Errors raised while the file holds key material.
            chmod(path, 0o644)
            do { _ = try KeyFile.load(path: path) } catch { texts += ["\(error)", error.localizedDescription] }
            let json = try String(contentsOfFile: path, encoding: .utf8)
            let key0 = base64Keys(file)[0]
            for broken in [
                String(json.dropLast(5)), json.replacingOccurrences(of: key0, with: String(key0.dropLast(4))),
                json.replacingOccurrences(of: "\"" + key0 + "\"", with: "[\"" + key0 + "\"]"),
            ] {
                try? FileManager.default.removeItem(atPath: path)
                writeRaw(broken, to: path)
                do { _ = try KeyFile.load(path: path) } catch { texts += ["\(error)", error.localizedDescription] }
            }
            #expect(texts.count == 5 + 2 * 4)
            for text in texts {
                for secret in secrets { #expect(!text.contains(secret)) }
                #expect(!text.contains(String(key0.prefix(12))))
            }
            #expect(texts.contains { $0.contains(path) })
        }
    }
}
