import Foundation
import Testing
@testable import ReclaimAPI

@Suite struct ConfigurationTests {
    let base = ["DATABASE_URL": "host=/tmp dbname=x", "RECLAIM_PUBLIC_DIR": "/tmp", "RECLAIM_MIGRATIONS_DIR": "/tmp"]

    func refusal(_ overrides: [String: String], requireDatabase: Bool = true) -> ConfigurationError? {
        do {
            _ = try ServiceConfiguration.fromEnvironment(base.merging(overrides) { $1 }, requireDatabase: requireDatabase)
            return nil
        } catch {
            return error
        }
    }

    @Test func defaults() throws {
        let configuration = try ServiceConfiguration.fromEnvironment(base)
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.threads == ProcessInfo.processInfo.activeProcessorCount)
        #expect(configuration.databaseConnections == configuration.threads + 4)
        #expect(configuration.shutdownGraceSeconds == 10)
        #expect(!configuration.servesTLS)
        #expect(configuration.trustedProxies.isEmpty)
        #expect(configuration.metricsAllowed == .loopback && configuration.metricsAllowed.contains("::1"))
        let behindProxy = try ServiceConfiguration.fromEnvironment(base.merging(["RECLAIM_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8"]) { $1 })
        #expect(behindProxy.trustedProxies.contains("10.9.8.7") && !behindProxy.trustedProxies.contains("192.0.2.1"))
    }

    @Test(arguments: [
        ("RECLAIM_THREADS", "abc"), ("RECLAIM_THREADS", "0"), ("RECLAIM_ADDRESS", "nowhere"),
        ("RECLAIM_ADDRESS", "127.0.0.1:99999"), ("RECLAIM_ADDRESS", "example.com:80"), ("RECLAIM_LOG_LEVEL", "loud"),
        ("RECLAIM_CONNECTION_TIMEOUT", "-1"), ("RECLAIM_PUBLIC_DIR", "/does/not/exist"),
        ("RECLAIM_MIGRATIONS_DIR", "/does/not/exist"), ("RECLAIM_DB_CONNECTIONS", "1e3"),
        ("RECLAIM_TLS_CERT", "/does/not/exist"), ("RECLAIM_TRUSTED_PROXIES", "127.0.0.1, 10.0.0.0/40"),
        ("RECLAIM_METRICS_ALLOW", "monitoring.example.org"),
    ])
    func badValueNamesItsVariable(variable: String, value: String) {
        let error = refusal([variable: value, "RECLAIM_TLS_KEY": variable == "RECLAIM_TLS_CERT" ? "/etc/hostname" : ""])
        #expect(error?.variable == variable)
        #expect(error?.description.hasPrefix(variable + ":") == true)
        #expect(error?.description.contains("\n") == false)
    }

    @Test func missingDatabaseURL() {
        #expect(refusal(["DATABASE_URL": ""])?.variable == "DATABASE_URL")
        #expect(refusal(["DATABASE_URL": ""], requireDatabase: false) == nil)
    }

    @Test func tlsNeedsBothFiles() {
        #expect(refusal(["RECLAIM_TLS_CERT": "/etc/hostname"])?.variable == "RECLAIM_TLS_KEY")
        #expect(refusal(["RECLAIM_TLS_KEY": "/etc/hostname"])?.variable == "RECLAIM_TLS_CERT")
    }

    @Test func addresses() throws {
        #expect(try ServiceConfiguration.parseAddress("0.0.0.0:80") == ("0.0.0.0", 80))
        #expect(try ServiceConfiguration.parseAddress("[::1]:8443") == ("::1", 8443))
        #expect(try ServiceConfiguration.parseAddress("localhost:8080") == ("127.0.0.1", 8080))
        #expect(try ServiceConfiguration.parseAddress(":9000") == ("0.0.0.0", 9000))
    }
}
