import Foundation
import HTTPServer
import Logging
import Postgres
import ReclaimCore
import ReclaimStore

/// `/healthz`, `/readyz`, `/metrics`, `/openapi.json` and `/api/v1/vocabulary`.
final class OperationsController: Sendable {
    let pool: PostgresPool
    let schemaVersion: Int
    let schemaChecksum: String
    let metrics: RequestMetrics
    let openAPIDocument: @Sendable () -> [UInt8]
    /// Who may read `/metrics` (`RECLAIM_METRICS_ALLOW`); the client address is the forwarded one behind a trusted proxy.
    let metricsAllowed: AddressRanges

    init(
        pool: PostgresPool, migrator: Migrator, metrics: RequestMetrics, metricsAllowed: AddressRanges = .loopback,
        openAPIDocument: @escaping @Sendable () -> [UInt8]
    ) {
        self.pool = pool
        self.schemaVersion = migrator.latestVersion
        self.schemaChecksum = migrator.migrations.last?.checksum ?? ""
        self.metrics = metrics
        self.metricsAllowed = metricsAllowed
        self.openAPIDocument = openAPIDocument
    }

    /// The process is alive; touches nothing else.
    @Sendable func health(_ request: HTTPRequest) throws -> HTTPResponse {
        HTTPResponse.json(200, body: Array(#"{"status":"ok"}"#.utf8))
    }

    /// Ready when the database answers and holds exactly the schema this build expects.
    @Sendable func ready(_ request: HTTPRequest) throws -> HTTPResponse {
        let version = schemaVersion
        let applied = try pool.withConnection { try Migrator.appliedChecksum(version: version, on: $0) }
        guard let applied else {
            throw Problem(
                ErrorCode.notMigrated,
                detail: "The database schema is not at version \(version); run `reclaim migrate`.",
                extraHeaders: [("Retry-After", "5")])
        }
        guard applied == schemaChecksum else {
            throw Problem(
                ErrorCode.schemaMismatch,
                detail: "Migration \(version) in the database differs from this build's.",
                extraHeaders: [("Retry-After", "5")])
        }
        return HTTPResponse.json(200, body: Array(#"{"status":"ready","schema_version":\#(version)}"#.utf8))
    }

    /// Prometheus text: request counts and latency from the server, database pool figures, build info.
    @Sendable func prometheus(_ request: HTTPRequest) throws -> HTTPResponse {
        // Route names, traffic and pool sizes are for the monitoring network, not for whoever can reach the service.
        guard metricsAllowed.contains(request.clientAddress) else {
            throw Problem.forbidden(detail: "Metrics are served to the addresses in RECLAIM_METRICS_ALLOW only.")
        }
        var text = metrics.renderPrometheus()
        text += caseGauges()
        let stats = pool.statistics
        // Read from the table: the counts of every instance sharing the database, not only this one's.
        let outbox = try pool.withConnection { try OutboxStore.statistics(now: Date(), on: $0) }
        text += """
            # HELP reclaim_db_connections_open PostgreSQL connections currently open.
            # TYPE reclaim_db_connections_open gauge
            reclaim_db_connections_open \(stats.openConnections)
            # HELP reclaim_db_connections_in_use PostgreSQL connections currently lent to a request.
            # TYPE reclaim_db_connections_in_use gauge
            reclaim_db_connections_in_use \(stats.inUse)
            # HELP reclaim_db_connects_total Connections opened since start.
            # TYPE reclaim_db_connects_total counter
            reclaim_db_connects_total \(stats.connectsTotal)
            # HELP reclaim_db_connect_failures_total Failed attempts to open a connection.
            # TYPE reclaim_db_connect_failures_total counter
            reclaim_db_connect_failures_total \(stats.connectFailuresTotal)
            # HELP reclaim_db_reconnects_total Connections re-opened after the database went away.
            # TYPE reclaim_db_reconnects_total counter
            reclaim_db_reconnects_total \(stats.reconnectsTotal)
            # HELP reclaim_outbox_messages Messages in the outbox by state (queued: waiting or retrying; failed: dead-lettered).
            # TYPE reclaim_outbox_messages gauge
            reclaim_outbox_messages{state="queued"} \(outbox.queued)
            reclaim_outbox_messages{state="sent"} \(outbox.sent)
            reclaim_outbox_messages{state="failed"} \(outbox.failed)
            # HELP reclaim_outbox_oldest_queued_seconds Age of the oldest message still waiting for delivery.
            # TYPE reclaim_outbox_oldest_queued_seconds gauge
            reclaim_outbox_oldest_queued_seconds \(outbox.oldestQueuedSeconds)
            # HELP reclaim_build_info Build of the running service.
            # TYPE reclaim_build_info gauge
            reclaim_build_info{version="\(BuildInfo.version)",schema_version="\(schemaVersion)"} 1

            """
        return HTTPResponse(status: 200, headers: [("Content-Type", RequestMetrics.prometheusContentType)], body: Array(text.utf8))
    }

    /// Supervision: the backlog by state and tier and the overdue count, from two index scans (see BENCHMARKS.md);
    /// every open state and tier is listed, 0 included, so a series never vanishes. Left out when the database is away.
    func caseGauges() -> String {
        let openStates = ReportsController.openStates
        guard
            let (backlog, overdue) = try? pool.withConnection({ connection in
                (
                    try CaseReportStore.backlog(openStates: openStates.map(\.rawValue), on: connection),
                    try CaseReportStore.overdue(now: Date(), on: connection)
                )
            })
        else { return "" }
        var text = """
            # HELP reclaim_cases_open Open cases by state and tier.
            # TYPE reclaim_cases_open gauge

            """
        for state in openStates {
            for tier in Tier.allCases {
                let count = backlog.first { $0.state == state.rawValue && $0.tier == tier.rawValue }?.count ?? 0
                text += "reclaim_cases_open{state=\"\(state.rawValue)\",tier=\"\(tier.rawValue)\"} \(count)\n"
            }
        }
        text += """
            # HELP reclaim_cases_overdue Open cases past their due date.
            # TYPE reclaim_cases_overdue gauge
            reclaim_cases_overdue \(overdue)

            """
        return text
    }

    /// The OpenAPI 3.1 document of the routes this build serves.
    @Sendable func openAPI(_ request: HTTPRequest) throws -> HTTPResponse {
        HTTPResponse.json(200, body: openAPIDocument())
    }

    /// The vocabularies (`Vocabulary`): the same for every caller, so no sign-in is needed (the status page reads them).
    @Sendable func vocabulary(_ request: HTTPRequest) throws -> HTTPResponse {
        HTTPResponse.json(200, body: Vocabulary.body)
    }
}

/// What build is running.
public enum BuildInfo {
    /// The service's version, printed by `reclaim --version` and exported in `/metrics`.
    public static let version = "0.1.0"
}
