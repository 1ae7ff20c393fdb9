import Foundation
import Testing

@testable import Logging

@Suite struct LoggerTests {
    @Test func linesAreJSONWithTimestampLevelAndFields() throws {
        let sink = MemorySink()
        let logger = Logger(sink: sink, minimumLevel: .info)
        logger.info("request", ["method": "GET", "status": 200, "ms": 1.5, "ok": true])
        logger.debug("hidden")
        #expect(sink.lines.count == 1)
        let line = try #require(sink.lines.first)
        #expect(line.hasSuffix("}\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "request")
        #expect(object["level"] as? String == "info")
        #expect(object["status"] as? Int == 200)
        #expect(object["ok"] as? Bool == true)
        let ts = try #require(object["ts"] as? String)
        #expect(ts.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression) != nil)
    }

    @Test func hostileStringsStayInsideTheirField() throws {
        let sink = MemorySink()
        Logger(sink: sink).warning("x", ["path": .string("/a\"b\\c\n{\"forged\":1}\u{1}")])
        let line = try #require(sink.lines.first)
        #expect(line.filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["path"] as? String == "/a\"b\\c\n{\"forged\":1}\u{1}")
        #expect(object["forged"] == nil)
    }

    @Test func timestampTracksTheClock() throws {
        let first = Logger.timestamp()
        // Until the next second begins (at most 1 s), not a fixed 1.1 s.
        var second = Logger.timestamp()
        let deadline = Date().addingTimeInterval(3)
        while second.prefix(19) == first.prefix(19) && Date() < deadline {
            usleep(5_000)
            second = Logger.timestamp()
        }
        #expect(first != second)
        #expect(first.prefix(19) != second.prefix(19))
    }
}
