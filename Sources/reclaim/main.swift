import Crypto
import Foundation
import Logging
import Postgres
import ReclaimAPI
import ReclaimStore

// Exit codes (sysexits.h): usage errors 64, bad configuration 78, runtime failures 1.
let exitUsage: Int32 = 64
let exitConfiguration: Int32 = 78

let usage = """
    reclaim \(BuildInfo.version): support cases for stolen accounts and activation-locked devices

    Usage:
      reclaim serve [--no-migrate]      serve HTTP; first apply pending migrations through RECLAIM_MIGRATION_DATABASE_URL
                                        when it is set (unless --no-migrate), else refuse a schema that is not current
      reclaim migrate                   apply pending migrations as the schema's owner (RECLAIM_MIGRATION_DATABASE_URL,
                                        else DATABASE_URL) and exit
      reclaim db roles [--database NAME] [--owner NAME] [--login NAME]
                                        print the SQL (for psql, as a superuser) that makes the schema's owner, the
                                        service's login and the database (defaults reclaim_owner, reclaim, reclaim)
      reclaim keys generate [--output PATH] [--force]
                                        write a new key file (mode 0600) to PATH or $RECLAIM_KEY_FILE
      reclaim keys rotate PURPOSE       a new active key for PURPOSE in $RECLAIM_KEY_FILE (older ones stay for reading);
                                        adds a purpose the file lacks (checkpoint, in a file made before it existed)
    \(identityUsage)
      reclaim accounts import FILE.jsonl
                                        put accounts on file, one JSON object a line; bad lines are reported by number
      reclaim audit verify [CASE]       recompute the timelines' and the admin log's hash chains; name the first broken link
      reclaim audit verify --checkpoint FILE
                                        also the transparency log rebuilt from the events: fails unless
                                        today's tree extends that saved checkpoint (signature, size, consistency proof)
    \(demoUsage)
      reclaim --help | --version

    Configuration (environment):
    \(ServiceConfiguration.variables.map { "  \($0.name.padding(toLength: 32, withPad: " ", startingAt: 0))\($0.meaning)" }.joined(separator: "\n"))

    """

/// Prints one line to standard error and exits.
func fail(_ message: String, code: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("reclaim: \(message)\n".utf8))
    exit(code)
}

/// Reads the configuration or stops with a one-line message naming the variable.
/// Administration commands read neither migrations nor static files, so by default neither is required.
func loadConfiguration(requireDatabase: Bool = true, needs: InstalledFiles.Needs = []) -> ServiceConfiguration {
    do {
        return try ServiceConfiguration.fromEnvironment(ProcessInfo.processInfo.environment, requireDatabase: requireDatabase, needs: needs)
    } catch {
        fail("configuration: \(error)", code: exitConfiguration)
    }
}

func makeLogger(_ configuration: ServiceConfiguration) -> Logger {
    Logger(sink: StandardErrorSink(), minimumLevel: LogLevel(name: configuration.logLevel) ?? .info)
}

/// Loads the key file named by RECLAIM_KEY_FILE; refuses files that others may read.
func loadKeys(_ configuration: ServiceConfiguration) -> KeyFile {
    guard let path = configuration.keyFilePath else {
        fail("configuration: RECLAIM_KEY_FILE: is not set (create one with `reclaim keys generate --output PATH`)", code: exitConfiguration)
    }
    do {
        return try KeyFile.load(path: path)
    } catch {
        fail("configuration: RECLAIM_KEY_FILE: \(error)", code: exitConfiguration)
    }
}

func serve(arguments: [String]) -> Never {
    var migrate = true
    for argument in arguments {
        switch argument {
        case "--no-migrate": migrate = false
        default: fail("serve: unknown option \(argument)\n\(usage)", code: exitUsage)
        }
    }
    // `serve` writes JSON lines only, start-up failures included: its standard error is the log stream.
    let startup = Logger(sink: StandardErrorSink())
    func refuse(_ event: String, _ error: Any, code: Int32) -> Never {
        startup.error(event, ["error": .string(String(describing: error))])
        exit(code)
    }
    let configuration: ServiceConfiguration
    do {
        configuration = try ServiceConfiguration.fromEnvironment(ProcessInfo.processInfo.environment)
    } catch {
        refuse("configuration_invalid", error, code: exitConfiguration)
    }
    let logger = makeLogger(configuration)
    guard let keyPath = configuration.keyFilePath else {
        refuse(
            "configuration_invalid", "RECLAIM_KEY_FILE: is not set (create one with `reclaim keys generate --output PATH`)", code: exitConfiguration)
    }
    let keys: KeyFile
    do {
        keys = try KeyFile.load(path: keyPath)
    } catch {
        refuse("configuration_invalid", "RECLAIM_KEY_FILE: \(error)", code: exitConfiguration)
    }

    // Block the shutdown signals before any thread starts, so only sigwait below receives them.
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGTERM)
    sigaddset(&signals, SIGINT)
    pthread_sigmask(SIG_BLOCK, &signals, nil)
    signal(SIGPIPE, SIG_IGN)

    let service: ReclaimService
    do {
        service = try ReclaimService(configuration: configuration, keys: keys, logger: logger, migrate: migrate)
        try service.start()
    } catch {
        refuse("start_failed", error, code: 1)
    }
    let scheme = configuration.servesTLS ? "https" : "http"
    let shownHost = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
    logger.info("serving", ["url": .string("\(scheme)://\(shownHost):\(service.port)/"), "version": .string(BuildInfo.version)])

    var received: Int32 = 0
    sigwait(&signals, &received)
    // A second signal while draining stops at once.
    let blocked = signals
    let forced = Thread {
        var waitFor = blocked
        var again: Int32 = 0
        sigwait(&waitFor, &again)
        logger.warning("second_signal", ["action": "exiting now"])
        exit(1)
    }
    forced.start()
    service.shutdown()
    exit(0)
}

func migrate(arguments: [String]) -> Never {
    guard arguments.isEmpty else { fail("migrate takes no options\n\(usage)", code: exitUsage) }
    // The owner's connection when it is configured apart from the service's (which cannot change the schema).
    let configuration = loadConfiguration(requireDatabase: false, needs: .migrations)
    guard let ownerURL = configuration.migrationDatabaseURL ?? (configuration.databaseURL.isEmpty ? nil : configuration.databaseURL) else {
        fail(
            "configuration: RECLAIM_MIGRATION_DATABASE_URL: is not set, nor DATABASE_URL (the schema owner's connection string)",
            code: exitConfiguration)
    }
    let logger = makeLogger(configuration)
    do {
        let migrator = Migrator(migrations: try Migrator.load(directory: configuration.migrationsDirectory))
        let connection = try PostgresConnection(connectionString: ownerURL)
        defer { connection.close() }
        let applied = try migrator.migrate(connection, logger: logger)
        try ReclaimService.carryOverTimelines(connection, logger: logger)
        print(
            applied.isEmpty
                ? "schema is up to date at version \(migrator.latestVersion)"
                : "applied \(applied.count) migration(s); schema at version \(migrator.latestVersion)")
        exit(0)
    } catch {
        fail("migrate: \(error)")
    }
}

func db(arguments: [String]) -> Never {
    guard arguments.first == "roles" else { fail("db: expected `db roles`\n\(usage)", code: exitUsage) }
    var names = ["--database": "reclaim", "--owner": "reclaim_owner", "--login": "reclaim"]
    var rest = arguments.dropFirst()
    while let option = rest.popFirst() {
        guard names[option] != nil else { fail("db roles: unknown option \(option)", code: exitUsage) }
        guard let name = rest.popFirst() else { fail("db roles: \(option) needs a name", code: exitUsage) }
        names[option] = name
    }
    do {
        print(try DatabaseRoles(database: names["--database"]!, owner: names["--owner"]!, login: names["--login"]!).setupScript, terminator: "")
        exit(0)
    } catch {
        fail("db roles: \(error)", code: exitUsage)
    }
}

func keys(arguments: [String]) -> Never {
    if arguments.first == "rotate" { rotateKey(arguments: Array(arguments.dropFirst())) }
    guard arguments.first == "generate" else { fail("keys: expected `keys generate` or `keys rotate PURPOSE`\n\(usage)", code: exitUsage) }
    var output: String?
    var force = false
    var rest = arguments.dropFirst()
    while let argument = rest.popFirst() {
        switch argument {
        case "--output":
            guard let path = rest.popFirst() else { fail("keys generate: --output needs a path", code: exitUsage) }
            output = path
        case "--force": force = true
        default: fail("keys generate: unknown option \(argument)", code: exitUsage)
        }
    }
    guard let path = output ?? ProcessInfo.processInfo.environment["RECLAIM_KEY_FILE"], !path.isEmpty else {
        fail("keys generate: give --output PATH or set RECLAIM_KEY_FILE", code: exitUsage)
    }
    do {
        try KeyFile.generate().write(to: path, overwrite: force)
        print("wrote \(path) (mode 0600); keep it out of the database and its backups")
        exit(0)
    } catch {
        fail("keys generate: \(error)")
    }
}

/// `keys rotate PURPOSE`: a fresh active key for the purpose, written back in place; every instance needs the new file.
func rotateKey(arguments: [String]) -> Never {
    guard arguments.count == 1, let purpose = KeyPurpose(rawValue: arguments[0]) else {
        fail("keys rotate: expected one purpose: \(KeyPurpose.allCases.map(\.rawValue).joined(separator: ", "))", code: exitUsage)
    }
    guard let path = ProcessInfo.processInfo.environment["RECLAIM_KEY_FILE"], !path.isEmpty else {
        fail("keys rotate: set RECLAIM_KEY_FILE", code: exitUsage)
    }
    do {
        var file = try KeyFile.load(path: path, allowingMissing: true)
        let id = file.rotate(purpose)
        try file.write(to: path, overwrite: true)
        print("\(purpose.rawValue): \(id) is now active in \(path); older keys stay for reading. Give every instance the new file and restart it.")
        exit(0)
    } catch {
        fail("keys rotate: \(error)")
    }
}

var arguments = CommandLine.arguments.dropFirst()
guard let command = arguments.popFirst() else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(exitUsage)
}
switch command {
case "--help", "-h", "help":
    print(usage, terminator: "")
    exit(0)
case "--version":
    print("reclaim \(BuildInfo.version)")
    exit(0)
case "serve": serve(arguments: Array(arguments))
case "migrate": migrate(arguments: Array(arguments))
case "db": db(arguments: Array(arguments))
case "keys": keys(arguments: Array(arguments))
case "agent": agentCommand(arguments: Array(arguments))
case "client": clientCommand(arguments: Array(arguments))
case "accounts": accountsCommand(arguments: Array(arguments))
case "audit": auditCommand(arguments: Array(arguments))
case "demo": demoCommand(arguments: Array(arguments))
default: fail("unknown command \(command)\n\(usage)", code: exitUsage)
}
