import Crypto
import Foundation
import HTTPServer
import ReclaimAPI
import ReclaimCore
import ReclaimStore
import ReclaimTestSupport
import Testing

/// api.md v1.1 "Customers", line by line: languages, a page that never contradicts itself, the ransom conversation.
@Suite(.serialized) struct CustomerTests {
    static let contact = "help@reclaim.test"

    func status(_ world: CaseWorld, _ number: String, _ code: String, language: String? = nil, acceptLanguage: String? = nil) throws
        -> TestHTTPResponse
    {
        var json: [String: Any] = ["case_number": number, "access_code": code]
        if let language { json["language"] = language }
        return try world.client.request("POST", "/api/v1/status", headers: acceptLanguage.map { [("Accept-Language", $0)] } ?? [], json: json)
    }

    func customerUpload(
        _ world: CaseWorld, _ number: String, _ code: String, type: String, bytes: [UInt8], contentType: String,
        extra: [(String, String)] = []
    ) throws -> TestHTTPResponse {
        let body = EvidenceWorld.form([("case_number", number), ("access_code", code), ("type", type)] + extra, file: (bytes, contentType))
        return try world.client.request(
            "POST", "/api/v1/status/evidence",
            headers: [("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)")], body: body)
    }

    // MARK: Every sentence in three languages; language from the request, the case, then Accept-Language.

    @Test func languageFromTheRequestThenTheCaseAndEverySentenceInIt() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        var body = CaseWorld.caseBody()
        body.language = "zh-Hant"
        let created = try world.openCase(as: tier1, body)
        let number = created.caseNumber
        let code = created.accessCode!

        // The case's language beats Accept-Language.
        let byCase = try status(world, number, code, acceptLanguage: "en-GB,en;q=0.9")
        #expect(byCase.status == 200)
        let hant = try byCase.json()
        #expect(hant["language"] as? String == "zh-Hant" && byCase.header("Content-Language") == "zh-Hant")
        #expect(hant["stage"] as? String == CustomerText.stageReceived.text(.traditionalChinese, contact: ""))
        #expect(
            hant["next_step"] as? String == CustomerText.nextTellAgent.text(.traditionalChinese, contact: ServiceConfiguration.defaultSupportContact))
        #expect(
            hant["missing_text"] as? [String] == [Requirement.securityAnswer, .card, .device].map { $0.text.text(.traditionalChinese, contact: "") })
        #expect((hant["progress"] as? [[String: Any]])?.first?["label"] as? String == "已受理")
        #expect(
            (hant["notices"] as? [[String: Any]])?.first?["text"] as? String == CustomerText.noticeNeverPay.text(.traditionalChinese, contact: ""))

        // The request's language beats the case's.
        let asked = try status(world, number, code, language: "zh-Hans", acceptLanguage: "zh-TW")
        let hans = try asked.json()
        #expect(hans["language"] as? String == "zh-Hans")
        #expect(hans["stage"] as? String == "我们已收到您的案件")
        #expect(try status(world, number, code, language: "en").json()["stage"] as? String == "We have received your case")

        // A language we do not speak is a 422 naming the field, not a silent English answer.
        let french = try status(world, number, code, language: "fr")
        #expect(french.status == 422 && french.text.contains("\"field\":\"language\""))
        let typed = try world.client.request("POST", "/api/v1/status", json: ["case_number": number, "access_code": code, "language": 7])
        #expect(typed.status == 422 && typed.text.contains("\"field\":\"language\""))

    }

    /// v1.2 "Finding a case": a case opened without `language` has none of its own, so the reader's `Accept-Language`
    /// decides its status page and the answer's `language`; a case with one keeps it whatever the reader's browser says.
    @Test func aCaseWithoutALanguageIsReadInTheReadersAcceptLanguage() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let plain = try world.openCase(as: tier1)
        let number = plain.caseNumber
        let code = try #require(plain.accessCode)

        let taiwan = try status(world, number, code, acceptLanguage: "zh-TW,zh;q=0.9,en;q=0.5")
        #expect(taiwan.status == 200)
        let hant = try taiwan.json()
        #expect(hant["language"] as? String == "zh-Hant" && taiwan.header("Content-Language") == "zh-Hant")
        #expect(hant["stage"] as? String == CustomerText.stageReceived.text(.traditionalChinese, contact: ""))
        #expect(
            hant["next_step"] as? String == CustomerText.nextTellAgent.text(.traditionalChinese, contact: ServiceConfiguration.defaultSupportContact))
        #expect(
            (hant["notices"] as? [[String: Any]])?.first?["text"] as? String == CustomerText.noticeNeverPay.text(.traditionalChinese, contact: ""))
        // Another reader of the same case, another language: nothing of the first look-up stuck to the case.
        #expect(try status(world, number, code, acceptLanguage: "zh-CN").json()["language"] as? String == "zh-Hans")
        // No Accept-Language we speak: English.
        #expect(try status(world, number, code, acceptLanguage: "fr-FR").json()["language"] as? String == "en")
        #expect(try status(world, number, code).json()["stage"] as? String == CustomerText.stageReceived.text(.english, contact: ""))
        // The request's own language still comes first.
        #expect(try status(world, number, code, language: "en", acceptLanguage: "zh-TW").json()["language"] as? String == "en")

        // A case with a language: it wins over the reader's Accept-Language.
        var body = CaseWorld.caseBody()
        body.language = "zh-Hans"
        let chosen = try world.openCase(as: tier1, body)
        let answer = try status(world, chosen.caseNumber, try #require(chosen.accessCode), acceptLanguage: "zh-TW")
        #expect(try answer.json()["language"] as? String == "zh-Hans")
        #expect(try answer.json()["stage"] as? String == CustomerText.stageReceived.text(.simplifiedChinese, contact: ""))
    }

    @Test func refusalsSpeakTheReadersLanguageAndNeverTheCasesOwn() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        var body = CaseWorld.caseBody()
        body.language = "zh-Hans"
        let number = try world.openCase(as: tier1, body).caseNumber
        var generator = SystemRandomNumberGenerator()
        let unknown = CaseNumber.generate(using: &generator).digits
        let code = AccessCode.generate(using: &generator).display
        // Accept-Language decides where no case is shown.
        let chinese = try status(world, unknown, code, acceptLanguage: "zh-CN,zh;q=0.9")
        #expect(
            try chinese.status == 404 && chinese.json()["detail"] as? String == CustomerText.problemNotFound.text(.simplifiedChinese, contact: ""))
        let traditional = try status(world, unknown, code, language: "zh-Hant")
        #expect(try traditional.json()["detail"] as? String == CustomerText.problemNotFound.text(.traditionalChinese, contact: ""))
        // A wrong code on a zh-Hans case answers exactly like an unknown case: the case's language would betray it.
        let wrong = try status(world, number, code)
        let none = try status(world, unknown, code)
        #expect(try wrong.json()["detail"] as? String == "No case matches this case number and access code.")
        #expect(try wrong.json()["detail"] as? String == none.json()["detail"] as? String)
        let typo = try status(world, String(number.dropLast()) + String((Int(String(number.last!))! + 1) % 10), code, acceptLanguage: "zh-HK")
        #expect(try typo.json()["detail"] as? String == CustomerText.problemInvalidCaseNumber.text(.traditionalChinese, contact: ""))
    }

    // MARK: One source: coherent, typed details received, device-only explained, support contact, never pay.

    /// api.md v1.3: the old code of a replaced one is told, for 30 days, when and where (masked) the new one was mailed,
    /// and nothing else of the case; a wrong code learns nothing; each still counts against the throttle.
    @Test func aReplacedCodeIsToldWhereTheNewOneWentForThirtyDays() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1)
        let (number, old) = (created.caseNumber, try #require(created.accessCode))
        let reissuedAt = world.service.clock.now()
        #expect(try world.post("/api/v1/cases/\(number)/access-code", as: tier1, json: [String: Any]()).status == 201)
        world.service.clock.advance(by: 3600)
        let day = String(Timestamp.format(reissuedAt).prefix(10))

        var generator = SystemRandomNumberGenerator()
        let wrong = try status(world, number, AccessCode.generate(using: &generator).display)
        let generic = try wrong.json()
        #expect(wrong.status == 404 && generic["access_code_replaced"] == nil)
        #expect(generic["detail"] as? String == CustomerText.problemNotFound.text(.english, contact: ""))

        let hint = try status(world, number, old)
        let body = try hint.json()
        #expect(hint.status == 404 && body["code"] as? String == generic["code"] as? String && body["status"] as? Int == 404, "\(hint.text)")
        let replaced = try #require(body["access_code_replaced"] as? [String: Any])
        #expect(replaced["to"] as? String == "v***@e***.net" && (replaced["mailed_at"] as? String)?.hasPrefix(day) == true)
        let detail = try #require(body["detail"] as? String)
        #expect(detail.contains("v***@e***.net") && detail.contains(day), "\(detail)")
        // Nothing else about the case: no state, no name, no address in clear, no other member.
        #expect(Set(body.keys).subtracting(generic.keys) == ["access_code_replaced"])
        #expect(!hint.text.contains("victim.home@example.net") && !hint.text.contains("Ada") && !hint.text.contains("victim@example.com"))
        let chinese = try status(world, number, old, language: "zh-Hans").json()["detail"] as? String
        #expect(chinese?.contains("v***@e***.net") == true && chinese?.contains("访问码") == true, "\(chinese ?? "")")
        let traditional = try status(world, number, " " + old.lowercased() + " ", language: "zh-Hant").json()["detail"] as? String
        #expect(traditional?.contains("v***@e***.net") == true && traditional?.contains("存取碼") == true, "\(traditional ?? "")")

        // The old code is still a failure: after nine the number locks, as for any wrong code.
        for _ in 0..<5 { #expect(try status(world, number, old).status == 404) }
        #expect(try status(world, number, old).status == 429)

        // After 30 days the old code is just a wrong code again.
        world.service.clock.advance(by: AccessCode.replacedHintWindow)
        let late = try status(world, number, old)
        let lateBody = try late.json()
        #expect(late.status == 404 && lateBody["access_code_replaced"] == nil)
        #expect(lateBody["detail"] as? String == CustomerText.problemNotFound.text(.english, contact: ""))
    }

    @Test func typedDetailsShowAsReceivedNeverMatchedAndAreNotAskedAgain() throws {
        let w = try EvidenceWorld()
        try w.mustFile(["type": "card", "number": EvidenceWorld.onFileCard, "exp_month": 12, "exp_year": 2031])  // matches
        try w.mustFile(["type": "device", "serial": "WRONG0SERIAL1"])  // does not match
        let body = try status(w.world, w.number, w.accessCode).json()
        let evidence = body["evidence"] as? [[String: Any]] ?? []
        #expect(evidence.map { $0["status"] as? String } == ["received", "received"])
        #expect(body["missing"] as? [String] == ["security_answer"])
        #expect(body["next_step_key"] as? String == "next.tell_agent")
        let text = try status(w.world, w.number, w.accessCode).text
        for leak in ["matched", "mismatch", "pending", "623456", "4111", "WRONG0SERIAL1"] { #expect(!text.contains(leak), "\(leak)") }
    }

    @Test func whatHappensNextAndWhatIsStillNeededNeverDisagree() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        let code = created.accessCode!
        try world.must(number, "request_documents", as: tier2, version: 1, extra: ["reason": "Answers unknown."])
        let waiting = try status(world, number, code).json()
        #expect(waiting["stage_key"] as? String == "stage.documents")
        #expect(waiting["next_step_key"] as? String == "next.upload_paused")
        #expect(waiting["missing"] as? [String] == ["proof_of_purchase", "imei_photo"])
        // The next step lists nothing itself: the list is `missing`, so the two cannot count differently.
        #expect(!(waiting["next_step"] as? String ?? "").contains("Proof of purchase"))
        let progress = waiting["progress"] as? [[String: Any]] ?? []
        #expect(progress.first { $0["mark"] as? String == "current" }?["key"] as? String == "documents")
        #expect(waiting["can_upload"] as? Bool == true)
        for type in ["invoice", "imei_photo"] {
            #expect(try customerUpload(world, number, code, type: type, bytes: EvidenceWorld.png(type), contentType: "image/png").status == 201)
        }
        // Every document is in: the case moved itself to review, and the page says so (nothing missing, a review next).
        let complete = try status(world, number, code).json()
        #expect(complete["state"] as? String == "document_review")
        #expect(complete["missing"] as? [String] == [] && complete["next_step_key"] as? String == "next.wait_review")
        #expect((complete["evidence"] as? [[String: Any]])?.map { $0["status"] as? String } == ["pending", "pending"])
    }

    @Test func deviceOnlyPathSaysTheAccountCannotBeRecovered() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1, CaseWorld.caseBody(facts: ["two_step_enabled": true]))
        let number = created.caseNumber
        let code = created.accessCode!
        try world.must(number, "escalate", as: tier1, version: 1)
        let body = try status(world, number, code).json()
        let notices = (body["notices"] as? [[String: Any]] ?? []).map { $0["key"] as? String }
        #expect(notices == ["notice.never_pay", "notice.device_only"])
        #expect((body["notices"] as? [[String: Any]])?.last?["text"] as? String == CustomerText.noticeDeviceOnly.text(.english, contact: ""))
        // The heading and the line agree: no identity check is drawn or named for a device-only case.
        #expect(body["stage_key"] as? String == "stage.received")
        #expect(!((body["progress"] as? [[String: Any]]) ?? []).contains { $0["key"] as? String == "identity_check" })
        #expect(body["missing"] as? [String] == ["proof_of_purchase", "imei_photo", "lock_screen_photo"])
        #expect(body["next_step_key"] as? String == "next.upload")
    }

    @Test func aFinishedCaseShowsTheSupportContactAndAdvice() throws {
        let world = try CaseWorld {
            $0.supportContact = CustomerTests.contact
            $0.unlockDelay = 0  // the cooling-off passes at the scheduler's next look
            $0.unlockPollSeconds = 0.05
        }
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        let engineer = try world.agent(.engineering)
        let created = try world.openCase(as: tier1, CaseWorld.caseBody(facts: ["two_step_enabled": true]))
        let number = created.caseNumber
        let code = created.accessCode!
        let open = try status(world, number, code).json()
        #expect(open["support_contact"] is NSNull)
        try world.must(number, "escalate", as: tier1, version: 1)
        try world.must(number, "request_documents", as: tier2, version: 2, extra: ["reason": "Device only."])
        // The documents arrive (the case moves itself to review) and tier 3 accepts them before approving.
        for type in ["invoice", "imei_photo", "lock_screen_photo"] { _ = try world.customerUpload(number, code: code, type: type) }
        for id in try world.pendingDocuments(number, as: tier3) { try world.mustReview(id, "accepted", as: tier3) }
        let reviewed = try world.caseBody(number, as: tier3)
        try world.must(number, "approve", as: tier3, version: reviewed["version"] as! Int)
        let approvedVersion = reviewed["version"] as! Int + 1
        #expect(try world.scheduleUnlock(number, "remove_activation_lock", as: engineer, version: approvedVersion).status == 200)
        #expect(
            try eventually(10) {
                (try world.caseBody(number, as: engineer)["unlocks"] as? [String: Any])?["done"] as? [String] == ["remove_activation_lock"]
            })
        try world.must(number, "complete", as: engineer, version: approvedVersion + 2)
        let done = try status(world, number, code, language: "zh-Hans").json()
        #expect(done["support_contact"] as? String == Self.contact)
        #expect(done["stage"] as? String == CustomerText.stageResolvedLock.text(.simplifiedChinese, contact: ""))
        let notices = done["notices"] as? [[String: Any]] ?? []
        #expect(notices.map { $0["key"] as? String } == ["notice.never_pay", "notice.device_only", "notice.new_account", "notice.contact"])
        #expect((notices.last?["text"] as? String)?.contains(Self.contact) == true)
        #expect(done["can_upload"] as? Bool == false && done["missing"] as? [String] == [])
        // An upload on a finished case is refused with the contact, in the reader's language, and nothing is filed.
        let late = try customerUpload(
            world, number, code, type: "transcript", bytes: Array("hello".utf8), contentType: "text/plain", extra: [("language", "zh-Hant")])
        #expect(late.status == 409)
        #expect(try late.json()["detail"] as? String == CustomerText.problemCaseNotOpen.text(.traditionalChinese, contact: Self.contact))
    }

    @Test func supportContactIsConfiguredAndValidated() throws {
        let base = [
            "DATABASE_URL": "host=/tmp", "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public",
            "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
        ]
        #expect(try ServiceConfiguration.fromEnvironment(base).supportContact == ServiceConfiguration.defaultSupportContact)
        #expect(
            try ServiceConfiguration.fromEnvironment(base.merging(["RECLAIM_SUPPORT_CONTACT": "+86 400 123 4567"]) { $1 }).supportContact
                == "+86 400 123 4567")
        #expect(throws: ConfigurationError.self) {
            try ServiceConfiguration.fromEnvironment(base.merging(["RECLAIM_SUPPORT_CONTACT": "a\u{1B}[31m"]) { $1 })
        }
        #expect(throws: ConfigurationError.self) {
            try ServiceConfiguration.fromEnvironment(base.merging(["RECLAIM_SUPPORT_CONTACT": String(repeating: "x", count: 201)]) { $1 })
        }
        #expect(ServiceConfiguration.variables.contains { $0.name == "RECLAIM_SUPPORT_CONTACT" })
    }

    // MARK: The ransom conversation.

    static let email = Array(
        """
        Return-Path: <locker@example.invalid>
        From: "Device Support" <locker@example.invalid>
        To: victim@example.com
        Subject: Your phone is locked
        Date: Mon, 30 Nov 2026 09:12:00 +0800
        Message-ID: <1@example.invalid>
        Content-Type: text/plain; charset=utf-8

        Pay 500 USDT to unlock your device. <script>alert(1)</script>
        """.replacingOccurrences(of: "\n", with: "\r\n").utf8)

    @Test func theRansomConversationIsFiledSniffedSealedAndShownToTierThreeAsText() throws {
        let w = try EvidenceWorld()
        let world = w.world
        let text = Array("他说：付 5000 元才解锁。\n<b>not html</b>\n".utf8)
        let png = EvidenceWorld.png("screenshot of the chat")
        var ids: [String] = []
        for (bytes, declared, expected) in [
            (Self.email, "message/rfc822", "message/rfc822"), (png, "image/png", "image/png"),
            (text, "text/plain", "text/plain; charset=utf-8"),
            (Array("%PDF-1.4 chat".utf8), "application/pdf", "application/pdf"),
            (Self.email, "application/octet-stream", "message/rfc822"),
        ] {
            let response = try customerUpload(world, w.number, w.accessCode, type: "transcript", bytes: bytes, contentType: declared)
            #expect(response.status == 201, "\(declared): \(response.text)")
            let body = try response.json()
            #expect(body["media_type"] as? String == expected && body["type"] as? String == "transcript")
            #expect(body["sha256"] as? String == Hex.encode(SHA256.hash(bytes)))
        }
        // Shown to the customer as received.
        let shown = try status(world, w.number, w.accessCode).json()["evidence"] as? [[String: Any]] ?? []
        #expect(shown.count == 5 && shown.allSatisfy { $0["type"] as? String == "transcript" && $0["status"] as? String == "received" })

        // Stored encrypted: no plain byte of the conversation in the database.
        let tier3 = try world.agent(.tier3)
        let tier2 = try world.agent(.tier2)
        let items = try world.get("/api/v1/cases/\(w.number)/evidence", as: tier3).json()["items"] as? [[String: Any]] ?? []
        ids = items.compactMap { $0["id"] as? String }
        let connection = try world.database()
        for id in ids {
            let sealed = try #require(try EvidenceStore.sealedContent(id: UUID(uuidString: id)!, on: connection))
            #expect(
                !String(decoding: sealed.sealed, as: UTF8.self).contains("USDT") && !String(decoding: sealed.sealed, as: UTF8.self).contains("5000"))
        }

        // Tier 3 reads it with a safe preview: never served as HTML.
        let mail = try #require(items.first { $0["media_type"] as? String == "message/rfc822" }?["id"] as? String)
        let content = try world.get("/api/v1/evidence/\(mail)/content?disposition=inline", as: tier3)
        #expect(content.status == 200 && content.body == Self.email)
        #expect(content.header("Content-Type") == "message/rfc822")
        #expect(
            content.header("Content-Disposition")?.hasPrefix("attachment;") == true && content.header("Content-Disposition")?.contains(".eml") == true
        )
        #expect(content.header("X-Content-Type-Options") == "nosniff")
        #expect(content.header("Content-Security-Policy")?.contains("sandbox") == true)
        let plain = try #require(items.first { ($0["media_type"] as? String)?.hasPrefix("text/plain") == true }?["id"] as? String)
        let plainContent = try world.get("/api/v1/evidence/\(plain)/content?disposition=inline", as: tier3)
        #expect(plainContent.header("Content-Type") == "text/plain; charset=utf-8" && plainContent.body == text)
        #expect(plainContent.header("Content-Disposition")?.hasPrefix("attachment;") == true)
        // Below tier 3: no content.
        #expect(try world.get("/api/v1/evidence/\(mail)/content", as: tier2).status == 403)
        #expect(ids.count == 5)
    }

    @Test func transcriptUploadsAreRefusedWhenNotWhatTheySay() throws {
        let w = try EvidenceWorld()
        func upload(_ bytes: [UInt8], _ contentType: String, type: String = "transcript") throws -> Int {
            try customerUpload(w.world, w.number, w.accessCode, type: type, bytes: bytes, contentType: contentType).status
        }
        // HTML is never taken as a conversation under its own name; binary and other encodings are not text.
        #expect(try upload(Array("<html><script>alert(1)</script></html>".utf8), "text/html") == 415)
        #expect(try upload([0x00, 0x01, 0x02, 0xFF, 0xFE], "application/octet-stream") == 415)
        #expect(try upload([0xC3, 0x28, 0x41], "text/plain") == 415)  // not UTF-8
        #expect(try upload(Array("plain words, not a mail".utf8), "message/rfc822") == 415)
        #expect(try upload(Array("hello\u{1B}[2J".utf8), "text/plain") == 415)  // terminal escapes are not conversation text
        #expect(try upload(EvidenceWorld.png("x"), "text/plain") == 415)  // declared text, sniffed PNG
        // Documents stay documents: text is no invoice.
        #expect(try upload(Array("an invoice".utf8), "text/plain", type: "invoice") == 415)
        // 10 MiB at most.
        #expect(try upload(Array(repeating: 0x61, count: DocumentUpload.maximumBytes + 1), "text/plain") == 413)
        #expect(try upload(Array(repeating: 0x61, count: 1024), "text/plain") == 201)
        // An unknown type names the field with every accepted word.
        let bad = try customerUpload(w.world, w.number, w.accessCode, type: "ransom", bytes: [0x61], contentType: "text/plain")
        #expect(bad.status == 422 && bad.text.contains("transcript"))
    }
}
