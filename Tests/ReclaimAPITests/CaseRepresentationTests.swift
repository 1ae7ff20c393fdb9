import Foundation
import ReclaimCore
import ReclaimStore
import Testing

@testable import ReclaimAPI

/// The directly written case representation is byte for byte the canonical form of the JSONValue one.
@Suite struct CaseRepresentationTests {
    func record(assignee: Bool, devices: [CaseDevice], summary: String, state: CaseState, facts: CaseFacts) -> CaseRecord {
        let now = Timestamp.truncated(Date())
        let snapshot = CaseSnapshot(
            kind: facts.twoStepEnabled ? .activationLock : .accountTakeover, state: state, tier: state.tier ?? .tier2,
            path: .undetermined, facts: facts, clock: .opened(at: now))
        return CaseRecord(
            id: UUID(), number: "482109375512", accessCodeHash: [], accessCodeKeyID: "k", snapshot: snapshot,
            dueAt: state.isOpen ? now.addingTimeInterval(3600) : nil, accountEmail: "Ünï@example.com", customerName: "A \"quoted\" name\n",
            customerContactEmail: "c@example.net", devices: devices, summary: summary,
            assigneeID: assignee ? UUID() : nil, assigneeName: assignee ? "Agent \\ X" : nil, assigneeTier: assignee ? .tier2 : nil,
            frozen: assignee, createdAt: now, updatedAt: now.addingTimeInterval(1), version: 7)
    }

    @Test func writtenEqualsCanonical() {
        let workflow = Workflow()
        let samples = [
            record(assignee: false, devices: [], summary: "", state: .new, facts: CaseFacts()),
            record(
                assignee: true,
                devices: [
                    CaseDevice(serial: "C02XK1ZJH3QD", imei: nil, model: "Phone 🙂"), CaseDevice(serial: nil, imei: "490154203237518", model: nil),
                ],
                summary: "tab\tcontrol\u{01}", state: .identityCheck, facts: CaseFacts(rescueEmailAdded: true, twoStepEnabled: true)),
            record(assignee: true, devices: [], summary: "done", state: .resolved, facts: CaseFacts(lostModeEnabled: true)),
        ]
        for sample in samples {
            for tier in [nil, Tier.tier1, .tier2, .engineering] {
                var written: [UInt8] = []
                CaseHTTP.writeRepresentation(sample, actorTier: tier, workflow: workflow, now: Date(), to: &written)
                #expect(
                    String(decoding: written, as: UTF8.self)
                        == CaseHTTP.representation(sample, actorTier: tier, workflow: workflow, now: Date()).canonical)
            }
        }
    }
}
