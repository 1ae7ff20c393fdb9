import Foundation
import ReclaimTestSupport
import Testing

/// `deploy/pg destroy DIR` deletes only a directory it made: a mistyped DIR (a parent such as /tmp) is refused; and
/// `deploy/pg start` refuses a cluster whose only superuser is the service's own login, as the old script made them.
@Suite struct PgScriptTests {
    @Test func startRefusesAClusterWhoseSuperuserIsTheServicesLogin() throws {
        let cluster = try PrivateCluster(roles: false, durable: false)
        defer { cluster.destroy() }
        // What `initdb -U reclaim` left: no "postgres", and "reclaim" the superuser.
        try Shell.run(["psql", cluster.conninfo, "-qXc", "CREATE ROLE reclaim SUPERUSER LOGIN"])
        try Shell.run(["psql", cluster.connectionString(database: "postgres", user: "reclaim"), "-qXc", "ALTER ROLE postgres RENAME TO old_postgres"])
        let again = try Shell.capture([RepositoryPaths.root + "/deploy/pg", "start", cluster.directory, cluster.port])
        #expect(again.status != 0)
        #expect(again.error.contains("its superuser is \"reclaim\", the service's own login"), "\(again.error)")
        #expect(again.output.isEmpty, "no conninfo for a cluster the service must not use")
        #expect(try Shell.capture([RepositoryPaths.root + "/deploy/pg", "status", cluster.directory]).status != 0, "and it is stopped")
    }

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
