import Crypto
import Foundation
import Postgres
import ReclaimAPI
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import Synchronization

// `reclaim accounts import FILE.jsonl` and `reclaim audit verify [CASE | --checkpoint FILE]`.

/// Exit code when some input lines were refused or a chain is broken (sysexits EX_DATAERR).
let exitDataError: Int32 = 65

/// Imports accounts on file, one JSON object a line; a bad line is reported with its number and nothing from it is stored.
func accountsCommand(arguments: [String]) -> Never {
    guard arguments.count == 2, arguments[0] == "import" else { fail("accounts: expected `accounts import FILE.jsonl`", code: exitUsage) }
    let configuration = loadConfiguration()
    let keys = loadKeys(configuration)
    let text: String
    do {
        text = try String(contentsOfFile: arguments[1], encoding: .utf8)
    } catch {
        fail("accounts import: cannot read \(arguments[1]): \(error.localizedDescription)")
    }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let pool = PostgresPool(connectionString: configuration.databaseURL, maximumConnections: max(1, ProcessInfo.processInfo.activeProcessorCount))
    defer { pool.close() }
    let hasher = PasswordHash()
    let problems = Mutex<[Int: String]>([:])
    let imported = Atomic<Int>(0)
    // Lines are independent; argon2id dominates, so they are hashed on every core.
    DispatchQueue.concurrentPerform(iterations: lines.count) { index in
        let line = lines[index].trimmingCharacters(in: .whitespacesAndNewlines)
        guard !line.isEmpty else { return }
        let number = index + 1
        func refuse(_ message: String) { problems.withLock { $0[number] = message } }
        let payload: AccountPayload
        do {
            payload = try JSONDecoder().decode(AccountPayload.self, from: Data(line.utf8))
        } catch {
            refuse("not an account object (\(describe(error)))")
            return
        }
        do {
            _ = try AccountOperations.putOnFile(try AccountOperations.validate(payload), hasher: hasher, keys: keys, at: Date(), pool: pool)
            imported.add(1, ordering: .relaxed)
        } catch let error as OperationError {
            refuse(Refusals.message(for: error) ?? "not stored")
        } catch {
            refuse("not stored: \(error)")
        }
    }
    let refused = problems.withLock { $0 }
    for number in refused.keys.sorted() {
        FileHandle.standardError.write(Data("reclaim: accounts import: line \(number): \(refused[number]!)\n".utf8))
    }
    print("imported \(imported.load(ordering: .relaxed)) account(s); \(refused.count) line(s) refused")
    exit(refused.isEmpty ? 0 : exitDataError)
}

/// Names the field at fault without echoing values (a line may hold answers and card numbers).
private func describe(_ error: Error) -> String {
    switch error {
    case DecodingError.keyNotFound(let key, let context): "missing \((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))"
    case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
        "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
    default: "malformed JSON"
    }
}

/// Recomputes the hash chains of every case and the admin log's (or one case's) and names the first broken link of each;
/// with `--checkpoint FILE`, also the transparency log's tree from the events themselves, and whether today's tree
/// extends that saved checkpoint.
func auditCommand(arguments: [String]) -> Never {
    let usage = "audit: expected `audit verify [CASE]` or `audit verify --checkpoint FILE`"
    guard arguments.first == "verify", arguments.count <= 3 else { fail(usage, code: exitUsage) }
    if arguments.count == 3 {
        guard arguments[1] == "--checkpoint" else { fail(usage, code: exitUsage) }
        verifyCheckpoint(path: arguments[2])
    }
    var caseNumber: String?
    if arguments.count == 2 {
        guard let number = try? CaseNumber(parsing: arguments[1]) else {
            fail("audit verify: \(arguments[1]) is not a valid case number", code: exitUsage)
        }
        caseNumber = number.digits
    }
    let configuration = loadConfiguration()
    do {
        let connection = try PostgresConnection(connectionString: configuration.databaseURL)
        defer { connection.close() }
        // One snapshot: a running service may append to either chain meanwhile.
        let (result, admin) = try connection.withTransaction(isolation: .repeatableRead) { connection in
            let cases = try CaseEventStore.verify(caseNumber: caseNumber, on: connection)
            // One case's check is about that case; the whole check includes the admin log, a chain like the timelines.
            let admin = caseNumber == nil ? try AdminEventStore.verify(on: connection) : nil
            return (cases, admin)
        }
        if let caseNumber, result.cases == 0 { fail("audit verify: no case \(caseNumber)") }
        for broken in result.breaks { print("BROKEN \(broken)") }
        if let broken = admin?.firstBreak { print("BROKEN admin log: event \(broken.seq): \(broken.reason)") }
        let adminWords = admin.map { ", \($0.events) admin-log entr\($0.events == 1 ? "y" : "ies")" } ?? ""
        if result.breaks.isEmpty && admin?.firstBreak == nil {
            print("ok: \(result.cases) case(s), \(result.events) event(s)\(adminWords); every chain holds")
            exit(0)
        }
        if !result.breaks.isEmpty { print("\(result.breaks.count) of \(result.cases) case(s) have a broken chain") }
        if admin?.firstBreak != nil { print("the admin log's chain is broken") }
        exit(exitDataError)
    } catch {
        fail("audit verify: \(error)")
    }
}

/// `audit verify --checkpoint FILE`: every chain, the tree rebuilt from the events' own hashes (never from its stored
/// nodes), and the saved checkpoint: its signature under the key file's checkpoint keys, its size not beyond today's,
/// and the consistency proof from its size to today's against its root and the rebuilt one.
private func verifyCheckpoint(path: String) -> Never {
    let note: String
    do {
        note = try String(contentsOfFile: path, encoding: .utf8)
    } catch {
        fail("audit verify: cannot read \(path): \(error.localizedDescription)")
    }
    let configuration = loadConfiguration()
    let keys = loadKeys(configuration)
    do {
        let connection = try PostgresConnection(connectionString: configuration.databaseURL)
        defer { connection.close() }
        // One snapshot: the sequencer of a running service may append meanwhile.
        let problems = try connection.withTransaction(isolation: .repeatableRead) { connection -> [String] in
            var problems: [String] = []
            let chains = try CaseEventStore.verify(on: connection)
            problems += chains.breaks.map { "BROKEN \($0)" }
            let admin = try AdminEventStore.verify(on: connection)
            if let broken = admin.firstBreak { problems.append("BROKEN admin log: event \(broken.seq): \(broken.reason)") }
            let rebuilt = try TransparencyLogStore.recompute(on: connection)
            if !rebuilt.mismatchedLeaves.isEmpty {
                problems.append(
                    "TREE \(rebuilt.mismatchedEvents.prefix(10).joined(separator: ", ")): the logged leaf is not the hash of the event as it stands")
            }
            if rebuilt.missingEvents > 0 { problems.append("TREE \(rebuilt.missingEvents) event(s) are neither in the tree nor queued for it") }
            let stored = try TransparencyLogStore.size(on: connection)
            if stored != rebuilt.size || (try? TransparencyLogStore.root(size: stored, on: connection)) != rebuilt.root {
                problems.append("TREE the stored tree (\(stored) leaves) is not the tree of the events")
            }
            let verdict = try TransparencyLog.verify(
                note: note, origin: configuration.logOrigin, keys: keys, size: rebuilt.size, root: rebuilt.root,
                on: connection)
            if let problem = verdict.problem { problems.append("CHECKPOINT \(problem)") }
            print(
                "checkpoint: \(verdict.checkpoint.map { "\($0.origin), \($0.size) leaves" } ?? "unverified"); today's tree: \(rebuilt.size) leaves, root \(Data(rebuilt.root).base64EncodedString())"
            )
            print("chains: \(chains.cases) case(s), \(chains.events) event(s), \(admin.events) admin-log entr\(admin.events == 1 ? "y" : "ies")")
            return problems
        }
        for problem in problems { print(problem) }
        if problems.isEmpty {
            print("ok: today's tree extends the checkpoint; every chain holds")
            exit(0)
        }
        print("\(problems.count) problem(s): today's log does not extend the saved checkpoint as it should")
        exit(exitDataError)
    } catch {
        fail("audit verify: \(error)")
    }
}
