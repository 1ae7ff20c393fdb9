import Crypto
import Foundation
import Logging
import Postgres
import Synchronization

/// The time, as the service sees it: the system clock plus an offset that tests may move.
public final class ServiceClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)

    public init() {}

    /// Now, as the service sees it.
    public func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    /// Moves the service's time forward (tests only: lockout and session expiry).
    public func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
}

/// What every controller shares: configuration, database, keys, logger and clock.
public struct ServiceContext: Sendable {
    public let configuration: ServiceConfiguration
    public let pool: PostgresPool
    /// The secret keys; nil only in tests that exercise the transport without secrets.
    public let keys: KeyFile?
    public let logger: Logger
    public let clock: ServiceClock
}
