import ReclaimCore
import Testing

/// The four-eyes rule and the signals' details, as tables.
@Suite struct FourEyesTests {
    @Test(
        arguments: [
            // uncleared, clearers, actor → refusal
            ([RiskSignal](), Set<String>(), "agent:a", FourEyes.Refusal?.none),
            ([.flagged], [], "agent:a", .riskUncleared([.flagged])),
            ([.flagged, .deviceClaimedElsewhere, .flagged], ["agent:a"], "agent:b", .riskUncleared([.deviceClaimedElsewhere, .flagged])),
            ([], ["agent:a"], "agent:a", .clearedBySameAgent),
            ([], ["agent:a"], "agent:b", nil),
            ([], ["agent:a", "agent:b"], "agent:b", .clearedBySameAgent),
        ] as [([RiskSignal], Set<String>, String, FourEyes.Refusal?)])
    func rule(uncleared: [RiskSignal], clearers: Set<String>, actor: String, expected: FourEyes.Refusal?) {
        #expect(FourEyes.check(actor: actor, uncleared: uncleared, clearers: clearers) == expected)
    }

    @Test func detailsNameTheOtherCasesInOrder() {
        #expect(
            FourEyes.detail(.deviceClaimedElsewhere, otherCases: ["200000000002", "100000000001"])
                == "A device of this case is also claimed on cases 100000000001, 200000000002, of another account.")
        #expect(
            FourEyes.detail(.deviceClaimedElsewhere, otherCases: [], onFileElsewhere: true) == "A device of this case is on file for another account."
        )
        #expect(
            FourEyes.detail(.documentReused, otherCases: ["100000000001"])
                == "A document of this case is the same file as one on case 100000000001, of another account.")
    }

    @Test func theWordsAreTheContractsAndOnlyTier3AndEngineeringClear() {
        #expect(
            RiskSignal.allCases.map(\.rawValue) == [
                "device_claimed_elsewhere", "document_reused", "mail_from_rescue_address", "repudiated", "flagged", "parallel_case",
                "contact_changed", "caller_code_guessed",
            ])
        #expect(Tier.allCases.filter { $0.isAtLeast(FourEyes.clearMinimumTier) } == [.tier3, .engineering])
        #expect(Tier.allCases.allSatisfy { $0.isAtLeast(FourEyes.flagMinimumTier) })
    }
}
