import Foundation

/// Where the directories the binary needs (`Migrations`, `Public`) are found when no variable names them.
///
/// An installed binary (`deploy/install PREFIX`) finds them at `PREFIX/share/reclaim/<name>`, beside
/// `PREFIX/bin/reclaim`; a binary built in a checkout (`<checkout>/.build/.../reclaim`) finds the checkout's.
/// Neither depends on the working directory, so `reclaim` runs from anywhere.
public enum InstalledFiles {
    /// The directories the service may need; each command asks only for the ones it reads.
    public struct Needs: OptionSet, Sendable {
        /// The set's bits.
        public let rawValue: Int
        /// A set from its bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `Migrations/`: `serve`, `migrate`, `demo seed`.
        public static let migrations = Needs(rawValue: 1)
        /// `Public/`: `serve` only.
        public static let publicFiles = Needs(rawValue: 2)
        /// What `serve` needs.
        public static let all: Needs = [.migrations, .publicFiles]
    }

    /// This process's executable, resolved through symbolic links (Linux `/proc/self/exe`).
    public static let executablePath: String? = {
        // A symlink in PATH (/usr/bin/reclaim -> /opt/reclaim/bin/reclaim) must lead to the real prefix.
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        return URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }()

    /// The places searched for `name`, in order, for an executable at `executablePath`.
    public static func candidates(for name: String, executablePath: String?) -> [String] {
        guard let executablePath, executablePath.hasPrefix("/") else { return [] }
        var places: [String] = []
        let binDirectory = URL(fileURLWithPath: executablePath).deletingLastPathComponent()
        // <prefix>/bin/reclaim -> <prefix>/share/reclaim/<name>
        places.append(binDirectory.deletingLastPathComponent().appendingPathComponent("share/reclaim/\(name)").path)
        // <checkout>/.build/<triple>/<configuration>/reclaim (or a test bundle there) -> <checkout>/<name>
        if let range = executablePath.range(of: "/.build/", options: .backwards) {
            places.append(String(executablePath[..<range.lowerBound]) + "/" + name)
        }
        return places
    }

    /// The first candidate that is a directory, or nil.
    public static func locate(_ name: String, executablePath: String?) -> String? {
        candidates(for: name, executablePath: executablePath).first { isDirectory($0) }
    }

    static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }
}
