import Foundation
import Testing

@testable import ReclaimCore

@Suite struct VerificationTests {
    /// Evidence that produces `outcome` for `factor`, mixed with rejected items that must not count.
    static func evidence(_ factor: Factor, _ outcome: FactorOutcome) -> [FactorEvidence] {
        switch outcome {
        case .matched:
            [FactorEvidence(factor: factor, matched: false, status: .pending), FactorEvidence(factor: factor, matched: true, status: .pending)]
        case .mismatched:
            [FactorEvidence(factor: factor, matched: true, status: .rejected), FactorEvidence(factor: factor, matched: false, status: .accepted)]
        case .missing: [FactorEvidence(factor: factor, matched: true, status: .rejected)]
        }
    }

    @Test func allTwentySevenCombinations() {
        var seen = 0
        for answer in FactorOutcome.allCases {
            for card in FactorOutcome.allCases {
                for device in FactorOutcome.allCases {
                    let items = Self.evidence(.securityAnswer, answer) + Self.evidence(.card, card) + Self.evidence(.device, device)
                    let outcome = VerificationPolicy.evaluate(items)
                    #expect(outcome.factors == [.securityAnswer: answer, .card: card, .device: device])
                    let matches = [answer, card, device].filter { $0 == .matched }.count
                    #expect(outcome.verified == (matches >= 2), "\(answer) \(card) \(device)")
                    // The order evidence was filed in does not matter.
                    #expect(VerificationPolicy.evaluate(items.reversed()) == outcome)
                    seen += 1
                }
            }
        }
        #expect(seen == 27)
    }

    @Test func evidenceRules() {
        #expect(VerificationPolicy.evaluate([]).factors == [.securityAnswer: .missing, .card: .missing, .device: .missing])
        #expect(VerificationPolicy.evaluate([FactorEvidence(factor: .card, matched: true, status: .rejected)])[.card] == .missing)
        #expect(VerificationPolicy.evaluate([FactorEvidence(factor: .card, matched: false, status: .pending)])[.card] == .mismatched)
        #expect(
            VerificationPolicy.evaluate([
                FactorEvidence(factor: .card, matched: true, status: .accepted), FactorEvidence(factor: .card, matched: false, status: .accepted),
            ])[.card] == .matched)
        let outcome = VerificationPolicy.evaluate([
            FactorEvidence(factor: .device, matched: true, status: .pending),
            FactorEvidence(factor: .securityAnswer, matched: true, status: .accepted),
        ])
        #expect(outcome.verified && outcome.matchedFactors == [.securityAnswer, .device])
    }

    @Test func jsonShapeMatchesTheAPI() throws {
        let outcome = VerificationOutcome(factors: [.securityAnswer: .matched, .card: .mismatched])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(outcome), as: UTF8.self)
        #expect(text == #"{"factors":{"card":"mismatched","device":"missing","security_answer":"matched"},"verified":false}"#)
        // `verified` is recomputed from the factors, never trusted.
        let forged = #"{"factors":{"card":"mismatched","device":"missing","security_answer":"matched"},"verified":true}"#
        #expect(try JSONDecoder().decode(VerificationOutcome.self, from: Data(forged.utf8)) == outcome)
    }
}
