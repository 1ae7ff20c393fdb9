import Foundation

/// A list of IPv4/IPv6 addresses and CIDR ranges: the reverse proxies whose `X-Forwarded-For` is believed, or the
/// clients allowed to read `/metrics`.
///
/// As trusted proxies (`client(peer:forwardedFor:)`): per-address limits (sign-in failures, status look-ups) must key
/// on the client, not on the proxy in front of the service, or one guesser behind the proxy exhausts the budget of
/// every customer. Only a request whose socket peer is trusted has its header read, right to left, skipping trusted
/// hops; the first untrusted address is the client. Entries a client could have written (left of that) are ignored,
/// so a client cannot pick its own address. A malformed entry ends the walk at the hop that added it.
public struct AddressRanges: Sendable, Equatable {
    struct Range: Sendable, Equatable {
        let bytes: [UInt8]  // 4 or 16
        let prefix: Int
        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var left = prefix
            for index in 0..<bytes.count where left > 0 {
                let bits = min(8, left)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if address[index] & mask != bytes[index] & mask { return false }
                left -= bits
            }
            return true
        }
    }

    let ranges: [Range]

    /// No address at all (as trusted proxies: every request's client is its socket peer).
    public static let none = AddressRanges(ranges: [])
    /// 127.0.0.0/8 and ::1: this machine.
    public static let loopback = try! AddressRanges(parsing: "127.0.0.0/8, ::1")

    private init(ranges: [Range]) { self.ranges = ranges }

    /// Parses a comma-separated list such as `127.0.0.1, 10.0.0.0/8, ::1`; throws naming the first malformed entry.
    public init(parsing list: String) throws(AddressRangesError) {
        var ranges: [Range] = []
        for raw in list.split(separator: ",") {
            let entry = raw.trimmingCharacters(in: .whitespaces)
            if entry.isEmpty { continue }
            let parts = entry.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2, let bytes = Self.addressBytes(String(parts[0])) else { throw AddressRangesError(entry: entry) }
            var prefix = bytes.count * 8
            if parts.count == 2 {
                guard let given = Int(parts[1]), (0...prefix).contains(given), parts[1].allSatisfy(\.isASCII) else {
                    throw AddressRangesError(entry: entry)
                }
                prefix = given
            }
            ranges.append(Range(bytes: bytes, prefix: prefix))
        }
        self.init(ranges: ranges)
    }

    /// True when the list is empty.
    public var isEmpty: Bool { ranges.isEmpty }

    /// Whether `address` (text) lies in one of the ranges.
    public func contains(_ address: String) -> Bool {
        guard let bytes = Self.addressBytes(address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// As trusted proxies: the client behind `peer`, given the request's `X-Forwarded-For` values in arrival order.
    public func client(peer: String, forwardedFor: [String]) -> String {
        guard contains(peer) else { return peer }
        var client = peer
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard let bytes = Self.addressBytes(hop) else { break }
            client = Self.text(bytes) ?? hop
            if !ranges.contains(where: { $0.contains(bytes) }) { break }
        }
        return client
    }

    /// Whether `address` (text) is an IPv4 or IPv6 literal this type can read (a scoped `fe80::1%eth0` is not).
    public static func isAddress(_ address: String) -> Bool { addressBytes(address) != nil }

    /// The IPv4 address an IPv6 address carries in a form that reaches it (IPv4-compatible `::/96`, IPv4-translated
    /// `::ffff:0:0/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`), as text; nil for any other address. IPv4-mapped
    /// addresses are read as IPv4 already.
    public static func embeddedIPv4(_ address: String) -> String? {
        guard let bytes = addressBytes(address), bytes.count == 16 else { return nil }
        let carried: ArraySlice<UInt8>
        if bytes[0..<12].allSatisfy({ $0 == 0 }) {
            carried = bytes[12...]
        } else if bytes[0..<8].allSatisfy({ $0 == 0 }) && bytes[8..<12] == [0xFF, 0xFF, 0, 0] {
            carried = bytes[12...]
        } else if bytes[0..<12] == [0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] {
            carried = bytes[12...]
        } else if bytes[0] == 0x20 && bytes[1] == 0x02 {
            carried = bytes[2..<6]
        } else {
            return nil
        }
        return text(Array(carried))
    }

    /// 4 or 16 bytes of an IPv4 or IPv6 literal (IPv4-mapped IPv6 is read as IPv4), else nil.
    static func addressBytes(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes[12...]) }
        return bytes
    }

    /// The canonical text of 4 or 16 address bytes.
    static func text(_ bytes: [UInt8]) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let done = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return done == nil ? nil : String(cString: buffer)
    }
}

/// An `AddressRanges` entry that is not an IP address or CIDR range.
public struct AddressRangesError: Error, Sendable, Equatable {
    /// The entry as given.
    public let entry: String
}
