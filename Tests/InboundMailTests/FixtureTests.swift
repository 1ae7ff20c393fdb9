import Foundation
import InboundMail
import Testing

/// The replies real clients write (Fixtures/make_fixtures.py), each read field by field.
@Suite("Fixtures: mail as real clients write it")
struct FixtureTests {
    let sent = "0b6c2e4a-61f1-4c4e-9d0f-5a8e2f1c7d93@reclaim.example"
    let sent2 = "5e1f9b20-7c3d-4a8e-b1f6-2d9c0e4a8b17@reclaim.example"
    let token = "cases+k7q2m9xw4t@reclaim.example"

    func utc(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    @Test func gmailReply() throws {
        let mail = try Fixture.parsed("gmail-reply.eml")
        #expect(mail.messageID == "CAF=k3Yx7Rq2vA+9Lw0pDx4hN_Jm1sTq8eZ2bUo5cWf3gH6iK@mail.gmail.com")
        #expect(mail.inReplyTo == [sent])
        #expect(mail.references == [sent])
        #expect(mail.from == MailAddress(address: "ada.lovelace@gmail.com", displayName: "Ada Lovelace"))
        #expect(mail.to == [MailAddress(address: token, displayName: "Reclaim")])
        #expect(mail.deliveredTo == [token])
        #expect(mail.subject == "Re: Case 482719305618: a new message for you")
        #expect(mail.date == utc("2026-12-01T10:04:05Z"))
        // The text/plain alternative, soft line breaks joined; the HTML one is not read.
        #expect(
            mail.text.hasPrefix(
                "Hello,\n\nThank you for calling me back this morning. The thief changed the recovery phone as well, I only noticed it now.\n"))
        #expect(mail.text.hasSuffix("> Hello,\n> We have opened case 482719305618 to recover your account."))
        #expect(!mail.text.contains("gmail_quote"))
        #expect(mail.attachments.isEmpty)
        #expect(!mail.isAutomatic)
    }

    @Test func bareLineFeedsReadTheSame() throws {
        // A Maildir file with LF line ends is the same message.
        let lf = try Fixture.parsed("gmail-reply-bare-lf.eml")
        let crlf = try Fixture.parsed("gmail-reply.eml")
        #expect(lf == crlf)
        #expect(lf.headers.text("Received")?.hasSuffix("Tue, 1 Dec 2026 02:04:07 -0800 (PST)") == true)
    }

    @Test func outlookReplyWithReferencesOnly() throws {
        let mail = try Fixture.parsed("outlook-reply.eml")
        #expect(mail.inReplyTo.isEmpty)
        #expect(mail.references == [sent2])
        #expect(mail.messageID == "AM6PR04MB5589E1F3A2B0C4D8E7F6A5B4@AM6PR04MB5589.eurprd04.prod.outlook.com")
        #expect(mail.from == MailAddress(address: "joerg.mueller@contoso.de", displayName: "Müller, Jörg"))
        #expect(mail.cc == [MailAddress(address: "anna.schmidt@contoso.de", displayName: "Anna Schmidt")])
        #expect(mail.recipientAddresses == [token, "anna.schmidt@contoso.de"])
        // Windows-1252: the en dash and the German quotes are in 0x80–0x9F.
        #expect(mail.text.contains("anbei die Rechnung für das Telefon – „Gekauft im März“. Ich hoffe, das hilft."))
        #expect(mail.text.contains("Mit freundlichen Grüßen\nJörg Müller"))
        #expect(mail.attachments.count == 1)
        let pdf = try #require(mail.attachments.first)
        #expect(pdf.fileName == "Rechnung März.pdf")
        #expect(pdf.mediaType == "application/pdf")
        #expect(pdf.bytes.starts(with: bytes("%PDF-1.4")))
        #expect(!pdf.inline)
    }

    @Test func appleMailWithInlineImage() throws {
        let mail = try Fixture.parsed("apple-mail-inline-image.eml")
        // Q words split inside a UTF-8 character (the em dash, the camera) are joined before decoding.
        #expect(mail.subject == "Re: Case 482719305618: we need documents from you — receipt 📷")
        #expect(mail.from?.displayName == "Grace Hopper")
        #expect(mail.date == utc("2026-12-01T14:31:47Z"))
        #expect(mail.inReplyTo == [sent2])
        #expect(mail.text.hasPrefix("Here is the photo of the receipt 📷\n\nThe phone was bought at the shop on the high street."))
        // The picture sits in the HTML alternative, which is not the text; it is still an attachment.
        #expect(mail.attachments.count == 1)
        let image = try #require(mail.attachments.first)
        #expect(image.fileName == "IMG_0421.jpeg")
        #expect(image.mediaType == "image/jpeg")
        #expect(image.contentID == "B3E1C7A2-4F9D-4C1B-8A6E-2F0D9C8B7A61")
        #expect(image.inline)
        #expect(image.bytes.starts(with: [0xFF, 0xD8, 0xFF]) && image.bytes.suffix(2) == [0xFF, 0xD9])
    }

    @Test func foxmailGB18030WithGBKFileName() throws {
        let mail = try Fixture.parsed("foxmail-gb18030.eml")
        #expect(mail.from == MailAddress(address: "wang.xiaoming@qq.com", displayName: "王小明"))
        #expect(mail.to.map(\.address) == ["cases+r4n8t2kp6w@reclaim.example"])
        #expect(mail.subject == "回复: 案件 730155264895：我们需要您提供文件")
        #expect(mail.date == utc("2026-12-02T02:15:32Z"))
        // 𠮷 is a four-byte GB18030 sequence: GBK alone cannot read it.
        #expect(mail.text.contains("我是案件 730155264895 的当事人吉田（𠮷田）。附件是购买手机的发票扫描件，请查收。"))
        #expect(mail.text.hasSuffix("谢谢！\n\n\n王小明"))
        #expect(!mail.text.contains("line-height"))
        let pdf = try #require(mail.attachments.first)
        #expect(mail.attachments.count == 1)
        // From filename*0*=GBK''…; filename*1*=… (the Content-Type name, a GB18030 word, says the same).
        #expect(pdf.fileName == "购机发票扫描件.pdf")
        #expect(pdf.mediaType == "application/octet-stream")
        #expect(pdf.bytes.starts(with: bytes("%PDF-1.4")))
    }

    @Test func big5Reply() throws {
        let mail = try Fixture.parsed("big5-reply.eml")
        #expect(mail.from == MailAddress(address: "meiling.chen@yahoo.com.tw", displayName: "陳美玲"))
        #expect(mail.subject == "回覆: 案件 730155264895 已受理")
        #expect(mail.text == "您好：\n\n我的帳號被盜了，小偷把救援信箱改成他的。我已經準備好購買證明，\n請告訴我下一步該怎麼做。\n\n陳美玲 敬上")
        #expect(mail.to == [MailAddress(address: "cases+m3v7c1qz8d@reclaim.example")])
    }

    @Test func htmlOnlyBecomesText() throws {
        let mail = try Fixture.parsed("html-only.eml")
        #expect(mail.from == MailAddress(address: "renee@example.org", displayName: "Renée"))  // raw UTF-8 in the header
        #expect(mail.originalTo == [token])
        #expect(mail.deliveredTo == ["cases@reclaim.example"])
        #expect(mail.recipientAddresses == ["cases@reclaim.example", token])
        #expect(mail.date == utc("2026-12-02T16:45:00Z"))
        #expect(
            mail.text == """
                Hello team,

                The thief wrote to me again – here’s what I know:

                - Serial: C02XK1ZJH3QD
                - Bought at Café & Phones, 3 May
                - Price €€899
                IMEI 356938035643809
                Regards,
                Renée
                """)
        #expect(mail.attachments.isEmpty)
    }

    @Test func autoReply() throws {
        let mail = try Fixture.parsed("auto-reply.eml")
        #expect(mail.autoSubmitted == "auto-replied")
        #expect(mail.isAutomatic)
        #expect(mail.inReplyTo == [sent])
        #expect(mail.text == "I am out of the office until 7 December with limited access to e-mail.")
    }

    @Test func forwardedMessageInside() throws {
        let mail = try Fixture.parsed("forwarded-rfc822.eml")
        #expect(mail.subject == "Fwd: Your account is locked (case 482719305618)")
        // format=flowed: the line ending in a space continues on the next; the signature separator stays.
        #expect(
            mail.text.hasPrefix(
                "This is the mail the thief sent me last night. I did not pay. I am forwarding it as you asked on the phone.\n\n-- \nAda\n\n"))
        #expect(
            mail.text.hasSuffix(
                """
                ---------- Forwarded message ----------
                From: Account Support <support@acc0unts-security.example>
                Date: Mon, 30 Nov 2026 23:58:01 +0300
                Subject: Your account is locked
                To: ada.lovelace@example.com

                Pay 500 USDT to the wallet below within 24 hours or your photos go public.
                Wallet: TQ7x9kR2mN4pL8vB3cZ6fH1jD5sW0yA
                """))
        #expect(mail.attachments.map(\.fileName) == ["Your account is locked.eml", "screenshot.png", "Quittung für das Telefon.jpg"])
        #expect(mail.attachments.map(\.mediaType) == ["message/rfc822", "image/png", "image/jpeg"])
        // The forwarded message is kept whole, as sent (a ransom mail is evidence).
        let forwarded = try MailParser().parse(mail.attachments[0].bytes)
        #expect(forwarded.messageID == "thief-01@acc0unts-security.example")
        #expect(mail.attachments[1].bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    }

    @Test func everyFixtureParses() throws {
        #expect(Fixture.names.count == 9)
        for name in Fixture.names {
            let mail = try Fixture.parsed(name)
            #expect(mail.messageID != nil, "\(name)")
            #expect(mail.from != nil, "\(name)")
            #expect(!mail.text.isEmpty, "\(name)")
        }
    }
}
