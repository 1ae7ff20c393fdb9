import Crypto
import Curl
import Foundation
import Notifications
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport

/// A Python helper from Tests/Notify (the real SMTP server, the verifying webhook receiver), run by the venv that
/// deploy/test makes (`RECLAIM_TEST_PYTHON`, default .build/notify-venv/bin/python); it prints its port first.
final class PythonHelper: @unchecked Sendable {
    let process = Process()
    let port: Int

    static var python: String {
        ProcessInfo.processInfo.environment["RECLAIM_TEST_PYTHON"] ?? RepositoryPaths.root + "/.build/notify-venv/bin/python"
    }

    init(_ script: String, _ arguments: [String]) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [RepositoryPaths.root + "/Tests/Notify/" + script] + arguments
        process.standardOutput = output
        try process.run()
        var line = [UInt8]()
        let handle = output.fileHandleForReading
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first else { break }
            if first == 10 { break }
            line.append(first)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.terminate()
            throw HelperError(description: "\(script) did not start (is \(Self.python) there? run deploy/test once)")
        }
        self.port = port
    }

    func stop() {
        // SIGKILL: the helper inherits the test process's signal mask, in which SIGTERM may be blocked.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}

/// A fresh directory under /tmp, removed by the caller.
func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "reclaim-notify-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Settings for tests: fast polling, short schedules, loopback allowed, files in `directory`.
func testSettings(directory: String, smtpURL: String? = nil, schedule: [Double] = [0.1, 0.1]) -> NotificationSettings {
    var settings = NotificationSettings(
        smtpURL: smtpURL, mailFrom: "reclaim@reclaim.test", publicURL: "https://reclaim.test",
        mailDirectory: directory + "/mail", mailSchedule: RetrySchedule(delays: schedule),
        webhookSchedule: RetrySchedule(delays: schedule), webhookAllow: WebhookAllowList(parsing: "127.0.0.1"))
    settings.pollInterval = 0.05
    settings.smtpTimeouts = CurlTimeouts(connectSeconds: 2, totalSeconds: 5)
    settings.endpointBackoff = RetrySchedule(delays: [0.1])
    return settings
}

/// A case opening with the given contact and rescue addresses and language.
func opening(contact: String = "ada@example.net", rescue: String? = nil, language: CustomerLanguage = .english) -> CaseOperations.Opening {
    CaseOperations.Opening(
        kind: .accountTakeover, accountEmail: "victim@example.com", customerName: "Ada Victim", customerContactEmail: contact,
        devices: [.init(serial: "C02XK1ZJH3QD", imei: nil, model: "Phone")], facts: CaseFacts(rescueEmailAdded: true),
        summary: "Rescue address added.", rescueEmail: rescue, language: language)
}

/// One accepted mail of the SMTP sink: the raw message and its envelope.
struct ReceivedMail {
    let raw: String
    let recipients: [String]

    func header(_ name: String) -> String? {
        let head = raw.components(separatedBy: "\r\n\r\n").first ?? raw
        var result: String?
        for line in head.components(separatedBy: "\r\n") {
            if line.lowercased().hasPrefix(name.lowercased() + ":") {
                result = String(line.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces)
            } else if result != nil, line.hasPrefix(" ") {
                result! += line.trimmingCharacters(in: .whitespaces)
            } else if result != nil {
                break
            }
        }
        return result
    }

    /// The decoded subject (RFC 2047 base64 words joined).
    var subject: String {
        let value = header("Subject") ?? ""
        guard value.contains("=?UTF-8?B?") else { return value }
        return value.components(separatedBy: "?=").compactMap { part -> String? in
            guard let range = part.range(of: "=?UTF-8?B?") else { return nil }
            return Data(base64Encoded: String(part[range.upperBound...])).map { String(decoding: $0, as: UTF8.self) }
        }.joined()
    }

    /// The decoded text body.
    var body: String {
        let encoded = raw.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n").replacingOccurrences(of: "\r\n", with: "")
        return Data(base64Encoded: encoded).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}

/// The mails the sink wrote to `directory`, in arrival order.
func receivedMails(in directory: String) -> [ReceivedMail] {
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
    return names.compactMap { name in
        guard let raw = try? String(contentsOfFile: directory + "/" + name, encoding: .utf8) else { return nil }
        let envelope = (try? Data(contentsOf: URL(fileURLWithPath: directory + "/" + name.replacingOccurrences(of: ".eml", with: ".json"))))
            .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        return ReceivedMail(raw: raw, recipients: envelope?["to"] as? [String] ?? [])
    }
}

/// A helper that did not start.
struct HelperError: Error, CustomStringConvertible {
    let description: String
}
