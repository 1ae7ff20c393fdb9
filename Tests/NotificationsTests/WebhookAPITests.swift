import Foundation
import ReclaimAPI
import ReclaimTestSupport
import Testing

/// `/api/v1/webhooks` over HTTP, from the attacker's side too: only API clients, only their own endpoints, no
/// secret after the first answer, no SSRF destination; and the embedded default writes every mail as an .eml file.
@Suite(.serialized) final class WebhookAPITests {
    let service: TestService

    init() throws {
        service = try TestService { $0.webhookAllow = "127.0.0.1" }
    }

    deinit { service.stop() }

    func send(_ method: String, _ target: String, as client: NewAPIClient, json: [String: Any]? = nil) throws -> TestHTTPResponse {
        try send(method, target, as: client, bytes: try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) })
    }

    func send(_ method: String, _ target: String, as client: NewAPIClient, bytes: [UInt8]?) throws -> TestHTTPResponse {
        var headers = service.clientHeaders(client, method: method, target: target, body: bytes ?? [])
        if bytes != nil { headers.append(("Content-Type", "application/json")) }
        return try service.client().request(method, target, headers: headers, body: bytes ?? [])
    }

    func openCase(as client: NewAPIClient) throws -> TestHTTPResponse {
        try send("POST", "/api/v1/cases", as: client, bytes: Array(try JSONEncoder().encode(CaseWorld.caseBody())))
    }

    @Test func registerListDeleteAndNeverShowTheSecretAgain() throws {
        let client = try service.addClient()
        let created = try send(
            "POST", "/api/v1/webhooks", as: client, json: ["url": "http://127.0.0.1:9/hook", "events": ["case.opened", "note.added"]])
        #expect(created.status == 201, "\(created.text)")
        let body = try created.json()
        let secret = try #require(body["secret"] as? String)
        #expect(secret.hasPrefix("whsec_"))
        let id = try #require(body["id"] as? String)
        let listed = try send("GET", "/api/v1/webhooks", as: client)
        #expect(listed.status == 200)
        #expect(!listed.text.contains(secret) && !listed.text.contains("secret"))
        #expect(listed.text.contains(id))
        // Another client sees none of it and cannot delete it.
        let other = try service.addClient(name: "Other")
        #expect(try send("GET", "/api/v1/webhooks", as: other).text.contains(id) == false)
        #expect(try send("DELETE", "/api/v1/webhooks/\(id)", as: other).status == 404)
        #expect(try send("GET", "/api/v1/webhooks/\(id)/deliveries", as: other).status == 404)
        #expect(try send("DELETE", "/api/v1/webhooks/\(id)", as: client).status == 204)
        #expect(try send("GET", "/api/v1/webhooks/\(id)/deliveries", as: client).status == 404)
        // Sealed at rest: the secret's text is nowhere in the database.
        let rows = try service.service.pool.withConnection {
            try $0.query("SELECT encode(secret_sealed, 'base64') AS s FROM webhook_endpoints").map { try $0.decode("s", as: String.self) }
        }
        #expect(!rows.joined().contains(String(secret.dropFirst(6))))
    }

    @Test(arguments: [
        "http://example.com/hook", "https://10.0.0.1/hook", "https://169.254.169.254/latest", "https://[::1]/hook", "https://127.0.0.2/x",
        "https://192.168.0.10/hook", "ftp://example.com/",
        // IPv6 forms of a refused IPv4 address: 6to4, IPv4-compatible, NAT64, IPv4-mapped.
        "https://[2002:7f00:1::]/hook", "https://[::127.0.0.1]/hook", "https://[64:ff9b::a9fe:a9fe]/latest", "https://[::ffff:10.0.0.1]/hook",
    ])
    func ssrfDestinationsAreRefused(url: String) throws {
        let client = try service.addClient()
        let response = try send("POST", "/api/v1/webhooks", as: client, json: ["url": url, "events": ["case.opened"]])
        #expect(response.status == 422, "\(url): \(response.text)")
        #expect(response.text.contains("\"url\""))
    }

    @Test func unknownEventsAndAgentsAreRefused() throws {
        let client = try service.addClient()
        #expect(try send("POST", "/api/v1/webhooks", as: client, json: ["url": "http://127.0.0.1:9/", "events": ["case.deleted"]]).status == 422)
        #expect(try send("POST", "/api/v1/webhooks", as: client, json: ["url": "http://127.0.0.1:9/", "events": []]).status == 422)
        let agent = try service.signIn(tier: .tier3)
        let response = try service.client().request("GET", "/api/v1/webhooks", headers: [("Cookie", agent.cookie)])
        #expect(response.status == 403)
        #expect(try service.client().request("GET", "/api/v1/webhooks").status == 401)
    }

    @Test func deliveriesAreLoggedAndCanBeRetried() throws {
        let client = try service.addClient()
        // Nothing listens on port 9: every attempt fails and is logged.
        let created = try send("POST", "/api/v1/webhooks", as: client, json: ["url": "http://127.0.0.1:9/hook", "events": ["case.opened"]])
        let id = try #require(try created.json()["id"] as? String)
        let opened = try openCase(as: client)
        #expect(opened.status == 201, "\(opened.text)")
        var items: [[String: Any]] = []
        #expect(
            try eventually {
                items = (try self.send("GET", "/api/v1/webhooks/\(id)/deliveries", as: client).json()["items"] as? [[String: Any]]) ?? []
                return (items.first?["attempts"] as? [[String: Any]])?.isEmpty == false
            })
        let delivery = try #require(items.first)
        #expect(delivery["event"] as? String == "case.opened")
        let attempt = try #require((delivery["attempts"] as? [[String: Any]])?.first)
        #expect(attempt["error"] is String && attempt["duration_ms"] is Int && attempt["at"] is String)
        let deliveryID = try #require(delivery["id"] as? String)
        // The failure rested the endpoint; the partner's retry ends that rest, so the message is due now in earnest
        // (the worker may take it at once and, failing again, rest the endpoint anew: a later rest, never the same).
        func rest() throws -> Date? {
            try service.service.pool.withConnection {
                try $0.query("SELECT backoff_until FROM webhook_endpoints WHERE id = \(try #require(UUID(uuidString: id)))").first?.decode(
                    "backoff_until")
            }
        }
        let before = try #require(try rest())
        let retried = try send("POST", "/api/v1/webhooks/\(id)/deliveries/\(deliveryID)/retry", as: client)
        #expect(retried.status == 202, "\(retried.text)")
        #expect(try rest() != before)
        #expect(try send("POST", "/api/v1/webhooks/\(id)/deliveries/\(UUID().uuidString.lowercased())/retry", as: client).status == 404)
    }

    /// v1.2 "Finding a case": a case opened without `language` is mailed in English, whatever the Accept-Language of the
    /// agent who opened it (theirs is not the customer's), while its status page follows each reader's.
    @Test func aCaseWithoutALanguageIsMailedInEnglish() throws {
        let agent = try service.signIn(tier: .tier1)
        let opened = try service.client().request(
            "POST", "/api/v1/cases", headers: agent.headers + [("Accept-Language", "zh-TW")],
            encoded: CaseWorld.caseBody())
        #expect(opened.status == 201, "\(opened.text)")
        let number = try #require(try opened.json()["case_number"] as? String)
        let code = try #require(try opened.json()["access_code"] as? String)
        let folder = service.directory + "/mail"
        func mail() -> ReceivedMail? {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".eml") }
            return names.lazy.compactMap { try? String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }
                .map { ReceivedMail(raw: $0, recipients: []) }.first { $0.body.contains(code) }
        }
        #expect(eventually { mail() != nil })
        let written = try #require(mail())
        #expect(written.subject.contains("is open"), "\(written.subject)")
        #expect(written.body.contains("/status?case=\(number)"))
        #expect(written.body.range(of: "\\p{Han}", options: .regularExpression) == nil, "no Chinese in the mail")
        // The status page of the same case, read from a browser in Taiwan, is in Traditional Chinese.
        let status = try service.client().request(
            "POST", "/api/v1/status", headers: [("Accept-Language", "zh-TW")],
            json: ["case_number": number, "access_code": code])
        #expect(try status.json()["language"] as? String == "zh-Hant")
    }

    @Test func withoutSMTPEveryMailIsAnEMLFileAndMetricsCountIt() throws {
        let client = try service.addClient()
        let opened = try openCase(as: client)
        let code = try #require(try opened.json()["access_code"] as? String)
        let folder = service.directory + "/mail"
        #expect(eventually { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains { $0.hasSuffix(".eml") } })
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".eml") })
        let mail = ReceivedMail(raw: try String(contentsOfFile: folder + "/" + name, encoding: .utf8), recipients: [])
        #expect(mail.body.contains(code))
        #expect(service.log.lines.contains { $0.contains("mail_written") })
        // Neither the code nor the customer's address is logged.
        #expect(!service.log.lines.contains { $0.contains(code) || $0.contains(CaseWorld.caseBody().customer.contactEmail) })
        // The file is written before the row says it was sent.
        #expect(
            eventually(10) {
                (try? self.service.client().request("GET", "/metrics").text.contains("reclaim_outbox_messages{state=\"sent\"} 1")) == true
            })
        #expect(try service.client().request("GET", "/metrics").text.contains("reclaim_outbox_oldest_queued_seconds"))
    }
}
