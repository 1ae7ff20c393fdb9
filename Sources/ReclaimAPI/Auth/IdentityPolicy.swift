import Foundation
import ReclaimCore

/// The numbers of identity and access, in one place (documented in README "Authentication" and docs/decisions.md).
public struct IdentityPolicy: Sendable {
    /// A session ends after this long without a request.
    public var sessionIdleTimeout: TimeInterval = 30 * 60
    /// A session ends this long after sign-in, however active.
    public var sessionAbsoluteTimeout: TimeInterval = 12 * 3600
    /// `last_seen_at` is written at most this often per session (not on every request).
    public var sessionTouchInterval: TimeInterval = 60
    /// Consecutive failed sign-ins that lock an account (known or not).
    public var accountFailureLimit = 10
    /// How long a locked account is refused.
    public var accountLockout: TimeInterval = 15 * 60
    /// Failed sign-ins one client address may make, across all accounts, within `addressWindow`.
    public var addressFailureLimit = 50
    /// The per-address counting window.
    public var addressWindow: TimeInterval = 15 * 60
    /// How long an address over its budget is refused.
    public var addressLockout: TimeInterval = 15 * 60
    /// Passkey sign-in challenges one client address may ask for within `addressWindow` (each counts, used or not);
    /// then it is refused for `addressLockout`.
    public var passkeyOptionsLimit = 50
    /// TOTP steps accepted either side of now (RFC 6238 §5.2: one step of clock drift).
    public var totpWindow = 1
    /// Request signatures are accepted within this many seconds of the service's clock, either way.
    public var signatureWindow: TimeInterval = 300
    /// Stored idempotent responses are kept this long.
    public var idempotencyLifetime: TimeInterval = 24 * 3600
    /// How long a retry waits for the first request with its Idempotency-Key to commit or roll back, then 409.
    public var idempotencyWait: TimeInterval = 5
    /// Password-hashing threads (argon2id at 19 MiB takes ~25 ms of one core).
    public var hashThreads = 2
    /// Sign-ins allowed to wait for a hashing thread; beyond that, 503 `busy`.
    public var hashQueueCapacity = 64

    /// The rule for one address's passkey sign-in challenges.
    public var passkeyOptionsRule: ThrottleRule { ThrottleRule(limit: passkeyOptionsLimit, window: addressWindow, lockout: addressLockout) }

    /// The defaults above.
    public init() {}

    /// The defaults.
    public static let standard = IdentityPolicy()
}
