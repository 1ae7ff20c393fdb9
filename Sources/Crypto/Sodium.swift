import CSodium

/// libsodium must be initialised once before any call; every public entry point touches `Sodium.ready`.
enum Sodium {
    /// Runs `sodium_init` exactly once (Swift guarantees a static let is initialised once, thread-safely).
    static let ready: Bool = {
        let result = sodium_init()
        precondition(result >= 0, "libsodium failed to initialise")
        return true
    }()
}
