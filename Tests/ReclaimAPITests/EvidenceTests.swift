import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

/// A case world with an account on file and helpers to file evidence.
final class EvidenceWorld {
    let world: CaseWorld
    let tier1: AgentSession
    let number: String
    let accessCode: String

    static let onFileAnswer = "New York"
    static let onFileCard = "4111111111111111"
    static let onFileSerial = "C02XK1ZJH3QD"
    static let onFileIMEI = "490154203237518"
    static let boundary = "----reclaim-evidence-5Xk2"

    init(email: String = "owner@example.com") throws {
        world = try CaseWorld()
        tier1 = try world.agent(.tier1)
        let admin = try world.agent(.tier1, admin: true)
        let account: [String: Any] = [
            "email": email,
            "security_questions": [
                ["id": "q1", "question": "City of birth?", "answer": Self.onFileAnswer],
                ["id": "q2", "question": "First pet?", "answer": "Rex"],
            ],
            "cards": [["number": Self.onFileCard, "exp_month": 12, "exp_year": 2031]],
            "devices": [["serial": Self.onFileSerial, "model": "Phone"], ["imei": Self.onFileIMEI]],
        ]
        let added = try world.post("/api/v1/accounts", as: admin, json: account)
        guard added.status == 201 else { throw CaseTestError("account answered \(added.status): \(added.text)") }
        let opened = try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: email, devices: []))
        guard let code = opened.accessCode else { throw CaseTestError("create answered without access_code") }
        number = opened.caseNumber
        accessCode = code
    }

    func file(_ json: [String: Any], as session: AgentSession? = nil) throws -> TestHTTPResponse {
        try world.post("/api/v1/cases/\(number)/evidence", as: session ?? tier1, json: json)
    }

    @discardableResult
    func mustFile(_ json: [String: Any]) throws -> EvidenceView {
        let response = try file(json)
        guard response.status == 201 else { throw CaseTestError("evidence answered \(response.status): \(response.text)") }
        return try response.decode(EvidenceView.self)
    }

    func verification() throws -> VerificationView {
        let response = try world.get("/api/v1/cases/\(number)/verification", as: tier1)
        guard response.status == 200 else { throw CaseTestError("verification answered \(response.status): \(response.text)") }
        return try response.decode(VerificationView.self)
    }

    /// The agents' evidence list of this case.
    func evidenceList() throws -> ListView<EvidenceView> {
        try world.get("/api/v1/cases/\(number)/evidence", as: tier1).decode(ListView<EvidenceView>.self)
    }

    static func form(_ fields: [(String, String)], file: (bytes: [UInt8], contentType: String)?) -> [UInt8] {
        var body: [UInt8] = []
        for (name, value) in fields {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        if let file {
            body += Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"upload.bin\"\r\nContent-Type: \(file.contentType)\r\n\r\n"
                    .utf8)
            body += file.bytes
            body += Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return body
    }

    func upload(type: String, bytes: [UInt8], contentType: String = "image/png", as session: AgentSession? = nil) throws -> TestHTTPResponse {
        let session = session ?? tier1
        return try world.client.request(
            "POST", "/api/v1/cases/\(number)/evidence",
            headers: session.headers + [("Content-Type", "multipart/form-data; boundary=\(Self.boundary)")],
            body: Self.form([("type", type)], file: (bytes, contentType)))
    }

    func uploadRaw(type: String, bytes: [UInt8], contentType: String, as session: AgentSession? = nil) throws -> TestHTTPResponse {
        let session = session ?? tier1
        return try world.client.request(
            "POST", "/api/v1/cases/\(number)/evidence?type=\(type)",
            headers: session.headers + [("Content-Type", contentType)], body: bytes)
    }

    /// A small valid PNG header followed by `payload` (the sniffer reads the signature only).
    static func png(_ payload: String) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("\0\0\0\rIHDR".utf8) + Array(payload.utf8) + (0..<2048).map { UInt8($0 % 251) }
    }
}

@Suite(.serialized) struct EvidenceTests {
    @Test func typedEvidenceIsValidatedAndSummarisedWithoutSecrets() throws {
        let w = try EvidenceWorld()
        // IMEI with a wrong check digit: 422 naming the field.
        let badIMEI = try w.file(["type": "device", "imei": "490154203237519"])
        #expect(badIMEI.status == 422)
        #expect(badIMEI.text.contains("\"field\":\"imei\""))
        // An IMEISV (16 digits, no check digit) is accepted.
        let imeisv = try w.file(["type": "device", "imei": "4901542032375101"])
        #expect(imeisv.status == 201, "\(imeisv.text)")
        #expect(try imeisv.decode(EvidenceView.self).summary == "Device IMEISV 4901542032375101")
        // A non-UnionPay card failing Luhn: 422; a UnionPay card failing Luhn: 201, summary masked.
        let badCard = try w.file(["type": "card", "number": "4111111111111112", "exp_month": 12, "exp_year": 2031])
        #expect(badCard.status == 422)
        #expect(badCard.text.contains("\"field\":\"number\""))
        let unionPay = try w.file(["type": "card", "number": "6234567890123456", "exp_month": 12, "exp_year": 2031])
        #expect(unionPay.status == 201, "\(unionPay.text)")
        let unionPayBody = try unionPay.decode(EvidenceView.self)
        #expect(unionPayBody.summary == "623456******3456")
        #expect(unionPayBody.status == "pending")
        #expect(!unionPay.text.contains("6234567890123456"))
        // An expired card: 422 on exp_year.
        let expired = try w.file(["type": "card", "number": EvidenceWorld.onFileCard, "exp_month": 1, "exp_year": 2020])
        #expect(expired.status == 422)
        // A serial is upper-cased; a bad one is refused.
        #expect(try w.file(["type": "device", "serial": "c02xk1zjh3qd"]).status == 201)
        #expect(try w.file(["type": "device", "serial": "C02-XK"]).status == 422)
        // A transcript is stored sealed and summarised by its length.
        let transcript = try w.mustFile(["type": "transcript", "text": "Pay 500 or never see your phone again."])
        #expect(transcript.mediaType == "text/plain; charset=utf-8")
        #expect(transcript.sha256?.count == 64)
        // Answers show as a count.
        let answers = try w.mustFile([
            "type": "security_answers", "answers": [["question_id": "q1", "answer": "new york"], ["question_id": "q2", "answer": "rex"]],
        ])
        #expect(answers.summary == "2 answers")
        // The list holds summaries only, and what is still missing.
        let list = try w.world.get("/api/v1/cases/\(w.number)/evidence", as: w.tier1)
        #expect(list.status == 200)
        #expect(try list.decode(ListView<EvidenceView>.self).items.count == 5)
        #expect(try list.decode(ListView<EvidenceView>.self).missing != nil)
        #expect(!list.text.contains("6234567890123456") && !list.text.lowercased().contains("new york"))
        // Unknown type, documents as JSON.
        #expect(try w.file(["type": "invoice"]).status == 422)
        #expect(try w.file(["type": "nonsense"]).status == 422)
    }

    @Test func aCardSecurityCodeIsRefusedAndNeverEchoedOrLogged() throws {
        let w = try EvidenceWorld()
        let canary = "9731"
        for field in ["cvv", "cvc", "cvv2", "CVV"] {
            let response = try w.file(["type": "card", "number": EvidenceWorld.onFileCard, "exp_month": 12, "exp_year": 2031, field: canary])
            #expect(response.status == 422)
            #expect(response.text.contains("\"field\":\"\(field)\""))
            #expect(!response.text.contains(canary))
        }
        #expect(!w.world.service.log.lines.joined().contains(canary))
        #expect(!w.world.service.log.lines.joined().contains(EvidenceWorld.onFileCard))
    }

    @Test func answersMatchAcrossCaseSpacingAndFullWidth() throws {
        let w = try EvidenceWorld()
        try w.mustFile(["type": "security_answers", "answers": [["question_id": "q1", "answer": "  ＮＥＷ\u{3000}  yORK "]]])
        #expect(try w.verification().factors == ["security_answer": "matched", "card": "missing", "device": "missing"])

        let other = try EvidenceWorld(email: "other@example.com")
        try other.mustFile(["type": "security_answers", "answers": [["question_id": "q1", "answer": "Newark"]]])
        #expect(try other.verification().factors == ["security_answer": "mismatched", "card": "missing", "device": "missing"])
    }

    @Test func everyCombinationOfTheThreeFactorsDecidesVerify() throws {
        let w = try EvidenceWorld()
        let tier2 = try w.world.agent(.tier2)
        for mask in 0..<8 {
            let email = "combo\(mask)@example.com"
            let admin = try w.world.agent(.tier1, admin: true)
            let account: [String: Any] = [
                "email": email,
                "security_questions": [["id": "q1", "question": "City?", "answer": EvidenceWorld.onFileAnswer]],
                "cards": [["number": EvidenceWorld.onFileCard, "exp_month": 12, "exp_year": 2031]],
                "devices": [["serial": EvidenceWorld.onFileSerial]],
            ]
            #expect(try w.world.post("/api/v1/accounts", as: admin, json: account).status == 201)
            let opened = try w.world.openCase(as: w.tier1, CaseWorld.caseBody(accountEmail: email, devices: []))
            let number = opened.caseNumber
            func file(_ json: [String: Any]) throws {
                let response = try w.world.post("/api/v1/cases/\(number)/evidence", as: w.tier1, json: json)
                #expect(response.status == 201, "\(response.text)")
            }
            // Each factor is filed either matching or not matching, so none is missing.
            try file(["type": "security_answers", "answers": [["question_id": "q1", "answer": mask & 1 != 0 ? "new york" : "paris"]]])
            try file(["type": "card", "number": mask & 2 != 0 ? EvidenceWorld.onFileCard : "5555555555554444", "exp_month": 12, "exp_year": 2031])
            try file(["type": "device", "serial": mask & 4 != 0 ? EvidenceWorld.onFileSerial : "ZZZZ99998888"])
            let matches = [1, 2, 4].filter { mask & $0 != 0 }.count
            let outcome = try w.world.get("/api/v1/cases/\(number)/verification", as: w.tier1).decode(VerificationView.self)
            #expect(outcome.verified == (matches >= 2), "mask \(mask)")
            let factors = outcome.factors
            #expect(factors["security_answer"] == (mask & 1 != 0 ? "matched" : "mismatched"))
            #expect(factors["card"] == (mask & 2 != 0 ? "matched" : "mismatched"))
            #expect(factors["device"] == (mask & 4 != 0 ? "matched" : "mismatched"))

            let escalated = try w.world.must(number, "escalate", as: w.tier1, version: 1)
            let verify = try w.world.act(number, "verify", as: tier2, version: escalated.version)
            #expect(verify.status == (matches >= 2 ? 200 : 409), "mask \(mask): \(verify.text)")
            if matches < 2 { #expect(verify.text.contains("verification_failed")) }
        }
    }

    @Test func aRejectedFactorIsMissingAndReviewsAreRecorded() throws {
        let w = try EvidenceWorld()
        let card = try w.mustFile(["type": "card", "number": EvidenceWorld.onFileCard, "exp_month": 12, "exp_year": 2031])
        try w.mustFile(["type": "device", "imei": EvidenceWorld.onFileIMEI])
        #expect(try w.verification().verified == true)
        let id = card.id
        // Tier 1 may not review; tier 2 may review typed evidence.
        #expect(try w.world.post("/api/v1/evidence/\(id)/review", as: w.tier1, json: ["decision": "rejected", "reason": "x"]).status == 403)
        let tier2 = try w.world.agent(.tier2)
        #expect(try w.world.post("/api/v1/evidence/\(id)/review", as: tier2, json: ["decision": "maybe", "reason": "x"]).status == 422)
        let reviewed = try w.world.post(
            "/api/v1/evidence/\(id)/review", as: tier2, json: ["decision": "rejected", "reason": "Card reported stolen."])
        #expect(reviewed.status == 200, "\(reviewed.text)")
        #expect(try reviewed.decode(EvidenceView.self).status == "rejected")
        let outcome = try w.verification()
        #expect(outcome.verified == false)
        #expect(outcome.factors["card"] == "missing")
        #expect(try w.world.events(w.number, as: w.tier1).contains { $0.type == "evidence_reviewed" })
        // Documents need tier 3 to review.
        let doc = try w.upload(type: "invoice", bytes: EvidenceWorld.png("invoice"))
        let docID = try doc.decode(EvidenceView.self).id
        #expect(try w.world.post("/api/v1/evidence/\(docID)/review", as: tier2, json: ["decision": "accepted", "reason": "ok"]).status == 403)
        let tier3 = try w.world.agent(.tier3)
        #expect(
            try w.world.post("/api/v1/evidence/\(docID)/review", as: tier3, json: ["decision": "accepted", "reason": "Matches the serial."]).status
                == 200)
    }

    @Test func nineWrongAnswersLockTheAccountsAnswers() throws {
        let w = try EvidenceWorld()
        let wrong = (1...9).map { _ in ["question_id": "q1", "answer": "wrong"] }
        // Nine answers in one filing would be refused as duplicates: file them one at a time, across two cases.
        for index in 0..<9 {
            let response = try w.file(["type": "security_answers", "answers": [wrong[index]]])
            #expect(response.status == 201)
        }
        let locked = try w.file(["type": "security_answers", "answers": [["question_id": "q1", "answer": EvidenceWorld.onFileAnswer]]])
        #expect(locked.status == 429)
        #expect(locked.text.contains("locked_out"))
        #expect(locked.header("retry-after") != nil)
        // The refused answer was not filed.
        #expect(try w.evidenceList().items.count == 9)
    }

    @Test func documentsAreSniffedSealedAndReadByTier3OnTheRecord() throws {
        let w = try EvidenceWorld()
        let png = EvidenceWorld.png("box photo")
        let uploaded = try w.upload(type: "box_photo", bytes: png)
        #expect(uploaded.status == 201, "\(uploaded.text)")
        let body = try uploaded.decode(EvidenceView.self)
        #expect(body.mediaType == "image/png")
        #expect(body.size == png.count)
        let id = body.id

        // Tier 1 may not read content; the attempt is on the timeline.
        #expect(try w.world.get("/api/v1/evidence/\(id)/content", as: w.tier1).status == 403)
        let denied = try w.world.events(w.number, as: w.tier1).filter { $0.type == "denied" }
        #expect(denied.last?.data["attempted"] == "evidence_content")
        let tier3 = try w.world.agent(.tier3)
        let download = try w.world.get("/api/v1/evidence/\(id)/content", as: tier3)
        #expect(download.status == 200)
        #expect(download.body == png)
        #expect(download.header("content-type") == "image/png")
        #expect(download.header("content-disposition")?.hasPrefix("attachment") == true)
        #expect(download.header("x-content-type-options") == "nosniff")
        #expect(download.header("content-security-policy")?.contains("sandbox") == true)
        // The dashboard's inline preview: same bytes and headers, shown instead of saved; a bad value is refused.
        let inline = try w.world.get("/api/v1/evidence/\(id)/content?disposition=inline", as: tier3)
        #expect(inline.status == 200 && inline.body == png)
        #expect(inline.header("content-disposition")?.hasPrefix("inline") == true)
        #expect(inline.header("content-security-policy")?.contains("sandbox") == true)
        #expect(try w.world.get("/api/v1/evidence/\(id)/content?disposition=render", as: tier3).status == 422)
        let reads = try w.world.events(w.number, as: w.tier1).filter { $0.type == "evidence_content_read" }
        #expect(reads.count == 2)
        #expect(reads.first?.data["evidence_id"] == .string(id))
        #expect(reads.first?.actor == "agent:\(tier3.agentID.uuidString.lowercased())")

        // Raw bytes with ?type=.
        let raw = try w.uploadRaw(type: "invoice", bytes: png, contentType: "image/png")
        #expect(raw.status == 201, "\(raw.text)")
        // HTML declared as PNG: 415, both ways.
        let html = Array("<html><script>alert(1)</script></html>".utf8)
        #expect(try w.upload(type: "invoice", bytes: html).status == 415)
        #expect(try w.uploadRaw(type: "invoice", bytes: html, contentType: "image/png").status == 415)
        // A PNG declared as a PDF contradicts its declaration.
        #expect(try w.uploadRaw(type: "invoice", bytes: png, contentType: "application/pdf").status == 415)
        // No ?type=, unknown type.
        #expect(
            try w.world.client.request(
                "POST", "/api/v1/cases/\(w.number)/evidence", headers: w.tier1.headers + [("Content-Type", "image/png")], body: png
            ).status == 422)
        #expect(try w.upload(type: "selfie", bytes: png).status == 422)
    }

    @Test func tenMiBPlusOneByteIsRefusedWith413() throws {
        let w = try EvidenceWorld()
        let big = [UInt8](EvidenceWorld.png("x")) + [UInt8](repeating: 0x41, count: 10 * 1024 * 1024 + 1 - EvidenceWorld.png("x").count)
        #expect(big.count == 10 * 1024 * 1024 + 1)
        // Raw: refused on the announced length, before any of the body is sent.
        let connection = try w.world.client.openConnection()
        let cookies = w.tier1.headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        try connection.send(
            "POST /api/v1/cases/\(w.number)/evidence?type=invoice HTTP/1.1\r\nHost: x\r\n\(cookies)Content-Type: image/png\r\nContent-Length: \(big.count)\r\n\r\n"
        )
        #expect(try connection.readResponse(timeout: 3).status == 413)
        connection.close()
        // Multipart: the file part one byte over the cap.
        let slow = TestHTTPClient(port: w.world.service.service.port, timeout: 20)
        let form = try slow.request(
            "POST", "/api/v1/cases/\(w.number)/evidence",
            headers: w.tier1.headers + [("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)")],
            body: EvidenceWorld.form([("type", "invoice")], file: (big, "image/png")))
        #expect(form.status == 413)
        let exact = Array(big.dropLast())
        #expect(
            try slow.request(
                "POST", "/api/v1/cases/\(w.number)/evidence?type=invoice", headers: w.tier1.headers + [("Content-Type", "image/png")],
                body: exact
            ).status == 201)
    }

    @Test func largeUploadsAreSpooledAndStoredByteForByte() throws {
        // A document past the transport's large-body threshold is never held whole: it is spooled (encrypted) as it
        // arrives, digested and sealed from there in pieces; what is stored and served back is exactly what was sent.
        let w = try EvidenceWorld()
        var document = EvidenceWorld.png("large")
        document += (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let metrics = w.world.service.service.metrics
        let before = metrics.spooledBodies
        let client = TestHTTPClient(port: w.world.service.service.port, timeout: 20)
        let raw = try client.request(
            "POST", "/api/v1/cases/\(w.number)/evidence?type=invoice", headers: w.tier1.headers + [("Content-Type", "image/png")],
            body: document)
        #expect(raw.status == 201, "\(raw.text)")
        let form = try client.request(
            "POST", "/api/v1/cases/\(w.number)/evidence",
            headers: w.tier1.headers + [("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)")],
            body: EvidenceWorld.form([("type", "box_photo")], file: (document, "image/png")))
        #expect(form.status == 201, "\(form.text)")
        #expect(metrics.spooledBodies == before + 2)
        let tier3 = try w.world.agent(.tier3)
        for response in [raw, form] {
            let view = try response.decode(EvidenceView.self)
            #expect(view.size == document.count)
            #expect(view.sha256 == SHA256.hexDigest(document))
            let download = try TestHTTPClient(port: w.world.service.service.port, timeout: 20).request(
                "GET", "/api/v1/evidence/\(view.id)/content", headers: tier3.headers)
            #expect(download.status == 200)
            #expect(download.body == document)
        }
        // JSON stays in memory whatever the route: a small typed filing is not spooled.
        _ = try w.file(["type": "device", "imei": "490154203237518"])
        #expect(metrics.spooledBodies == before + 2)
    }

    @Test func aCustomerUploadIsSeenInTheirStatus() throws {
        let w = try EvidenceWorld()
        let png = EvidenceWorld.png("lock screen")
        let body = EvidenceWorld.form(
            [("case_number", w.number), ("access_code", w.accessCode), ("type", "lock_screen_photo")], file: (png, "image/png"))
        let headers = [("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)")]
        let uploaded = try w.world.client.request("POST", "/api/v1/status/evidence", headers: headers, body: body)
        #expect(uploaded.status == 201, "\(uploaded.text)")
        let status = try w.world.status(w.number, w.accessCode)
        #expect(status.status == 200)
        let evidence = try status.decode(StatusView.self).evidence
        #expect(evidence.count == 1)
        #expect(evidence.first?.type == "lock_screen_photo")
        #expect(evidence.first?.status == "pending")
        // A wrong code: the same 404 as an unknown case.
        let wrong = EvidenceWorld.form(
            [("case_number", w.number), ("access_code", "AAAA-AAAA-AAAA-AAAA"), ("type", "invoice")], file: (png, "image/png"))
        #expect(try w.world.client.request("POST", "/api/v1/status/evidence", headers: headers, body: wrong).status == 404)
        // Wrong-code uploads count against the case number like status look-ups: 9 lock it, even to the right code.
        for _ in 0..<8 {
            #expect(try w.world.client.request("POST", "/api/v1/status/evidence", headers: headers, body: wrong).status == 404)
        }
        #expect(try w.world.status(w.number, w.accessCode).status == 429)
        // Agents see it filed by the customer.
        let items = try w.evidenceList().items
        #expect(items.first?.filedBy == "customer")
    }

    @Test func apiClientsFileEvidence() throws {
        let w = try EvidenceWorld()
        let client = try w.world.service.addClient()
        let raw = Array(#"{"type":"device","serial":"C02XK1ZJH3QD"}"#.utf8)
        let target = "/api/v1/cases/\(w.number)/evidence"
        // The case was opened by an agent: the client files into it with the customer's access code.
        let code = ("Reclaim-Access-Code", w.accessCode)
        let response = try w.world.client.request(
            "POST", target,
            headers: w.world.service.clientHeaders(client, method: "POST", target: target, body: raw)
                + [("Content-Type", "application/json"), code], body: raw)
        #expect(response.status == 201, "\(response.text)")
        #expect(try response.decode(EvidenceView.self).filedBy == "client:\(client.id.uuidString.lowercased())")
        // Documents from API clients: raw bytes with ?type= (the signature covers them).
        let png = EvidenceWorld.png("client upload")
        let rawTarget = target + "?type=imei_photo"
        let uploaded = try w.world.client.request(
            "POST", rawTarget,
            headers: w.world.service.clientHeaders(client, method: "POST", target: rawTarget, body: png)
                + [("Content-Type", "image/png"), code], body: png)
        #expect(uploaded.status == 201, "\(uploaded.text)")
        let form = EvidenceWorld.form([("type", "invoice")], file: (png, "image/png"))
        let multipart = try w.world.client.request(
            "POST", target,
            headers: w.world.service.clientHeaders(client, method: "POST", target: target, body: form)
                + [("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)"), code], body: form)
        // A signed form is kept raw as well as parsed, so its signature is checked over the bytes as sent.
        #expect(multipart.status == 201, "\(multipart.text)")
        // A tampered form (one byte changed after signing) is refused.
        var tampered = form
        tampered[tampered.count - 10] ^= 0x01
        let refused = try w.world.client.request(
            "POST", target,
            headers: w.world.service.clientHeaders(client, method: "POST", target: target, body: form)
                + [("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)")], body: tampered)
        #expect(refused.status == 401)
        // API clients may not list or read.
        #expect(try w.world.client.request("GET", target, headers: [("Authorization", "Bearer \(client.apiKey)")]).status == 403)
    }
}

/// `send_reset` counts answers filed as evidence on the case, as well as answers given with the action.
@Suite struct SendResetUsesFiledAnswersTests {
    @Test func filedAnswersAloneCanResolveAndPartialOnesCannot() throws {
        let w = try EvidenceWorld()
        // Only q1 of the two on-file questions: not every on-file answer matched.
        try w.mustFile(["type": "security_answers", "answers": [["question_id": "q1", "answer": "new york"]]])
        let partial = try w.world.act(w.number, "send_reset", as: w.tier1, version: 1)
        #expect(partial.status == 409 || partial.status == 422, "\(partial.text)")

        // q2 filed too: every on-file answer now matches, so the reset goes out without answers in the action.
        try w.mustFile(["type": "security_answers", "answers": [["question_id": "q2", "answer": "REX"]]])
        let reset = try w.world.act(w.number, "send_reset", as: w.tier1, version: 1)
        #expect(reset.status == 200, "\(reset.text)")
        #expect(try reset.decode(CaseView.self).state == "resolved")
    }
}

/// Issue 19: `/openapi.json` declares exactly how an agent or API client may send a document, and each declared way is
/// accepted (schemathesis sent forms whose file part the declaration allowed to be any bytes, and met 415).
@Suite struct DeclaredDocumentFormsTests {
    /// A small file of each declared media type (the sniffer reads the signature; octet-stream declares nothing).
    static func sample(_ mediaType: String) -> [UInt8]? {
        switch mediaType {
        case "application/pdf": Array("%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n".utf8)
        case "image/jpeg": [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [UInt8](repeating: 0, count: 64) + [0xFF, 0xD9]
        case "image/png", "application/octet-stream": EvidenceWorld.png("declared")
        case "image/heic": [0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8) + [UInt8](repeating: 0, count: 64)
        default: nil
        }
    }

    @Test func everyDeclaredWayToSendADocumentIsAcceptedAndAnUndeclaredOneIsNot() throws {
        let w = try EvidenceWorld()
        let document = try w.world.client.request("GET", "/openapi.json").json()
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        let filing = try #require(paths["/api/v1/cases/{case_number}/evidence"]?["post"])
        let content = try #require((filing["requestBody"] as? [String: Any])?["content"] as? [String: [String: Any]])
        // The form's file part may declare exactly the media types a document is sniffed as, or declare nothing.
        let encoding = try #require(content["multipart/form-data"]?["encoding"] as? [String: [String: Any]])
        let partTypes = try #require(encoding["file"]?["contentType"] as? String).components(separatedBy: ", ")
        #expect(Set(partTypes) == Set(MediaType.allCases.map(\.rawValue) + ["application/octet-stream"]))
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]])
        let formType = try #require((schemas["DocumentForm"]?["properties"] as? [String: [String: Any]])?["type"]?["enum"] as? [String])
        #expect(Set(formType) == Set(DocumentType.allCases.map(\.rawValue)))
        for (index, partType) in partTypes.enumerated() {
            let filed = try w.upload(
                type: formType[index % formType.count], bytes: try #require(Self.sample(partType), "\(partType)"), contentType: partType)
            #expect(filed.status == 201, "\(partType): \(filed.text)")
        }
        // As python-requests (schemathesis) writes a form: the file first, with a filename and no Content-Type of its own.
        let boundary = EvidenceWorld.boundary
        let form =
            Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file.png\"\r\n\r\n".utf8)
            + EvidenceWorld.png("requests")
            + Array("\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\nbox_photo\r\n--\(boundary)--\r\n".utf8)
        let requests = try w.world.client.request(
            "POST", "/api/v1/cases/\(w.number)/evidence",
            headers: w.tier1.headers + [("Content-Type", "multipart/form-data; boundary=\(boundary)")], body: form)
        #expect(requests.status == 201, "\(requests.text)")

        // Raw bytes: each declared media type, named by the declared ?type=.
        let query = try #require(
            (filing["parameters"] as? [[String: Any]])?.first { $0["in"] as? String == "query" && $0["name"] as? String == "type" })
        let rawType = try #require((query["schema"] as? [String: Any])?["enum"] as? [String])
        #expect(Set(rawType) == Set(DocumentType.allCases.map(\.rawValue)))
        let rawMediaTypes = content.keys.filter { $0 != "application/json" && $0 != "multipart/form-data" }.sorted()
        #expect(Set(rawMediaTypes) == Set(partTypes))
        for (index, mediaType) in rawMediaTypes.enumerated() {
            let filed = try w.uploadRaw(
                type: rawType[index % rawType.count], bytes: try #require(Self.sample(mediaType), "\(mediaType)"), contentType: mediaType)
            #expect(filed.status == 201, "\(mediaType): \(filed.text)")
        }
        #expect(try w.evidenceList().items.count == partTypes.count + 1 + rawMediaTypes.count)

        // Not declared, not accepted: a GIF, in a form or raw.
        let gif = Array("GIF89a".utf8) + [UInt8](repeating: 0, count: 32)
        #expect(try w.upload(type: "invoice", bytes: gif, contentType: "image/gif").status == 415)
        #expect(try w.uploadRaw(type: "invoice", bytes: gif, contentType: "image/gif").status == 415)
    }
}
