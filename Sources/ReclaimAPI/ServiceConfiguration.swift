import Crypto
import Foundation
import HTTPServer
import Notifications
import ReclaimCore
import ReclaimOperations

/// A configuration value that failed validation; the message names the variable.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    /// The environment variable at fault.
    public let variable: String
    /// What is wrong with it, in a few words.
    public let problem: String
    public var description: String { "\(variable): \(problem)" }
}

/// Everything the service is configured with, built once from the environment and validated.
public struct ServiceConfiguration: Sendable {
    /// libpq connection string or URI (`DATABASE_URL`).
    public var databaseURL: String
    /// The schema owner's connection string (`RECLAIM_MIGRATION_DATABASE_URL`): when set, `serve` and `migrate` apply
    /// migrations through it; unset, `serve` only checks that the schema is current (`DATABASE_URL` is the service's
    /// role, which owns nothing and cannot migrate).
    public var migrationDatabaseURL: String? = nil
    /// Interface to listen on (`RECLAIM_ADDRESS`, default `127.0.0.1:8080`).
    public var host: String
    /// Port to listen on; 0 picks a free one (tests).
    public var port: Int
    /// The secret key file (`RECLAIM_KEY_FILE`).
    public var keyFilePath: String?
    /// Static files for the dashboard and the status page (`RECLAIM_PUBLIC_DIR`, default: found by `InstalledFiles`).
    public var publicDirectory: String
    /// The forward-only SQL migrations (`RECLAIM_MIGRATIONS_DIR`, default: found by `InstalledFiles`).
    public var migrationsDirectory: String
    /// HTTP threads (`RECLAIM_THREADS`, default: half the cores, at least one): MHD's, reading requests and writing
    /// answers; with handler threads they run no request themselves.
    public var threads: Int
    /// Most PostgreSQL connections the service opens (`RECLAIM_DB_CONNECTIONS`, default: handler threads (or HTTP threads,
    /// whichever is more) + 4).
    public var databaseConnections: Int
    /// Most simultaneous HTTP connections (`RECLAIM_MAX_CONNECTIONS`, default 1024).
    public var maxConnections: Int
    /// Most simultaneous connections from one address (`RECLAIM_MAX_CONNECTIONS_PER_IP`; 0 = no limit; default 64
    /// without `RECLAIM_TRUSTED_PROXIES`, 0 with them, since every client behind a proxy shares its address).
    public var maxConnectionsPerIP: Int
    /// Seconds an idle or silent connection is kept (`RECLAIM_CONNECTION_TIMEOUT`, default 15).
    public var connectionTimeoutSeconds: Int
    /// Seconds a request's head may take to arrive, keep-alive waits included (`RECLAIM_HEADER_TIMEOUT`, default 10).
    public var headerTimeoutSeconds: Int = 10
    /// Threads running requests from one queue in arrival order (`RECLAIM_HANDLER_THREADS`, default: two per core; 0:
    /// each on its connection's HTTP thread). See `HTTPServerConfiguration.handlerThreads`.
    public var handlerThreads: Int = 0
    /// Seconds a request's body may take to arrive after its head (`RECLAIM_BODY_TIMEOUT`, default 60).
    public var bodyTimeoutSeconds: Int = 60
    /// Seconds in-flight requests get to finish at shutdown (`RECLAIM_SHUTDOWN_GRACE`, default 10).
    public var shutdownGraceSeconds: Int
    /// PEM certificate file for TLS (`RECLAIM_TLS_CERT`); TLS is on when both it and the key are set.
    public var tlsCertificatePath: String?
    /// PEM private key file for TLS (`RECLAIM_TLS_KEY`).
    public var tlsKeyPath: String?
    /// Lowest log level written (`RECLAIM_LOG_LEVEL`: debug, info, warning, error; default info).
    public var logLevel: String
    /// Reverse proxies whose `X-Forwarded-For` names the client (`RECLAIM_TRUSTED_PROXIES`: addresses or CIDR
    /// ranges, comma-separated; default none). Per-address limits then key on the client, not the proxy.
    public var trustedProxies: AddressRanges = .none
    /// Who may read `/metrics` (`RECLAIM_METRICS_ALLOW`: addresses or CIDR ranges; default this machine only).
    public var metricsAllowed: AddressRanges = .loopback
    /// How a customer reaches support, shown on finished cases and wherever the page says "contact us"
    /// (`RECLAIM_SUPPORT_CONTACT`: an address, a phone number or a URL; default `support@reclaim.example`).
    public var supportContact: String = ServiceConfiguration.defaultSupportContact

    /// The placeholder contact used when `RECLAIM_SUPPORT_CONTACT` is not set (set it in production).
    public static let defaultSupportContact = NotificationSettings.defaultSupportContact

    /// Passkeys: the origin the dashboard is served from (`RECLAIM_WEBAUTHN_ORIGIN`, e.g. `https://reclaim.example`);
    /// its host is the relying-party id. Unset: only `http(s)://localhost[:port]` (development and tests).
    public var webAuthnOrigin: String? = nil
    /// The relying-party id passkeys are bound to: the configured origin's host, or `localhost`.
    public var webAuthnRPID: String { webAuthnOrigin.flatMap { URLComponents(string: $0)?.host } ?? "localhost" }

    /// Where the service keeps files of its own (`RECLAIM_DATA_DIR`, default `data`): .eml files go to `mail/` in it.
    public var dataDirectory: String = "data"
    /// SMTP server for customer mail (`RECLAIM_SMTP_URL`, `smtp://host:port` or `smtps://user:pass@host`); nil writes .eml files.
    public var smtpURL: String?
    /// The sender of customer mail (`RECLAIM_MAIL_FROM`, default `reclaim@localhost`).
    public var mailFrom: String = "reclaim@localhost"
    /// Where customers' replies go (`RECLAIM_REPLY_ADDRESS`, default `mailFrom`): each mail's `Reply-To` is it with the
    /// case's `+token`.
    public var replyAddress: String? = nil
    /// Where replies are read (`RECLAIM_INBOUND`: `imap://…`, `imaps://…` or `maildir:PATH`); nil reads none.
    public var inbound: InboundSource? = nil
    /// Seconds between two passes over the inbound mailbox (`RECLAIM_INBOUND_POLL_SECONDS`, default 30).
    public var inboundPollSeconds: Double = 30
    /// Most mails an hour from one sender before the rest are kept unmatched (`RECLAIM_INBOUND_SENDER_LIMIT`, default 30).
    public var inboundSenderLimit: Int = 30
    /// The public base URL for links in mail (`RECLAIM_PUBLIC_URL`, default `http://<RECLAIM_ADDRESS>`).
    public var publicURL: String = "http://127.0.0.1:8080"
    /// Seconds between mail attempts (`RECLAIM_MAIL_RETRY_SCHEDULE`).
    public var mailRetrySchedule: [Double] = [5, 30, 60, 300, 1800, 7200, 18000, 36000]
    /// Seconds between webhook attempts (`RECLAIM_WEBHOOK_RETRY_SCHEDULE`, Standard Webhooks' by default).
    public var webhookRetrySchedule: [Double] = [5, 300, 1800, 7200, 18000, 36000, 36000]
    /// Webhook destinations exempt from the https and public-address rules (`RECLAIM_WEBHOOK_ALLOW`: hosts, IPs, CIDR ranges).
    public var webhookAllow: String = ""
    /// Mail delivery threads of this instance (`RECLAIM_MAIL_THREADS`, default 1, or `RECLAIM_DELIVERY_THREADS`
    /// when only that is set; 0 delivers no mail).
    public var mailThreads: Int = 1
    /// Webhook delivery threads of this instance (`RECLAIM_WEBHOOK_THREADS`, default 2, or `RECLAIM_DELIVERY_THREADS`
    /// when only that is set; 0 delivers no webhooks).
    public var webhookThreads: Int = 2
    /// Most webhook claims in flight to one endpoint across instances (`RECLAIM_WEBHOOK_PER_ENDPOINT`, default 1).
    public var webhookPerEndpoint: Int = 1
    /// Seconds an endpoint rests after its 1st, 2nd, … failure in a row, the last repeating (`RECLAIM_WEBHOOK_BACKOFF`).
    public var webhookBackoff: [Double] = [5, 30, 60, 300, 900, 1800, 3600]
    /// The transparency log's origin: its checkpoints' first line and its note key's name (`RECLAIM_LOG_ORIGIN`,
    /// default the public URL's host + `/reclaim`).
    public var logOrigin: String = "127.0.0.1/reclaim"
    /// Least seconds between two signed checkpoints, made only when the tree grew (`RECLAIM_CHECKPOINT_SECONDS`, default 3600).
    public var checkpointSeconds: Int = 3600
    /// Seconds a recorded unlock step waits before the service does it (`RECLAIM_UNLOCK_DELAY`, default 86400; decimals
    /// allowed): the victim's time to say "this wasn't me".
    public var unlockDelay: TimeInterval = CaseOperations.defaultUnlockDelay
    /// How long a finished case still counts as related to another (`RECLAIM_RELATED_DAYS`, default 90 days).
    public var relatedWindow: TimeInterval = CaseOperations.defaultRelatedWindow
    /// How many documents a case holds at most (`RECLAIM_CASE_DOCUMENTS`, default 100): one more is 409 `too_many_documents`.
    public var caseDocuments: Int = DocumentUpload.defaultCaseLimit
    /// Seconds an idle unlock scheduler waits before looking again (not a variable: tests lower it).
    public var unlockPollSeconds: TimeInterval = 1
    /// Days after a case finished that the retention worker erases it (`RECLAIM_RETENTION_DAYS`, default 365, decimals
    /// allowed).
    public var retentionDays: Double = 365
    /// Seconds between two passes of the retention worker (`RECLAIM_RETENTION_POLL_SECONDS`, default 60).
    public var retentionPollSeconds: Double = 60
    /// Hours a proposed administrative change waits for a second admin's confirmation (`RECLAIM_PROPOSAL_HOURS`, default
    /// 72, decimals allowed).
    public var proposalHours: Double = 72

    /// Whether TLS is configured.
    public var servesTLS: Bool { tlsCertificatePath != nil }

    /// Every variable this value reads, with its default, for `--help` and the README.
    public static let variables: [(name: String, meaning: String)] = [
        ("DATABASE_URL", "libpq connection string or URI of the service's role (required)"),
        (
            "RECLAIM_MIGRATION_DATABASE_URL",
            "connection string of the schema's owner: serve and migrate apply migrations through it (default: serve only checks the schema)"
        ),
        ("RECLAIM_ADDRESS", "host:port to listen on (default 127.0.0.1:8080)"),
        ("RECLAIM_KEY_FILE", "secret key file made by `reclaim keys generate`, mode 0600 (required by serve)"),
        ("RECLAIM_PUBLIC_DIR", "static files (default PREFIX/share/reclaim/Public beside PREFIX/bin/reclaim, or the checkout's Public/)"),
        ("RECLAIM_MIGRATIONS_DIR", "SQL migrations (default PREFIX/share/reclaim/Migrations, or the checkout's Migrations/)"),
        ("RECLAIM_THREADS", "HTTP threads reading and writing connections (default: half the cores, at least 1)"),
        ("RECLAIM_HANDLER_THREADS", "threads running requests from one queue in arrival order (default: two per core; 0: on the HTTP threads)"),
        ("RECLAIM_DB_CONNECTIONS", "most PostgreSQL connections (default: the larger of the two thread counts + 4)"),
        (
            "RECLAIM_MAX_CONNECTIONS",
            "most simultaneous HTTP connections; a few more are answered 503 at once, the rest closed at once (default 1024)"
        ),
        ("RECLAIM_MAX_CONNECTIONS_PER_IP", "most connections from one address, 0 = no limit (default 64, or 0 with RECLAIM_TRUSTED_PROXIES)"),
        ("RECLAIM_CONNECTION_TIMEOUT", "seconds before an idle connection is closed (default 15)"),
        ("RECLAIM_HEADER_TIMEOUT", "seconds a request's head may take to arrive, keep-alive wait included (default 10)"),
        ("RECLAIM_BODY_TIMEOUT", "seconds a request's body may take to arrive after its head (default 60)"),
        ("RECLAIM_SHUTDOWN_GRACE", "seconds in-flight requests get at shutdown (default 10)"),
        ("RECLAIM_TLS_CERT", "PEM certificate; with RECLAIM_TLS_KEY turns TLS (and HSTS) on"),
        ("RECLAIM_TLS_KEY", "PEM private key for RECLAIM_TLS_CERT"),
        ("RECLAIM_LOG_LEVEL", "debug, info, warning or error (default info)"),
        ("RECLAIM_TRUSTED_PROXIES", "proxies whose X-Forwarded-For names the client: IPs or CIDR ranges, comma-separated (default none)"),
        ("RECLAIM_WEBAUTHN_ORIGIN", "origin of the dashboard for passkeys, e.g. https://reclaim.example (default: localhost only)"),
        ("RECLAIM_METRICS_ALLOW", "who may read /metrics: IPs or CIDR ranges, comma-separated (default 127.0.0.0/8, ::1)"),
        (
            "RECLAIM_SUPPORT_CONTACT",
            "how customers reach support, shown on finished cases: e-mail, phone or URL, at most 200 characters (default support@reclaim.example)"
        ),
        (
            "RECLAIM_DATA_DIR",
            "the service's own files: large uploads are spooled (encrypted) in its spool/ folder; without SMTP, mail is written to its mail/ folder as .eml (default data)"
        ),
        ("RECLAIM_SMTP_URL", "SMTP server for customer mail: smtp://host:port or smtps://user:pass@host (default: .eml files)"),
        ("RECLAIM_MAIL_FROM", "sender address of customer mail (default reclaim@localhost)"),
        ("RECLAIM_REPLY_ADDRESS", "address customers reply to; each mail's Reply-To is it with the case's +token (default RECLAIM_MAIL_FROM)"),
        (
            "RECLAIM_INBOUND",
            "where replies are read: imap://user:password@host:port/MAILBOX, imaps://... or maildir:PATH (default: none; deploy/run: maildir: in the data directory)"
        ),
        ("RECLAIM_INBOUND_POLL_SECONDS", "seconds between two reads of the inbound mailbox (default 30)"),
        ("RECLAIM_INBOUND_SENDER_LIMIT", "most mails an hour from one sender; the rest are kept unmatched (default 30)"),
        ("RECLAIM_PUBLIC_URL", "public base URL for the status link in mail (default http://RECLAIM_ADDRESS)"),
        ("RECLAIM_MAIL_RETRY_SCHEDULE", "seconds between mail attempts, comma-separated (default 5,30,60,300,1800,7200,18000,36000)"),
        (
            "RECLAIM_WEBHOOK_RETRY_SCHEDULE",
            "seconds between webhook attempts, comma-separated (default Standard Webhooks': 5,300,1800,7200,18000,36000,36000)"
        ),
        ("RECLAIM_WEBHOOK_ALLOW", "webhook destinations allowed despite being http, loopback, private or link-local: hosts, IPs or CIDR ranges"),
        ("RECLAIM_MAIL_THREADS", "threads delivering mail only, 0 = none (default 1)"),
        ("RECLAIM_WEBHOOK_THREADS", "threads delivering webhooks only, 0 = none (default 2; keep it above RECLAIM_WEBHOOK_PER_ENDPOINT)"),
        ("RECLAIM_WEBHOOK_PER_ENDPOINT", "most deliveries in flight to one webhook endpoint, across instances (default 1: in order)"),
        (
            "RECLAIM_WEBHOOK_BACKOFF",
            "seconds a failing endpoint rests after its 1st, 2nd, ... failure in a row, the last repeating (default 5,30,60,300,900,1800,3600)"
        ),
        ("RECLAIM_DELIVERY_THREADS", "deprecated: the default of both RECLAIM_MAIL_THREADS and RECLAIM_WEBHOOK_THREADS (0 = no delivery)"),
        (
            "RECLAIM_LOG_ORIGIN",
            "the transparency log's origin, first line of its checkpoints and name of its key (default: RECLAIM_PUBLIC_URL's host + /reclaim)"
        ),
        ("RECLAIM_CHECKPOINT_SECONDS", "least seconds between two signed checkpoints, made when the tree grew (default 3600)"),
        (
            "RECLAIM_UNLOCK_DELAY",
            "seconds a recorded unlock step waits (the cooling-off) before the service does it; decimals allowed (default 86400)"
        ),
        ("RECLAIM_RELATED_DAYS", "days a finished case still counts as related to another case of its account, device or contact (default 90)"),
        (
            "RECLAIM_CASE_DOCUMENTS",
            "documents a case holds at most; one more is 409 too_many_documents, a mail's attachment beyond it is not filed (default 100, 1 to 400)"
        ),
        ("RECLAIM_RETENTION_DAYS", "days after a case finished that its customer's data is erased by the worker (default 365; decimals allowed)"),
        ("RECLAIM_RETENTION_POLL_SECONDS", "seconds between two passes of the retention worker (default 60; decimals allowed)"),
        ("RECLAIM_PROPOSAL_HOURS", "hours a proposed agent change waits for a second admin's confirmation (default 72; decimals allowed)"),
    ]

    /// Builds and validates the configuration from `environment`; the first bad value throws.
    /// `needs` names the directories the command reads (admin commands need none); `executablePath` anchors their defaults.
    public static func fromEnvironment(
        _ environment: [String: String], requireDatabase: Bool = true,
        needs: InstalledFiles.Needs = .all,
        executablePath: String? = InstalledFiles.executablePath
    ) throws(ConfigurationError) -> ServiceConfiguration {
        func value(_ name: String) -> String? {
            guard let raw = environment[name]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }
        func integer(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
            guard let raw = value(name) else { return fallback }
            guard let number = Int(raw), range.contains(number) else {
                throw ConfigurationError(
                    variable: name, problem: "must be a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(raw)\"")
            }
            return number
        }

        let databaseURL = value("DATABASE_URL") ?? ""
        if requireDatabase && databaseURL.isEmpty {
            throw ConfigurationError(
                variable: "DATABASE_URL",
                problem: "is not set (a libpq connection string such as \"host=/path/to/socket dbname=reclaim\" or a postgresql:// URI)")
        }
        let migrationDatabaseURL = value("RECLAIM_MIGRATION_DATABASE_URL")
        for (name, url) in [("DATABASE_URL", databaseURL), ("RECLAIM_MIGRATION_DATABASE_URL", migrationDatabaseURL ?? "")]
        where url.contains("\n") || url.contains("\0") {
            throw ConfigurationError(variable: name, problem: "contains a line break or NUL")
        }

        let (host, port) = try parseAddress(value("RECLAIM_ADDRESS") ?? "127.0.0.1:8080")
        let cores = ProcessInfo.processInfo.activeProcessorCount
        // The HTTP threads only read and write connections; requests run on the handler threads, two a core: a write
        // waits on PostgreSQL for most of its round trips, and with one a core the escalate ran ~25% slower
        // (BENCHMARKS.md, "One queue for every request").
        let threads = try integer("RECLAIM_THREADS", default: max(1, cores / 2), range: 1...256)
        let handlerThreads = try integer("RECLAIM_HANDLER_THREADS", default: 2 * max(1, cores), range: 0...256)
        let databaseConnections = try integer("RECLAIM_DB_CONNECTIONS", default: max(threads, handlerThreads) + 4, range: 1...1000)
        let maxConnections = try integer("RECLAIM_MAX_CONNECTIONS", default: 1024, range: 1...100_000)
        let timeout = try integer("RECLAIM_CONNECTION_TIMEOUT", default: 15, range: 1...3600)
        let headerTimeout = try integer("RECLAIM_HEADER_TIMEOUT", default: 10, range: 1...3600)
        let bodyTimeout = try integer("RECLAIM_BODY_TIMEOUT", default: 60, range: 1...3600)
        let grace = try integer("RECLAIM_SHUTDOWN_GRACE", default: 10, range: 0...600)

        let certificate = value("RECLAIM_TLS_CERT")
        let key = value("RECLAIM_TLS_KEY")
        switch (certificate, key) {
        case (.some, nil): throw ConfigurationError(variable: "RECLAIM_TLS_KEY", problem: "must be set when RECLAIM_TLS_CERT is")
        case (nil, .some): throw ConfigurationError(variable: "RECLAIM_TLS_CERT", problem: "must be set when RECLAIM_TLS_KEY is")
        default: break
        }
        for (name, path) in [("RECLAIM_TLS_CERT", certificate), ("RECLAIM_TLS_KEY", key)] {
            if let path, !FileManager.default.isReadableFile(atPath: path) {
                throw ConfigurationError(variable: name, problem: "cannot read \(path)")
            }
        }

        let logLevel = (value("RECLAIM_LOG_LEVEL") ?? "info").lowercased()
        guard ["debug", "info", "warning", "error"].contains(logLevel) else {
            throw ConfigurationError(variable: "RECLAIM_LOG_LEVEL", problem: "must be debug, info, warning or error, got \"\(logLevel)\"")
        }

        func ranges(_ name: String, default fallback: AddressRanges) throws(ConfigurationError) -> AddressRanges {
            guard let text = value(name) else { return fallback }
            do {
                return try AddressRanges(parsing: text)
            } catch {
                throw ConfigurationError(variable: name, problem: "\"\(error.entry)\" is not an IP address or CIDR range")
            }
        }
        let trustedProxies = try ranges("RECLAIM_TRUSTED_PROXIES", default: .none)
        let metricsAllowed = try ranges("RECLAIM_METRICS_ALLOW", default: .loopback)
        // On by default when clients connect directly: 2,000 connections from one address must not starve the rest.
        let perIP = try integer("RECLAIM_MAX_CONNECTIONS_PER_IP", default: trustedProxies.isEmpty ? 64 : 0, range: 0...100_000)

        let supportContact = value("RECLAIM_SUPPORT_CONTACT") ?? defaultSupportContact
        // Shown inside a sentence in every language: one line of printable text.
        if supportContact.count > 200 || supportContact.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw ConfigurationError(variable: "RECLAIM_SUPPORT_CONTACT", problem: "must be one line of at most 200 characters")
        }

        func directory(_ variable: String, _ name: String, needed: Bool) throws(ConfigurationError) -> String {
            if let path = value(variable) {
                guard needed else { return path }
                guard InstalledFiles.isDirectory(path) else { throw ConfigurationError(variable: variable, problem: "\(path) is not a directory") }
                return path
            }
            if let found = InstalledFiles.locate(name, executablePath: executablePath) { return found }
            guard needed else { return "" }
            let searched = InstalledFiles.candidates(for: name, executablePath: executablePath)
            throw ConfigurationError(
                variable: variable,
                problem: "is not set and no \(name) directory was found"
                    + (searched.isEmpty ? "" : " at " + searched.joined(separator: " or ")) + " (install with deploy/install PREFIX)")
        }
        let publicDirectory = try directory("RECLAIM_PUBLIC_DIR", "Public", needed: needs.contains(.publicFiles))
        let migrationsDirectory = try directory("RECLAIM_MIGRATIONS_DIR", "Migrations", needed: needs.contains(.migrations))

        let webAuthnOrigin = value("RECLAIM_WEBAUTHN_ORIGIN")
        if let origin = webAuthnOrigin {
            let parts = URLComponents(string: origin)
            guard let parts, parts.host?.isEmpty == false, parts.path.isEmpty, parts.query == nil,
                parts.scheme == "https" || (parts.scheme == "http" && parts.host == "localhost")
            else {
                throw ConfigurationError(
                    variable: "RECLAIM_WEBAUTHN_ORIGIN", problem: "must be https://host[:port] (or http://localhost[:port]), got \"\(origin)\"")
            }
        }
        let smtpURL = value("RECLAIM_SMTP_URL")
        if let smtpURL {
            let lower = smtpURL.lowercased()
            guard lower.hasPrefix("smtp://") || lower.hasPrefix("smtps://"), URLComponents(string: smtpURL)?.host?.isEmpty == false else {
                throw ConfigurationError(variable: "RECLAIM_SMTP_URL", problem: "must be smtp://host:port or smtps://user:pass@host")
            }
        }
        let mailFrom = value("RECLAIM_MAIL_FROM") ?? "reclaim@localhost"
        if mailFrom.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "<" || $0 == ">" || $0 == " " }) || !mailFrom.contains("@") {
            throw ConfigurationError(variable: "RECLAIM_MAIL_FROM", problem: "must be a bare address such as reclaim@example.org")
        }
        let replyAddress = value("RECLAIM_REPLY_ADDRESS")
        if let replyAddress,
            replyAddress.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "<" || $0 == ">" || $0 == " " || $0 == "+" })
                || !replyAddress.contains("@")
        {
            throw ConfigurationError(variable: "RECLAIM_REPLY_ADDRESS", problem: "must be a bare address without a +tag, such as cases@example.org")
        }
        var inbound: InboundSource?
        if let text = value("RECLAIM_INBOUND") {
            do { inbound = try InboundSource(parsing: text) } catch { throw ConfigurationError(variable: "RECLAIM_INBOUND", problem: error.reason) }
        }
        let inboundPoll = try integer("RECLAIM_INBOUND_POLL_SECONDS", default: 30, range: 1...86400)
        let inboundSenderLimit = try integer("RECLAIM_INBOUND_SENDER_LIMIT", default: 30, range: 1...100_000)
        let publicURL = value("RECLAIM_PUBLIC_URL") ?? "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        guard let publicComponents = URLComponents(string: publicURL), ["http", "https"].contains(publicComponents.scheme?.lowercased() ?? ""),
            publicComponents.host?.isEmpty == false
        else {
            throw ConfigurationError(variable: "RECLAIM_PUBLIC_URL", problem: "must be an http(s) URL such as https://reclaim.example.org")
        }
        func schedule(_ name: String, default fallback: [Double]) throws(ConfigurationError) -> [Double] {
            guard let text = value(name) else { return fallback }
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard !parts.isEmpty, parts.allSatisfy({ $0 != nil && $0! >= 0 && $0! <= 7 * 86400 }) else {
                throw ConfigurationError(variable: name, problem: "must be comma-separated seconds such as 1,1,2, got \"\(text)\"")
            }
            return parts.map { $0! }
        }
        let mailSchedule = try schedule("RECLAIM_MAIL_RETRY_SCHEDULE", default: [5, 30, 60, 300, 1800, 7200, 18000, 36000])
        let webhookSchedule = try schedule("RECLAIM_WEBHOOK_RETRY_SCHEDULE", default: [5, 300, 1800, 7200, 18000, 36000, 36000])
        // Deprecated since the lanes: the old single line's count now sizes each lane that is not set on its own.
        let deliveryThreads: Int? =
            value("RECLAIM_DELIVERY_THREADS") == nil ? nil : try integer("RECLAIM_DELIVERY_THREADS", default: 1, range: 0...16)
        let mailThreads = try integer("RECLAIM_MAIL_THREADS", default: deliveryThreads ?? 1, range: 0...16)
        let webhookThreads = try integer("RECLAIM_WEBHOOK_THREADS", default: deliveryThreads ?? 2, range: 0...16)
        let webhookPerEndpoint = try integer("RECLAIM_WEBHOOK_PER_ENDPOINT", default: 1, range: 1...16)
        let webhookBackoff = try schedule("RECLAIM_WEBHOOK_BACKOFF", default: [5, 30, 60, 300, 900, 1800, 3600])
        let logOrigin = value("RECLAIM_LOG_ORIGIN") ?? (publicComponents.host ?? "localhost") + "/reclaim"
        // The origin names the note key too: signed-note forbids spaces and `+` in a key name.
        guard SignedNote.isValidName(logOrigin), logOrigin.count <= 200 else {
            throw ConfigurationError(
                variable: "RECLAIM_LOG_ORIGIN",
                problem: "must be one word of at most 200 characters without spaces or +, such as reclaim.example.org/reclaim")
        }
        let checkpointSeconds = try integer("RECLAIM_CHECKPOINT_SECONDS", default: 3600, range: 1...604_800)
        func decimal(_ name: String, default fallback: Double, range: ClosedRange<Double>) throws(ConfigurationError) -> Double {
            guard let raw = value(name) else { return fallback }
            guard let number = Double(raw), number.isFinite, range.contains(number) else {
                throw ConfigurationError(variable: name, problem: "must be a number from \(range.lowerBound) to \(range.upperBound), got \"\(raw)\"")
            }
            return number
        }
        let retentionDays = try decimal("RECLAIM_RETENTION_DAYS", default: 365, range: 0...36_500)
        let retentionPoll = try decimal("RECLAIM_RETENTION_POLL_SECONDS", default: 60, range: 0.01...86_400)
        let proposalHours = try decimal("RECLAIM_PROPOSAL_HOURS", default: 72, range: 0.01...8_760)
        let unlockDelay = try decimal("RECLAIM_UNLOCK_DELAY", default: CaseOperations.defaultUnlockDelay, range: 0...2_592_000)
        let relatedDays = try decimal("RECLAIM_RELATED_DAYS", default: 90, range: 0...3650)
        // At most 400: 400 documents of 10 MiB keep an export under ZIP's 4 GiB without ZIP64.
        let caseDocuments = try integer("RECLAIM_CASE_DOCUMENTS", default: DocumentUpload.defaultCaseLimit, range: 1...400)

        var configuration = ServiceConfiguration(
            databaseURL: databaseURL, host: host, port: port, keyFilePath: value("RECLAIM_KEY_FILE"),
            publicDirectory: publicDirectory, migrationsDirectory: migrationsDirectory,
            threads: threads, databaseConnections: databaseConnections, maxConnections: maxConnections,
            maxConnectionsPerIP: perIP, connectionTimeoutSeconds: timeout, shutdownGraceSeconds: grace,
            tlsCertificatePath: certificate, tlsKeyPath: key, logLevel: logLevel, trustedProxies: trustedProxies, metricsAllowed: metricsAllowed,
            supportContact: supportContact)
        configuration.migrationDatabaseURL = migrationDatabaseURL
        configuration.headerTimeoutSeconds = headerTimeout
        configuration.handlerThreads = handlerThreads
        configuration.bodyTimeoutSeconds = bodyTimeout
        configuration.webAuthnOrigin = webAuthnOrigin
        configuration.dataDirectory = value("RECLAIM_DATA_DIR") ?? "data"
        configuration.smtpURL = smtpURL
        configuration.mailFrom = mailFrom
        configuration.publicURL = publicURL
        configuration.replyAddress = replyAddress
        configuration.inbound = inbound
        configuration.inboundPollSeconds = Double(inboundPoll)
        configuration.inboundSenderLimit = inboundSenderLimit
        configuration.mailRetrySchedule = mailSchedule
        configuration.webhookRetrySchedule = webhookSchedule
        configuration.webhookAllow = value("RECLAIM_WEBHOOK_ALLOW") ?? ""
        configuration.mailThreads = mailThreads
        configuration.webhookThreads = webhookThreads
        configuration.webhookPerEndpoint = webhookPerEndpoint
        configuration.webhookBackoff = webhookBackoff
        configuration.logOrigin = logOrigin
        configuration.checkpointSeconds = checkpointSeconds
        configuration.unlockDelay = unlockDelay
        configuration.relatedWindow = relatedDays * 86_400
        configuration.caseDocuments = caseDocuments
        configuration.retentionDays = retentionDays
        configuration.retentionPollSeconds = retentionPoll
        configuration.proposalHours = proposalHours
        return configuration
    }

    /// Splits `host:port` (IPv6 as `[::1]:8080`).
    static func parseAddress(_ text: String) throws(ConfigurationError) -> (String, Int) {
        let bad = ConfigurationError(variable: "RECLAIM_ADDRESS", problem: "must be host:port such as 127.0.0.1:8080, got \"\(text)\"")
        var host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { throw bad }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw bad }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        if host.isEmpty || host == "*" { host = "0.0.0.0" }
        if host == "localhost" { host = "127.0.0.1" }
        guard let port = Int(portText), (0...65535).contains(port) else { throw bad }
        // The listener binds an IP literal; names other than localhost are not resolved.
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, String(host), &v4) == 1 || inet_pton(AF_INET6, String(host), &v6) == 1 else { throw bad }
        return (String(host), port)
    }
}

extension ServiceConfiguration {
    /// What the transparency log's sequencer needs, from this configuration.
    public var transparencyLogSettings: TransparencyLogSettings {
        TransparencyLogSettings(origin: logOrigin, checkpointInterval: TimeInterval(checkpointSeconds))
    }

    /// Where large uploads are spooled while they are read and filed (`spool/` in `RECLAIM_DATA_DIR`): nameless files,
    /// encrypted under keys that never leave the process, gone when the request is.
    public var spoolDirectory: String { (dataDirectory as NSString).appendingPathComponent("spool") }

    /// What the delivery worker needs, from this configuration.
    public var notificationSettings: NotificationSettings {
        var settings = NotificationSettings(
            smtpURL: smtpURL, mailFrom: mailFrom, publicURL: publicURL,
            mailDirectory: (dataDirectory as NSString).appendingPathComponent("mail"),
            mailSchedule: RetrySchedule(delays: mailRetrySchedule), webhookSchedule: RetrySchedule(delays: webhookRetrySchedule),
            webhookAllow: WebhookAllowList(parsing: webhookAllow))
        settings.supportContact = supportContact
        settings.mailThreads = mailThreads
        settings.supportContact = supportContact
        settings.webhookThreads = webhookThreads
        settings.webhookPerEndpoint = webhookPerEndpoint
        settings.endpointBackoff = RetrySchedule(delays: webhookBackoff)
        settings.replyAddress = replyAddress
        return settings
    }

    /// What the inbound worker needs, from this configuration.
    public var inboundSettings: InboundSettings {
        var settings = InboundSettings(source: inbound, rules: InboundRules(replyAddress: replyAddress ?? mailFrom, senderLimit: inboundSenderLimit))
        settings.pollSeconds = inboundPollSeconds
        settings.documentLimit = caseDocuments
        return settings
    }
}
