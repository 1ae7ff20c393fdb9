import Foundation
import Postgres
import ReclaimAPI
import ReclaimStore

// `reclaim demo seed`: demo agents, accounts and cases for a first start. Secrets are printed once.

let demoUsage = """
      reclaim demo seed [--json] [--force]
                                        demo agents of every tier (password and TOTP URI printed once), accounts and
                                        ~40 cases over every state and path; refuses a database with agents unless --force
    """

func demoCommand(arguments: [String]) -> Never {
    guard arguments.first == "seed" else { fail("demo: expected `demo seed`\n\(demoUsage)", code: exitUsage) }
    var json = false
    var force = false
    for argument in arguments.dropFirst() {
        switch argument {
        case "--json": json = true
        case "--force": force = true
        default: fail("demo seed: unknown option \(argument)\n\(demoUsage)", code: exitUsage)
        }
    }
    let configuration = loadConfiguration(needs: .migrations)
    let logger = makeLogger(configuration)
    let keys = loadKeys(configuration)
    let pool = PostgresPool(connectionString: configuration.databaseURL, maximumConnections: 2)
    defer { pool.close() }
    let result: DemoSeedResult
    do {
        // As `serve` does: a new database gets its schema first (through RECLAIM_MIGRATION_DATABASE_URL), or is refused.
        let migrator = Migrator(migrations: try Migrator.load(directory: configuration.migrationsDirectory))
        try pool.withConnection { try ReclaimService.prepareSchema(configuration, migrator: migrator, migrate: true, on: $0, logger: logger) }
        result = try DemoSeed(pool: pool, keys: keys, configuration: configuration, logger: logger).run(force: force)
    } catch let error as DemoSeedError {
        fail("demo seed: \(error.description)")
    } catch {
        fail("demo seed: \(Refusals.message(for: error) ?? String(describing: error))")
    }
    if json {
        let object: [String: Any] = [
            "agents": result.agents.map {
                [
                    "id": $0.id.uuidString.lowercased(), "email": $0.email, "name": $0.name, "tier": $0.tier.rawValue,
                    "admin": $0.isAdmin, "password": $0.password, "totp_uri": $0.totpURI,
                ]
            },
            "accounts": result.accounts,
            "cases": result.cases.map {
                [
                    "case_number": $0.number, "access_code": $0.accessCode, "kind": $0.kind.rawValue,
                    "state": $0.state.rawValue, "path": $0.path.rawValue, "account_email": $0.accountEmail,
                ]
            },
            "seconds": (result.seconds * 1000).rounded() / 1000,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        print(String(decoding: data, as: UTF8.self))
        exit(0)
    }
    print("Demo agents (shown once; sign in with the password and a code from the TOTP URI):")
    for agent in result.agents {
        print(
            """
              \(agent.email) (\(agent.tier.rawValue)\(agent.isAdmin ? ", admin" : ""))
                password: \(agent.password)
                totp:     \(agent.totpURI)
            """)
    }
    print("\nAccounts on file: \(result.accounts.joined(separator: ", "))")
    print("\nCases (try the customer status page with a number and its access code; codes are stored only hashed):")
    print(
        "  " + "case number".padding(toLength: 16, withPad: " ", startingAt: 0) + "access code".padding(toLength: 22, withPad: " ", startingAt: 0)
            + "state".padding(toLength: 20, withPad: " ", startingAt: 0) + "path")
    for item in result.cases {
        print(
            "  " + item.number.padding(toLength: 16, withPad: " ", startingAt: 0) + item.accessCode.padding(toLength: 22, withPad: " ", startingAt: 0)
                + item.state.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0) + item.path.rawValue)
    }
    print(
        "\nseeded \(result.agents.count) agents, \(result.accounts.count) accounts and \(result.cases.count) cases in \(String(format: "%.1f", result.seconds)) s"
    )
    exit(0)
}
