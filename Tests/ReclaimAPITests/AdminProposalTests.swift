import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

/// Two people means two people (api.md v1.3), from the thief's side: one admin who makes an agent, or resets another
/// agent's password and TOTP, must not hold a second pair of eyes alone. While another admin exists those changes are
/// proposals (202) that a different admin confirms; until then nothing signs in with what was proposed.
extension AdminTests {
    /// Two admins, A and B (the setup's path: the command line's, which acts at once).
    func twoAdmins(_ service: TestService) throws -> (AgentSession, AgentSession) {
        (try service.signIn(tier: .tier1, admin: true), try service.signIn(tier: .tier1, admin: true))
    }

    func confirm(_ service: TestService, _ proposal: [String: Any], as admin: AgentSession) throws -> TestHTTPResponse {
        try send(service, "POST", "/api/v1/admin/proposals/\(try #require(proposal["id"] as? String))/confirm", admin)
    }

    func code(_ response: TestHTTPResponse) throws -> String? { try response.json()["code"] as? String }

    @Test func anAgentOneAdminCreatesCannotSignInUntilADifferentAdminConfirms() throws {
        let service = try TestService()
        defer { service.stop() }
        let (a, b) = try twoAdmins(service)
        // A makes a puppet to be a case's second pair of eyes: only a proposal, with half of its credentials.
        let asked = try send(service, "POST", "/api/v1/admin/agents", a, json: ["email": "puppet@reclaim.test", "name": "Puppet", "tier": "tier3"])
        try #require(asked.status == 202, "\(asked.text)")
        let proposal = try asked.json()
        #expect(proposal["kind"] as? String == "agent_add" && proposal["status"] as? String == "pending")
        #expect(proposal["proposed_by"] as? String == "agent:\(a.agentID.uuidString.lowercased())")
        #expect((proposal["target"] as? [String: Any])?["email"] as? String == "puppet@reclaim.test")
        #expect(proposal["totp_uri"] == nil)
        let password = try #require(proposal["password"] as? String)
        let proposedAt = try #require(Timestamp.parse(proposal["proposed_at"] as? String ?? ""))
        let expiresAt = try #require(Timestamp.parse(proposal["expires_at"] as? String ?? ""))
        #expect(expiresAt.timeIntervalSince(proposedAt) == 72 * 3600)
        // No agent exists yet: the password signs nothing in, whatever the code.
        #expect(try signIn(service, email: "puppet@reclaim.test", password: password, secret: TOTP.generateSecret()).status == 401)
        let connection = try PostgresConnection(connectionString: service.database.connectionString)
        defer { connection.close() }
        #expect(try connection.query("SELECT 1 FROM agents WHERE email = 'puppet@reclaim.test'").isEmpty)

        // A may not confirm their own proposal; the list shows who proposed what, and that neither admin is alone.
        let own = try confirm(service, proposal, as: a)
        #expect(own.status == 409)
        #expect(try code(own) == "same_admin")
        let list = try send(service, "GET", "/api/v1/admin/proposals", b)
        try #require(list.status == 200, "\(list.text)")
        let listed = try list.json()
        #expect(listed["alone"] as? Bool == false)
        let item = try #require((listed["items"] as? [[String: Any]])?.first)
        #expect(item["id"] as? String == proposal["id"] as? String && item["proposed_by"] as? String == proposal["proposed_by"] as? String)
        #expect((listed["actors"] as? [String: String])?["agent:\(a.agentID.uuidString.lowercased())"] != nil)
        #expect(!list.text.contains(password))

        // B confirms: the agent exists now, and B (only B) is shown its TOTP URI.
        let confirmed = try confirm(service, proposal, as: b)
        try #require(confirmed.status == 200, "\(confirmed.text)")
        #expect(confirmed.header("Cache-Control") == "no-store")
        let body = try confirmed.json()
        #expect((body["proposal"] as? [String: Any])?["status"] as? String == "confirmed")
        let result = try #require(body["result"] as? [String: Any])
        #expect(result["password"] == nil && result["tier"] as? String == "tier3")
        let secret = try totpSecret(try #require(result["totp_uri"] as? String))
        #expect(try signIn(service, email: "puppet@reclaim.test", password: password, secret: secret).status == 201)
        // Confirmed once: a second confirmation is refused.
        #expect(try code(try confirm(service, proposal, as: b)) == "proposal_closed")

        // Each step is on the admin log: proposed by A, the agent added by B naming the proposal, confirmed by B.
        let events = try auditTypes(service, a).suffix(3)
        #expect(events.compactMap { $0["type"] as? String } == ["proposal_made", "agent_added", "proposal_confirmed"])
        #expect(
            events.compactMap { $0["actor"] as? String } == ["agent:\(a.agentID.uuidString.lowercased())"]
                + Array(repeating: "agent:\(b.agentID.uuidString.lowercased())", count: 2))
        #expect((events.dropFirst().first?["data"] as? [String: Any])?["proposal_id"] as? String == proposal["id"] as? String)
        #expect(!String(describing: events).contains(password))
        #expect(!service.log.lines.joined().contains(password))
    }

    @Test func anotherAgentsPasswordAndTOTPResetsWaitForADifferentAdmin() throws {
        let service = try TestService()
        defer { service.stop() }
        let (a, b) = try twoAdmins(service)
        let victim = try service.signIn(tier: .tier3)
        let id = victim.agentID.uuidString.lowercased()

        // A resets the victim's password: a proposal; nothing changes, her session lives, her password still works.
        let asked = try send(service, "POST", "/api/v1/admin/agents/\(id)/reset-password", a)
        try #require(asked.status == 202, "\(asked.text)")
        let proposal = try asked.json()
        #expect(proposal["kind"] as? String == "password_reset" && proposal["password"] == nil)
        #expect(try service.client().request("GET", "/api/v1/session", headers: victim.headers).status == 200)
        service.clock.advance(by: 30)
        #expect(try signIn(service, email: victim.email, password: victim.password, secret: victim.totpSecret).status == 201)
        #expect(try code(try confirm(service, proposal, as: a)) == "same_admin")

        // B confirms and alone is shown the new password; the old one stops, her sessions end.
        let confirmed = try confirm(service, proposal, as: b)
        try #require(confirmed.status == 200, "\(confirmed.text)")
        let password = try #require((try confirmed.json()["result"] as? [String: Any])?["password"] as? String)
        #expect(try service.client().request("GET", "/api/v1/session", headers: victim.headers).status == 401)
        service.clock.advance(by: 30)
        #expect(try signIn(service, email: victim.email, password: victim.password, secret: victim.totpSecret).status == 401)
        service.clock.advance(by: 30)
        #expect(try signIn(service, email: victim.email, password: password, secret: victim.totpSecret).status == 201)

        // The TOTP the same way: proposed by A (the old seed still works), confirmed by B, who is shown the new one.
        let totp = try send(service, "POST", "/api/v1/admin/agents/\(id)/reset-totp", a)
        try #require(totp.status == 202, "\(totp.text)")
        #expect(try totp.json()["totp_uri"] == nil)
        service.clock.advance(by: 30)
        #expect(try signIn(service, email: victim.email, password: password, secret: victim.totpSecret).status == 201)
        let totpConfirmed = try confirm(service, try totp.json(), as: b)
        try #require(totpConfirmed.status == 200, "\(totpConfirmed.text)")
        let secret = try totpSecret(try #require((try totpConfirmed.json()["result"] as? [String: Any])?["totp_uri"] as? String))
        service.clock.advance(by: 30)
        #expect(try signIn(service, email: victim.email, password: password, secret: victim.totpSecret).status == 401)
        service.clock.advance(by: 30)
        #expect(try signIn(service, email: victim.email, password: password, secret: secret).status == 201)

        // An admin's own password is theirs to reset alone.
        let mine = try send(service, "POST", "/api/v1/admin/agents/\(a.agentID.uuidString.lowercased())/reset-password", a)
        #expect(mine.status == 200)
        let types = try auditTypes(service, b).compactMap { $0["type"] as? String }
        #expect(
            types.suffix(7) == [
                "proposal_made", "password_reset", "proposal_confirmed", "proposal_made", "totp_reset", "proposal_confirmed", "password_reset",
            ])
    }

    @Test func raisingATierOrGrantingAdminWaitsAndTheOtherAdminCannotBeRemovedAlone() throws {
        let service = try TestService()
        defer { service.stop() }
        let (a, b) = try twoAdmins(service)
        let agent = try service.signIn(tier: .tier2)
        let id = agent.agentID.uuidString.lowercased()
        func tierAndAdmin() throws -> (String?, Bool?) {
            let me = try service.client().request("GET", "/api/v1/session", headers: agent.headers)
            let json = try me.json()["agent"] as? [String: Any]
            return (json?["tier"] as? String, try send(service, "GET", "/api/v1/admin/agents", agent).status == 200)
        }

        let raise = try send(service, "PATCH", "/api/v1/admin/agents/\(id)", a, json: ["tier": "tier3"])
        try #require(raise.status == 202, "\(raise.text)")
        #expect(try raise.json()["change"] as? [String: String] == ["tier": "tier3"])
        let grant = try send(service, "PATCH", "/api/v1/admin/agents/\(id)", a, json: ["admin": true])
        try #require(grant.status == 202, "\(grant.text)")
        #expect(try tierAndAdmin() == ("tier2", false))
        // Taking power away acts at once.
        let lower = try send(service, "PATCH", "/api/v1/admin/agents/\(id)", a, json: ["tier": "tier1"])
        #expect(lower.status == 200)
        #expect(try tierAndAdmin() == ("tier1", false))
        #expect(try code(try confirm(service, try grant.json(), as: a)) == "same_admin")

        #expect(try confirm(service, try raise.json(), as: b).status == 200)
        #expect(try confirm(service, try grant.json(), as: b).status == 200)
        #expect(try tierAndAdmin() == ("tier3", true))

        // A cannot make themselves alone: taking admin from B is proposed; deactivating B acts, but B still counts.
        let bID = b.agentID.uuidString.lowercased()
        let demote = try send(service, "PATCH", "/api/v1/admin/agents/\(bID)", a, json: ["admin": false])
        #expect(demote.status == 202)
        #expect(try send(service, "PATCH", "/api/v1/admin/agents/\(bID)", a, json: ["active": false]).status == 200)
        let list = try send(service, "GET", "/api/v1/admin/proposals", a)
        #expect(try list.json()["alone"] as? Bool == false)
        #expect(try send(service, "POST", "/api/v1/admin/agents", a, json: ["email": "p@reclaim.test", "name": "P", "tier": "tier3"]).status == 202)
    }

    @Test func aProposalExpiresWithdrawsAndDiesWithItsProposersAdministration() throws {
        let service = try TestService()
        defer { service.stop() }
        let (a, b) = try twoAdmins(service)
        let c = try service.signIn(tier: .tier1, admin: true)
        let connection = try PostgresConnection(connectionString: service.database.connectionString)
        defer { connection.close() }

        // Expired: its time moved to the past rather than waited for (RECLAIM_PROPOSAL_HOURS, 72 by default).
        let stale = try send(service, "POST", "/api/v1/admin/agents", a, json: ["email": "late@reclaim.test", "name": "Late", "tier": "tier1"])
        try #require(stale.status == 202, "\(stale.text)")
        let staleID = try #require(try stale.json()["id"] as? String)
        try connection.execute("UPDATE admin_proposals SET expires_at = proposed_at + interval '1 second' WHERE id = \(UUID(uuidString: staleID)!)")
        service.clock.advance(by: 2)
        let late = try confirm(service, try stale.json(), as: b)
        #expect(late.status == 409)
        #expect(try code(late) == "proposal_expired")
        #expect(try code(try confirm(service, try stale.json(), as: c)) == "proposal_expired")
        #expect(try connection.query("SELECT 1 FROM agents WHERE email = 'late@reclaim.test'").isEmpty)
        #expect(try connection.query("SELECT password_hash FROM admin_proposals WHERE status = 'expired' AND password_hash IS NULL").count == 1)
        let expiry = try #require(try auditTypes(service, b).last { $0["type"] as? String == "proposal_expired" })
        #expect(expiry["actor"] as? String == "system")
        let items = try #require(try send(service, "GET", "/api/v1/admin/proposals", b).json()["items"] as? [[String: Any]])
        #expect(items.first { $0["id"] as? String == staleID }?["status"] as? String == "expired")

        // Withdrawn: by its proposer; then no one confirms it.
        let second = try send(service, "POST", "/api/v1/admin/agents", a, json: ["email": "never@reclaim.test", "name": "Never", "tier": "tier1"])
        let secondID = try #require(try second.json()["id"] as? String)
        let withdrawn = try send(service, "POST", "/api/v1/admin/proposals/\(secondID)/withdraw", a)
        #expect(withdrawn.status == 200)
        #expect(try withdrawn.json()["status"] as? String == "withdrawn")
        #expect(try code(try confirm(service, try second.json(), as: b)) == "proposal_closed")

        // A thief admin's proposal does not outlive their administration: once A is disabled, C cannot confirm it.
        let third = try send(service, "POST", "/api/v1/admin/agents", a, json: ["email": "puppet2@reclaim.test", "name": "P", "tier": "tier3"])
        #expect(try send(service, "PATCH", "/api/v1/admin/agents/\(a.agentID.uuidString.lowercased())", b, json: ["active": false]).status == 200)
        #expect(try code(try confirm(service, try third.json(), as: c)) == "proposal_closed")
        #expect(try send(service, "POST", "/api/v1/admin/proposals/\(UUID().uuidString)/confirm", c).status == 404)
        #expect(try connection.query("SELECT 1 FROM agents WHERE email LIKE 'puppet2%'").isEmpty)
        let types = try auditTypes(service, b).compactMap { $0["type"] as? String }
        #expect(types.contains("proposal_withdrawn") && types.filter { $0 == "proposal_made" }.count == 3)
    }

    @Test func aLoneAdminActsAloneAndIsToldSo() throws {
        let service = try TestService()
        defer { service.stop() }
        let admin = try service.signIn(tier: .tier1, admin: true)
        let agent = try service.signIn(tier: .tier1)
        let list = try send(service, "GET", "/api/v1/admin/proposals", admin)
        try #require(list.status == 200, "\(list.text)")
        #expect(try list.json()["alone"] as? Bool == true)
        #expect(
            try send(service, "PATCH", "/api/v1/admin/agents/\(agent.agentID.uuidString.lowercased())", admin, json: ["admin": true]).status == 200)
        // Now two admins: the next one waits.
        #expect(try send(service, "GET", "/api/v1/admin/proposals", admin).json()["alone"] as? Bool == false)
        #expect(
            try send(service, "POST", "/api/v1/admin/agents", admin, json: ["email": "x@reclaim.test", "name": "X", "tier": "tier1"]).status == 202)
    }
}
