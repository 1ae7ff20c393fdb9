import Crypto
import Foundation
import Logging
import Postgres
import ReclaimStore

/// The cooling-off's scheduler: a thread of its own in every `reclaim serve`, beside the delivery worker and the
/// sequencer, that does each due unlock step when its `effective_at` passes. Each step is claimed with
/// `FOR UPDATE SKIP LOCKED` and done in one transaction with its event, checklist entry and webhook, so across
/// instances a step is done exactly once, and a crash mid-step leaves it scheduled for the next pass (of any instance).
public final class UnlockScheduler: Sendable {
    let operations: CaseOperations
    let pool: PostgresPool
    let logger: Logger
    let now: @Sendable () -> Date
    /// Seconds an idle scheduler waits before looking again: the most a due step waits past its time.
    let pollInterval: TimeInterval
    private let thread: PollingThread

    public init(
        keys: KeyFile?, pool: PostgresPool, logger: Logger, pollInterval: TimeInterval = 1,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.operations = CaseOperations(keys: keys)
        self.pool = pool
        self.logger = logger
        self.pollInterval = pollInterval
        self.now = now
        thread = PollingThread(name: "reclaim-unlocks", interval: pollInterval)
    }

    /// Starts the thread; returns at once.
    public func start() {
        thread.start { [self] in
            do {
                try runOnce()
            } catch {
                logger.warning("unlock_scheduler_failed", ["error": .string(String(describing: error))])
            }
            return false
        }
    }

    /// Asks the thread to stop and waits for its current step to commit.
    public func stop() { thread.stop() }

    private var stopping: Bool { thread.stopping }

    /// Does every step due now, each in a transaction of its own; how many were handled (done or cancelled).
    @discardableResult
    public func runOnce() throws -> Int {
        var handled = 0
        while !stopping {
            let at = Timestamp.truncated(now())
            guard let step = try pool.withTransaction({ try operations.doDueUnlock(at: at, on: $0) }) else { break }
            handled += 1
            logger.info("unlock_step_due", ["case_id": .string(step.caseID.lowercased), "step": .string(step.step.rawValue)])
        }
        return handled
    }
}
