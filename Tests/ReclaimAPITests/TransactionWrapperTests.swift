import Foundation
import HTTPServer
import Logging
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimAPI

/// `ServiceContext.transaction(for:attempting:)`, the one way a route changes state: an `Idempotency-Key` and the
/// recording of permission refusals on the same call, and the routes that gained one power from the other wrapper.
@Suite struct TransactionWrapperTests {
    /// A service with the real middleware and mapper in front of one route that refuses through the wrapper.
    @Test func aRefusalForWantOfPermissionIsRecordedAndItsKeyIsNotKept() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        let context = world.service.service.context
        let caseID = try #require(try context.pool.withConnection { try CaseStore.id(number: number, on: $0) })
        let route = Route(.POST, "/test/refused") { request in
            try context.transaction(for: request, attempting: "test_refusal") { _ in
                throw OperationError.refused(.insufficientTier(required: .tier3), caseID: caseID)
            }
        }
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2), router: Router(routes: [route]),
            middleware: [AuthMiddleware(context: context), IdempotencyMiddleware(context: context)],
            errorMapper: ProblemMapping.map, logger: Logger(sink: world.service.log, minimumLevel: .info), metrics: RequestMetrics())
        try server.start()
        defer { server.shutdown() }
        let client = try world.service.addClient()
        let now = Int64(world.service.clock.now().timeIntervalSince1970)
        func post(at timestamp: Int64) throws -> TestHTTPResponse {
            let headers = world.service.clientHeaders(client, method: "POST", target: "/test/refused", body: [], timestamp: timestamp)
            return try TestHTTPClient(host: "127.0.0.1", port: server.boundPort).request(
                "POST", "/test/refused",
                headers: headers + [("Idempotency-Key", "refused-1")])
        }
        let first = try post(at: now)
        #expect(first.status == 403)
        #expect(try first.json()["code"] as? String == "insufficient_tier")
        var denied = try world.events(number, as: tier1).filter { $0.type == "denied" }
        #expect(denied.count == 1)
        #expect(denied.first?.data == ["attempted": "test_refusal", "code": "insufficient_tier"])
        #expect(denied.first?.actor == "client:\(client.id.uuidString.lowercased())")
        #expect(world.service.log.lines.contains { $0.contains("\"access_denied\"") && $0.contains("case.test_refusal: insufficient_tier") })
        // The key was claimed in the refused transaction and left with it: a retry runs (and is refused, and recorded) again.
        let retry = try post(at: now - 1)
        #expect(retry.status == 403 && retry.header("Idempotent-Replayed") == nil)
        denied = try world.events(number, as: tier1).filter { $0.type == "denied" }
        #expect(denied.count == 2)
        let stored = try context.pool.withConnection {
            try $0.query("SELECT count(*) AS n FROM idempotency_keys WHERE response IS NOT NULL")[0].decode("n", as: Int.self)
        }
        #expect(stored == 0)
    }

    @Test func aRetryOfAWebhookRegistrationWaitsForTheFirstAndRegistersNothingOfItsOwn() throws {
        // Before, POST /api/v1/webhooks stored its key after the fact: a retry racing the first registered a second endpoint.
        let service = try TestService { $0.webhookAllow = "127.0.0.1" }
        defer { service.stop() }
        let client = try service.addClient()
        let key = "register-once"
        let body = Array(#"{"url":"http://127.0.0.1:9/hook","events":["case.opened"]}"#.utf8)
        let headers =
            service.clientHeaders(client, method: "POST", target: "/api/v1/webhooks", body: body)
            + [("Content-Type", "application/json"), ("Idempotency-Key", key)]
        // The first request, still in its transaction: the key's row is held, as it would hold it.
        struct HoldEnded: Error {}
        let answer = Mutex<TestHTTPResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        var answered = false
        let connection = try PostgresConnection(connectionString: service.database.connectionString)
        defer { connection.close() }
        do {
            try connection.withTransaction { held in
                _ = try IdempotencyKeyStore.lock(.apiClient(client.id), key: key, requestHash: [0], now: Date(), lifetime: 3600, wait: 1, on: held)
                DispatchQueue.global().async {
                    // It waits IdentityPolicy.idempotencyWait (5 s) for the first: a client that waits longer.
                    let patient = TestHTTPClient(host: "127.0.0.1", port: service.service.port, timeout: 60)
                    let response = try? patient.request("POST", "/api/v1/webhooks", headers: headers, body: body)
                    answer.withLock { $0 = response }
                    done.signal()
                }
                answered = done.wait(timeout: .now() + 30) == .success
                throw HoldEnded()  // the first rolls back
            }
        } catch is HoldEnded {}
        if !answered { done.wait() }
        #expect(answered, "the retry answered while the first still held the key")
        let retry = try #require(answer.withLock { $0 })
        #expect(retry.status == 409)
        #expect(try retry.json()["code"] as? String == "idempotency_in_progress")
        let listed = try service.client().request(
            "GET", "/api/v1/webhooks", headers: service.clientHeaders(client, method: "GET", target: "/api/v1/webhooks", body: []))
        #expect((try listed.json()["items"] as? [Any])?.count == 0)
    }

    @Test func anAgentsRetryOfAnAccessCodeReissueGetsTheSameCode() throws {
        // The new code is shown once: a retry after a lost answer used to be a second reissue (refused for a minute).
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let opened = try world.openCase(as: tier1)
        let number = opened.caseNumber
        try world.verifyCaller(number, accessCode: try #require(opened.accessCode), as: tier2)
        let target = "/api/v1/cases/\(number)/access-code"
        let check: [String: Any] = ["read_out": true]
        let first = try world.client.request("POST", target, headers: tier2.headers + [("Idempotency-Key", "reissue-1")], json: check)
        #expect(first.status == 201, "\(first.text)")
        let retry = try world.client.request("POST", target, headers: tier2.headers + [("Idempotency-Key", "reissue-1")], json: check)
        #expect(retry.status == 201 && retry.header("Idempotent-Replayed") == "true")
        #expect(retry.body == first.body)
        let code = try #require(try first.json()["access_code"] as? String)
        #expect(try world.status(number, code).status == 200)
        #expect(try world.events(number, as: tier1).filter { $0.type == "access_code_reissued" }.count == 1)
        // Without the key, the retry is a second reissue, refused for a minute (the first code, lost, stays the one).
        let again = try world.client.request("POST", target, headers: tier2.headers, json: check)
        #expect(again.status == 409)
        #expect(try again.json()["code"] as? String == "access_code_just_issued")
    }

    @Test func anAgentsRetryOfAReviewRecordsItOnce() throws {
        let w = try EvidenceWorld()
        let card = try w.mustFile(["type": "card", "number": EvidenceWorld.onFileCard, "exp_month": 12, "exp_year": 2031])
        let tier2 = try w.world.agent(.tier2)
        let target = "/api/v1/evidence/\(card.id)/review"
        let headers = tier2.headers + [("Idempotency-Key", "review-1")]
        let decision: [String: Any] = ["decision": "accepted", "reason": "Matches the card on file."]
        #expect(try w.world.client.request("POST", target, headers: headers, json: decision).status == 200)
        let retry = try w.world.client.request("POST", target, headers: headers, json: decision)
        #expect(retry.status == 200 && retry.header("Idempotent-Replayed") == "true")
        #expect(try w.world.events(w.number, as: w.tier1).filter { $0.type == "evidence_reviewed" }.count == 1)
    }

    @Test func aTransitionBodyThatIsNotJSONIsRefusedBeforeTheHashQueue() throws {
        // Parsed once, at the edge: a malformed body is 400, whatever it would have asked.
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        let response = try world.client.request(
            "POST", "/api/v1/cases/\(number)/transitions",
            headers: tier1.headers + [("If-Match", "\"1\""), ("Content-Type", "application/json")],
            body: Array(#"{"action":"send_reset","answers":[{"question_id":"q1","answer":"x"}"#.utf8))
        #expect(response.status == 400)
        #expect(try response.json()["code"] as? String == "malformed_json")
    }
}
