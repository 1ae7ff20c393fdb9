import Foundation
import InboundMail
import Testing

@Suite("MIME structure: alternatives, mixed, related, nesting, limits")
struct StructureTests {
    /// A multipart body from parts (each its header lines and body).
    func multipart(_ type: String, boundary: String = "b", _ parts: [(headers: [String], body: String)], epilogue: String = "") -> String {
        var text = "preamble, ignored\r\n"
        for part in parts { text += "--\(boundary)\r\n" + part.headers.map { $0 + "\r\n" }.joined() + "\r\n" + part.body + "\r\n" }
        return text + "--\(boundary)--\r\n" + epilogue
    }

    func mail(_ contentType: String, _ body: String) -> [UInt8] {
        message(["From: a@example.com", "Message-ID: <m@x>", "Content-Type: \(contentType)"], body: body)
    }

    @Test func alternativePrefersPlainText() throws {
        let body = multipart("alternative", [(["Content-Type: text/html"], "<p>html</p>"), (["Content-Type: text/plain"], "plain")])
        #expect(try MailParser().parse(mail("multipart/alternative; boundary=b", body)).text == "plain")
        // A blank plain part loses to the HTML; no plain part at all means the HTML, converted.
        let blank = multipart("alternative", [(["Content-Type: text/plain"], " \r\n "), (["Content-Type: text/html"], "<p>html</p>")])
        #expect(try MailParser().parse(mail("multipart/alternative; boundary=b", blank)).text == "html")
        let onlyHTML = multipart(
            "alternative", [(["Content-Type: text/html"], "<p>only html</p>"), (["Content-Type: text/calendar"], "BEGIN:VCALENDAR")])
        let parsed = try MailParser().parse(mail("multipart/alternative; boundary=b", onlyHTML))
        #expect(parsed.text == "only html")
        // The losing alternative that is no text (a meeting invitation) is kept as an attachment.
        #expect(parsed.attachments.map(\.mediaType) == ["text/calendar"])
    }

    @Test func mixedJoinsBodyPartsInOrder() throws {
        // Apple Mail splits the HTML around an inline picture: both halves are text, the picture an attachment.
        let body = multipart(
            "mixed",
            [
                (["Content-Type: text/plain"], "first"),
                (["Content-Type: image/png", "Content-Transfer-Encoding: base64"], "iVBORw0KGgo="),
                (["Content-Type: text/html; charset=utf-8"], "<div>second</div>"),
                (["Content-Type: text/plain", "Content-Disposition: attachment; filename=notes.txt"], "a text file"),
            ])
        let parsed = try MailParser().parse(mail("multipart/mixed; boundary=b", body))
        #expect(parsed.text == "first\n\nsecond")
        #expect(parsed.attachments.map(\.mediaType) == ["image/png", "text/plain"])
        #expect(parsed.attachments[0].bytes == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(parsed.attachments[0].fileName == nil && !parsed.attachments[0].inline)
        #expect(parsed.attachments[1].fileName == "notes.txt" && parsed.attachments[1].bytes == bytes("a text file"))
    }

    @Test func relatedRootIsTheStartPart() throws {
        let body = multipart(
            "related",
            [
                (["Content-Type: image/gif", "Content-ID: <pic@x>"], "GIF89a"),
                (["Content-Type: text/html", "Content-ID: <root@x>"], "<p>root <img src=cid:pic@x></p>"),
            ])
        let parsed = try MailParser().parse(mail("multipart/related; boundary=b; start=\"<root@x>\"", body))
        #expect(parsed.text == "root")
        #expect(parsed.attachments.map(\.contentID) == ["pic@x"])
        #expect(parsed.attachments[0].inline)
    }

    @Test func nestedBoundariesThatShareAPrefix() throws {
        // The inner boundary starts with the outer one: only whole delimiter lines count.
        let inner = multipart(
            "alternative", boundary: "b-inner", [(["Content-Type: text/plain"], "inner text"), (["Content-Type: text/html"], "<p>x</p>")])
        let outer = multipart(
            "mixed",
            [
                (["Content-Type: multipart/alternative; boundary=b-inner"], inner),
                (["Content-Type: application/pdf", "Content-Disposition: attachment; filename=a.pdf"], "%PDF-1.4"),
            ])
        let parsed = try MailParser().parse(mail("multipart/mixed; boundary=b", outer))
        #expect(parsed.text == "inner text")
        #expect(parsed.attachments.map(\.fileName) == ["a.pdf"])
        #expect(parsed.attachments[0].bytes == bytes("%PDF-1.4"))
    }

    @Test func sloppyMultiparts() throws {
        // No closing delimiter: the last part runs to the end.
        let open = "--b\r\nContent-Type: text/plain\r\n\r\nno end"
        #expect(try MailParser().parse(mail("multipart/mixed; boundary=b", open)).text == "no end")
        // Transport padding after a delimiter; a part without a header.
        let padded = "--b  \r\n\r\ndefault text/plain\r\n--b--  \r\n"
        #expect(try MailParser().parse(mail("multipart/mixed; boundary=b", padded)).text == "default text/plain")
        // No boundary parameter, or a boundary that never appears: the body is read as text, not lost.
        #expect(try MailParser().parse(mail("multipart/mixed", "just text")).text == "just text")
        #expect(try MailParser().parse(mail("multipart/mixed; boundary=zzz", "--b\r\nx")).text == "--b\nx")
        // Content-Transfer-Encoding with odd case and spaces; an unknown one is read as 8bit.
        let odd = message(
            ["From: a@example.com", "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding:  Quoted-Printable "], body: "caf=C3=A9")
        #expect(try MailParser().parse(odd).text == "café")
        let unknown = message(["From: a@example.com", "Content-Transfer-Encoding: x-uuencode"], body: "as is")
        #expect(try MailParser().parse(unknown).text == "as is")
    }

    @Test func htmlWithoutCharsetUsesItsMetaTag() throws {
        let html: [UInt8] = Array("<html><head><meta charset=\"big5\"></head><body>".utf8) + [0xA7, 0x41, 0xA6, 0x6E] + Array("</body></html>".utf8)
        let raw = message(["From: a@example.com", "Content-Type: text/html"]) + html
        #expect(try MailParser().parse(raw).text == "你好")
    }

    @Test func attachmentNamesAndTypes() throws {
        let body = multipart(
            "mixed",
            [
                (["Content-Type: application/octet-stream; name=\"C:\\\\Users\\\\ada\\\\scan.pdf\""], "x"),
                (["Content-Type: garbage", "Content-Disposition: attachment"], "y"),
                (["Content-Type: image/jpeg", "Content-Disposition: attachment; filename=\"\""], ""),
                (["Content-Type: image/jpeg; name=photo.jpg", "Content-Disposition: inline"], "z"),
            ])
        let parsed = try MailParser().parse(mail("multipart/mixed; boundary=b", body))
        // A folder the sender's client left in the name is dropped; a type that is none reads as text/plain (RFC 2045);
        // an empty part is no attachment.
        #expect(parsed.attachments.map(\.fileName) == ["scan.pdf", nil, "photo.jpg"])
        #expect(parsed.attachments.map(\.mediaType) == ["application/octet-stream", "text/plain", "image/jpeg"])
        #expect(parsed.attachments.map(\.inline) == [false, false, true])
    }

    @Test func aSinglePartMessageThatIsAFile() throws {
        let raw = message(
            ["From: a@example.com", "Content-Type: application/pdf; name=a.pdf", "Content-Transfer-Encoding: base64"], body: "JVBERi0=")
        let parsed = try MailParser().parse(raw)
        #expect(parsed.text == "")
        #expect(parsed.attachments.map(\.fileName) == ["a.pdf"])
        #expect(parsed.attachments[0].bytes == bytes("%PDF-"))
    }

    @Test func forwardedMessageSentInBase64() throws {
        let inner = "From: thief@example.net\r\nSubject: pay\r\nMessage-ID: <t@x>\r\n\r\nPay now."
        let body = multipart(
            "mixed",
            [
                (["Content-Type: text/plain"], "See below."),
                (["Content-Type: message/rfc822", "Content-Transfer-Encoding: base64"], Data(inner.utf8).base64EncodedString()),
            ])
        let parsed = try MailParser().parse(mail("multipart/mixed; boundary=b", body))
        #expect(parsed.text == "See below.\n\n---------- Forwarded message ----------\nFrom: thief@example.net\nSubject: pay\n\nPay now.")
        #expect(parsed.attachments.map(\.fileName) == ["pay.eml"])
        #expect(parsed.attachments[0].bytes == bytes(inner))
    }

    @Test func digestPartsDefaultToMessages() throws {
        let body = multipart("digest", [([], "From: one@example.com\r\nSubject: first\r\n\r\nOne."), ([], "From: two@example.com\r\n\r\nTwo.")])
        let parsed = try MailParser().parse(mail("multipart/digest; boundary=b", body))
        #expect(parsed.attachments.map(\.mediaType) == ["message/rfc822", "message/rfc822"])
        #expect(parsed.text.contains("One.") && parsed.text.contains("Two."))
    }

    @Test func refusesTooLarge() throws {
        var limits = MailLimits()
        limits.maximumBytes = 100
        let big = message(["From: a@example.com"], body: String(repeating: "x", count: 200))
        #expect(throws: MailParseError.tooLarge(bytes: big.count, limit: 100)) { try MailParser(limits: limits).parse(big) }
        #expect(MailParseError.tooLarge(bytes: 1, limit: 0).reason == "too_large")
        // The header of a refused message can still be read, to record it.
        #expect(try MailParser(limits: limits).parseHeader(big).from?.address == "a@example.com")
        #expect(MailLimits().maximumBytes == 25 * 1024 * 1024)
    }

    @Test func refusesTooDeep() throws {
        // Multiparts 20 deep, and forwarded messages 20 deep.
        var body = "--b19\r\nContent-Type: text/plain\r\n\r\ndeep\r\n--b19--"
        for level in stride(from: 18, through: 0, by: -1) {
            body = "--b\(level)\r\nContent-Type: multipart/mixed; boundary=b\(level + 1)\r\n\r\n\(body)\r\n--b\(level)--"
        }
        let deep = mail("multipart/mixed; boundary=b0", body)
        #expect(throws: MailParseError.tooDeep(limit: 12)) { try MailParser().parse(deep) }
        var limits = MailLimits()
        limits.maximumDepth = 25
        #expect(try MailParser(limits: limits).parse(deep).text == "deep")

        var nested = "From: z@example.com\r\n\r\ninnermost"
        for _ in 0..<20 { nested = "From: a@example.com\r\nContent-Type: message/rfc822\r\n\r\n" + nested }
        #expect(throws: MailParseError.tooDeep(limit: 12)) { try MailParser().parse(bytes(nested)) }
        #expect(MailParseError.tooDeep(limit: 12).reason == "nested_too_deep")
    }

    @Test func refusesTooManyParts() throws {
        let parts = (0..<600).map { (["Content-Type: text/plain"], "part \($0)") }
        let many = mail("multipart/mixed; boundary=b", multipart("mixed", parts))
        #expect(throws: MailParseError.tooManyParts(limit: 500)) { try MailParser().parse(many) }
        #expect(MailParseError.tooManyParts(limit: 500).reason == "too_many_parts")
        #expect(MailParseError.tooManyParts(limit: 500).description == "The message has more than 500 parts.")
    }

    @Test func refusesWhatIsNoMessage() {
        for data in [[], bytes("\r\n\r\n"), bytes("just some words\r\nand more"), [0xFF, 0xFE, 0x00, 0x01]] as [[UInt8]] {
            #expect(throws: MailParseError.notAMessage) { try MailParser().parse(data) }
        }
        #expect(MailParseError.notAMessage.reason == "not_a_message")
    }

    @Test func aTenMebibyteAttachment() throws {
        // 10 MiB: a 64 KiB pseudo-random block 160 times (built by copying, so the debug build stays quick).
        var random = SeededGenerator(state: 10)
        let block = (0..<65_536).map { _ in UInt8.random(in: 0...255, using: &random) }
        let payload = (0..<160).reduce(into: Data()) { data, _ in data.append(contentsOf: block) }
        #expect(payload.count == 10 * 1024 * 1024)
        let encoded = payload.base64EncodedString(options: .lineLength76Characters)
        let body = multipart(
            "mixed",
            [
                (["Content-Type: text/plain"], "Invoice attached."),
                (["Content-Type: image/jpeg; name=big.jpg", "Content-Transfer-Encoding: base64"], encoded),
            ])
        let parsed = try MailParser().parse(mail("multipart/mixed; boundary=b", body))
        #expect(parsed.text == "Invoice attached.")
        #expect(parsed.attachments.count == 1)
        #expect(Data(parsed.attachments[0].bytes) == payload)
    }
}
