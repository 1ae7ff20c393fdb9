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
    /// The transparency log's sequencer (one pass at a time across instances); its thread starts with the server.
    public let sequencer: TransparencyLogWorker
    let logger: Logger

    /// Connects, applies or checks migrations, and builds the server; `start()` begins serving.
    /// What every controller shares.
    public let context: ServiceContext

    /// `clock` is the service's only source of the time (tests move it to check expiry rules).
    public init(configuration: ServiceConfiguration, keys: KeyFile?, logger: Logger, migrate: Bool = true,
                clock: ServiceClock = ServiceClock()) throws {
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
                if migrate {
                    try migrator.migrate(connection, logger: logger)
                }
                switch try migrator.check(connection) {
                case .upToDate: break
                case .pending(let pending):
                    throw StartupError("the database lacks \(pending.count) migration(s) starting at \(pending[0].version)_\(pending[0].name); run `reclaim migrate` or drop --no-migrate")
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
        let operations = OperationsController(pool: pool, migrator: migrator, metrics: metrics, metricsAllowed: configuration.metricsAllowed,
                                              openAPIDocument: { documentBox.bytes })
        let context = ServiceContext(configuration: configuration, pool: pool, keys: keys, logger: logger, clock: clock)
        self.context = context
        deliveryWorker = configuration.mailThreads + configuration.webhookThreads > 0
            ? DeliveryWorker(settings: configuration.notificationSettings, pool: pool, keys: keys, logger: logger, now: { clock.now() })
            : nil
        sequencer = TransparencyLogWorker(settings: configuration.transparencyLogSettings, pool: pool, keys: keys, logger: logger, now: { clock.now() })
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
        var serverConfiguration = HTTPServerConfiguration(host: configuration.host, port: configuration.port)
        serverConfiguration.threads = configuration.threads
        serverConfiguration.maxConnections = configuration.maxConnections
        serverConfiguration.perIPConnectionLimit = configuration.maxConnectionsPerIP
        serverConfiguration.trustedProxies = configuration.trustedProxies
        serverConfiguration.connectionTimeoutSeconds = configuration.connectionTimeoutSeconds
        serverConfiguration.headTimeoutSeconds = Double(configuration.headerTimeoutSeconds)
        serverConfiguration.bodyTimeoutSeconds = Double(configuration.bodyTimeoutSeconds)
        serverConfiguration.shutdownGraceSeconds = Double(configuration.shutdownGraceSeconds)
        serverConfiguration.tlsCertificatePEM = tlsCertificate
        serverConfiguration.tlsKeyPEM = tlsKey

        let router = Router(routes: routes.map { route in
            var served = Route(route.method, route.path, bodyLimit: route.bodyLimit, answeredBy: route.handler)
            // Evidence: document uploads parse forms while they arrive.
            if let limits = route.multipart { served = served.acceptingMultipart(limits) }
            return served
        })
        let staticFiles = StaticFiles(root: configuration.publicDirectory,
                                      aliases: Dictionary(uniqueKeysWithValues: OpenAPIDocument.pages.map { page in
                                          (page.path, ["/": "index.html", "/admin": "admin.html", "/reports": "reports.html"][page.path] ?? "status.html")
                                      }))
        // Identity: the auth middleware resolves the principal; idempotency wraps API-client POSTs (and agents' on notes).
        let customerRoutes = Set(routes.filter { $0.authentication == .customer }.map(\.key))
        let agentKeyRoutes = Set(routes.filter(\.acceptsAgentIdempotencyKey).map(\.key))
        let middleware: [any HTTPMiddleware] = [AuthMiddleware(context: context, customerRoutes: customerRoutes),
                                                IdempotencyMiddleware(context: context, agentRoutes: agentKeyRoutes)]
        server = HTTPServer(configuration: serverConfiguration, router: router, middleware: middleware, staticFiles: staticFiles,
                            errorMapper: ProblemMapping.map, logger: logger, metrics: metrics)
    }

    /// Starts listening; returns at once.
    public func start() throws {
        try server.start()
        deliveryWorker?.start()
        sequencer.start()
        logger.info("listening", ["address": .string(configuration.host), "port": .int(server.boundPort), "tls": .bool(configuration.servesTLS)])
    }

    /// The port actually bound (useful when configured as 0).
    public var port: Int { server.boundPort }

    /// HTTP connections open right now (slow-client tests, metrics).
    public var openConnections: Int { server.openConnections }

    /// Stops accepting, lets in-flight requests finish within the grace period, then closes the database.
    public func shutdown() {
        logger.info("shutting_down", ["grace_seconds": .int(configuration.shutdownGraceSeconds)])
        server.shutdown()
        deliveryWorker?.stop()
        sequencer.stop()
        pool.close()
        logger.info("stopped")
    }
}

/// Holds the rendered OpenAPI document, set once while wiring, read by the handler afterwards.
private final class DocumentBox: @unchecked Sendable {
    // Written once in ReclaimService.init before the server starts; only read afterwards.
    var bytes: [UInt8] = []
}
