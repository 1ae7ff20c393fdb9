import Foundation
import Testing

@testable import ReclaimCore

/// The transition table of api.md, copied verbatim: the code's table is generated and compared with it. v1.2 adds
/// `document_review` to `request_documents` ("tier 3 may also `request_documents` from `document_review`": the case's
/// tier, tier 3, is what holds it there).
private let apiTable = """
    | `send_reset` | `new`, `identity_check` | `resolved` (every on-file security answer matched; a reset goes to the verified primary address) | tier1+ |
    | `escalate` | `new` | `identity_check` | tier1+ |
    | `verify` | `identity_check` | `engineering` (2 of 3 factors matched) | tier2+ |
    | `request_documents` | `new`, `identity_check`, `document_review` | `awaiting_documents` | tier2+ |
    | `begin_review` | `awaiting_documents` | `document_review` | tier3+ |
    | `approve` | `document_review` | `engineering` | tier3+ |
    | `reject` | `document_review` | `rejected` | tier3+ |
    | `complete` | `engineering` | `resolved` (needs `"unlock"`: `remove_rescue_email` / `reset_security_questions` / `remove_activation_lock`) | engineering |
    | `reopen` | `resolved`, `rejected` | `identity_check` | tier2+ |
    | `close` | `resolved`, `rejected` | `closed` | tier1+ |
    """

private struct Row: Equatable, CustomStringConvertible {
    var action: String, from: [String], to: String, minimum: String
    var description: String { "\(action): \(from) → \(to), \(minimum)+" }
}

// Words in backticks of one cell.
private func ticked(_ cell: Substring) -> [String] {
    cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
}

private func parseAPITable() -> [Row] {
    apiTable.split(separator: "\n").map { line in
        let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces)[...] }
        return Row(
            action: ticked(cells[0])[0], from: ticked(cells[1]), to: ticked(cells[2])[0],
            minimum: cells[3].replacingOccurrences(of: "+", with: ""))
    }
}

/// A context that satisfies every action-specific rule, so only state and tier decide.
let permissiveContext = TransitionContext(
    allOnFileAnswersMatched: true,
    verification: VerificationOutcome(factors: [.securityAnswer: .matched, .card: .matched]),
    unlock: .removeRescueEmail,
    reason: "customer called",
    documents: [
        .init(kind: .invoice, status: .accepted), .init(kind: .imeiPhoto, status: .accepted), .init(kind: .lockScreenPhoto, status: .accepted),
    ], unlocksDone: Set(UnlockKind.allCases))

/// A standing in which every security answer on file matched, so `send_reset` is offered where the table allows it.
let answersMatched = CaseStanding(answers: AnswerProgress(onFile: 2, matched: 2))

@Suite struct WorkflowTableTests {
    let workflow = Workflow()
    let now = utc(2026, 3, 1, 9)

    @Test func generatedTableEqualsAPITable() {
        let generated = Workflow.rules.map {
            Row(action: $0.action.rawValue, from: $0.from.map(\.rawValue), to: $0.to.rawValue, minimum: $0.minimumTier.rawValue)
        }
        #expect(generated == parseAPITable())
        #expect(Set(Workflow.rules.map(\.action)) == Set(CaseAction.allCases))
    }

    /// Every action × state × case tier × actor tier (and API clients): allowed_actions and decide agree with api.md's table.
    @Test func everyActionStateTierCombination() {
        let table = Dictionary(uniqueKeysWithValues: parseAPITable().map { ($0.action, $0) })
        var combinations = 0
        for state in CaseState.allCases {
            // Open states are held by their tier; finished ones keep whichever tier held them last.
            let caseTiers = state.tier.map { [$0] } ?? Tier.allCases
            for caseTier in caseTiers {
                let snapshot = CaseSnapshot(
                    kind: .accountTakeover, state: state, tier: caseTier, path: .undetermined, facts: CaseFacts(), clock: .opened(at: now))
                #expect(workflow.allowedActions(for: snapshot, standing: answersMatched, actorTier: nil).isEmpty)
                for actor in Tier.allCases {
                    var expected = [CaseAction]()
                    for action in CaseAction.allCases {
                        let row = table[action.rawValue]!
                        let minimum = Tier(rawValue: row.minimum)!
                        let allowed = row.from.contains(state.rawValue) && actor >= minimum && (!state.isOpen || actor >= caseTier)
                        if allowed { expected.append(action) }
                        switch workflow.decide(action, on: snapshot, actorTier: actor, context: permissiveContext, now: now) {
                        case .success(let decision):
                            #expect(allowed, "\(actor) \(action) on \(state)/\(caseTier) should be refused")
                            #expect(decision.after.state.rawValue == row.to)
                            #expect(decision.after.tier == (decision.after.state.tier ?? caseTier))
                            #expect(decision.before == snapshot)
                        case .failure(let refusal):
                            #expect(!allowed, "\(actor) \(action) on \(state)/\(caseTier) refused: \(refusal)")
                            switch refusal {
                            case .invalidTransition, .insufficientTier: break
                            default: Issue.record("\(actor) \(action) on \(state)/\(caseTier) refused for another reason: \(refusal)")
                            }
                        }
                        combinations += 1
                    }
                    #expect(
                        workflow.allowedActions(for: snapshot, standing: answersMatched, actorTier: actor) == expected,
                        "\(actor) on \(state)/\(caseTier)")
                }
            }
        }
        #expect(combinations == (5 + 4 * 4) * 4 * 10)  // five open states; resolved, rejected, closed and merged at any last tier
    }

    @Test func refusalOrderActionTierThenStateThenCaseTier() {
        let engineeringCase = CaseSnapshot(
            kind: .accountTakeover, state: .engineering, tier: .engineering, path: .verifiedIdentity, facts: CaseFacts(), clock: .opened(at: now))
        // tier1 can never complete: the action's tier is reported first.
        #expect(
            workflow.decide(.complete, on: engineeringCase, actorTier: .tier1, context: permissiveContext, now: now)
                == .failure(.insufficientTier(required: .engineering)))
        // tier3 may approve in general, but not from engineering.
        #expect(
            workflow.decide(.approve, on: engineeringCase, actorTier: .tier3, context: permissiveContext, now: now)
                == .failure(.invalidTransition(from: .engineering, action: .approve)))
        // tier1 may send resets, but not on a case tier 2 holds.
        let identityCase = CaseSnapshot(
            kind: .accountTakeover, state: .identityCheck, tier: .tier2, path: .undetermined, facts: CaseFacts(), clock: .opened(at: now))
        #expect(
            workflow.decide(.sendReset, on: identityCase, actorTier: .tier1, context: permissiveContext, now: now)
                == .failure(.insufficientTier(required: .tier2)))
        #expect(workflow.allowedActions(for: identityCase, standing: answersMatched, actorTier: .tier1) == [])
        #expect(workflow.allowedActions(for: identityCase, standing: answersMatched, actorTier: .tier2) == [.sendReset, .verify, .requestDocuments])
    }

    @Test func tierComparison() {
        #expect(Tier.allCases.sorted() == [.tier1, .tier2, .tier3, .engineering])
        #expect(Tier.tier2.isAtLeast(.tier1) && Tier.tier2.isAtLeast(.tier2) && !Tier.tier2.isAtLeast(.tier3))
        #expect(Tier.engineering.isAtLeast(.tier3))
        #expect(Tier(rawValue: "engineering") == .engineering && Tier.tier1.rawValue == "tier1")
    }
}
