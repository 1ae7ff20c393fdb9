import Foundation
import ReclaimCore
import Testing

/// The rules of the call codes (api.md v1.3 "The call, verified both ways"), as a table.
struct CallCodesTests {
    @Test func aCodeIsShownTenMinutesAndThePreviousIsAcceptedOneMoreMinute() {
        let start = Date(timeIntervalSince1970: 600 * 3_000_000)
        let step = CallCodes.step(at: start)
        #expect(CallCodes.validUntil(at: start) == start.addingTimeInterval(600))
        #expect(CallCodes.acceptedSteps(at: start) == [step, step - 1])
        #expect(CallCodes.acceptedSteps(at: start.addingTimeInterval(59.9)) == [step, step - 1])
        #expect(CallCodes.acceptedSteps(at: start.addingTimeInterval(60)) == [step])
        #expect(CallCodes.acceptedSteps(at: start.addingTimeInterval(599)) == [step])
        #expect(CallCodes.step(at: start.addingTimeInterval(600)) == step + 1)
    }

    @Test func typedCodesAreSixDigitsWhateverTheSpacing() {
        for (typed, digits) in [
            ("482109", "482109"), ("482 109", "482109"), ("482-109", "482109"), (" 48 21 09 ", "482109"), ("４８２１０９", "482109"),
            ("48210", nil), ("4821090", nil), ("48210a", nil), ("", nil), (String(repeating: "1", count: 100), nil),
        ] as [(String, String?)] {
            #expect(CallCodes.normalize(typed) == digits, "\(typed)")
        }
    }

    @Test func theGateNeedsAVerificationInForceAndTier2OnACaseAtRisk() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let live = now.addingTimeInterval(1)
        let over = now
        for (until, risk, tier, refusal) in [
            (live, false, Tier.tier1, nil), (over, false, .tier1, .notVerified), (nil, false, .tier3, .notVerified),
            (live, true, .tier1, .needsTier(.tier2)), (nil, true, .tier1, .needsTier(.tier2)), (live, true, .tier2, nil),
            (nil, true, .tier2, CallCodes.Refusal.notVerified),
        ] as [(Date?, Bool, Tier, CallCodes.Refusal?)] {
            #expect(
                CallCodes.gate(verifiedUntil: until, now: now, atRisk: risk, actorTier: tier) == refusal,
                "\(String(describing: until)) \(risk) \(tier)")
        }
    }
}
