import Crypto
import Curl
import Foundation
import InboundMail
import Logging
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import Synchronization

/// Where replies are read (`RECLAIM_INBOUND`): an IMAP mailbox or a Maildir.
public enum InboundSource: Sendable, Equatable, CustomStringConvertible {
    case imap(IMAPMailbox)
    case maildir(String)

    /// Parses `imap://user:password@host:port/MAILBOX`, `imaps://…` or `maildir:PATH`; the error never holds the URL.
    public init(parsing text: String) throws(InboundSourceError) {
        if text.lowercased().hasPrefix("maildir:") {
            let path = String(text.dropFirst(8))
            guard !path.isEmpty, !path.contains("\0") else { throw InboundSourceError(reason: "maildir: needs a path (maildir:/var/mail/reclaim).") }
            self = .maildir(path)
            return
        }
        do {
            self = .imap(try IMAPMailbox(url: text))
        } catch {
            throw InboundSourceError(reason: error.reason + " Or maildir:PATH.")
        }
    }

    /// The source as logs may show it: no password.
    public var description: String {
        switch self {
        case .imap(let mailbox): mailbox.description
        case .maildir(let path): "maildir:" + path
        }
    }

    /// The key of the advisory lock that keeps one reader per mailbox across instances.
    var lockKey: Int64 {
        let name: String
        switch self {
        case .imap(let mailbox): name = "imap:\(mailbox.host.lowercased()):\(mailbox.port):\(mailbox.user.lowercased()):\(mailbox.mailbox)"
        case .maildir(let path): name = "maildir:" + ((path as NSString).standardizingPath)
        }
        let digest = SHA256.hash(Array(("reclaim inbound " + name).utf8))
        return digest.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }
}

/// Why `RECLAIM_INBOUND` was refused.
public struct InboundSourceError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}

/// How the inbound worker reads.
public struct InboundSettings: Sendable {
    /// The mailbox; nil reads nothing.
    public var source: InboundSource?
    /// Seconds between two passes over the mailbox (`RECLAIM_INBOUND_POLL_SECONDS`, default 30).
    public var pollSeconds: Double = 30
    /// The matching rules (reply address, per-sender limit, the parser's limits).
    public var rules: InboundRules
    /// IMAP's connect and transfer limits.
    public var timeouts = CurlTimeouts(connectSeconds: 10, totalSeconds: 120)
    /// CA certificates for the IMAP server instead of the system's (a private CA; tests).
    public var caFile: String?
    /// How many documents a case holds at most (`RECLAIM_CASE_DOCUMENTS`): attachments beyond it are not filed.
    public var documentLimit = DocumentUpload.defaultCaseLimit

    public init(source: InboundSource?, rules: InboundRules) {
        self.source = source
        self.rules = rules
    }
}

/// The inbound worker: a thread of its own in every `reclaim serve` beside the delivery worker. Each pass takes the
/// mailbox's advisory lock (a session lock: one reader per mailbox across instances; the others skip the pass), reads
/// each message, stores it in one transaction (`CaseOperations.receive`: parsed, matched, sealed, recorded) and only
/// after the commit removes it from the mailbox. A crash between the two leaves the message to be read again, and its
/// Message-ID (or digest) makes the second reading a duplicate that is only removed: at least once from the mailbox,
/// exactly once on the case. A message that cannot be read or stored is logged and left for the next pass; the
/// worker never stops on one message.
public final class InboundWorker: Sendable {
    public let settings: InboundSettings
    let pool: PostgresPool
    let operations: CaseOperations
    let logger: Logger
    let now: @Sendable () -> Date
    private let state = Mutex(RunState())
    private let finished = DispatchGroup()

    private struct RunState {
        var running = false
        var stopping = false
    }

    public init(settings: InboundSettings, pool: PostgresPool, keys: KeyFile?, logger: Logger, now: @escaping @Sendable () -> Date = { Date() }) {
        self.settings = settings
        self.pool = pool
        self.operations = CaseOperations(keys: keys, documentLimit: settings.documentLimit)
        self.logger = logger
        self.now = now
    }

    /// Starts the reading thread (when a source is configured); returns at once.
    public func start() {
        guard let source = settings.source else { return }
        let start = state.withLock { state -> Bool in
            guard !state.running else { return false }
            state.running = true
            state.stopping = false
            return true
        }
        guard start else { return }
        if case .maildir(let path) = source {
            do { try Maildir(path: path).create() } catch { logger.warning("inbound_maildir_failed", ["error": .string(error.description)]) }
        }
        logger.info("inbound_reading", ["source": .string(source.description), "poll_seconds": .double(settings.pollSeconds)])
        finished.enter()
        let thread = Thread { [self] in
            var session: IMAPSession?
            while !stopping {
                do {
                    _ = try runOnce(session: &session)
                } catch {
                    logger.warning("inbound_pass_failed", ["error": .string(String(describing: error))])
                }
                sleepUnlessStopping(settings.pollSeconds)
            }
            finished.leave()
        }
        thread.name = "reclaim-inbound"
        thread.start()
    }

    /// Asks the thread to stop and waits for it to finish the message in hand.
    public func stop() {
        let wasRunning = state.withLock { state -> Bool in
            let was = state.running
            state.stopping = true
            state.running = false
            return was
        }
        if wasRunning { finished.wait() }
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    private func sleepUnlessStopping(_ seconds: TimeInterval) {
        let end = Date().addingTimeInterval(seconds)
        while !stopping && Date() < end { Thread.sleep(forTimeInterval: min(0.05, seconds)) }
    }

    /// One pass over the mailbox: the messages stored (duplicates removed but not counted); 0 when another instance
    /// holds the mailbox's lock. Tests call it directly.
    @discardableResult
    public func runOnce() throws -> Int {
        var session: IMAPSession?
        return try runOnce(session: &session)
    }

    func runOnce(session: inout IMAPSession?) throws -> Int {
        guard let source = settings.source else { return 0 }
        return try pool.withConnection { connection -> Int in
            guard try InboundLock.acquire(source.lockKey, on: connection) else { return 0 }
            defer { try? InboundLock.release(source.lockKey, on: connection) }
            switch source {
            case .maildir(let path): return try readMaildir(Maildir(path: path))
            case .imap(let mailbox):
                if session == nil { session = try IMAPSession(mailbox: mailbox, timeouts: settings.timeouts, caFile: settings.caFile) }
                do {
                    return try readIMAP(session!)
                } catch {
                    session = nil  // a fresh login next pass
                    throw error
                }
            }
        }
    }

    private func readMaildir(_ maildir: Maildir) throws -> Int {
        var stored = 0
        for entry in try maildir.entries() {
            if stopping { break }
            guard let message = try maildir.read(entry, maximumBytes: settings.rules.limits.maximumBytes) else { continue }
            guard let outcome = store(message.bytes, truncated: message.truncated, origin: entry.description) else { continue }
            if case .stored = outcome { stored += 1 }
            try maildir.remove(entry)
        }
        return stored
    }

    private func readIMAP(_ session: IMAPSession) throws -> Int {
        var stored = 0
        let listing = try session.listing()
        for uid in listing.uids {
            if stopping { break }
            let message = try session.fetch(uid: uid, uidValidity: listing.uidValidity, maximumBytes: settings.rules.limits.maximumBytes)
            guard let outcome = store(message.bytes, truncated: message.truncated, origin: "uid \(uid)") else { continue }
            if case .stored = outcome { stored += 1 }
            try session.delete(uid: uid, uidValidity: listing.uidValidity)
        }
        return stored
    }

    /// Stores one message in its own transaction; nil (logged) when that failed, so the message stays in the mailbox.
    private func store(_ bytes: [UInt8], truncated: Bool, origin: String) -> InboundOutcome? {
        do {
            let outcome = try pool.withTransaction { connection in
                try operations.receive(raw: bytes, truncated: truncated, rules: settings.rules, at: now(), on: connection)
            }
            switch outcome {
            case .stored(let id, let number, let matchedBy, let reason):
                // The id and how it matched: never the sender or the subject (personal data the log does not need).
                logger.info(
                    "mail_received",
                    [
                        "id": .string(id.uuidString.lowercased()), "case_number": .string(number ?? ""),
                        "matched_by": .string(matchedBy?.rawValue ?? ""), "unmatched_reason": .string(reason ?? ""),
                    ])
            case .duplicate:
                logger.info("mail_duplicate", ["origin": .string(origin)])
            }
            return outcome
        } catch {
            logger.warning("mail_store_failed", ["origin": .string(origin), "error": .string(String(describing: error))])
            return nil
        }
    }
}
