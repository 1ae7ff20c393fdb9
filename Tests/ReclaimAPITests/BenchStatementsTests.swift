import Foundation
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimTestSupport
import Testing

/// The cases benchmark compares the service with pgbench running "the same statements" (deploy/bench/cases.d/*.sql).
/// Here the service's pool records what each benchmarked request sends, and each script must be exactly that list:
/// a store that changes a statement, or a request that sends one more, fails here instead of leaving the bench stale.
@Suite struct BenchStatementsTests {
    static let folder = RepositoryPaths.root + "/deploy/bench/cases.d/"

    @Test func thePgbenchScriptsRunTheStatementsTheServiceSends() throws {
        let world = try CaseWorld {
            $0.mailThreads = 0
            $0.webhookThreads = 0
        }  // no worker polling the outbox meanwhile
        // Nor the service's own threads that poll the same pool (the sequencer, the unlock scheduler, retention).
        world.service.service.stopPollingThreads()
        let agent = try world.agent(.tier1)
        let opened = try world.openCase(as: agent)
        let number = opened.caseNumber
        let code = try #require(opened.accessCode)
        let requests: [(script: String, send: () throws -> TestHTTPResponse)] = [
            ("status", { try world.status(number, code) }),
            ("read", { try world.get("/api/v1/cases/\(number)", as: agent) }),
            ("transition", { try world.act(number, "escalate", as: agent, version: 1) }),
        ]
        for (script, send) in requests {
            var status = 0
            let sent = try world.service.service.pool.recordingStatements { status = try send().status }
            #expect(status == 200, "\(script)")
            let bench = try Self.commands(script)
            #expect(
                bench.count == sent.count,
                "\(script).sql has \(bench.count) statements, the service sent \(sent.count):\n\(sent.joined(separator: "\n"))")
            for (index, (service, command)) in zip(sent, bench).enumerated() {
                let expected = Self.canonical(service, substituting: command.substitutions)
                #expect(
                    Self.canonical(command.sql) == expected,
                    "\(script).sql, statement \(index + 1), differs from the service's:\nservice: \(expected)\nbench:   \(Self.canonical(command.sql))"
                )
            }
        }
    }

    /// The inbound benchmark (deploy/bench/inbound) compares the worker with pgbench running the statements it sends for
    /// one message (deploy/bench/inbound.d): `CaseOperations.receive` in one transaction, as `InboundWorker` stores each
    /// message, for a reply matched by its token without an attachment and with one (a PNG, filed as evidence).
    @Test func theInboundPgbenchScriptsRunTheStatementsTheWorkerSends() throws {
        let world = try CaseWorld {
            $0.mailThreads = 0
            $0.webhookThreads = 0
        }
        world.service.service.stopPollingThreads()
        let agent = try world.agent(.tier1)
        let pool = world.service.service.pool
        let operations = CaseOperations(keys: world.service.keys)
        let rules = InboundRules(replyAddress: "cases@reclaim.test", senderLimit: 1000)
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 56)
        let kinds: [(script: String, attachment: Bool)] = [("receive", false), ("receive_attachment", true)]
        for (index, kind) in kinds.enumerated() {
            let number = try world.openCase(as: agent).caseNumber
            let address = ReplyToken.address("cases@reclaim.test", for: try CaseNumber(parsing: number), keys: world.service.keys)
            var mail = "From: owner@example.net\r\nTo: \(address)\r\nSubject: Re: case\r\nMessage-ID: <bench-\(index)@example.net>\r\n"
            mail += "MIME-Version: 1.0\r\n"
            if kind.attachment {
                mail += "Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nThe invoice.\r\n--b\r\n"
                mail +=
                    "Content-Type: image/png\r\nContent-Disposition: attachment; filename=invoice.png\r\nContent-Transfer-Encoding: base64\r\n\r\n"
                mail += Data(png).base64EncodedString() + "\r\n--b--\r\n"
            } else {
                mail += "Content-Type: text/plain\r\n\r\nThe photos follow.\r\n"
            }
            var outcome: InboundOutcome?
            let sent = try pool.recordingStatements {
                outcome = try pool.withTransaction {
                    try operations.receive(raw: Array(mail.utf8), truncated: false, rules: rules, at: Date(), on: $0)
                }
            }
            guard case .stored(_, let stored, .replyToken, nil) = outcome, stored == number else {
                Issue.record("\(kind.script): not stored on its case: \(String(describing: outcome))")
                continue
            }
            let bench = try Self.commands(kind.script, in: RepositoryPaths.root + "/deploy/bench/inbound.d/").filter(\.recorded)
            #expect(
                bench.count == sent.count,
                "\(kind.script).sql has \(bench.count) statements, the worker sent \(sent.count):\n\(sent.joined(separator: "\n"))")
            for (index, (service, command)) in zip(sent, bench).enumerated() {
                let expected = Self.canonical(service, substituting: command.substitutions)
                #expect(
                    Self.canonical(command.sql) == expected,
                    "\(kind.script).sql, statement \(index + 1), differs from the worker's:\nworker: \(expected)\nbench:  \(Self.canonical(command.sql))"
                )
            }
        }
    }

    @Test func theComparisonSeesADifference() {
        // The canonical forms used above: binds and pgbench variables alike, whitespace ignored, casts kept.
        #expect(
            Self.canonical("SELECT a FROM t WHERE id = $1::uuid AND n >\n  $12")
                == Self.canonical("SELECT a FROM t WHERE id = :p_id::uuid AND n > :n"))
        #expect(Self.canonical("SELECT a FROM t WHERE id = $1") != Self.canonical("SELECT a FROM t WHERE id = :p_id AND true"))
        #expect(Self.canonical("VALUES ($1, $2)", substituting: [1: "gen_random_uuid()"]) == Self.canonical("VALUES (gen_random_uuid(), :x)"))
        #expect(Self.canonical("VALUES ($1, $2)", substituting: [1: "NULL"]) != Self.canonical("VALUES (:x, NULL)"))
    }

    /// One SQL command of a pgbench script, and the store's binds its comments say it writes otherwise.
    struct Command {
        var sql: String
        var substitutions: [Int: String]
        /// False after a `-- unrecorded` comment: a statement standing for what the recorder does not see (a COPY).
        var recorded = true
    }

    /// The SQL commands of `name.sql` in `folder` (default cases.d) in order, `{case_columns}` and `{standing_columns}` expanded as helper.py does; meta-commands skipped but `\startpipeline` and `\endpipeline`.
    static func commands(_ name: String, in folder: String = folder) throws -> [Command] {
        let columns = try String(contentsOfFile: Self.folder + "case_columns.sql", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let standing = try String(contentsOfFile: Self.folder + "standing_columns.sql", encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let text = try String(contentsOfFile: folder + name + ".sql", encoding: .utf8).replacingOccurrences(of: "{case_columns}", with: columns)
            .replacingOccurrences(of: "{standing_columns}", with: standing)
        var commands: [Command] = []
        var buffer = ""
        var substitutions: [Int: String] = [:]
        var recorded = true
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("-- unrecorded") { recorded = false }
            if trimmed.hasPrefix("--") {
                if let match = trimmed.wholeMatch(of: /-- bind \$(\d+) = (.+)/), let index = Int(match.1) {
                    substitutions[index] = String(match.2)
                }
                continue
            }
            // A pipeline's ends are kept: the service's recorder writes them too (its round trips must match).
            if trimmed == "\\startpipeline" || trimmed == "\\endpipeline" {
                commands.append(Command(sql: trimmed, substitutions: [:]))
                continue
            }
            if trimmed.hasPrefix("\\") { continue }
            buffer += line + "\n"
            if let gset = buffer.range(of: "\\gset") {
                commands.append(Command(sql: String(buffer[..<gset.lowerBound]), substitutions: substitutions, recorded: recorded))
            } else if trimmed.hasSuffix(";") {
                commands.append(Command(sql: String(buffer.dropLast(2)), substitutions: substitutions, recorded: recorded))
            } else {
                continue
            }
            buffer = ""
            substitutions = [:]
            recorded = true
        }
        let unfinished = buffer.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(unfinished.isEmpty, "\(name).sql ends inside a statement")
        return commands
    }

    /// A statement with every bind (`$n`) and pgbench variable (`:name`, not a `::cast`) as `?`, whitespace runs as one
    /// space and none inside parentheses; `substituting` writes the named binds as the given text first.
    static func canonical(_ sql: String, substituting substitutions: [Int: String] = [:]) -> String {
        var replaced = ""
        var characters = sql[...]
        while let character = characters.popFirst() {
            if character == "$", let first = characters.first, first.isASCII, first.isNumber {
                let digits = characters.prefix { $0.isASCII && $0.isNumber }
                characters = characters.dropFirst(digits.count)
                replaced += substitutions[Int(digits)!] ?? "?"
            } else {
                replaced.append(character)
            }
        }
        var result = ""
        var rest = replaced[...]
        var previous: Character = " "
        while let character = rest.popFirst() {
            if character == ":", previous != ":", let first = rest.first, first.isLetter || first == "_" {
                rest = rest.drop { $0.isLetter || $0.isNumber || $0 == "_" }
                result += "?"
                previous = "?"
                continue
            }
            if character.isWhitespace {
                if previous != " " && previous != "(" { result += " " }
                previous = result.last ?? " "
                continue
            }
            if character == ")", result.last == " " { result.removeLast() }
            result.append(character)
            previous = character
        }
        return result.trimmingCharacters(in: .whitespaces)
    }
}
