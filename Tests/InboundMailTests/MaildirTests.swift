import Foundation
import InboundMail
import Testing

@Suite("Maildir")
struct MaildirTests {
    func scratch() throws -> Maildir {
        let maildir = Maildir(path: NSTemporaryDirectory() + "reclaim-maildir-" + UUID().uuidString)
        try maildir.create()
        return maildir
    }

    @Test func deliverListReadRemove() throws {
        let maildir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: maildir.path) }
        #expect(try maildir.entries() == [])
        let first = try maildir.deliver(Fixture.bytes("gmail-reply.eml"))
        let second = try maildir.deliver(Fixture.bytes("big5-reply.eml"))
        // Nothing is left in tmp/: a reader never sees half a message.
        #expect(try FileManager.default.contentsOfDirectory(atPath: maildir.path + "/tmp") == [])
        // A mail client moved one to cur/ and flagged it seen; dot files are no messages.
        let seen = first.name + ":2,S"
        try FileManager.default.moveItem(atPath: maildir.path + "/new/" + first.name, toPath: maildir.path + "/cur/" + seen)
        _ = FileManager.default.createFile(atPath: maildir.path + "/new/.hidden", contents: Data("x".utf8))
        let entries = try maildir.entries()
        #expect(entries.map(\.description) == ["new/\(second.name)", "cur/\(seen)"])
        #expect(entries.first == second, "new/ is read before cur/")
        #expect(entries.last?.uniqueName == first.name)

        let read = try #require(try maildir.read(entries[1], maximumBytes: 1_000_000))
        #expect(read.bytes == Fixture.bytes("gmail-reply.eml") && !read.truncated)
        #expect(try MailParser().parse(read.bytes).subject == "Re: Case 482719305618: a new message for you")

        // Removed only when asked; twice is no error; a removed message reads as gone.
        for entry in entries { try maildir.remove(entry) }
        try maildir.remove(entries[0])
        #expect(try maildir.read(entries[0], maximumBytes: 10) == nil)
        #expect(try maildir.entries() == [])
    }

    @Test func readingStopsAtTheLimit() throws {
        let maildir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: maildir.path) }
        let bytes = [UInt8](repeating: 0x41, count: 200_000)
        let entry = try maildir.deliver(bytes)
        let cut = try #require(try maildir.read(entry, maximumBytes: 100_000))
        #expect(cut.truncated && cut.bytes.count == 100_000)
        let exact = try #require(try maildir.read(entry, maximumBytes: 200_000))
        #expect(!exact.truncated && exact.bytes == bytes)
        let empty = try maildir.deliver([])
        #expect(try maildir.read(empty, maximumBytes: 10)?.bytes == [])
    }

    @Test func aMissingMaildirIsAnError() {
        let maildir = Maildir(path: "/nonexistent/reclaim-maildir")
        #expect(throws: Maildir.Failure.self) { try maildir.entries() }
        #expect(throws: Maildir.Failure.self) { try maildir.deliver([1]) }
    }
}
