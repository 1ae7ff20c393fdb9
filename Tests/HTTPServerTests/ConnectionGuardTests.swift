import Foundation
import HTTPServer
import ReclaimTestSupport
import Synchronization
import Testing

/// The connection guard's bookkeeping under churn: each connection's watch lives in MHD's socket context and the
/// request path moves its deadline without a lock, while the sweeper shuts sockets down under the registry's lock.
@Suite(.serialized) struct ConnectionGuardTests {
    static let ok = Route(.GET, "/ok") { _ in .text("ok") }

    /// A socket to the server that has sent `head` (no more) and is left open.
    static func partialConnection(port: Int, head: String) -> Int32 {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return -1 }
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            return -1
        }
        _ = head.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        return socket
    }

    /// Slow clients that hang up just before, at and after their deadline race the sweeper for the same sockets,
    /// whose numbers the kernel hands straight to new connections. A socket shut down after its connection closed
    /// would cut one of the prompt clients; a watch lost or released twice would leave the count off (or crash).
    @Test func slowClientsClosingAroundTheirDeadlinesNeverCutPromptOnesAndAllAreCounted() throws {
        let server = try TestServer(routes: [Self.ok]) { configuration in
            configuration.headTimeoutSeconds = 0.3
            configuration.bodyTimeoutSeconds = 0.3
        }
        defer { server.stop() }
        let port = server.port
        let seconds = 2.5
        let churners = (0..<2).map { n in
            Background { () -> Int in
                var opened = 0
                let until = Date().addingTimeInterval(seconds)
                while Date() < until {
                    // A slow head on one thread, a stalled body on the other, 25 at a time.
                    let head = n == 0 ? "GET /ok HTTP/1.1\r\nHost: t\r\nX-Slow: " : "GET /ok HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n"
                    let sockets = (0..<25).map { _ in Self.partialConnection(port: port, head: head) }.filter { $0 >= 0 }
                    opened += sockets.count
                    // Hang up one by one from well before the 0.3 s deadline to after the sweeper's next pass.
                    usleep(200_000)
                    for socket in sockets {
                        close(socket)
                        usleep(UInt32.random(in: 5_000...15_000))
                    }
                }
                return opened
            }
        }
        let keptAlive = Background { () -> (requests: Int, connections: Int) in
            let client = TestHTTPClient(port: port, keepAlive: true)
            var requests = 0
            let until = Date().addingTimeInterval(seconds)
            while Date() < until {
                let status = try client.request("GET", "/ok").status
                guard status == 200 else { throw TestHTTPError.closedEarly("status \(status)") }
                requests += 1
            }
            return (requests, client.connectionsOpened)
        }
        let fresh = Background { () -> Int in
            // A new connection per request: each is likely to get a socket number a slow client just gave up.
            let client = TestHTTPClient(port: port)
            var requests = 0
            let until = Date().addingTimeInterval(seconds)
            while Date() < until {
                let status = try client.request("GET", "/ok").status
                guard status == 200 else { throw TestHTTPError.closedEarly("status \(status)") }
                requests += 1
            }
            return requests
        }

        let slow = try churners.map { try #require($0.wait(timeout: 20)).get() }
        let kept = try #require(keptAlive.wait(timeout: 20)).get()
        let fresher = try #require(fresh.wait(timeout: 20)).get()
        print(
            "connection guard churn: \(slow) slow connections, \(kept.requests) kept-alive requests on \(kept.connections) connection(s), "
                + "\(fresher) one-shot requests, \(server.server.connectionsTimedOut) cut")
        #expect(slow.allSatisfy { $0 > 0 })
        #expect(kept.requests > 0 && fresher > 0)
        #expect(kept.connections == 1, "a prompt keep-alive client must never be cut")
        #expect(server.server.connectionsTimedOut > 0, "slow clients still there after 0.3 s must have been cut")
        // Every watch is dropped once its connection closes.
        let drained = Date().addingTimeInterval(3)
        while server.server.openConnections > 0, Date() < drained { usleep(20_000) }
        #expect(server.server.openConnections == 0)
    }
}
