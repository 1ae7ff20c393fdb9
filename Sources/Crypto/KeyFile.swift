import CSodium
import Foundation

/// Why a key file could not be loaded or written; messages name the file but never contain key bytes.
public enum KeyFileError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// No file at the path.
    case notFound(path: String)
    /// The path exists but is not a regular file.
    case notARegularFile(path: String)
    /// The file could not be opened, read or written; `reason` is the system's message.
    case ioFailed(path: String, reason: String)
    /// Group or others may read or write the file (mode & 0o077 != 0): refused, fix with `chmod 600`.
    case insecurePermissions(path: String, mode: UInt32)
    /// `write` found a file already there and `overwrite` was false.
    case alreadyExists(path: String)
    /// Not valid JSON or not the expected shape; `reason` names the field, never its value.
    case malformed(path: String, reason: String)
    /// A `format` this version does not understand.
    case unsupportedFormat(path: String, format: Int)
    /// A purpose name this version does not know.
    case unknownPurpose(path: String, name: String)
    /// No active key for a purpose the service needs.
    case missingPurpose(path: String, purpose: KeyPurpose)
    /// Two keys share an id.
    case duplicateKeyID(path: String, id: String)
    /// `active` names a key id that is not in `keys`.
    case unknownKeyID(path: String, id: String)
    /// `active` makes a key of another purpose the active key for `purpose`.
    case purposeMismatch(path: String, id: String, purpose: KeyPurpose)
    /// A key is not base64 text.
    case invalidKeyEncoding(path: String, id: String)
    /// A key does not decode to 32 bytes.
    case invalidKeyLength(path: String, id: String, length: Int)

    /// One line naming the file and the problem.
    public var description: String {
        switch self {
        case .notFound(let path): "key file \(path): not found (create one with `reclaim keys generate`)"
        case .notARegularFile(let path): "key file \(path): not a regular file"
        case .ioFailed(let path, let reason): "key file \(path): \(reason)"
        case .insecurePermissions(let path, let mode):
            "key file \(path): mode 0\(String(mode, radix: 8)) lets group or others access it; run `chmod 600 \(path)`"
        case .alreadyExists(let path): "key file \(path): already exists, refusing to overwrite it"
        case .malformed(let path, let reason): "key file \(path): \(reason)"
        case .unsupportedFormat(let path, let format): "key file \(path): unsupported format \(format) (expected \(KeyFile.format))"
        case .unknownPurpose(let path, let name): "key file \(path): unknown purpose \"\(name)\""
        case .missingPurpose(let path, let purpose):
            "key file \(path): no active key for purpose \"\(purpose.rawValue)\" (add one with `reclaim keys rotate \(purpose.rawValue)`)"
        case .duplicateKeyID(let path, let id): "key file \(path): key id \"\(id)\" appears more than once"
        case .unknownKeyID(let path, let id): "key file \(path): active key \"\(id)\" is not among the keys"
        case .purposeMismatch(let path, let id, let purpose):
            "key file \(path): key \"\(id)\" is not a \"\(purpose.rawValue)\" key but is active for that purpose"
        case .invalidKeyEncoding(let path, let id): "key file \(path): key \"\(id)\" is not base64"
        case .invalidKeyLength(let path, let id, let length):
            "key file \(path): key \"\(id)\" is \(length) bytes, expected \(SymmetricKey.byteCount)"
        }
    }

    /// Same as `description`, for `localizedDescription`.
    public var errorDescription: String? { description }
}

/// The service's secret keys, kept in a 0600 JSON file outside the database; every key has an id so old data
/// still decrypts after `rotate` makes a new key active.
public struct KeyFile: Sendable, CustomStringConvertible {
    /// One key and what it is for.
    public struct Entry: Sendable {
        /// Stable id stored next to whatever the key protects (e.g. "documents-2").
        public let id: String
        /// What the key may be used for.
        public let purpose: KeyPurpose
        /// When the key was made.
        public let createdAt: Date
        /// The key itself (redacted in descriptions).
        public let key: SymmetricKey
    }

    /// The file format version this code writes and reads.
    public static let format = 1
    /// Largest file `load` will read; a key file is a few KiB.
    static let maximumSize = 1 << 20

    /// Every key, old and active, in file order.
    public private(set) var entries: [Entry]
    /// The id of the active key for each purpose.
    public private(set) var active: [KeyPurpose: String]

    private init(entries: [Entry], active: [KeyPurpose: String]) {
        self.entries = entries
        self.active = active
    }

    /// A new key file with one fresh random key per purpose.
    public static func generate(now: Date = Date()) -> KeyFile {
        var file = KeyFile(entries: [], active: [:])
        for purpose in KeyPurpose.allCases { file.rotate(purpose, now: now) }
        return file
    }

    /// The key new data for `purpose` must use, and its id to store alongside.
    public func activeKey(for purpose: KeyPurpose) -> (id: String, key: SymmetricKey) {
        // generate, load and rotate all guarantee an active, existing key for every purpose.
        guard let id = active[purpose], let key = key(id: id) else {
            preconditionFailure("KeyFile invariant broken: no active key for \(purpose.rawValue)")
        }
        return (id, key)
    }

    /// The key with `id`, active or not; nil if unknown.
    public func key(id: String) -> SymmetricKey? {
        entries.first { $0.id == id }?.key
    }

    /// Every key of `purpose`, old and active, in file order (old checkpoints verify under old keys).
    public func entries(for purpose: KeyPurpose) -> [Entry] {
        entries.filter { $0.purpose == purpose }
    }

    /// The key with `id` only if it belongs to `purpose`, so stored ids cannot make one purpose's key serve another.
    public func key(id: String, purpose: KeyPurpose) -> SymmetricKey? {
        entries.first { $0.id == id && $0.purpose == purpose }?.key
    }

    /// Adds a fresh key for `purpose` and makes it active; older keys stay for reading. Returns the new id.
    @discardableResult
    public mutating func rotate(_ purpose: KeyPurpose, now: Date = Date()) -> String {
        let prefix = purpose.rawValue + "-"
        let highest = entries.compactMap { $0.id.hasPrefix(prefix) ? Int($0.id.dropFirst(prefix.count)) : nil }.max() ?? 0
        var number = highest + 1
        while entries.contains(where: { $0.id == prefix + String(number) }) { number += 1 }
        let id = prefix + String(number)
        // Whole seconds, so the timestamp survives a write/load round trip unchanged.
        let created = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        entries.append(Entry(id: id, purpose: purpose, createdAt: created, key: SymmetricKey()))
        active[purpose] = id
        return id
    }

    /// Key ids and purposes, never key bytes.
    public var description: String {
        let list = entries.map { "\($0.id)(\($0.purpose.rawValue)\(active[$0.purpose] == $0.id ? ", active" : ""))" }
        return "KeyFile(\(list.joined(separator: ", ")))"
    }

    // MARK: Writing

    /// Writes the file with mode 0600 atomically (temporary file, then link or rename); refuses to replace an
    /// existing file unless `overwrite` is true.
    public func write(to path: String, overwrite: Bool = false) throws {
        var data = try encoded()
        defer { wipe(&data) }
        if !overwrite, fileExists(path) { throw KeyFileError.alreadyExists(path: path) }

        let temporary = path + ".tmp-" + Hex.encode(SecureRandom.bytes(8))
        let fd = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw KeyFileError.ioFailed(path: path, reason: "cannot create \(temporary): \(Self.systemError())") }
        // Cleared once rename has consumed the temporary name; otherwise (error, or after link) it is removed.
        var temporaryExists = true
        defer { if temporaryExists { unlink(temporary) } }
        do {
            defer { close(fd) }
            // The umask can only remove bits, but be explicit: nobody else may ever see this file.
            guard fchmod(fd, 0o600) == 0 else { throw KeyFileError.ioFailed(path: path, reason: "chmod: \(Self.systemError())") }
            try data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = Foundation.write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw KeyFileError.ioFailed(path: path, reason: "write: \(Self.systemError())")
                    }
                    offset += n
                }
            }
            guard fsync(fd) == 0 else { throw KeyFileError.ioFailed(path: path, reason: "fsync: \(Self.systemError())") }
        }

        if overwrite || link(temporary, path) != 0 {
            // link is atomic create-if-absent; a race with another writer lands here.
            if !overwrite, errno == EEXIST { throw KeyFileError.alreadyExists(path: path) }
            // Overwriting, or a file system without hard links (then after the existence check above): rename.
            guard rename(temporary, path) == 0 else { throw KeyFileError.ioFailed(path: path, reason: "rename: \(Self.systemError())") }
            temporaryExists = false
        }
        Self.syncDirectory(of: path)
    }

    private func encoded() throws -> Data {
        let formatter = Date.ISO8601FormatStyle()
        let file = FileDTO(
            format: Self.format,
            keys: entries.map { entry in
                KeyDTO(
                    id: entry.id, purpose: entry.purpose.rawValue, created_at: entry.createdAt.formatted(formatter),
                    key: entry.key.withUnsafeBytes { Data($0).base64EncodedString() })
            },
            active: Dictionary(uniqueKeysWithValues: active.map { ($0.key.rawValue, $0.value) }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(file)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    private func fileExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private static func syncDirectory(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        // Best effort: makes the new name durable; failure here does not undo the write.
        _ = fsync(fd)
        close(fd)
    }

    private static func systemError() -> String { String(cString: strerror(errno)) }

    // MARK: Loading

    /// Reads and validates a key file; refuses files that group or others can access, and any missing purpose unless
    /// `allowingMissing` (only `reclaim keys rotate`, which then adds it: a file made before the purpose existed).
    public static func load(path: String, allowingMissing: Bool = false) throws -> KeyFile {
        var data = try readSecureFile(path)
        defer { wipe(&data) }

        let decoder = JSONDecoder()
        let probe: FormatProbe
        do { probe = try decoder.decode(FormatProbe.self, from: data) } catch { throw malformed(path, error) }
        guard probe.format == format else { throw KeyFileError.unsupportedFormat(path: path, format: probe.format) }
        let file: FileDTO
        do { file = try decoder.decode(FileDTO.self, from: data) } catch { throw malformed(path, error) }

        var entries: [Entry] = []
        var seen = Set<String>()
        for item in file.keys {
            guard !item.id.isEmpty else { throw KeyFileError.malformed(path: path, reason: "a key has an empty id") }
            guard seen.insert(item.id).inserted else { throw KeyFileError.duplicateKeyID(path: path, id: item.id) }
            guard let purpose = KeyPurpose(rawValue: item.purpose) else {
                throw KeyFileError.unknownPurpose(path: path, name: item.purpose)
            }
            guard let created = parseTimestamp(item.created_at) else {
                throw KeyFileError.malformed(path: path, reason: "key \"\(item.id)\": created_at is not an RFC 3339 timestamp")
            }
            guard var raw = Data(base64Encoded: item.key) else { throw KeyFileError.invalidKeyEncoding(path: path, id: item.id) }
            defer { wipe(&raw) }
            guard raw.count == SymmetricKey.byteCount else {
                throw KeyFileError.invalidKeyLength(path: path, id: item.id, length: raw.count)
            }
            entries.append(Entry(id: item.id, purpose: purpose, createdAt: created, key: try SymmetricKey(bytes: raw)))
        }

        var active: [KeyPurpose: String] = [:]
        for (name, id) in file.active {
            guard let purpose = KeyPurpose(rawValue: name) else { throw KeyFileError.unknownPurpose(path: path, name: name) }
            guard let entry = entries.first(where: { $0.id == id }) else { throw KeyFileError.unknownKeyID(path: path, id: id) }
            guard entry.purpose == purpose else { throw KeyFileError.purposeMismatch(path: path, id: id, purpose: purpose) }
            active[purpose] = id
        }
        for purpose in KeyPurpose.allCases where active[purpose] == nil && !allowingMissing {
            throw KeyFileError.missingPurpose(path: path, purpose: purpose)
        }
        return KeyFile(entries: entries, active: active)
    }

    // Checks type and mode on the open descriptor (fstat), so the file checked is the file read.
    private static func readSecureFile(_ path: String) throws -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { throw KeyFileError.notFound(path: path) }
            throw KeyFileError.ioFailed(path: path, reason: "cannot open: \(systemError())")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw KeyFileError.ioFailed(path: path, reason: "stat: \(systemError())") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw KeyFileError.notARegularFile(path: path) }
        let mode = UInt32(info.st_mode) & 0o7777
        guard mode & 0o077 == 0 else { throw KeyFileError.insecurePermissions(path: path, mode: mode) }
        guard Int(info.st_size) <= maximumSize else {
            throw KeyFileError.malformed(path: path, reason: "larger than \(maximumSize) bytes, not a key file")
        }
        var data = Data(count: Int(info.st_size))
        var total = 0
        try data.withUnsafeMutableBytes { raw in
            while total < raw.count {
                let n = read(fd, raw.baseAddress! + total, raw.count - total)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw KeyFileError.ioFailed(path: path, reason: "read: \(systemError())")
                }
                if n == 0 { break }
                total += n
            }
        }
        if total < data.count { data.count = total }
        return data
    }

    private static func parseTimestamp(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    // Names the field at fault but never echoes file content (which could be key material).
    private static func malformed(_ path: String, _ error: Error) -> KeyFileError {
        func field(_ codingPath: [CodingKey]) -> String {
            codingPath.isEmpty ? "top level" : codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        let reason: String
        switch error as? DecodingError {
        case .dataCorrupted(let context)? where context.codingPath.isEmpty: reason = "not valid JSON"
        case .dataCorrupted(let context)?: reason = "invalid value at \(field(context.codingPath))"
        case .keyNotFound(let key, let context)?: reason = "missing field \"\(key.stringValue)\" at \(field(context.codingPath))"
        case .typeMismatch(_, let context)?: reason = "wrong type at \(field(context.codingPath))"
        case .valueNotFound(_, let context)?: reason = "missing value at \(field(context.codingPath))"
        default: reason = "not valid JSON"
        }
        return KeyFileError.malformed(path: path, reason: reason)
    }
}

// Best effort: clears our copy of key material; Strings made from it along the way cannot be wiped.
private func wipe(_ data: inout Data) {
    _ = Sodium.ready
    data.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress, raw.count > 0 { sodium_memzero(base, raw.count) }
    }
}

private struct FormatProbe: Decodable {
    var format: Int
}

// The on-disk shape; field names are the file's snake_case.
private struct FileDTO: Codable {
    var format: Int
    var keys: [KeyDTO]
    var active: [String: String]
}

private struct KeyDTO: Codable {
    var id: String
    var purpose: String
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // The key file's JSON member, read and written by name.
    var created_at: String
    var key: String
}
