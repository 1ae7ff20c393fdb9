import Foundation
import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// Destinations an operator allows despite the SSRF rules (`RECLAIM_WEBHOOK_ALLOW`: host names, IPs or CIDR ranges).
public struct WebhookAllowList: Sendable, Equatable {
    public var hosts: Set<String>
    public var ranges: AddressRanges

    /// Nothing allowed beyond public https destinations.
    public static let none = WebhookAllowList(hosts: [], ranges: .none)

    public init(hosts: Set<String>, ranges: AddressRanges) {
        self.hosts = hosts
        self.ranges = ranges
    }

    /// Parses a comma-separated list; an entry that is no IP or CIDR range is a host name.
    public init(parsing text: String) {
        var hosts: Set<String> = []
        var cidrs: [String] = []
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            if (try? AddressRanges(parsing: entry)) != nil { cidrs.append(entry) } else { hosts.insert(entry.lowercased()) }
        }
        self.hosts = hosts
        ranges = cidrs.isEmpty ? .none : ((try? AddressRanges(parsing: cidrs.joined(separator: ","))) ?? .none)
    }

    /// Whether `host` (the URL's) or `address` (what it resolved to) is listed.
    func allows(host: String, address: String?) -> Bool {
        hosts.contains(host.lowercased()) || ranges.contains(host) || (address.map(ranges.contains) ?? false)
    }
}

/// Why a webhook URL is refused (at registration and again before each delivery).
public enum WebhookDestinationRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidURL
    case notHTTPS
    case unresolvable(host: String)
    case forbiddenAddress(host: String, address: String)

    public var description: String {
        switch self {
        case .invalidURL: "not an absolute http(s) URL with a host"
        case .notHTTPS: "only https URLs are accepted (http only for a destination in RECLAIM_WEBHOOK_ALLOW)"
        case .unresolvable(let host): "\(host) does not resolve"
        case .forbiddenAddress(let host, let address):
            "\(host) resolves to \(address), a loopback, private or link-local address (allow it with RECLAIM_WEBHOOK_ALLOW)"
        }
    }
}

/// The SSRF rules: https only; no destination resolving to a loopback, private, link-local (or otherwise
/// non-public) address, unless the allow list names it. The checked address is pinned for the transfer, so the
/// name cannot resolve elsewhere between check and connection.
public enum WebhookDestination {
    /// Non-public ranges (RFC 6890, the IANA special-purpose registries): IPv4 this network, private, CGNAT, loopback,
    /// link-local, IETF protocol, documentation, 6to4 relay, benchmarking, multicast, reserved; IPv6 unspecified,
    /// loopback, discard, IETF protocol (Teredo, ORCHID, benchmarking), documentation, SRv6, local-use NAT64, ULA,
    /// link-local, site-local, multicast. IPv4-mapped IPv6 is read as IPv4 by AddressRanges; the other forms that carry
    /// an IPv4 address are judged by it (`isForbidden`).
    static let forbidden = try! AddressRanges(
        parsing: """
            0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, 169.254.0.0/16, 172.16.0.0/12, 192.0.0.0/24, 192.0.2.0/24, \
            192.88.99.0/24, 192.168.0.0/16, 198.18.0.0/15, 198.51.100.0/24, 203.0.113.0/24, 224.0.0.0/4, 240.0.0.0/4, \
            ::/128, ::1/128, 100::/64, 2001::/23, 2001:db8::/32, 3fff::/20, 5f00::/16, 64:ff9b:1::/48, fc00::/7, fe80::/10, \
            fec0::/10, ff00::/8
            """)

    /// Whether a resolved address is refused: in a non-public range, carrying an IPv4 address that is (6to4, NAT64,
    /// IPv4-compatible), or not an address this check can read (a scoped `fe80::1%eth0`): refused, never let through.
    static func isForbidden(_ address: String) -> Bool {
        guard AddressRanges.isAddress(address) else { return true }
        return forbidden.contains(address) || AddressRanges.embeddedIPv4(address).map(forbidden.contains) == true
    }

    /// A checked destination, and the `CURLOPT_RESOLVE` pin (`host:port:address`) that keeps curl on the checked address.
    public struct Checked: Sendable, Equatable {
        public let host: String
        public let port: Int
        public let address: String
        /// Nil for an IP literal, which curl does not resolve (and whose IPv6 form a RESOLVE entry cannot name: curl error 49).
        public var pin: String? {
            AddressRanges.isAddress(host) ? nil : "\(host):\(port):\(address.contains(":") ? "[\(address)]" : address)"
        }
    }

    /// The URL's parts, or `invalidURL` / `notHTTPS`.
    public static func parse(_ url: String, allow: WebhookAllowList) throws(WebhookDestinationRefusal) -> (host: String, port: Int) {
        guard url.count <= 2000, !url.contains(where: { $0.isWhitespace }), let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), var host = components.host, !host.isEmpty, components.user == nil
        else {
            throw .invalidURL
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        switch scheme {
        case "https": break
        case "http": guard allow.allows(host: host, address: nil) else { throw .notHTTPS }
        default: throw .invalidURL
        }
        return (host, components.port ?? (scheme == "https" ? 443 : 80))
    }

    /// Parses and resolves `url`; every address it resolves to must be public or allowed.
    public static func check(_ url: String, allow: WebhookAllowList) throws(WebhookDestinationRefusal) -> Checked {
        let (host, port) = try parse(url, allow: allow)
        let addresses = resolve(host)
        guard let first = addresses.first else { throw .unresolvable(host: host) }
        for address in addresses where isForbidden(address) && !allow.allows(host: host, address: address) {
            throw .forbiddenAddress(host: host, address: address)
        }
        return Checked(host: host, port: port, address: first)
    }

    /// The addresses `host` resolves to (an IP literal resolves to itself), as text.
    static func resolve(_ host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let list = result else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if let address = entry.pointee.ai_addr,
                getnameinfo(address, entry.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0
            {
                let text = String(cString: buffer)
                if !addresses.contains(text) { addresses.append(text) }
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }
}

/// Seconds between attempts; after the last the message is dead-lettered. Each wait gets ±10 % jitter.
public struct RetrySchedule: Sendable, Equatable {
    public var delays: [TimeInterval]

    /// Standard Webhooks' schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after the first attempt.
    public static let standardWebhooks = RetrySchedule(delays: [5, 300, 1800, 7200, 18000, 36000, 36000])

    public init(delays: [TimeInterval]) { self.delays = delays }

    /// Parses `1,1,2` (seconds); nil when an entry is not a non-negative number.
    public init?(parsing text: String) {
        var delays: [TimeInterval] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = Double(part.trimmingCharacters(in: .whitespaces)), value >= 0, value <= 7 * 86400 else { return nil }
            delays.append(value)
        }
        self.delays = delays
    }

    /// The wait after failed attempt number `attempt` (1-based), at least `retryAfter` when the receiver sent one;
    /// nil when the schedule is spent.
    public func delay(after attempt: Int, retryAfter: TimeInterval? = nil, jitter: Double = Double.random(in: -0.1...0.1)) -> TimeInterval? {
        guard attempt >= 1, attempt <= delays.count else { return nil }
        let base = delays[attempt - 1] * (1 + jitter)
        return max(base, min(retryAfter ?? 0, 86400))
    }
}
