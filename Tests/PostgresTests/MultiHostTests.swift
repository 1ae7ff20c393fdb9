import Foundation
import Postgres
import ReclaimTestSupport
import Testing

/// `deploy/cluster patroni` gives the service a libpq multi-host DATABASE_URL with target_session_attrs=read-write:
/// the wrapper must hand host lists and session attributes to libpq unchanged.
@Suite struct MultiHostTests {
    /// The test database's conninfo as keyword → value (written as key='value', no spaces or quotes inside).
    func keywords(_ database: TestDatabase) -> [String: String] {
        var parsed: [String: String] = [:]
        for pair in database.connectionString.split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { parsed[String(parts[0])] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "'")) }
        }
        return parsed
    }

    @Test func aDeadFirstHostIsSkippedForTheLiveOne() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let live = keywords(database)
        let host = try #require(live["host"])
        let port = live["port"] ?? "5432"
        // Keyword form and URI form, as an operator may write either; the first host has no server.
        let keyword =
            "host=/nonexistent/socket,\(host) port=\(port),\(port) user=\(live["user"] ?? "reclaim") dbname=\(database.name) target_session_attrs=read-write"
        let connection = try PostgresConnection(connectionString: keyword)
        defer { connection.close() }
        #expect(try connection.query("SELECT current_database()").first!.decode(0, as: String.self) == database.name)

        let encodedHost = try #require(host.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let uri =
            "postgresql://\(live["user"] ?? "reclaim")@127.0.0.1:1,%2Fnonexistent:\(port),\(encodedHost):\(port)/\(database.name)?target_session_attrs=read-write"
        let viaURI = try PostgresConnection(connectionString: uri)
        defer { viaURI.close() }
        #expect(try viaURI.query("SELECT 1").first!.decode(0, as: Int.self) == 1)
    }

    @Test func aReadOnlyServerIsRefusedWhenReadWriteIsAsked() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        // What a standby looks like to libpq (default_transaction_read_only reported on): never a write target.
        let readOnly = "\(database.connectionString) options='-c default_transaction_read_only=on'"
        #expect(throws: PostgresError.self) { try PostgresConnection(connectionString: readOnly + " target_session_attrs=read-write") }
        let anyServer = try PostgresConnection(connectionString: readOnly + " target_session_attrs=any")
        anyServer.close()
    }
}
