import Foundation
import Postgres
import ReclaimAPI
import ReclaimCore
import ReclaimTestSupport
import Testing

@Suite(.serialized) struct CaseTests {
    @Test func createAnswers201WithLocationETagAndAccessCodeOnce() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let response = try world.post("/api/v1/cases", as: tier1, encoded: CaseWorld.caseBody())
        #expect(response.status == 201)
        let created = try response.decode(CaseView.self)
        let number = created.caseNumber
        #expect(CaseNumber.isValid(number))
        #expect(response.header("Location") == "/api/v1/cases/\(number)")
        #expect(response.header("ETag") == "\"1\"")
        let code = try #require(created.accessCode)
        #expect(AccessCode.normalize(code) != nil && code.count == 19)
        #expect(created.state == "new")
        #expect(created.tier == "tier1")
        #expect(created.path == "undetermined")
        #expect(created.version == 1)
        #expect(created.overdue == false)
        #expect(created.dueAt != nil)
        // No reset offered: no security answer on file has matched (there is no account on file here).
        #expect(created.transitions == ["escalate"])
        let members = try response.value()
        for field in ["kind", "facts", "customer", "devices", "assignee", "frozen", "created_at", "updated_at"] {
            #expect(members[field] != nil, "missing \(field)")
        }

        let read = try world.get("/api/v1/cases/\(number)", as: tier1)
        #expect(read.status == 200)
        #expect(read.header("ETag") == "\"1\"")
        #expect(try read.value()["access_code"] == nil)  // absent, not null
        #expect(!read.text.contains(code))
        #expect(try read.decode(CaseView.self).caseNumber == number)

        // Stored only as a keyed hash: the code is nowhere in the row.
        let connection = try world.database()
        defer { connection.close() }
        let row = try #require(try connection.query("SELECT access_code_hash, access_code_key_id FROM cases WHERE case_number = \(number)").first)
        #expect(try row.decode(0, as: [UInt8].self).count == 32)
        let symbols = AccessCode.normalize(code)!
        let dump = try connection.query("SELECT row_to_json(c)::text FROM cases c WHERE case_number = \(number)").first!.decode(0, as: String.self)
        #expect(!dump.contains(symbols) && !dump.contains(code))
    }

    @Test func mistypedAndUnknownNumbers() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        // Swap two adjacent digits: the Damm check catches it.
        var digits = Array(number)
        let index = digits.indices.dropLast().first { digits[$0] != digits[$0 + 1] }!
        digits.swapAt(index, index + 1)
        let mistyped = try world.get("/api/v1/cases/\(String(digits))", as: tier1)
        #expect(mistyped.status == 404)
        #expect(try mistyped.problem().code == "invalid_case_number")
        #expect(try world.get("/api/v1/cases/12345", as: tier1).status == 404)

        var generator = SystemRandomNumberGenerator()
        let unknown = CaseNumber.generate(using: &generator).digits
        let missing = try world.get("/api/v1/cases/\(unknown)", as: tier1)
        #expect(missing.status == 404)
        #expect(try missing.problem().code == "not_found")
    }

    @Test func validationAndAuthentication() throws {
        let world = try CaseWorld()
        #expect(try world.post("/api/v1/cases", as: nil, encoded: CaseWorld.caseBody()).status == 401)
        let tier1 = try world.agent(.tier1)
        var body = CaseWorld.caseBody(accountEmail: "not-an-email", devices: [.init(imei: "490154203237519")])
        let bad = try world.post("/api/v1/cases", as: tier1, encoded: body)
        #expect(bad.status == 422)
        let fields = try bad.problem().fields
        #expect(fields.contains("account_email"))
        #expect(fields.contains("devices[0].imei"))
        body = CaseWorld.caseBody()
        body.kind = "stolen_bike"
        #expect(try world.post("/api/v1/cases", as: tier1, encoded: body).status == 422)  // an unknown kind: JSON, but invalid
    }

    @Test func apiClientsMayOpenCasesButNotRead() throws {
        let world = try CaseWorld()
        let client = try world.service.addClient()
        let body = try CaseWorld.caseBody().bytes
        let response = try world.client.request(
            "POST", "/api/v1/cases",
            headers: world.service.clientHeaders(client, method: "POST", target: "/api/v1/cases", body: body) + [
                ("Content-Type", "application/json")
            ], body: body)
        #expect(response.status == 201, "\(response.text)")
        let created = try response.decode(CaseView.self)
        #expect(created.allowedActions == [])
        #expect(created.accessCode != nil)
    }

    /// api.md: the access code is never shown again, except in an idempotent replay of the very request that created it.
    @Test func anIdempotentReplayReturnsTheSameCaseAndCodeAndCreatesNothing() throws {
        let world = try CaseWorld()
        let client = try world.service.addClient()
        let body = try CaseWorld.caseBody().bytes
        func send() throws -> TestHTTPResponse {
            try world.client.request(
                "POST", "/api/v1/cases",
                headers: world.service.clientHeaders(client, method: "POST", target: "/api/v1/cases", body: body)
                    + [("Content-Type", "application/json"), ("Idempotency-Key", "case-create-1")],
                body: body)
        }
        let first = try send()
        world.service.clock.advance(by: 1)  // a fresh signature timestamp for the retry
        let second = try send()
        #expect(first.status == 201 && second.status == 201)
        #expect(first.body == second.body)
        #expect(first.header("Location") == second.header("Location"))
        let connection = try world.database()
        defer { connection.close() }
        #expect(try connection.query("SELECT count(*) FROM cases").first!.decode(0, as: Int.self) == 1)
    }
}
