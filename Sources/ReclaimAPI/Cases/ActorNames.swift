import Foundation
import Postgres
import ReclaimStore

/// Agents' names for the actors of a page of events or notes, so the dashboard can say who acted. They go beside the
/// items (`"actors": {"agent:<uuid>": "name"}`), not into them: an event object stays exactly what its hash covers,
/// and an agent renamed later shows the new name over the same, still valid, hash.
enum ActorNames {
    /// `{actor: name}` for every `agent:<uuid>` actor among `actors` that names a known agent.
    static func names(of actors: some Sequence<String>, on connection: PostgresConnection) throws -> JSONValue {
        let ids = Set(actors.compactMap(Principal.agentID(fromActor:)))
        let names = try AgentStore.names(ids: ids, on: connection)
        return .object(Dictionary(uniqueKeysWithValues: names.map { ("agent:" + $0.key.uuidString.lowercased(), JSONValue.string($0.value)) }))
    }
}
