import Foundation

/// A Maildir (`new/`, `cur/`, `tmp/`), as a mail server delivers into it: the inbound worker lists `new/` and
/// `cur/`, reads a message, and removes it only once it is stored. The one type here that does I/O (the parser
/// does none). Safe for several readers: a message another reader removed first is simply gone.
public struct Maildir: Sendable {
    /// The Maildir's folder (holding `new`, `cur`, `tmp`).
    public let path: String

    /// One message file: its folder (`new` or `cur`) and its name.
    public struct Entry: Sendable, Hashable, CustomStringConvertible {
        public let folder: String
        public let name: String
        /// The unique part of the name (before `:2,` flags), the same in `new/` and `cur/`.
        public var uniqueName: String { name.split(separator: ":", maxSplits: 1).first.map(String.init) ?? name }
        public var description: String { "\(folder)/\(name)" }
    }

    /// A message read from the Maildir: at most the bytes asked for, and whether there were more.
    public struct Message: Sendable {
        public let bytes: [UInt8]
        /// The file is larger than the bytes read.
        public let truncated: Bool
    }

    /// Why a Maildir operation failed: the path and the system's reason.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "Maildir \(path): \(reason)" }
    }

    public init(path: String) {
        self.path = path
    }

    /// Creates `new`, `cur` and `tmp` when missing (mode 0700).
    public func create() throws(Failure) {
        for folder in ["new", "cur", "tmp"] {
            do {
                try FileManager.default.createDirectory(
                    atPath: path + "/" + folder, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
            } catch {
                throw Failure(path: path + "/" + folder, reason: error.localizedDescription)
            }
        }
    }

    /// The messages in `new/` then `cur/`, each folder in name order (delivery time first in the usual names);
    /// dot files skipped.
    public func entries() throws(Failure) -> [Entry] {
        var entries: [Entry] = []
        for folder in ["new", "cur"] {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: path + "/" + folder)
            } catch {
                throw Failure(path: path + "/" + folder, reason: error.localizedDescription)
            }
            entries += names.filter { !$0.hasPrefix(".") }.sorted().map { Entry(folder: folder, name: $0) }
        }
        return entries
    }

    /// Reads at most `maximumBytes` of a message; nil when it is gone (another reader removed it).
    public func read(_ entry: Entry, maximumBytes: Int) throws(Failure) -> Message? {
        let file = path + "/" + entry.folder + "/" + entry.name
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw Failure(path: file, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        // One byte past the limit tells a larger file from one exactly at it.
        while bytes.count <= maximumBytes {
            let want = min(chunk.count, maximumBytes + 1 - bytes.count)
            let count = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, want) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(path: file, reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        let truncated = bytes.count > maximumBytes
        if truncated { bytes.removeLast(bytes.count - maximumBytes) }
        return Message(bytes: bytes, truncated: truncated)
    }

    /// Removes a message (call it only after the message is stored); one already gone is not an error.
    public func remove(_ entry: Entry) throws(Failure) {
        let file = path + "/" + entry.folder + "/" + entry.name
        guard unlink(file) == 0 || errno == ENOENT else { throw Failure(path: file, reason: String(cString: strerror(errno))) }
    }

    /// Delivers a message as a mail server does: written and synced in `tmp/`, then renamed into `new/` (so a
    /// reader never sees half a file). Returns its entry.
    @discardableResult
    public func deliver(_ message: [UInt8]) throws(Failure) -> Entry {
        let name = "\(Int(Date().timeIntervalSince1970)).M\(UInt64.random(in: 0...UInt64.max))P\(getpid()).reclaim"
        let temporary = path + "/tmp/" + name
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure(path: temporary, reason: String(cString: strerror(errno))) }
        var written = 0
        while written < message.count {
            let count = message.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress! + written, message.count - written) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(temporary)
                throw Failure(path: temporary, reason: reason)
            }
            written += count
        }
        fsync(descriptor)
        close(descriptor)
        guard rename(temporary, path + "/new/" + name) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(path: temporary, reason: reason)
        }
        return Entry(folder: "new", name: name)
    }
}
