import Foundation
import Postgres
import ReclaimStore

/// Carries timelines written before commitments (migration 0020) over to the committed form, as `reclaim migrate` does
/// after the SQL: each case's chain is verified first (a broken one stops the carry-over, naming it, and nothing is
/// rewritten), then each event's personal members (`CaseEventType.personalFields`) become salted commitments, the chain
/// is recomputed over them, and each event keeps its old hash as `legacy_hash`, which its leaf in the transparency log
/// (append-only) goes on hashing; the event joins `case_events_carried` (0029), the fixed set of events whose leaves
/// hash a legacy hash. Runs in the caller's transaction, as the schema's owner.
public enum EventCommitments {
    /// A chain that does not verify: carrying it over would launder the break.
    public struct BrokenChain: Error, CustomStringConvertible {
        /// Where it breaks.
        public let chainBreak: CaseEventChain.Break
        /// One line.
        public var description: String { "cannot carry the timeline over to commitments: \(chainBreak) (nothing was changed)" }
    }

    /// Carries every case with events in the old form over; returns how many cases and events were carried.
    @discardableResult
    public static func carryOver(on connection: PostgresConnection) throws -> (cases: Int, events: Int) {
        var cases = 0
        var count = 0
        for caseID in try CaseEventStore.casesToCarryOver(on: connection) {
            let events = try CaseEventStore.list(caseID: caseID, on: connection)
            let number = try CaseStore.find(id: caseID, on: connection)?.number ?? caseID.uuidString.lowercased()
            if let broken = CaseEventChain.firstBreak(caseNumber: number, events: events) { throw BrokenChain(chainBreak: broken) }
            var previous: String?
            var carried: [CaseEventStore.CarriedEvent] = []
            for event in events {
                let personal = CaseEventType(rawValue: event.type)?.personalFields ?? []
                // An event already committed (none before 0020) keeps its data as hashed.
                let (hashed, values) =
                    event.commitments.isEmpty
                    ? CaseEventCommitment.commit(event.data, personal: personal)
                    : (event.hashedData, [])
                let hash = CaseEventChain.hash(previous: previous, seq: event.seq, at: event.at, actor: event.actor, type: event.type, data: hashed)
                carried.append(
                    CaseEventStore.CarriedEvent(
                        seq: event.seq, hashedData: hashed, prevHash: previous, hash: hash, legacyHash: event.legacyHash ?? event.hash,
                        values: values.map { ($0.field, $0.value, $0.salt) }))
                previous = hash
            }
            try CaseEventStore.carryOver(caseID: caseID, events: carried, on: connection)
            cases += 1
            count += carried.count
        }
        return (cases, count)
    }
}
