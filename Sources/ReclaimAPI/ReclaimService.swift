import Crypto
import Foundation
import HTTPServer
import Logging
import Notifications
import Postgres
import ReclaimOperations
import ReclaimStore

/// Why the service refused to start, in one line for the operator.
public struct StartupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The whole service wired together: database pool, migrations, routes and the HTTP server.
public final class ReclaimService: Sendable {
    public let configuration: ServiceConfiguration
    public let pool: PostgresPool
    public let server: HTTPServer
    public let metrics: RequestMetrics
    public let routes: [APIRoute]
    /// The outbox's delivery worker (nil when neither lane has a thread); its threads start with the server.
    public let deliveryWorker: DeliveryWorker?
    /// The inbound worker: reads replies from `RECLAIM_INBOUND` (nothing when unset); its thread starts with the server.
    public let inboundWorker: InboundWorker
    /// The transparency log's sequencer (one pass at a time across instances); its thread starts with the server.
    public let sequencer: TransparencyLogWorker
    /// The cooling-off's scheduler (each due unlock step done once across instances); its thread starts with the server.
    public let unlockScheduler: UnlockScheduler
    /// The retention worker (erases cases finished `RECLAIM_RETENTION_DAYS` ago); its thread starts with the server.
    public let retention: RetentionWorker
    let logger: Logger

    /// What every controller shares.
    public let context: ServiceContext

    /// Connects, applies (through `RECLAIM_MIGRATION_DATABASE_URL`) or checks migrations, refuses a database role that
    /// could rewrite the timelines, and builds the server; `start()` begins serving.
    /// `clock` is the service's only source of the time (tests move it to check expiry rules).
    public init(
        configuration: ServiceConfiguration, keys: KeyFile?, logger: Logger, migrate: Bool = true,
        clock: ServiceClock = ServiceClock()
    ) throws {
        self.configuration = configuration
        self.logger = logger
        let migrations: [Migration]
        do {
            migrations = try Migrator.load(directory: configuration.migrationsDirectory)
        } catch {
            throw StartupError("cannot read migrations in \(configuration.migrationsDirectory): \(error)")
        }
        let migrator = Migrator(migrations: migrations)
        let pool = PostgresPool(connectionString: configuration.databaseURL, maximumConnections: configuration.databaseConnections)
        self.pool = pool
        do {
            try pool.withConnection { connection in
                try ReclaimService.prepareSchema(configuration, migrator: migrator, migrate: migrate, on: connection, logger: logger)
                let (role, problems) = try DatabaseRoles.check(on: connection)
                guard problems.isEmpty else {
                    throw StartupError(
                        "the database role \"\(role)\" \(problems.joined(separator: "; ")): the service must not be able to rewrite "
                            + "the timelines or the admin log. Serve as a login in \(DatabaseRoles.serviceGroup) that owns nothing "
                            + "(`reclaim db roles` prints the SQL; docs/operations.md, \"Database roles\")")
                }
            }
        } catch let error as StartupError {
            pool.close()
            throw error
        } catch {
            pool.close()
            throw StartupError("database: \(error)")
        }

        let metrics = RequestMetrics()
        self.metrics = metrics
        let documentBox = DocumentBox()
        let operations = OperationsController(
            pool: pool, migrator: migrator, metrics: metrics, metricsAllowed: configuration.metricsAllowed,
            openAPIDocument: { documentBox.bytes })
        let context = ServiceContext(configuration: configuration, pool: pool, keys: keys, logger: logger, clock: clock)
        self.context = context
        deliveryWorker =
            configuration.mailThreads + configuration.webhookThreads > 0
            ? DeliveryWorker(settings: configuration.notificationSettings, pool: pool, keys: keys, logger: logger, now: { clock.now() })
            : nil
        inboundWorker = InboundWorker(settings: configuration.inboundSettings, pool: pool, keys: keys, logger: logger, now: { clock.now() })
        sequencer = TransparencyLogWorker(
            settings: configuration.transparencyLogSettings, pool: pool, keys: keys, logger: logger, now: { clock.now() })
        unlockScheduler = UnlockScheduler(
            keys: keys, pool: pool, logger: logger, pollInterval: configuration.unlockPollSeconds, now: { clock.now() })
        retention = RetentionWorker(
            retention: configuration.retentionDays * 86_400, pool: pool, operations: CaseOperations(keys: keys), logger: logger,
            pollInterval: configuration.retentionPollSeconds, now: { clock.now() })
        let routes = Routes(context: context, operations: operations).all
        self.routes = routes
        documentBox.bytes = OpenAPIDocument.render(routes: routes)

        var tlsCertificate: String?
        var tlsKey: String?
        if let certificatePath = configuration.tlsCertificatePath, let keyPath = configuration.tlsKeyPath {
            do {
                tlsCertificate = try String(contentsOfFile: certificatePath, encoding: .utf8)
                tlsKey = try String(contentsOfFile: keyPath, encoding: .utf8)
            } catch {
                pool.close()
                throw StartupError("cannot read the TLS certificate or key: \(error.localizedDescription)")
            }
        }
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.spoolDirectory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            pool.close()
            throw StartupError("cannot create the upload spool directory \(configuration.spoolDirectory): \(error.localizedDescription)")
        }
        var serverConfiguration = HTTPServerConfiguration(host: configuration.host, port: configuration.port)
        serverConfiguration.threads = configuration.threads
        serverConfiguration.handlerThreads = configuration.handlerThreads
        serverConfiguration.maxConnections = configuration.maxConnections
        serverConfiguration.perIPConnectionLimit = configuration.maxConnectionsPerIP
        serverConfiguration.trustedProxies = configuration.trustedProxies
        serverConfiguration.connectionTimeoutSeconds = configuration.connectionTimeoutSeconds
        serverConfiguration.headTimeoutSeconds = Double(configuration.headerTimeoutSeconds)
        serverConfiguration.bodyTimeoutSeconds = Double(configuration.bodyTimeoutSeconds)
        serverConfiguration.shutdownGraceSeconds = Double(configuration.shutdownGraceSeconds)
        serverConfiguration.tlsCertificatePEM = tlsCertificate
        serverConfiguration.tlsKeyPEM = tlsKey
        serverConfiguration.spoolDirectory = configuration.spoolDirectory

        let router = Router(
            routes: routes.map { route in
                var served = Route(route.method, route.path, bodyLimit: route.bodyLimit, answeredBy: route.handler)
                // Evidence: document uploads parse forms while they arrive, and large documents are spooled, not held in memory.
                if let limits = route.multipart { served = served.acceptingMultipart(limits) }
                if route.requestContent.contains(where: { if case .bytes = $0 { true } else { false } }) { served = served.spoolingLargeBodies() }
                return served
            })
        let staticFiles = StaticFiles(
            root: configuration.publicDirectory,
            aliases: Dictionary(
                uniqueKeysWithValues: OpenAPIDocument.pages.map { page in
                    (page.path, ["/": "index.html", "/admin": "admin.html", "/reports": "reports.html"][page.path] ?? "status.html")
                }))
        // Identity: the auth middleware resolves the principal; idempotency wraps API-client POSTs (and agents' on notes).
        let customerRoutes = Set(routes.filter { $0.authentication == .customer }.map(\.key))
        let agentKeyRoutes = Set(routes.filter(\.acceptsAgentIdempotencyKey).map(\.key))
        let middleware: [any HTTPMiddleware] = [
            AuthMiddleware(context: context, customerRoutes: customerRoutes),
            IdempotencyMiddleware(context: context, agentRoutes: agentKeyRoutes),
        ]
        server = HTTPServer(
            configuration: serverConfiguration, router: router, middleware: middleware, staticFiles: staticFiles,
            errorMapper: ProblemMapping.map, logger: logger, metrics: metrics)
    }

    /// Applies pending migrations through `RECLAIM_MIGRATION_DATABASE_URL` (when it is set and `migrate`), then checks
    /// on `connection`, the service's own, that the schema is this build's; throws `StartupError` saying what to do.
    public static func prepareSchema(
        _ configuration: ServiceConfiguration, migrator: Migrator, migrate: Bool, on connection: PostgresConnection,
        logger: Logger
    ) throws {
        if migrate, let ownerURL = configuration.migrationDatabaseURL {
            let owner = try PostgresConnection(connectionString: ownerURL)
            defer { owner.close() }
            try migrator.migrate(owner, logger: logger)
            try carryOverTimelines(owner, logger: logger)
        }
        guard case .pending(let pending) = try migrator.check(connection) else {
            // Events in the form before commitments cannot be erased: the carry-over (owner only) must have run.
            let uncarried = try CaseEventStore.uncarriedCount(on: connection)
            if uncarried > 0 {
                throw StartupError("\(uncarried) timeline event(s) are not carried over to commitments (migration 0020): run `reclaim migrate`")
            }
            return
        }
        let remedy =
            configuration.migrationDatabaseURL == nil
            ? "set RECLAIM_MIGRATION_DATABASE_URL (the schema owner's) so that serve applies them, or run `reclaim migrate` with it"
            : "drop --no-migrate, or run `reclaim migrate`"
        throw StartupError("the database lacks \(pending.count) migration(s) starting at \(pending[0].version)_\(pending[0].name): \(remedy)")
    }

    /// Carries timelines written before migration 0020 over to commitments (after the SQL, as the schema's owner), in
    /// one transaction: `EventCommitments`.
    public static func carryOverTimelines(_ owner: PostgresConnection, logger: Logger) throws {
        let carried = try owner.withTransaction { try EventCommitments.carryOver(on: $0) }
        if carried.cases > 0 {
            logger.info("timelines_carried_over", ["cases": .int(carried.cases), "events": .int(carried.events)])
        }
    }

    /// Starts listening; returns at once.
    public func start() throws {
        try server.start()
        deliveryWorker?.start()
        inboundWorker.start()
        sequencer.start()
        unlockScheduler.start()
        retention.start()
        logger.info("listening", ["address": .string(configuration.host), "port": .int(server.boundPort), "tls": .bool(configuration.servesTLS)])
    }

    /// The port actually bound (useful when configured as 0).
    public var port: Int { server.boundPort }

    /// HTTP connections open right now (slow-client tests, metrics).
    public var openConnections: Int { server.openConnections }

    /// Stops the threads that poll the database on their own (the delivery and inbound workers, the sequencer, the
    /// unlock scheduler, retention), each after its pass; requests are still served (tests that record what a request
    /// sends stop them first).
    public func stopPollingThreads() {
        deliveryWorker?.stop()
        inboundWorker.stop()
        sequencer.stop()
        unlockScheduler.stop()
        retention.stop()
    }

    /// Stops accepting, lets in-flight requests finish within the grace period, then closes the database.
    public func shutdown() {
        logger.info("shutting_down", ["grace_seconds": .int(configuration.shutdownGraceSeconds)])
        server.shutdown()
        stopPollingThreads()
        pool.close()
        logger.info("stopped")
    }
}

/// Holds the rendered OpenAPI document, set once while wiring, read by the handler afterwards.
private final class DocumentBox: @unchecked Sendable {
    // Written once in ReclaimService.init before the server starts; only read afterwards.
    var bytes: [UInt8] = []
}
