import Foundation
import Synchronization

/// One named thread that repeats a pass until it is stopped, waiting `interval` after a pass that found nothing more to
/// do: the shape of the transparency log's sequencer, the unlock scheduler and the retention worker. `start` returns at
/// once; `stop` waits for the pass under way to end (its transaction committed or rolled back).
final class PollingThread: Sendable {
    let name: String
    /// Seconds an idle thread waits before its next pass.
    let interval: TimeInterval
    /// Whether the first pass also waits an interval (a starting instance then adds no work to the database at once).
    let waitsFirst: Bool
    private let state = Mutex((running: false, stopping: false))
    private let finished = DispatchGroup()

    init(name: String, interval: TimeInterval, waitsFirst: Bool = false) {
        self.name = name
        self.interval = interval
        self.waitsFirst = waitsFirst
    }

    /// True once `stop` was asked: a pass that loops over several items checks it between them.
    var stopping: Bool { state.withLock { $0.stopping } }

    /// Starts the thread running `pass` (which returns true when more is waiting, to pass again at once; it handles its
    /// own errors); a second start does nothing.
    func start(_ pass: @escaping @Sendable () -> Bool) {
        let start = state.withLock { state -> Bool in
            guard !state.running else { return false }
            state = (true, false)
            return true
        }
        guard start else { return }
        finished.enter()
        let thread = Thread { [self] in
            if waitsFirst { pause() }
            while !stopping {
                if !pass() { pause() }
            }
            finished.leave()
        }
        thread.name = name
        thread.start()
    }

    /// Asks the thread to stop and waits for its pass to end.
    func stop() {
        let wasRunning = state.withLock { state -> Bool in
            let was = state.running
            state = (false, true)
            return was
        }
        if wasRunning { finished.wait() }
    }

    /// Waits an interval, in short naps so that a stop is seen at once.
    private func pause() {
        let end = Date().addingTimeInterval(interval)
        while !stopping && Date() < end { Thread.sleep(forTimeInterval: min(0.05, interval)) }
    }
}
