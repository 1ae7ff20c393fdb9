import Foundation
import InboundMail

/// The .eml fixtures written by Fixtures/make_fixtures.py.
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

    /// Every fixture's file name, sorted.
    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
    }

    static func bytes(_ name: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: directory + "/" + name) ?? Data())
    }

    static func parsed(_ name: String) throws -> InboundMessage {
        try MailParser().parse(bytes(name))
    }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A message from header lines and a body, CRLF line ends.
func message(_ lines: [String], body: String = "") -> [UInt8] {
    bytes(lines.joined(separator: "\r\n") + "\r\n\r\n" + body)
}
