import Foundation

/// A real `reclaim serve` process (the executable built beside the tests) on a loopback port, for the tests that kill
/// one: started with the environment given, returned once `GET /readyz` answers 200, bounded by a deadline (a loaded
/// machine starts it slowly), its standard error kept in a file and shown when it does not come up.
public final class ServeProcess: @unchecked Sendable {
    /// Why a process did not come up.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The running process.
    public let process: Process
    /// Its loopback port (`RECLAIM_ADDRESS`).
    public let port: Int
    /// Its standard error (the JSON-lines log).
    public let logPath: String

    /// Starts `reclaim <arguments>` with `environment` plus `RECLAIM_ADDRESS` on `port` (a free one when nil); its log
    /// goes to a file in `logDirectory`. Throws, the process stopped and the end of its log shown, unless it is ready
    /// within `readyWithin` seconds.
    public init(
        environment: [String: String], port: Int? = nil, arguments: [String] = ["serve"], logDirectory: String, readyWithin: TimeInterval = 30
    ) throws {
        let port = port ?? freePort()
        self.port = port
        logPath = logDirectory + "/serve-\(UUID().uuidString).log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: RepositoryPaths.executable)
        process.arguments = arguments
        process.environment = environment.merging(["RECLAIM_ADDRESS": "127.0.0.1:\(port)"]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        let http = TestHTTPClient(host: "127.0.0.1", port: port, timeout: 2)
        let deadline = Date().addingTimeInterval(readyWithin)
        while Date() < deadline && process.isRunning {
            if let response = try? http.request("GET", "/readyz"), response.status == 200 { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        throw Failure(description: "reclaim serve did not become ready within \(Int(readyWithin)) s:\n\(log.suffix(2000))")
    }

    /// A client for it.
    public func client(timeout: TimeInterval = 10) -> TestHTTPClient { TestHTTPClient(host: "127.0.0.1", port: port, timeout: timeout) }

    /// What it has logged so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGKILL, then waits for it: nothing runs after the signal (no shutdown, no commit).
    public func killNine() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// SIGTERM (its threads finish their passes), then waits for it.
    public func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// A loopback port nobody listens on right now.
public func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}
