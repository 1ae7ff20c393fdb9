import Foundation
import ReclaimTestSupport
import Testing

/// `deploy/pg destroy DIR` deletes only a directory it made: a mistyped DIR (a parent such as /tmp) is refused.
@Suite struct PgScriptTests {
    @Test func destroyRefusesADirectoryHoldingAnythingElse() throws {
        let directory = NSTemporaryDirectory() + "reclaim-pg-refuse-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/work", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("keep".utf8).write(to: URL(fileURLWithPath: directory + "/work/notes.md"))
        let result = try Shell.capture([RepositoryPaths.root + "/deploy/pg", "destroy", directory])
        #expect(result.status != 0)
        #expect(result.error.contains("refusing to delete"))
        #expect(FileManager.default.fileExists(atPath: directory + "/work/notes.md"))
    }

    @Test func destroyDeletesItsOwnDirectory() throws {
        let directory = NSTemporaryDirectory() + "reclaim-pg-own-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: directory + "/postgres.log", contents: nil)
        FileManager.default.createFile(atPath: directory + "/port", contents: Data("1".utf8))
        let result = try Shell.capture([RepositoryPaths.root + "/deploy/pg", "destroy", directory])
        #expect(result.status == 0, "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: directory))
    }
}
