import Testing

@testable import ReclaimCore

/// Which administrative changes wait for a second admin (api.md v1.3, "Two people means two people"), as a table.
@Suite struct SecondAdminRuleTests {
    typealias Change = SecondAdminRule.AgentChange

    static let rows: [(SecondAdminRule.Action, proposedWithOtherAdmins: Bool, String)] = [
        (.addAgent, true, "a new agent: its creator holds its password and TOTP"),
        (.resetPassword(ofSelf: false), true, "another agent's password"),
        (.resetTOTP(ofSelf: false), true, "another agent's TOTP"),
        (.resetPassword(ofSelf: true), false, "one's own password"),
        (.resetTOTP(ofSelf: true), false, "one's own TOTP"),
        (.change(Change(tier: (.tier1, .tier3))), true, "a higher tier"),
        (.change(Change(tier: (.tier2, .engineering))), true, "engineering is above tier 3"),
        (.change(Change(tier: (.tier3, .tier1))), false, "a lower tier takes power away"),
        (.change(Change(tier: (.tier2, .tier2))), false, "the same tier"),
        (.change(Change(admin: (false, true))), true, "admin granted"),
        (.change(Change(admin: (true, false))), true, "admin taken from another admin: the way to being alone"),
        (.change(Change(admin: (true, true))), false, "admin kept"),
        (.change(Change(passkeyRequired: (true, false))), true, "a passkey requirement lifted: password and TOTP sign in again"),
        (.change(Change(passkeyRequired: (false, true))), false, "a passkey required"),
        (.change(Change()), false, "active only: deactivating takes power away"),
        (.change(Change(tier: (.tier3, .tier1), admin: (false, true))), true, "any part that gives power makes all of it wait"),
    ]

    @Test func whileAnotherAdminExistsThePowerfulChangesWait() {
        for (action, proposed, why) in Self.rows {
            #expect(SecondAdminRule.needsConfirmation(action, otherAdmins: 1) == proposed, "\(why)")
            #expect(SecondAdminRule.needsConfirmation(action, otherAdmins: 3) == proposed, "\(why), three others")
        }
    }

    @Test func aLoneAdminActsAlone() {
        for (action, _, why) in Self.rows {
            #expect(!SecondAdminRule.needsConfirmation(action, otherAdmins: 0), "\(why), alone")
        }
    }

    @Test func theWordsAreTheAPIs() {
        #expect(AdminProposalStatus.allCases.map(\.rawValue) == ["pending", "confirmed", "expired", "withdrawn"])
        #expect(AdminProposalKind.allCases.map(\.rawValue) == ["agent_add", "agent_change", "password_reset", "totp_reset"])
    }
}
