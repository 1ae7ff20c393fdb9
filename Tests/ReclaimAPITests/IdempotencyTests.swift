import Crypto
import Foundation
import HTTPServer
import Postgres
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimAPI

/// Idempotency-Key on API clients' POSTs, through the real middleware (see `MiddlewareHarness`).
@Suite struct IdempotencyTests {
    @Test func aRetryWithTheSameKeyAndBodyGetsTheFirstResponseByteForByte() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let key = [("Idempotency-Key", "create-\(UUID())")]
        let first = try harness.post(client, "/test/create?x=1", body: #"{"summary":"stolen"}"#, extra: key)
        #expect(first.status == 201)
        // Re-signed (a new signature, as a real retry sends), same key and body.
        let retry = try harness.post(client, "/test/create?x=1", body: #"{"summary":"stolen"}"#, extra: key)
        #expect(retry.status == first.status)
        #expect(retry.body == first.body)
        for header in ["Location", "ETag", "Content-Type"] {
            #expect(retry.header(header) == first.header(header), "\(header)")
        }
        #expect(retry.header("Idempotent-Replayed") == "true")
        #expect(harness.runCount("create") == 1)
        // The stored copy is sealed: the one-time secret is not in the row.
        let secret = try #require(try first.json()["secret"] as? String)
        let connection = try PostgresConnection(connectionString: harness.service.database.connectionString)
        defer { connection.close() }
        let stored = try connection.query("SELECT response FROM idempotency_keys")
        #expect(stored.count == 1)
        let bytes = try stored[0].decode(0, as: [UInt8].self)
        #expect(!String(decoding: bytes, as: UTF8.self).contains(secret))
    }

    @Test func theSameKeyWithAnotherBodyIs422() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let key = [("Idempotency-Key", "k-\(UUID())")]
        #expect(try harness.post(client, "/test/create", body: #"{"a":1}"#, extra: key).status == 201)
        let mismatch = try harness.post(client, "/test/create", body: #"{"a":2}"#, extra: key)
        #expect(mismatch.status == 422)
        #expect(try mismatch.json()["code"] as? String == "idempotency_mismatch")
        let otherTarget = try harness.post(client, "/test/create?again", body: #"{"a":1}"#, extra: key)
        #expect(otherTarget.status == 422)
        #expect(harness.runCount("create") == 1)
        // Keys are per client: another client may use the same key.
        let other = try harness.service.addClient(name: "Other")
        #expect(try harness.post(other, "/test/create", body: #"{"a":2}"#, extra: key).status == 201)
    }

    @Test func errorsAreNotStoredSoARetryRunsAgain() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let key = [("Idempotency-Key", "flaky-1")]
        harness.state.flakyStatus.withLock { $0 = 503 }
        #expect(try harness.post(client, "/test/flaky", body: "{}", extra: key).status == 503)
        harness.state.flakyStatus.withLock { $0 = 200 }
        #expect(try harness.post(client, "/test/flaky", body: "{}", extra: key).status == 200)
        harness.state.flakyStatus.withLock { $0 = 409 }
        let replay = try harness.post(client, "/test/flaky", body: "{}", extra: key)
        #expect(replay.status == 200)
        #expect(harness.runCount("flaky") == 2)
    }

    /// Starts a keyed POST /test/slow on another thread and waits until its handler runs (it holds the key's row lock).
    final class SlowRun: Sendable {
        let status = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
    }

    private func startSlow(_ harness: MiddlewareHarness, _ client: NewAPIClient, key: [(String, String)]) -> SlowRun {
        let run = SlowRun()
        // Signed well ahead of the harness's own timestamps (which go back one second per POST), so never the same.
        let firstSignature = harness.service.clientHeaders(
            client, method: "POST", target: "/test/slow", body: Array("{}".utf8),
            timestamp: Int64(harness.service.clock.now().timeIntervalSince1970) + 60)
        Thread {
            let status = (try? harness.client().request("POST", "/test/slow", headers: firstSignature + key, body: Array("{}".utf8)).status) ?? -1
            run.status.store(status, ordering: .releasing)
            run.done.signal()
        }.start()
        let deadline = Date().addingTimeInterval(3)
        while harness.runCount("slow") == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return run
    }

    @Test func aRetryWhileTheFirstIsRunningWaitsForItAndReplays() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let key = [("Idempotency-Key", "slow-1")]
        let first = startSlow(harness, client, key: key)
        // The retry blocks on the key's row lock until the first commits, then answers with the first's answer.
        let concurrent = try harness.post(client, "/test/slow", body: "{}", extra: key)
        #expect(concurrent.status == 201)
        #expect(concurrent.header("Idempotent-Replayed") == "true")
        first.done.wait()
        #expect(first.status.load(ordering: .acquiring) == 201)
        #expect(harness.runCount("slow") == 1)
    }

    @Test func aRetryWaitingLongerThanTheWaitIs409() throws {
        var policy = IdentityPolicy()
        policy.idempotencyWait = 0.2
        let harness = try MiddlewareHarness(policy: policy)
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let key = [("Idempotency-Key", "slow-2")]
        harness.state.slowSeconds.withLock { $0 = 1.0 }
        let first = startSlow(harness, client, key: key)
        let concurrent = try harness.post(client, "/test/slow", body: "{}", extra: key)
        #expect(concurrent.status == 409)
        #expect(try concurrent.json()["code"] as? String == "idempotency_in_progress")
        #expect(concurrent.header("Retry-After") == "1")
        first.done.wait()
        #expect(first.status.load(ordering: .acquiring) == 201)
        #expect(try harness.post(client, "/test/slow", body: "{}", extra: key).status == 201)
        #expect(harness.runCount("slow") == 1)
    }

    @Test func aClaimWhoseTransactionRolledBackNeverBlocksARetry() throws {
        // A crash (or any rollback) after the work started leaves nothing behind: the key's row goes with the change.
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let key = [("Idempotency-Key", "crash-1")]
        harness.state.flakyStatus.withLock { $0 = 500 }
        #expect(try harness.post(client, "/test/flaky", body: "{}", extra: key).status == 500)
        let connection = try PostgresConnection(connectionString: harness.service.database.connectionString)
        defer { connection.close() }
        #expect(try connection.query("SELECT 1 FROM idempotency_keys").count == 0)
        // A 'running' row committed by an older build that died is taken over at once, not after minutes.
        try connection.execute(
            """
            INSERT INTO idempotency_keys (owner_kind, owner_id, key, request_hash, state, created_at, expires_at)
            VALUES ('api_client', \(client.id), 'crash-2', '\\x00'::bytea, 'running', now(), now() + interval '1 day')
            """)
        harness.state.flakyStatus.withLock { $0 = 200 }
        let retry = try harness.post(client, "/test/flaky", body: "{}", extra: [("Idempotency-Key", "crash-2")])
        #expect(retry.status == 422)  // its hash is another request's
        try connection.execute(
            "UPDATE idempotency_keys SET request_hash = \(IdempotencyMiddleware.requestHash(HTTPRequest(method: .POST, target: "/test/flaky", body: Array("{}".utf8))))"
        )
        let taken = try harness.post(client, "/test/flaky", body: "{}", extra: [("Idempotency-Key", "crash-2")])
        #expect(taken.status == 200)
        #expect(taken.header("Idempotent-Replayed") == nil)
    }

    @Test func deferredRoutesReplayToo() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let key = [("Idempotency-Key", "deferred-1")]
        let first = try harness.post(client, "/test/deferred", body: #"{"a":1}"#, extra: key)
        #expect(first.status == 201)
        let retry = try harness.post(client, "/test/deferred", body: #"{"a":1}"#, extra: key)
        #expect(retry.status == 201)
        #expect(retry.body == first.body)
        #expect(retry.header("Idempotent-Replayed") == "true")
        #expect(try harness.post(client, "/test/deferred", body: #"{"a":2}"#, extra: key).status == 422)
        #expect(harness.runCount("deferred") == 1)
    }

    @Test func keysExpireAfter24Hours() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let key = [("Idempotency-Key", "day-1")]
        #expect(try harness.post(client, "/test/create", body: "{}", extra: key).status == 201)
        harness.service.clock.advance(by: 24 * 3600 + 1)
        let fresh = try harness.post(client, "/test/create", body: #"{"other":true}"#, extra: key)
        #expect(fresh.status == 201)
        #expect(fresh.header("Idempotent-Replayed") == nil)
        #expect(harness.runCount("create") == 2)
    }

    @Test func malformedKeysAre400AndAgentsAreUnaffected() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let long = try harness.post(client, "/test/create", body: "{}", extra: [("Idempotency-Key", String(repeating: "k", count: 256))])
        #expect(long.status == 400)
        #expect(try long.json()["code"] as? String == "invalid_idempotency_key")
        // Without a key, nothing is stored.
        #expect(try harness.post(client, "/test/create", body: "{}").status == 201)
        let connection = try PostgresConnection(connectionString: harness.service.database.connectionString)
        defer { connection.close() }
        #expect(try connection.query("SELECT 1 FROM idempotency_keys").count == 0)
    }
}
