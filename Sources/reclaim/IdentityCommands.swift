import Crypto
import Foundation
import Postgres
import ReclaimAPI
import ReclaimCore

// `reclaim agent …` and `reclaim client …`: the only way agents and API clients are created.
// One-time secrets are printed once, to standard output, and never stored in clear.

let identityUsage = """
      reclaim agent add --email E --name N --tier tier1|tier2|tier3|engineering [--admin] [--json]
                                        create an agent; prints its password and TOTP URI once
      reclaim agent disable EMAIL       refuse its sign-ins and end its sessions
      reclaim agent enable EMAIL        allow a disabled agent to sign in again
      reclaim agent reset-password EMAIL [--json]
                                        new generated password (printed once); ends its sessions
      reclaim agent reset-totp EMAIL [--json]
                                        new TOTP secret (URI printed once); ends its sessions
      reclaim client add --name N [--json]
                                        create an API client; prints its API key and signing secret once
      reclaim client rotate ID [--json] new signing secret (printed once); the old one keeps working 24 hours
      reclaim client revoke ID          refuse the client's key from now on
    """

/// Options of the form `--name value` and bare flags, in any order; positionals kept in order.
struct IdentityArguments {
    var options: [String: String] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []

    init(_ arguments: ArraySlice<String>, valued: Set<String>, flags allowed: Set<String>, command: String) {
        var rest = arguments
        while let argument = rest.popFirst() {
            if valued.contains(argument) {
                guard let value = rest.popFirst() else { fail("\(command): \(argument) needs a value", code: exitUsage) }
                options[argument] = value
            } else if allowed.contains(argument) {
                flags.insert(argument)
            } else if argument.hasPrefix("--") {
                fail("\(command): unknown option \(argument)\n\(identityUsage)", code: exitUsage)
            } else {
                positionals.append(argument)
            }
        }
    }

    func require(_ name: String, _ command: String) -> String {
        guard let value = options[name], !value.isEmpty else { fail("\(command): \(name) is required\n\(identityUsage)", code: exitUsage) }
        return value
    }
}

/// Configuration, keys and a one-connection pool, as `serve` would have them.
/// The process exits right after the command, which closes the connection.
func identityAdministration() -> IdentityAdministration {
    let configuration = loadConfiguration()
    let keys = loadKeys(configuration)
    let pool = PostgresPool(connectionString: configuration.databaseURL, maximumConnections: 1)
    return IdentityAdministration(pool: pool, keys: keys)
}

/// Runs `body`, turning failures into one line and exit status 1.
func runIdentityCommand(_ command: String, _ body: () throws -> Void) -> Never {
    do {
        try body()
        exit(0)
    } catch let error as IdentityAdministrationError {
        fail("\(command): \(error.description)")
    } catch let error as PostgresError where error.sqlState == "42P01" {
        fail("\(command): the database is not migrated; run `reclaim migrate` first")
    } catch {
        fail("\(command): \(error)")
    }
}

/// One JSON object on one line, keys in the order given.
func printJSONObject(_ pairs: [(String, String)]) {
    var line = "{"
    for (index, pair) in pairs.enumerated() {
        if index > 0 { line += "," }
        line += jsonString(pair.0) + ":" + jsonString(pair.1)
    }
    print(line + "}")
}

private func jsonString(_ text: String) -> String {
    let data = try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
    return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
}

func agentCommand(arguments: [String]) -> Never {
    guard let sub = arguments.first else {
        fail("agent: expected add, disable, enable, reset-password or reset-totp\n\(identityUsage)", code: exitUsage)
    }
    let rest = arguments.dropFirst()
    switch sub {
    case "add":
        let parsed = IdentityArguments(rest, valued: ["--email", "--name", "--tier"], flags: ["--admin", "--json"], command: "agent add")
        let email = parsed.require("--email", "agent add")
        let name = parsed.require("--name", "agent add")
        guard let tier = Tier(rawValue: parsed.require("--tier", "agent add")) else {
            fail("agent add: --tier must be tier1, tier2, tier3 or engineering", code: exitUsage)
        }
        let administration = identityAdministration()
        runIdentityCommand("agent add") {
            let agent = try administration.addAgent(email: email, name: name, tier: tier, isAdmin: parsed.flags.contains("--admin"), now: Date())
            if parsed.flags.contains("--json") {
                printJSONObject([
                    ("id", agent.id.uuidString.lowercased()), ("email", agent.email), ("tier", agent.tier.rawValue),
                    ("password", agent.password), ("totp_uri", agent.totpURI),
                ])
            } else {
                print(
                    """
                    agent \(agent.id.uuidString.lowercased()) \(agent.email) (\(agent.tier.rawValue)\(agent.isAdmin ? ", admin" : ""))
                    password: \(agent.password)
                    totp:     \(agent.totpURI)
                    Shown once: hand both to the agent over a safe channel.
                    """)
            }
        }
    case "disable":
        let parsed = IdentityArguments(rest, valued: [], flags: [], command: "agent disable")
        guard parsed.positionals.count == 1 else { fail("agent disable: expected one EMAIL", code: exitUsage) }
        let administration = identityAdministration()
        runIdentityCommand("agent disable") {
            let id = try administration.disableAgent(email: parsed.positionals[0], now: Date())
            print("disabled agent \(id.uuidString.lowercased()); its sessions are ended")
        }
    case "enable":
        let parsed = IdentityArguments(rest, valued: [], flags: [], command: "agent enable")
        guard parsed.positionals.count == 1 else { fail("agent enable: expected one EMAIL", code: exitUsage) }
        let administration = identityAdministration()
        runIdentityCommand("agent enable") {
            let id = try administration.enableAgent(email: parsed.positionals[0], now: Date())
            print("enabled agent \(id.uuidString.lowercased())")
        }
    case "reset-password":
        let parsed = IdentityArguments(rest, valued: [], flags: ["--json"], command: "agent reset-password")
        guard parsed.positionals.count == 1 else { fail("agent reset-password: expected one EMAIL", code: exitUsage) }
        let administration = identityAdministration()
        runIdentityCommand("agent reset-password") {
            let (id, password) = try administration.resetPassword(email: parsed.positionals[0], now: Date())
            if parsed.flags.contains("--json") {
                printJSONObject([("id", id.uuidString.lowercased()), ("password", password)])
            } else {
                print("agent \(id.uuidString.lowercased())\npassword: \(password)\nShown once; the agent's sessions are ended.")
            }
        }
    case "reset-totp":
        let parsed = IdentityArguments(rest, valued: [], flags: ["--json"], command: "agent reset-totp")
        guard parsed.positionals.count == 1 else { fail("agent reset-totp: expected one EMAIL", code: exitUsage) }
        let administration = identityAdministration()
        runIdentityCommand("agent reset-totp") {
            let agent = try administration.resetTOTP(email: parsed.positionals[0], now: Date())
            if parsed.flags.contains("--json") {
                printJSONObject([("id", agent.id.uuidString.lowercased()), ("totp_uri", agent.totpURI)])
            } else {
                print("agent \(agent.id.uuidString.lowercased())\ntotp: \(agent.totpURI)\nShown once; the agent's sessions are ended.")
            }
        }
    default:
        fail("agent: unknown subcommand \(sub)\n\(identityUsage)", code: exitUsage)
    }
}

func clientCommand(arguments: [String]) -> Never {
    guard let sub = arguments.first else { fail("client: expected add, rotate or revoke\n\(identityUsage)", code: exitUsage) }
    let rest = arguments.dropFirst()
    switch sub {
    case "add":
        let parsed = IdentityArguments(rest, valued: ["--name"], flags: ["--json"], command: "client add")
        let name = parsed.require("--name", "client add")
        let administration = identityAdministration()
        runIdentityCommand("client add") {
            let client = try administration.addClient(name: name, now: Date())
            if parsed.flags.contains("--json") {
                printJSONObject([("id", client.id.uuidString.lowercased()), ("api_key", client.apiKey), ("signing_secret", client.signingSecret)])
            } else {
                print(
                    """
                    client \(client.id.uuidString.lowercased()) \(client.name)
                    api_key:        \(client.apiKey)
                    signing_secret: \(client.signingSecret)
                    Shown once: the key goes in Authorization: Bearer, the secret signs every POST (Reclaim-Signature).
                    """)
            }
        }
    case "rotate":
        let parsed = IdentityArguments(rest, valued: [], flags: ["--json"], command: "client rotate")
        guard parsed.positionals.count == 1, let id = UUID(uuidString: parsed.positionals[0]) else {
            fail("client rotate: expected one client ID (a UUID)", code: exitUsage)
        }
        let administration = identityAdministration()
        runIdentityCommand("client rotate") {
            let rotated = try administration.rotateClient(id: id, now: Date())
            let until = ISO8601DateFormatter().string(from: rotated.previousValidUntil)
            if parsed.flags.contains("--json") {
                printJSONObject([("id", id.uuidString.lowercased()), ("signing_secret", rotated.signingSecret), ("previous_valid_until", until)])
            } else {
                print(
                    "client \(id.uuidString.lowercased())\nsigning_secret: \(rotated.signingSecret)\nShown once; the previous secret keeps working until \(until)."
                )
            }
        }
    case "revoke":
        let parsed = IdentityArguments(rest, valued: [], flags: [], command: "client revoke")
        guard parsed.positionals.count == 1, let id = UUID(uuidString: parsed.positionals[0]) else {
            fail("client revoke: expected one client ID (a UUID)", code: exitUsage)
        }
        let administration = identityAdministration()
        runIdentityCommand("client revoke") {
            try administration.revokeClient(id: id, now: Date())
            print("revoked client \(id.uuidString.lowercased())")
        }
    default:
        fail("client: unknown subcommand \(sub)\n\(identityUsage)", code: exitUsage)
    }
}
