import Crypto
import Foundation
import Logging
import Postgres
import ReclaimStore

/// The transparency log's sequencer: a thread of its own in every `reclaim serve` that passes every `pollInterval`
/// (at once again while batches come full). Each pass is one transaction under an advisory lock, so across
/// instances exactly one sequences at a time and a crash mid-pass leaves nothing half-appended.
public final class TransparencyLogWorker: Sendable {
    public let settings: TransparencyLogSettings
    let pool: PostgresPool
    let keys: KeyFile?
    let logger: Logger
    let now: @Sendable () -> Date
    /// Seconds an idle sequencer waits before looking again.
    let pollInterval: TimeInterval
    private let thread: PollingThread

    public init(
        settings: TransparencyLogSettings, pool: PostgresPool, keys: KeyFile?, logger: Logger, pollInterval: TimeInterval = 0.5,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.settings = settings
        self.pool = pool
        self.keys = keys
        self.logger = logger
        self.pollInterval = pollInterval
        self.now = now
        thread = PollingThread(name: "reclaim-sequencer", interval: pollInterval)
    }

    /// Starts the thread; returns at once. A full batch passes again at once.
    public func start() {
        thread.start { [self] in
            do {
                return try runOnce()?.appended == settings.batchSize
            } catch {
                logger.warning("sequencer_failed", ["error": .string(String(describing: error))])
                return false
            }
        }
    }

    /// Asks the thread to stop and waits for its pass to end.
    public func stop() { thread.stop() }

    /// One pass in a transaction of its own: nil when another instance holds the sequencer's lock.
    @discardableResult
    public func runOnce() throws -> TransparencyLog.Pass? {
        let pass = try pool.withTransaction { try TransparencyLog.sequence(settings: settings, keys: keys, at: now(), on: $0) }
        if let checkpoint = pass?.checkpoint {
            logger.info("checkpoint_signed", ["tree_size": .int(checkpoint.size), "key_id": .string(checkpoint.keyID)])
        }
        return pass
    }
}
