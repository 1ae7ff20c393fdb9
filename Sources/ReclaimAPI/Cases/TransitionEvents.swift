import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// The timeline entries of an applied workflow transition, written by the transition route and by `reclaim demo
/// seed` alike: one `transition` event, and `reset_sent` when a reset went out.
enum TransitionEvents {
    /// Appends them inside the caller's transaction.
    static func append(_ decision: TransitionDecision, caseID: UUID, actor: String, resetDestination: String?, at now: Date,
                       on connection: PostgresConnection) throws {
        var data: [String: JSONValue] = [
            "action": .string(decision.action.rawValue), "from": .string(decision.before.state.rawValue),
            "to": .string(decision.after.state.rawValue), "path": .string(decision.after.path.rawValue),
            "due_at": Timestamp.json(decision.dueAt), "reason": .optional(decision.reason),
        ]
        if let unlock = decision.unlock { data["unlock"] = .string(unlock.rawValue) }
        if let verification = decision.verification {
            data["factors"] = .object(Dictionary(uniqueKeysWithValues: verification.factors.map { ($0.key.rawValue, JSONValue.string($0.value.rawValue)) }))
        }
        try CaseEventStore.append(caseID: caseID, at: now, actor: actor, type: "transition", data: .object(data), on: connection)
        if decision.action == .sendReset, let resetDestination {
            // The reset goes to the verified primary address on file: never the customer's contact or a rescue address.
            try CaseEventStore.append(caseID: caseID, at: now, actor: actor, type: "reset_sent",
                                      data: ["to": .string(resetDestination), "destination": "verified_primary_address"], on: connection)
        }
    }
}
