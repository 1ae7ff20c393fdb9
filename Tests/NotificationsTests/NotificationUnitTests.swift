import Crypto
import Foundation
import Notifications
import ReclaimCore
import ReclaimOperations
import Testing

/// The pure parts: MIME, signing, the SSRF rules, the retry schedule, the mail catalogue.
@Suite struct NotificationUnitTests {
    @Test func mimeHasEveryHeaderAndUTF8SubjectAndBody() throws {
        let id = UUID()
        let mail = MIMEMessage(
            from: "reclaim@reclaim.test", to: "ada@example.net", subject: "您的案件 1234 已受理", body: "您好：\n第二行",
            messageID: id, date: Date(timeIntervalSince1970: 1_800_000_000))
        let text = String(decoding: mail.rendered(), as: UTF8.self)
        #expect(text.contains("Message-ID: <\(id.uuidString.lowercased())@reclaim.test>\r\n"))
        #expect(text.contains("Date: Fri, 15 Jan 2027 08:00:00 +0000\r\n"))
        #expect(text.contains("MIME-Version: 1.0\r\n"))
        #expect(text.contains("Content-Type: text/plain; charset=UTF-8\r\n"))
        #expect(text.contains("Subject: =?UTF-8?B?"))
        #expect(!text.contains("您"))  // nothing but ASCII on the wire
        let received = ReceivedMail(raw: text, recipients: [])
        #expect(received.subject == "您的案件 1234 已受理")
        #expect(received.body == "您好：\r\n第二行")
        // Line breaks of every kind leave as CRLF, once each; a fraction of a second is not rounded up.
        let mixed = MIMEMessage(
            from: "reclaim@reclaim.test", to: "ada@example.net", subject: "Case", body: "one\r\ntwo\nthree\n",
            messageID: id, date: Date(timeIntervalSince1970: 1_800_000_059.9))
        let mixedText = String(decoding: mixed.rendered(), as: UTF8.self)
        #expect(mixedText.contains("Date: Fri, 15 Jan 2027 08:00:59 +0000\r\n"))
        #expect(ReceivedMail(raw: mixedText, recipients: []).body == "one\r\ntwo\r\nthree\r\n")
    }

    @Test func headerInjectionIsRemoved() {
        let mail = MIMEMessage(
            from: "reclaim@reclaim.test", to: "ada@example.net\r\nBcc: thief@evil.test", subject: "Hi\r\nBcc: x@evil.test", body: "",
            messageID: UUID(), date: Date())
        let text = String(decoding: mail.rendered(), as: UTF8.self)
        #expect(!text.contains("\r\nBcc:"))
    }

    @Test func signatureIsStandardWebhooks() {
        // The example of the Standard Webhooks specification.
        let secret = Array(Data(base64Encoded: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!)
        let body = Array(#"{"test": 2432232314}"#.utf8)
        #expect(
            WebhookSignature.sign(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body, secret: secret)
                == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        let fresh = WebhookSignature.newSecret()
        #expect(fresh.text.hasPrefix("whsec_"))
        #expect(Data(base64Encoded: String(fresh.text.dropFirst(6)))?.count == 24)
    }

    @Test(arguments: [
        ("http://example.com/hook", WebhookDestinationRefusal.notHTTPS),
        ("https://127.0.0.1/hook", .forbiddenAddress(host: "127.0.0.1", address: "127.0.0.1")),
        ("https://10.1.2.3/hook", .forbiddenAddress(host: "10.1.2.3", address: "10.1.2.3")),
        ("https://192.168.1.1/hook", .forbiddenAddress(host: "192.168.1.1", address: "192.168.1.1")),
        ("https://172.16.0.5/hook", .forbiddenAddress(host: "172.16.0.5", address: "172.16.0.5")),
        ("https://169.254.169.254/latest/meta-data", .forbiddenAddress(host: "169.254.169.254", address: "169.254.169.254")),
        ("https://[::1]/hook", .forbiddenAddress(host: "::1", address: "::1")),
        ("https://[fe80::1]/hook", .forbiddenAddress(host: "fe80::1", address: "fe80::1")),
        ("https://[::ffff:127.0.0.1]/hook", .forbiddenAddress(host: "::ffff:127.0.0.1", address: "::ffff:127.0.0.1")),
        ("https://0.0.0.0/hook", .forbiddenAddress(host: "0.0.0.0", address: "0.0.0.0")),
        ("https://localhost/hook", .forbiddenAddress(host: "localhost", address: "127.0.0.1")),
        // IPv6 that carries a refused IPv4 address: 6to4, IPv4-compatible, IPv4-translated, NAT64.
        ("https://[2002:7f00:1::]/hook", .forbiddenAddress(host: "2002:7f00:1::", address: "2002:7f00:1::")),
        ("https://[2002:a9fe:a9fe::1]/latest", .forbiddenAddress(host: "2002:a9fe:a9fe::1", address: "2002:a9fe:a9fe::1")),
        ("https://[::127.0.0.1]/hook", .forbiddenAddress(host: "::127.0.0.1", address: "::127.0.0.1")),
        ("https://[::ffff:0:10.0.0.1]/hook", .forbiddenAddress(host: "::ffff:0:10.0.0.1", address: "::ffff:0:a00:1")),
        ("https://[64:ff9b::7f00:1]/hook", .forbiddenAddress(host: "64:ff9b::7f00:1", address: "64:ff9b::7f00:1")),
        ("https://[::ffff:192.168.0.1]/hook", .forbiddenAddress(host: "::ffff:192.168.0.1", address: "::ffff:192.168.0.1")),
        // IPv6 never public: unspecified, Teredo, local-use NAT64, ULA, site-local, documentation, multicast, discard.
        ("https://[::]/hook", .forbiddenAddress(host: "::", address: "::")),
        (
            "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",
            .forbiddenAddress(host: "2001:0:4136:e378:8000:63bf:3fff:fdd2", address: "2001:0:4136:e378:8000:63bf:3fff:fdd2")
        ),
        ("https://[64:ff9b:1::1]/hook", .forbiddenAddress(host: "64:ff9b:1::1", address: "64:ff9b:1::1")),
        ("https://[fd12:3456::1]/hook", .forbiddenAddress(host: "fd12:3456::1", address: "fd12:3456::1")),
        ("https://[fec0::1]/hook", .forbiddenAddress(host: "fec0::1", address: "fec0::1")),
        ("https://[2001:db8::1]/hook", .forbiddenAddress(host: "2001:db8::1", address: "2001:db8::1")),
        ("https://[ff02::1]/hook", .forbiddenAddress(host: "ff02::1", address: "ff02::1")),
        ("https://[100::1]/hook", .forbiddenAddress(host: "100::1", address: "100::1")),
        ("https://192.0.2.10/hook", .forbiddenAddress(host: "192.0.2.10", address: "192.0.2.10")),
        ("ftp://example.com/", .invalidURL),
        ("https://user:pw@example.com/", .invalidURL),
    ])
    func ssrfDestinationsAreRefused(url: String, refusal: WebhookDestinationRefusal) {
        #expect(throws: refusal) { try WebhookDestination.check(url, allow: .none) }
    }

    @Test func aScopedLinkLocalAddressIsRefusedNotSkipped() {
        // getaddrinfo reads fe80::1%lo, which no range check can: refused, never let through as "not in a range".
        #expect(throws: WebhookDestinationRefusal.self) { try WebhookDestination.check("https://[fe80::1%25lo]/hook", allow: .none) }
    }

    @Test func publicAddressesInsideIPv6FormsPass() throws {
        // A NAT64 network's way to 8.8.8.8, and its 6to4 form: judged by the IPv4 address they carry.
        for url in [
            "https://[64:ff9b::808:808]/hook", "https://[2002:808:808::1]/hook", "https://[2606:4700:4700::1111]/hook", "https://8.8.8.8/hook",
        ] {
            #expect(try WebhookDestination.check(url, allow: .none).pin == nil, "\(url)")
        }
    }

    @Test func allowListAdmitsLoopbackAndHTTP() throws {
        let allow = WebhookAllowList(parsing: "127.0.0.0/8, ::1, receiver.internal")
        // An IP literal is not resolved, so there is nothing to pin (and curl cannot pin an IPv6 literal: error 49).
        #expect(try WebhookDestination.check("http://127.0.0.1:9999/hook", allow: allow).pin == nil)
        #expect(try WebhookDestination.check("http://[::1]:9999/hook", allow: allow).pin == nil)
        // A name is pinned to the address checked, an IPv6 one in brackets.
        let named = try WebhookDestination.check("http://localhost:9999/hook", allow: WebhookAllowList(parsing: "localhost"))
        #expect(named.pin == "localhost:9999:" + (named.address.contains(":") ? "[\(named.address)]" : named.address))
        #expect(throws: WebhookDestinationRefusal.self) { try WebhookDestination.check("https://[2002:7f00:1::]/hook", allow: allow) }
        #expect(try WebhookDestination.check("https://[2002:7f00:1::]/hook", allow: WebhookAllowList(parsing: "2002::/16")).pin == nil)
        #expect(throws: WebhookDestinationRefusal.notHTTPS) { try WebhookDestination.check("http://10.0.0.1/hook", allow: allow) }
        #expect(throws: WebhookDestinationRefusal.self) { try WebhookDestination.check("https://10.0.0.1/hook", allow: allow) }
    }

    @Test func retryScheduleHasJitterRetryAfterAndAnEnd() throws {
        let schedule = try #require(RetrySchedule(parsing: "1,1,2"))
        #expect(schedule.delay(after: 1, jitter: 0) == 1)
        #expect(schedule.delay(after: 3, jitter: 0.1)! > 2.19)
        #expect(schedule.delay(after: 3, jitter: -0.1)! < 1.81)
        #expect(schedule.delay(after: 2, retryAfter: 30, jitter: 0) == 30)
        #expect(schedule.delay(after: 4) == nil)  // dead letter
        #expect(RetrySchedule(parsing: "1,x") == nil)
        #expect(RetrySchedule.standardWebhooks.delays == [5, 300, 1800, 7200, 18000, 36000, 36000])
    }

    @Test func onlyTheFirstMailsCarryTheCodeAndEveryLanguageHasEveryMail() {
        for language in CustomerLanguage.allCases {
            for kind in CustomerMailKind.allCases {
                let status = CustomerMailStatus(stage: .stageIdentityCheck, nextStep: .nextWaitIdentity, notices: [])
                let body = MailText.body(
                    kind, caseNumber: "1234", status: status, accessCode: kind.carriesAccessCode ? "AAAA-BBBB" : nil,
                    statusURL: "https://reclaim.test/status", language: language, contact: "help@reclaim.test")
                #expect(body.contains("1234"))
                // The contact-change mail may reach a stranger (the typo corrected): no link to the case.
                #expect(body.contains("https://reclaim.test/status") == (kind != .contactChanged))
                #expect(body.contains("AAAA-BBBB") == kind.carriesAccessCode)
                #expect(!MailText.subject(kind, caseNumber: "1234", language: language).isEmpty)
            }
        }
        // The state line is the status page's heading, from the same catalogue, in each language.
        for stage in CustomerText.allCases where stage.rawValue.hasPrefix("stage.") {
            for language in CustomerLanguage.allCases {
                #expect(MailText.state(stage, language: language) == CustomerCatalogue.catalogue(language)[stage])
            }
        }
        #expect(
            MailText.state(.stageRestoringAccess, language: .traditionalChinese)
                != MailText.state(.stageRestoringAccess, language: .simplifiedChinese))
    }
}
