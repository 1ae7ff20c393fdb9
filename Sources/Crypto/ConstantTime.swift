import CSodium

/// Comparisons whose running time does not depend on where secret inputs differ.
public enum ConstantTime {
    /// True when `a` and `b` are equal; only the lengths (not the contents) may influence timing.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        _ = Sodium.ready
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in
                sodium_memcmp(pa.baseAddress!, pb.baseAddress!, a.count) == 0
            }
        }
    }
}
