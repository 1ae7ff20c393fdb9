import Crypto
import Foundation
import HTTPServer
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

/// Sessions, CSRF and authorisation over real HTTP.
@Suite struct SessionTests {
    @Test func signOutEndsTheSessionOnTheServerSoTheCookieIsDeadAfterwards() throws {
        let service = try TestService()
        defer { service.stop() }
        let session = try service.signIn(tier: .tier1)
        let client = service.client()
        let out = try client.request("DELETE", "/api/v1/session", headers: session.headers)
        #expect(out.status == 204)
        let cleared = try #require(out.header("Set-Cookie"))
        #expect(cleared.hasPrefix("__Host-reclaim_session=;") && cleared.contains("Max-Age=0"))
        // The old cookie, replayed as an attacker who copied it would: refused.
        let replayed = try client.request("GET", "/api/v1/session", headers: [("Cookie", session.cookie)])
        #expect(replayed.status == 401)
        #expect(try replayed.problem().code == "unauthenticated")
        #expect(try client.request("DELETE", "/api/v1/session", headers: session.headers).status == 401)
    }

    @Test func changingRequestsWithTheCookieNeedTheCSRFToken() throws {
        let service = try TestService()
        defer { service.stop() }
        let session = try service.signIn(tier: .tier2)
        let other = try service.signIn(tier: .tier2)
        let client = service.client()
        let missing = try client.request("DELETE", "/api/v1/session", headers: [("Cookie", session.cookie)])
        #expect(missing.status == 403)
        #expect(try missing.problem().code == "csrf_failed")
        // Another session's token is not this session's token.
        let foreign = try client.request("DELETE", "/api/v1/session", headers: [("Cookie", session.cookie), ("X-CSRF-Token", other.csrfToken)])
        #expect(foreign.status == 403)
        let garbage = try client.request("DELETE", "/api/v1/session", headers: [("Cookie", session.cookie), ("X-CSRF-Token", "00")])
        #expect(garbage.status == 403)
        // Reads need no token, and the session survived the refused attempts.
        #expect(try client.request("GET", "/api/v1/session", headers: [("Cookie", session.cookie)]).status == 200)
        #expect(try client.request("DELETE", "/api/v1/session", headers: session.headers).status == 204)
        #expect(service.log.lines.contains { $0.contains("\"csrf_failed\"") })
    }

    @Test func eachSignInGetsANewTokenAndTheOldSessionStaysSeparate() throws {
        let service = try TestService()
        defer { service.stop() }
        let first = try service.signIn(tier: .tier1)
        let code = try TOTP(secret: first.totpSecret).code(at: service.clock.now().addingTimeInterval(30))
        let again = try service.client().request(
            "POST", "/api/v1/session", headers: [("Content-Type", "application/json")],
            json: ["email": first.email, "password": first.password, "totp": code])
        #expect(again.status == 201)
        let cookie = try #require(again.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        #expect(cookie != first.cookie)
        #expect(try again.decode(SessionView.self).csrfToken != first.csrfToken)
    }

    @Test func sessionsExpireAfterThirtyIdleMinutesAndTwelveHoursInAll() throws {
        let service = try TestService()
        defer { service.stop() }
        let client = service.client()
        let idle = try service.signIn(tier: .tier1)
        service.clock.advance(by: 29 * 60)
        #expect(try client.request("GET", "/api/v1/session", headers: [("Cookie", idle.cookie)]).status == 200)
        // That request moved the idle clock: 29 more minutes are still fine, 31 are not.
        service.clock.advance(by: 29 * 60)
        #expect(try client.request("GET", "/api/v1/session", headers: [("Cookie", idle.cookie)]).status == 200)
        service.clock.advance(by: 31 * 60)
        #expect(try client.request("GET", "/api/v1/session", headers: [("Cookie", idle.cookie)]).status == 401)

        let busy = try service.signIn(tier: .tier1)
        for _ in 0..<24 {
            service.clock.advance(by: 29 * 60)
            _ = try client.request("GET", "/api/v1/session", headers: [("Cookie", busy.cookie)])
        }
        // 24 × 29 min = 11 h 36 min: still alive; past 12 h it ends however active.
        #expect(try client.request("GET", "/api/v1/session", headers: [("Cookie", busy.cookie)]).status == 200)
        service.clock.advance(by: 25 * 60)
        #expect(try client.request("GET", "/api/v1/session", headers: [("Cookie", busy.cookie)]).status == 401)
    }

    @Test func garbageCookiesAndNoCookieAreUnauthenticated() throws {
        let service = try TestService()
        defer { service.stop() }
        let client = service.client()
        #expect(try client.request("GET", "/api/v1/session").status == 401)
        #expect(try client.request("GET", "/api/v1/session", headers: [("Cookie", "__Host-reclaim_session=forged")]).status == 401)
        // Public routes are not disturbed by a dead cookie.
        #expect(try client.request("GET", "/healthz", headers: [("Cookie", "__Host-reclaim_session=forged")]).status == 200)
    }

    @Test func aTier1AgentCannotTakeATier2Action() throws {
        let service = try TestService()
        defer { service.stop() }
        let tier1 = try service.signIn(tier: .tier1)
        let tier2 = try service.signIn(tier: .tier2)
        // The permissions the dashboard sees come from the same table authorize() reads.
        let shown = try service.client().request("GET", "/api/v1/session", headers: [("Cookie", tier1.cookie)]).decode(SessionView.self).permissions
        #expect(shown.contains("case.freeze") == false)

        let context = service.service.context
        func request(_ cookie: String) throws -> HTTPRequest {
            // Resolve the principal exactly as the middleware does for a real request.
            let request = HTTPRequest(
                method: .POST, target: "/api/v1/cases/000000000000/actions/freeze", route: "/api/v1/cases/{case_number}/actions/freeze")
            let token = String(cookie.dropFirst("__Host-reclaim_session=".count))
            request.principal = try AuthMiddleware(context: context).resolveSession(token).map(Principal.agent)
            return request
        }
        #expect(throws: Problem.self) { try context.authorize(.freezeCase, try request(tier1.cookie)) }
        do {
            try context.authorize(.freezeCase, try request(tier1.cookie))
        } catch let problem as Problem {
            #expect(problem.status == 403 && problem.code == "forbidden")
        }
        #expect(try context.authorize(.freezeCase, try request(tier2.cookie)).tier == .tier2)
        let denial = try #require(service.log.lines.first { $0.contains("\"access_denied\"") })
        #expect(denial.contains("agent:\(tier1.agentID.uuidString.lowercased())"))
        #expect(denial.contains("case.freeze"))
        #expect(!denial.contains(tier1.cookie.dropFirst("__Host-reclaim_session=".count)))
        // Without credentials: 401, not 403.
        do {
            try context.authorize(.freezeCase, HTTPRequest(method: .POST, target: "/x"))
            Issue.record("expected 401")
        } catch let problem as Problem {
            #expect(problem.status == 401)
        }
    }

    @Test func thePermissionTableFollowsTheTiers() {
        let agent = { (tier: Tier, admin: Bool) in
            Principal.agent(AgentIdentity(id: UUID(), name: "n", email: "e@x.test", tier: tier, isAdmin: admin, sessionID: UUID()))
        }
        #expect(!PermissionTable.allows(.freezeCase, agent(.tier1, false)))
        #expect(PermissionTable.allows(.freezeCase, agent(.tier2, false)))
        #expect(PermissionTable.allows(.freezeCase, agent(.engineering, false)))
        #expect(!PermissionTable.allows(.readEvidenceContent, agent(.tier2, false)))
        #expect(PermissionTable.allows(.readEvidenceContent, agent(.tier3, false)))
        #expect(!PermissionTable.allows(.createAccount, agent(.engineering, false)))
        #expect(PermissionTable.allows(.createAccount, agent(.tier1, true)))
        let client = Principal.apiClient(ClientIdentity(id: UUID(), name: "c"))
        #expect(PermissionTable.allows(.createCase, client) && PermissionTable.allows(.fileEvidence, client))
        #expect(!PermissionTable.allows(.listCases, client))
        var generator = SystemRandomNumberGenerator()
        let customer = Principal.customer(CaseNumber.generate(using: &generator))
        #expect(!PermissionTable.allows(.readCase, customer))
        #expect(PermissionTable.allows(.readStatus, customer))
    }
}
