import Foundation
import Synchronization

/// A value a log line can carry; rendered as a JSON scalar.
public enum LogValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

/// Severity of a log line.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug = 0
    case info, warning, error

    /// The word written in the `level` field.
    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Where finished log lines go. One `write` per line, each line ends in "\n".
public protocol LogSink: Sendable {
    func write(_ line: String)
}

/// Writes lines to standard error with one `write(2)` each, so lines from several threads never interleave.
public struct StandardErrorSink: LogSink {
    public init() {}
    public func write(_ line: String) {
        var line = line
        line.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

/// Keeps lines in memory; for tests that search the log.
public final class MemorySink: LogSink {
    private let storage = Mutex<[String]>([])
    public init() {}
    public func write(_ line: String) { storage.withLock { $0.append(line) } }
    /// Every line written so far.
    public var lines: [String] { storage.withLock { $0 } }
}

/// A JSON-lines logger. Created once by the executable and passed in; libraries never make their own.
public struct Logger: Sendable {
    public let sink: any LogSink
    public let minimumLevel: LogLevel

    public init(sink: any LogSink = StandardErrorSink(), minimumLevel: LogLevel = .info) {
        self.sink = sink
        self.minimumLevel = minimumLevel
    }

    /// A logger that drops everything.
    public static let discard = Logger(sink: DiscardSink(), minimumLevel: .error)

    public func debug(_ event: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.debug, event, fields) }
    public func info(_ event: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.info, event, fields) }
    public func warning(_ event: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.warning, event, fields) }
    public func error(_ event: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.error, event, fields) }

    /// Writes `{"ts":…,"level":…,"event":…, fields…}`. Callers must never pass secrets or bodies as fields.
    public func log(_ level: LogLevel, _ event: String, _ fields: KeyValuePairs<String, LogValue>) {
        guard level >= minimumLevel else { return }
        var line = "{\"ts\":\""
        line.reserveCapacity(192)
        line += Logger.timestamp()
        line += "\",\"level\":\""
        line += level.name
        line += "\",\"event\":"
        JSONText.appendString(event, to: &line)
        for (key, value) in fields {
            line += ","
            JSONText.appendString(key, to: &line)
            line += ":"
            JSONText.appendValue(value, to: &line)
        }
        line += "}\n"
        sink.write(line)
    }

    /// RFC 3339 UTC with milliseconds, formatted without Foundation's slow formatters.
    /// The date-and-seconds part is cached per second: `gmtime_r` takes glibc's timezone lock.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = Int(now.tv_sec)
        let prefix = secondCache.withLock { cache -> String in
            if cache.second == second { return cache.text }
            var seconds = now.tv_sec
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let text =
                "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))T\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2))."
            cache = (second, text)
            return text
        }
        let millis = Int(now.tv_nsec / 1_000_000)
        let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]
        var text = prefix
        text.append(digits[millis / 100])
        text.append(digits[millis / 10 % 10])
        text.append(digits[millis % 10])
        text.append("Z")
        return text
    }

    private static let secondCache = Mutex<(second: Int, text: String)>((-1, ""))

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}

struct DiscardSink: LogSink {
    func write(_ line: String) {}
}

/// Hand-written JSON scalar encoding: the access log runs on every request.
public enum JSONText {
    /// Appends `value` as a quoted JSON string, escaped exactly as RFC 8785 (JCS) requires: `"` and `\`,
    /// the short forms \b \t \n \f \r, `\u00xx` for other controls, nothing else. The access log
    /// and the hashed case events share this one implementation.
    public static func appendString(_ value: String, to out: inout String) {
        out += "\""
        var needsEscape = false
        for byte in value.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            needsEscape = true
            break
        }
        if !needsEscape {
            out += value
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\u{08}": out += "\\b"
                case "\t": out += "\\t"
                case "\n": out += "\\n"
                case "\u{0C}": out += "\\f"
                case "\r": out += "\\r"
                case let s where s.value < 0x20:
                    let hex = String(s.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// Appends a log value as a JSON scalar (non-finite doubles become null).
    public static func appendValue(_ value: LogValue, to out: inout String) {
        switch value {
        case .string(let s): appendString(s, to: &out)
        case .int(let i): out += String(i)
        case .double(let d): out += d.isFinite ? String(d) : "null"
        case .bool(let b): out += b ? "true" : "false"
        }
    }
}
