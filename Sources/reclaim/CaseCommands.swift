import Crypto
import Foundation
import Postgres
import ReclaimAPI
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import Synchronization

// `reclaim accounts import FILE.jsonl` and `reclaim audit verify [CASE]`.

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

/// Recomputes the hash chains of every case (or one) and names the first broken link of each.
func auditCommand(arguments: [String]) -> Never {
    guard arguments.first == "verify", arguments.count <= 2 else { fail("audit: expected `audit verify [CASE]`", code: exitUsage) }
    var caseNumber: String?
    if arguments.count == 2 {
        guard let number = try? CaseNumber(parsing: arguments[1]) else { fail("audit verify: \(arguments[1]) is not a valid case number", code: exitUsage) }
        caseNumber = number.digits
    }
    let configuration = loadConfiguration()
    do {
        let connection = try PostgresConnection(connectionString: configuration.databaseURL)
        defer { connection.close() }
        let result = try CaseEventStore.verify(caseNumber: caseNumber, on: connection)
        if let caseNumber, result.cases == 0 { fail("audit verify: no case \(caseNumber)") }
        for broken in result.breaks { print("BROKEN \(broken)") }
        if result.breaks.isEmpty {
            print("ok: \(result.cases) case(s), \(result.events) event(s); every chain holds")
            exit(0)
        }
        print("\(result.breaks.count) of \(result.cases) case(s) have a broken chain")
        exit(exitDataError)
    } catch {
        fail("audit verify: \(error)")
    }
}
