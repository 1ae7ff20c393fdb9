import Foundation
import Testing

@testable import HTTPServer

/// The client behind a reverse proxy: believed only from trusted hops, never from what the client wrote itself.
@Suite struct TrustedProxiesTests {
    @Test func parsesAddressesAndRangesAndRefusesTheRest() throws {
        let proxies = try AddressRanges(parsing: " 127.0.0.1, 10.0.0.0/8 ,::1, fd00::/8")
        #expect(proxies.contains("127.0.0.1") && proxies.contains("10.200.3.4") && proxies.contains("::1") && proxies.contains("fd12::7"))
        #expect(!proxies.contains("127.0.0.2") && !proxies.contains("11.0.0.1") && !proxies.contains("fe80::1") && !proxies.contains("nonsense"))
        #expect(proxies.contains("::ffff:10.1.2.3"))  // IPv4-mapped IPv6 is the IPv4 address
        #expect(try AddressRanges(parsing: "").isEmpty)
        for bad in ["10.0.0.0/33", "::1/129", "localhost", "10.0.0.1/", "10.0.0/8", "1.2.3.4/8/9", "10.0.0.0/x"] {
            #expect(throws: AddressRangesError(entry: bad)) { try AddressRanges(parsing: "127.0.0.1, \(bad)") }
        }
    }

    @Test func theClientIsTheFirstUntrustedHopFromTheRight() throws {
        let proxies = try AddressRanges(parsing: "127.0.0.1, 10.0.0.0/8")
        // Not from a trusted peer: the header is the client's own words and is ignored.
        #expect(proxies.client(peer: "198.51.100.7", forwardedFor: ["203.0.113.9"]) == "198.51.100.7")
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.9"]) == "203.0.113.9")
        // A client writing its own X-Forwarded-For cannot choose its address: the proxy appends the real one.
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["1.1.1.1, 203.0.113.9"]) == "203.0.113.9")
        // Trusted hops are skipped, across repeated headers too.
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.9, 10.1.1.1", "10.2.2.2"]) == "203.0.113.9")
        // A malformed hop ends the walk at the last address a trusted hop vouched for.
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.9, garbage"]) == "127.0.0.1")
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["2001:DB8::1"]) == "2001:db8::1")
        #expect(AddressRanges.none.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.9"]) == "127.0.0.1")
    }

    @Test func handlersSeeTheForwardedClientOnlyBehindATrustedProxy() throws {
        let routes = [Route(.GET, "/who") { request in .text(request.clientAddress) }]
        let trusting = try TestServer(routes: routes) { $0.trustedProxies = try! AddressRanges(parsing: "127.0.0.1") }
        defer { trusting.stop() }
        #expect(try trusting.client().request("GET", "/who", headers: [("X-Forwarded-For", "203.0.113.9")]).text == "203.0.113.9")
        #expect(try trusting.client().request("GET", "/who").text == "127.0.0.1")
        let plain = try TestServer(routes: routes)
        defer { plain.stop() }
        #expect(try plain.client().request("GET", "/who", headers: [("X-Forwarded-For", "203.0.113.9")]).text == "127.0.0.1")
    }
}
