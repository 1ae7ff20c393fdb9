import Foundation
import InboundMail
import Testing

@Suite("Headers: folding, encoded words, addresses, ids, dates")
struct HeaderTests {
    func header(_ raw: String) throws -> InboundMessage {
        try MailParser().parseHeader(bytes(raw))
    }

    @Test func foldedFieldsAreUnfolded() throws {
        let mail = try header("Subject: a long\r\n subject\r\n\tfolded twice\r\nFrom: x@example.com\r\n\r\nbody")
        #expect(mail.subject == "a long subject folded twice")
        #expect(mail.from?.address == "x@example.com")
        // Bare LF, and a blank before the colon.
        let lf = try header("Subject : lf\n only\nTo: a@example.com\n\nbody")
        #expect(lf.subject == "lf only")
        #expect(lf.to.map(\.address) == ["a@example.com"])
    }

    @Test func aLineThatIsNoFieldStartsTheBody() throws {
        let mail = try MailParser().parse(bytes("From: a@example.com\r\nSubject: no blank line\r\nHello there\r\nsecond line"))
        #expect(mail.subject == "no blank line")
        #expect(mail.text == "Hello there\nsecond line")
    }

    @Test func mboxFromLineAndLeadingBlankLinesAreSkipped() throws {
        let mail = try MailParser().parse(bytes("\r\nFrom sender@example.com Tue Dec  1 10:00:00 2026\r\nFrom: a@example.com\r\nSubject: s\r\n\r\nx"))
        #expect(mail.from?.address == "a@example.com")
        #expect(mail.subject == "s")
    }

    @Test func encodedWordsBAndQ() {
        #expect(EncodedWords.decode(bytes("=?UTF-8?B?5L2g5aW9?=")) == "你好")
        #expect(EncodedWords.decode(bytes("=?iso-8859-1?q?Ren=E9e_M=FCller?=")) == "Renée Müller")
        // Blanks between adjacent words are folding; blanks between a word and text are text.
        #expect(EncodedWords.decode(bytes("=?utf-8?q?a?= =?utf-8?q?b?=")) == "ab")
        #expect(EncodedWords.decode(bytes("=?utf-8?q?a?=\r\n\t=?utf-8?q?b?= c")) == "ab c")
        #expect(EncodedWords.decode(bytes("Re: =?utf-8?q?caf=C3=A9?= ok")) == "Re: café ok")
        // One character split between two B words (GB18030, 2 bytes) and two Q words (UTF-8, 3 bytes).
        #expect(EncodedWords.decode(bytes("=?GB18030?B?xA==?= =?GB18030?B?4w==?=")) == "你")
        #expect(EncodedWords.decode(bytes("=?utf-8?Q?=E2=80?= =?utf-8?Q?=94?=")) == "—")
        // Different charsets next to each other are decoded each in its own.
        #expect(EncodedWords.decode(bytes("=?big5?B?pl4=?= =?utf-8?B?5aW9?=")) == "回好")
        // An RFC 2231 language suffix; lower-case encoding letters; words stuck to text and inside quotes.
        #expect(EncodedWords.decode(bytes("=?utf-8*zh-CN?b?5L2g?=")) == "你")
        #expect(EncodedWords.decode(bytes("x=?utf-8?q?y?=z")) == "xyz")
        #expect(EncodedWords.decode(bytes("\"=?utf-8?q?Ada_L?=\"")) == "\"Ada L\"")
    }

    @Test func malformedEncodedWordsStayAsWritten() {
        for text in ["=?utf-8?x?abc?=", "=?utf-8?q?unterminated", "=??q?x?=", "What =? is this ?=", "=?utf 8?q?a?=", "=?"] {
            #expect(EncodedWords.decode(bytes(text)) == text)
        }
        // Base64 with bad padding still decodes; an unknown charset reads as UTF-8.
        #expect(EncodedWords.decode(bytes("=?utf-8?B?5L2g5aW9?=")) == "你好")
        #expect(EncodedWords.decode(bytes("=?utf-8?B?5L2g5a?=")) == "你\u{FFFD}")
        #expect(EncodedWords.decode(bytes("=?x-unheard-of?B?aGk=?=")) == "hi")
    }

    @Test func controlCharactersInDecodedHeadersBecomeSpaces() {
        // A CRLF smuggled in an encoded word must not start a new line in anything that shows the subject.
        #expect(EncodedWords.decode(bytes("=?utf-8?q?a=0D=0AX-Injected:_1?=")) == "a  X-Injected: 1")
    }

    @Test func raw8BitHeaders() throws {
        // UTF-8 as RFC 6532 allows; otherwise the message's charset (Foxmail writes GBK names raw).
        #expect(EncodedWords.decode(bytes("Renée")) == "Renée")
        let gbk: [UInt8] = Array("Subject: ".utf8) + [0xC4, 0xE3, 0xBA, 0xC3] + Array("\r\nContent-Type: text/plain; charset=gbk\r\n\r\nx".utf8)
        #expect(try MailParser().parse(gbk).subject == "你好")
        let latin: [UInt8] = Array("Subject: caf".utf8) + [0xE9] + Array("\r\n\r\nx".utf8)
        #expect(try MailParser().parse(latin).subject == "café")
    }

    @Test func addressLists() {
        func list(_ text: String) -> [MailAddress] { MailAddress.list(bytes(text)) }
        #expect(
            list("\"Lovelace, Ada\" <ada@example.com>, bob@example.com (Bob B), <carol@example.com>") == [
                MailAddress(address: "ada@example.com", displayName: "Lovelace, Ada"),
                MailAddress(address: "bob@example.com", displayName: "Bob B"),
                MailAddress(address: "carol@example.com"),
            ])
        #expect(list("Undisclosed recipients:;") == [])
        #expect(list("team: a@example.com, b@example.com;, c@example.com").map(\.address) == ["a@example.com", "b@example.com", "c@example.com"])
        #expect(list("=?utf-8?B?546L5bCP5piO?= <w@qq.com>") == [MailAddress(address: "w@qq.com", displayName: "王小明")])
        #expect(list("<@relay.example:ada@example.com>") == [MailAddress(address: "ada@example.com")])
        #expect(list("Ada <mailto:ada@example.com>") == [MailAddress(address: "ada@example.com", displayName: "Ada")])
        #expect(list("Ada Lovelace ada@example.com") == [MailAddress(address: "ada@example.com", displayName: "Ada Lovelace")])
        #expect(list("\"a\\\"b\" <q@example.com>") == [MailAddress(address: "q@example.com", displayName: "a\"b")])
        #expect(list("\"ada@example.com\" <ada@example.com>") == [MailAddress(address: "ada@example.com")])
        #expect(list("") == [] && list(" , ,") == [] && list("<>") == [])
    }

    @Test func messageIDLists() {
        #expect(MessageIDs.list(bytes("<a@x> <b@y>\r\n <c@z>")) == ["a@x", "b@y", "c@z"])
        // Ids folded inside, comments, a quoted phrase, duplicates.
        #expect(MessageIDs.list(bytes("<a@\r\n x> (comment <no@no>) \"Your message of <q@q>\" <a@x>")) == ["a@x"])
        #expect(MessageIDs.list(bytes("bare@id.example")) == ["bare@id.example"])
        #expect(MessageIDs.list(bytes("")) == [])
    }

    @Test func threadingHeaders() throws {
        let mail = try header(
            """
            Message-ID: <CAH+x@mail.gmail.com>\r
            In-Reply-To: <sent-1@reclaim.example>\r
            References: <root@elsewhere> <sent-1@reclaim.example>\r
            \r

            """)
        #expect(mail.messageID == "CAH+x@mail.gmail.com")
        #expect(mail.inReplyTo == ["sent-1@reclaim.example"])
        #expect(mail.references == ["root@elsewhere", "sent-1@reclaim.example"])
    }

    @Test func recipientHeadersIncludingEveryDeliveredTo() throws {
        let mail = try header(
            "To: a@example.com\r\nCc: B <b@example.com>, A@example.com\r\nDelivered-To: cases+t1@reclaim.example\r\n"
                + "Delivered-To: cases@reclaim.example\r\nX-Original-To: cases+t2@reclaim.example\r\n\r\n")
        #expect(mail.deliveredTo == ["cases+t1@reclaim.example", "cases@reclaim.example"])
        #expect(
            mail.recipientAddresses == [
                "a@example.com", "b@example.com", "cases+t1@reclaim.example", "cases@reclaim.example", "cases+t2@reclaim.example",
            ])
    }

    @Test func automaticMailKeywords() throws {
        #expect(try header("Auto-Submitted: Auto-Generated; owner-email=\"x@y\"\r\n\r\n").autoSubmitted == "auto-generated")
        #expect(try header("Auto-Submitted: auto-generated\r\n\r\n").isAutomatic)
        #expect(try !header("Auto-Submitted: no\r\n\r\n").isAutomatic)
        #expect(try header("Precedence: Bulk\r\n\r\n").isAutomatic)
        #expect(try header("Precedence: list\r\n\r\n").isAutomatic)
        #expect(try !header("Precedence: first-class\r\nSubject: x\r\n\r\n").isAutomatic)
        #expect(try !header("Subject: x\r\n\r\n").isAutomatic)
    }

    @Test func dates() {
        func utc(_ text: String) -> Date? { ISO8601DateFormatter().date(from: text) }
        #expect(MailDate.parse("Tue, 1 Dec 2026 11:04:05 +0100") == utc("2026-12-01T10:04:05Z"))
        #expect(MailDate.parse("Wed, 02 Dec 2026 10:15:32 +0800 (CST)") == utc("2026-12-02T02:15:32Z"))
        #expect(MailDate.parse("2 Dec 2026 16:45 +0000") == utc("2026-12-02T16:45:00Z"))
        #expect(MailDate.parse("Tue,  1 Dec 26 09:00:00 EST") == utc("2026-12-01T14:00:00Z"))
        #expect(MailDate.parse("1 Dec 2026 09:00:00 GMT") == utc("2026-12-01T09:00:00Z"))
        #expect(MailDate.parse("Sat, 29 Feb 2020 23:59:60 -0000") == utc("2020-02-29T23:59:59Z"))
        #expect(MailDate.parse("Dec 1 2026 09:00:00 +0000") == utc("2026-12-01T09:00:00Z"))
        for bad in ["", "yesterday", "32 Dec 2026 10:00 +0000", "1 Foo 2026 10:00 +0000", "1 Dec 2026 25:00 +0000", "1 Dec 99999999999 10:00 +0000"] {
            #expect(MailDate.parse(bad) == nil, "\(bad)")
        }
    }
}
