import Foundation
import Testing

@testable import ReclaimCore

private func failure<T>(_ result: Result<T, ValidationFailure>) -> [FieldIssue]? {
    if case .failure(let f) = result { return f.issues }
    return nil
}

@Suite struct LuhnAndDeviceTests {
    @Test func luhnReference() {
        #expect(Luhn.isValid("79927398713"))
        #expect(!Luhn.isValid("79927398710"))
        #expect(Luhn.checkDigit(for: [7, 9, 9, 2, 7, 3, 9, 8, 7, 1]) == 3)
        #expect(!Luhn.isValid("7992739871a"))
        #expect(!Luhn.isValid(""))
    }

    @Test func imeiWithCheckDigit() throws {
        let imei = try IMEI.validate("490154203237518").get()
        #expect(imei.digits == "490154203237518" && !imei.isSoftwareVersion && imei.identity == "49015420323751")
        #expect(try IMEI.validate("49-015420-323751-8").get() == imei)
        #expect(try IMEI.validate(" 49 015420 323751 8 ").get() == imei)
    }

    @Test func imeiBadCheckDigitRefused() {
        for last in 0...9 where last != 8 {
            #expect(
                failure(IMEI.validate("49015420323751\(last)")) == [
                    FieldIssue(field: "imei", message: "The IMEI's check digit does not match: please re-read it.")
                ])
        }
    }

    @Test func imeisvAcceptedWithoutCheck() throws {
        let sv = try IMEI.validate("4901542032375101", field: "devices[0].imei").get()
        #expect(sv.isSoftwareVersion && sv.identity == "49015420323751")
        #expect(sv.identity == (try IMEI.validate("490154203237518").get()).identity)
    }

    @Test(arguments: ["", "4901542032375", "49015420323751", "49015420323751801", "49015420323751X", "490154203237518.", "４９０１５４２０３２３７５１８"])
    func imeiShapeRefused(_ text: String) {
        #expect(failure(IMEI.validate(text, field: "imei"))?.first?.field == "imei")
    }

    @Test func serials() throws {
        #expect(try SerialNumber.validate(" c02xg0fdh7jy ").get().value == "C02XG0FDH7JY")
        #expect(try SerialNumber.validate("F2LXK1ZK").get().value == "F2LXK1ZK")
        #expect(try SerialNumber.validate("ABCDEFGH123456").get().value == "ABCDEFGH123456")
        for bad in ["F2LXK1Z", "ABCDEFGH1234567", "C02-XG0FDH7", "C02 XG0FDH7J", "C02XG0FDH7JÉ", "", "ＣＯ２ＸＧ０ＦＤＨ"] {
            #expect(failure(SerialNumber.validate(bad)) != nil, "\(bad)")
        }
    }
}

@Suite struct CardTests {
    let now = utc(2026, 3, 15, 12)

    @Test func luhnCardsAccepted() throws {
        let card = try CardNumber.validate("4111 1111 1111 1111").get()
        #expect(card.digits == "4111111111111111" && !card.isUnionPay)
        #expect(try CardNumber.validate("5555-5555-5555-4444").get().digits == "5555555555554444")
        #expect(try CardNumber.validate("4222222222222").get().digits.count == 13)
    }

    @Test func nonUnionPayFailingLuhnRefused() {
        #expect(
            failure(CardNumber.validate("4111111111111112")) == [
                FieldIssue(field: "number", message: "This card number is not valid: please re-read it.")
            ])
    }

    @Test func unionPayFailingLuhnAccepted() throws {
        #expect(!Luhn.isValid("6212345678901234"))
        let card = try CardNumber.validate("6212 3456 7890 1234").get()
        #expect(card.isUnionPay)
        #expect(card.summary.masked == "621234******1234")
        #expect(try CardNumber.validate("6212345678901232").get().isUnionPay)  // Luhn-valid UnionPay too
    }

    @Test(arguments: ["411111111111", "41111111111111111111", "4111 1111 1111 111x", "", "  "])
    func cardShapeRefused(_ text: String) {
        #expect(failure(CardNumber.validate(text))?.first?.field == "number")
    }

    @Test func masking() {
        #expect(CardSummary.masked("6234567890127890") == "623456******7890")
        #expect(CardSummary.masked("4222222222222") == "422222***2222")
        #expect(CardSummary.masked("1234567890123456789") == "123456*********6789")
        #expect(CardSummary.masked("1234567890") == "**********")
        let card = try? CardNumber.validate("4111111111111111").get()
        #expect(card.map { "\($0)" } == "411111******1111")
        #expect(card.map { String(reflecting: $0) } == "411111******1111")
        let summary = CardSummary(number: "6234567890127890")
        #expect(
            summary.firstSix == "623456" && summary.lastFour == "7890" && summary == CardSummary(firstSix: "623456", lastFour: "7890", length: 16))
    }

    @Test func expiryThisMonthAcceptedLastMonthRefused() throws {
        let thisMonth = try CardExpiry.validate(month: 3, year: 2026, now: now).get()
        #expect(thisMonth.month == 3 && thisMonth.year == 2026 && thisMonth.endOfMonth == utc(2026, 4, 1))
        #expect(failure(CardExpiry.validate(month: 2, year: 2026, now: now)) == [FieldIssue(field: "exp_year", message: "This card has expired.")])
        #expect(failure(CardExpiry.validate(month: 12, year: 2025, now: now)) != nil)
        #expect((try? CardExpiry.validate(month: 1, year: 2027, now: now).get()) != nil)
        // The month's last second is still valid; the next month's first is not.
        #expect((try? CardExpiry.validate(month: 3, year: 2026, now: utc(2026, 3, 31, 23, 59, 59)).get()) != nil)
        #expect(failure(CardExpiry.validate(month: 3, year: 2026, now: utc(2026, 4, 1))) != nil)
        #expect((try? CardExpiry.validate(month: 12, year: 2026, now: utc(2026, 12, 31, 23)).get()) != nil)
    }

    @Test func expiryShapeRefused() {
        #expect(failure(CardExpiry.validate(month: 0, year: 2027, now: now))?.map(\.field) == ["exp_month"])
        #expect(failure(CardExpiry.validate(month: 13, year: 2027, now: now))?.map(\.field) == ["exp_month"])
        #expect(failure(CardExpiry.validate(month: 5, year: 27, now: now))?.map(\.field) == ["exp_year"])
        #expect(failure(CardExpiry.validate(month: 13, year: 27, now: now))?.map(\.field) == ["exp_month", "exp_year"])
    }
}

@Suite struct TextValidatorTests {
    @Test(arguments: [
        ("  John.Doe@Example.COM ", "John.Doe@example.com"),
        ("a+tag@sub.example.co.uk", "a+tag@sub.example.co.uk"),
        ("o'brien@example.ie", "o'brien@example.ie"),
        ("Jean_Luc-Picard@Example.FR", "Jean_Luc-Picard@example.fr"),
        ("12345678@qq.com", "12345678@qq.com"),
        // An internationalised domain in the form mail servers use.
        ("x@XN--BCHER-KVA.de", "x@xn--bcher-kva.de"),
    ])
    func emailsAccepted(_ typed: String, _ expected: String) throws {
        let email = try EmailAddress.validate(typed).get()
        #expect(email.value == expected)
        #expect(email.lookupKey == expected.lowercased())
        #expect(email.localPart + "@" + email.domain == expected)
    }

    @Test(arguments: [
        "", "a", "a@b", "a@@b.com", "@b.com", "a@", "a@b..com", "a b@c.com", "a@-b.com", "a@b-.com", ".a@b.com", "a.@b.com", "a..b@c.com",
        "a@b.c", "a@1.2.3.4", "a@b.com.", "<a@b.com>", "a@b_c.com", String(repeating: "a", count: 65) + "@b.com",
        "a@" + String(repeating: "b", count: 250) + ".com",
        // Addresses that route elsewhere or read as something else.
        "victim%evil.example@relay.example", "relay!victim@example.com", "=?utf-8?q?victim=40example.com?=@evil.example",
        "=?UTF-8?B?dmljdGlt?=@example.com", "\"victim@example.com\"@evil.example", "\"a b\"@example.com", "a@[192.0.2.1]",
        "a(comment)@example.com", "victim@example.com\r\nBcc: x@evil.example", "a\u{0}@example.com", "a@b.com@evil.example",
        "a#b@example.com", "a/b@example.com", "a|b@example.com", "a`b@example.com", "a=b@example.com",
        // Non-ASCII: needs SMTPUTF8 (local part) or IDNA (domain).
        "用户@例子.广告", "x@ÉXAMPLE.fr", "josé@example.com", "a@\u{301}example.com", "vi\u{200B}ctim@example.com",
    ])
    func emailsRefused(_ typed: String) {
        #expect(failure(EmailAddress.validate(typed, field: "contact_email"))?.first?.field == "contact_email", "\(typed)")
    }

    @Test func theRefusalSaysWhatToWrite() {
        #expect(failure(EmailAddress.validate("josé@example.com"))?.first?.message.contains("A to Z") == true)
        #expect(failure(EmailAddress.validate("x@bücher.de"))?.first?.message.contains("xn--") == true)
    }

    /// The rescue rule's comparison: as the providers read addresses (see `EmailAddress.providerRules`).
    @Test(arguments: [
        ("evil+x@example.com", "evil@example.com", true),
        ("EVIL@Example.COM", " evil@example.com ", true),
        ("evil+a+b@example.com", "evil+c@example.com", true),
        ("evil@example.com.", "evil@example.com", true),
        ("evil@example.com", "evil@example.org", false),
        ("evil@example.com", "evil2@example.com", false),
        // Gmail: dots do not count, googlemail.com is gmail.com.
        ("j.o.h.n+shop@gmail.com", "john@googlemail.com", true),
        ("John.Smith@GMail.com", "johnsmith@gmail.com", true),
        // Elsewhere dots count.
        ("john.smith@outlook.com", "johnsmith@outlook.com", false),
        ("john.smith@qq.com", "johnsmith@qq.com", false),
        ("ada+tag@outlook.com", "ada@outlook.com", true),
        ("12345+x@qq.com", "12345@qq.com", true),
        // iCloud: me.com and mac.com are icloud.com.
        ("ada@me.com", "ada+x@icloud.com", true),
        ("ada@mac.com", "ada@icloud.com", true),
        // Separate providers, separate mailboxes.
        ("ada@hotmail.com", "ada@outlook.com", false),
        ("ada@163.com", "ada@126.com", false),
        ("ada@gmail.com", "ada@gmail.co", false),
        // A plus at the start is not a tag.
        ("+x@example.com", "x@example.com", false),
        // Addresses stored under older rules still compare.
        ("Ünï+x@example.com", "ünï@example.com", true),
        // Comments are not part of the mailbox (api.md v1.3): a thief's From written around them is still his.
        ("thief(one)@example.com", "thief@example.com", true),
        ("thief@(x)example.com (Thief)", "THIEF+2@example.com", true),
        ("thi(a (nested) b)ef@example.com", "thief@example.com", true),
        ("\"a(b)\"@example.com", "a@example.com", false),
    ])
    func sameMailboxAsProvidersReadIt(_ first: String, _ second: String, _ same: Bool) {
        #expect(EmailAddress.sameMailbox(first, second) == same, "\(first) \(second)")
        #expect(EmailAddress.sameMailbox(second, first) == same)
    }

    @Test func answersNormaliseAcrossCaseSpacingAndWidth() {
        let same: [(String, String)] = [
            ("ＢＥＲＬＩＮ  ", "berlin"),
            ("  New   York ", "new york"),
            ("new\u{3000}york", "new york"),
            ("New\t\nYork", "new york"),
            ("new\u{00A0}\u{2003}york", "new york"),
            ("Fido\u{200B}", "fido"),
            ("Cafe\u{301}", "café"),
            ("ﬁdo", "fido"),
            ("ＭＵＬＬＥＲ", "Muller"),
            ("İstanbul", "i̇stanbul"),
            ("Straße", "STRASSE"),
            ("ΣΊΣΥΦΟΣ", "σίσυφος"),
        ]
        for (a, b) in same {
            #expect(SecurityAnswer.normalize(a) == SecurityAnswer.normalize(b), "\(a) vs \(b)")
        }
        #expect(SecurityAnswer.normalize("ＢＥＲＬＩＮ  ") == "berlin")
        #expect(SecurityAnswer.normalize("Berlin") != SecurityAnswer.normalize("Bern"))
        #expect(SecurityAnswer.normalize("new york") != SecurityAnswer.normalize("newyork"))
        for text in ["ＢＥＲＬＩＮ  ", " A  b\u{3000}C ", "Straße", "ǅemal"] {
            let once = SecurityAnswer.normalize(text)
            #expect(SecurityAnswer.normalize(once) == once, "idempotent for \(text)")
        }
    }

    @Test func answerLimits() throws {
        #expect(failure(SecurityAnswer.validate(" \u{3000}\t")) == [FieldIssue(field: "answer", message: "The answer is empty.")])
        #expect(try SecurityAnswer.validate(String(repeating: "a", count: 256)).get().count == 256)
        #expect(failure(SecurityAnswer.validate(String(repeating: "a", count: 257))) != nil)
        #expect(try SecurityAnswer.validate(" Rex ").get() == "rex")
    }

    @Test func transcriptLimit() throws {
        let limit = String(repeating: "a", count: 256 * 1024)
        #expect(try Transcript.validate(limit).get().utf8.count == Transcript.maximumBytes)
        #expect(failure(Transcript.validate(limit + "b")) == [FieldIssue(field: "text", message: "A transcript has at most 256 KiB of text.")])
        #expect(failure(Transcript.validate(String(repeating: "é", count: 128 * 1024) + "a")) != nil, "counted in UTF-8 bytes")
        #expect(failure(Transcript.validate(" \n ")) != nil)
    }

    @Test func collectorGathersEveryIssue() {
        var collector = IssueCollector()
        let imei = collector.take(IMEI.validate("1", field: "imei"))
        let serial = collector.take(SerialNumber.validate("c02xg0fdh7jy"))
        collector.add(field: "model", message: "required")
        #expect(imei == nil && serial?.value == "C02XG0FDH7JY")
        #expect(collector.issues.map(\.field) == ["imei", "model"])
        #expect(throws: ValidationFailure.self) { try collector.check() }
        #expect(throws: Never.self) { try IssueCollector().check() }
    }

    @Test func validatedValuesDecodeFromJSON() throws {
        struct Device: Decodable {
            var serial: SerialNumber
            var imei: IMEI
        }
        let device = try JSONDecoder().decode(Device.self, from: Data(#"{"serial": "c02xg0fdh7jy", "imei": "490154203237518"}"#.utf8))
        #expect(device.serial.value == "C02XG0FDH7JY" && device.imei.digits == "490154203237518")
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Device.self, from: Data(#"{"serial": "c02xg0fdh7jy", "imei": "490154203237519"}"#.utf8))
        }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([EmailAddress].self, from: Data(#"["nope"]"#.utf8)) }
        #expect(try JSONEncoder().encode(EmailAddress.validate("A@B.CO").get()) == Data(#""A@b.co""#.utf8))
    }
}

@Suite struct PhoneNumberTests {
    @Test(arguments: [
        ("+8613800138000", "+8613800138000"), (" +14155550123 ", "+14155550123"), ("+12345678", "+12345678"),
        ("+123456789012345", "+123456789012345"),
    ])
    func accepted(_ typed: String, _ expected: String) throws {
        #expect(try PhoneNumber.validate(typed).get().value == expected)
    }

    @Test(arguments: [
        "", "+", "8613800138000", "+1234567", "+1234567890123456", "+86 138 0013 8000", "+86-13800138000", "+(86)13800138000",
        "++8613800138000", "+861380013800a", "+８６１３８００１３８０００", "+٨٦١٣٨٠٠١٣٨٠٠٠", "00 86 13800138000", "+8613800138000\r\nBcc: x",
        "+86\u{200B}13800138000",
    ])
    func refused(_ typed: String) {
        let issues = failure(PhoneNumber.validate(typed, field: "customer.phone"))
        #expect(issues?.first?.field == "customer.phone", "\(typed)")
        #expect(issues?.first?.message.contains("E.164") == true)
    }
}
