import Crypto
import Foundation
import Logging
import Postgres
import ReclaimStore
import Synchronization

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
    private let state = Mutex((running: false, stopping: false))
    private let finished = DispatchGroup()

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
    }

    /// Starts the thread; returns at once.
    public func start() {
        let start = state.withLock { state -> Bool in
            guard !state.running else { return false }
            state = (true, false)
            return true
        }
        guard start else { return }
        finished.enter()
        let thread = Thread { [self] in
            loop()
            finished.leave()
        }
        thread.name = "reclaim-sequencer"
        thread.start()
    }

    /// Asks the thread to stop and waits for its pass to end.
    public func stop() {
        let wasRunning = state.withLock { state -> Bool in
            let was = state.running
            state = (false, true)
            return was
        }
        if wasRunning { finished.wait() }
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    private func loop() {
        while !stopping {
            var full = false
            do {
                full = try runOnce()?.appended == settings.batchSize
            } catch {
                logger.warning("sequencer_failed", ["error": .string(String(describing: error))])
            }
            if !full {
                let end = Date().addingTimeInterval(pollInterval)
                while !stopping && Date() < end { Thread.sleep(forTimeInterval: min(0.05, pollInterval)) }
            }
        }
    }

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
