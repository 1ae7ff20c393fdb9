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
        // HTTP threads for the connections, one request queue run by two threads a core, a database connection for each.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        #expect(configuration.threads == max(1, cores / 2))
        #expect(configuration.handlerThreads == 2 * cores)
        #expect(configuration.databaseConnections == 2 * cores + 4)
        let inline = try ServiceConfiguration.fromEnvironment(base.merging(["RECLAIM_HANDLER_THREADS": "0", "RECLAIM_THREADS": "3"]) { $1 })
        #expect(inline.handlerThreads == 0 && inline.databaseConnections == 3 + 4)
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
        ("RECLAIM_METRICS_ALLOW", "monitoring.example.org"), ("RECLAIM_MAIL_THREADS", "17"), ("RECLAIM_WEBHOOK_THREADS", "-1"),
        ("RECLAIM_WEBHOOK_PER_ENDPOINT", "0"), ("RECLAIM_WEBHOOK_BACKOFF", "5,soon"), ("RECLAIM_DELIVERY_THREADS", "many"),
    ])
    func badValueNamesItsVariable(variable: String, value: String) {
        let error = refusal([variable: value, "RECLAIM_TLS_KEY": variable == "RECLAIM_TLS_CERT" ? "/etc/hostname" : ""])
        #expect(error?.variable == variable)
        #expect(error?.description.hasPrefix(variable + ":") == true)
        #expect(error?.description.contains("\n") == false)
    }

    @Test func deliveryLanesAndTheDeprecatedSingleCount() throws {
        func configuration(_ overrides: [String: String]) throws -> ServiceConfiguration {
            try ServiceConfiguration.fromEnvironment(base.merging(overrides) { $1 })
        }
        let defaults = try configuration([:])
        #expect(defaults.mailThreads == 1 && defaults.webhookThreads == 2 && defaults.webhookPerEndpoint == 1)
        #expect(defaults.webhookBackoff == [5, 30, 60, 300, 900, 1800, 3600])
        // RECLAIM_DELIVERY_THREADS sizes each lane that is not set on its own; 0 still turns delivery off.
        let old = try configuration(["RECLAIM_DELIVERY_THREADS": "3"])
        #expect(old.mailThreads == 3 && old.webhookThreads == 3)
        let off = try configuration(["RECLAIM_DELIVERY_THREADS": "0"])
        #expect(off.mailThreads == 0 && off.webhookThreads == 0)
        let mailOnly = try configuration(["RECLAIM_DELIVERY_THREADS": "0", "RECLAIM_MAIL_THREADS": "1"])
        #expect(mailOnly.mailThreads == 1 && mailOnly.webhookThreads == 0)
        let tuned = try configuration(["RECLAIM_WEBHOOK_THREADS": "4", "RECLAIM_WEBHOOK_PER_ENDPOINT": "2", "RECLAIM_WEBHOOK_BACKOFF": "1, 2"])
        let settings = tuned.notificationSettings
        #expect(settings.mailThreads == 1 && settings.webhookThreads == 4 && settings.webhookPerEndpoint == 2)
        #expect(settings.endpointBackoff.delays == [1, 2])
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
