import Crypto
import Foundation
import Postgres
import ReclaimOperations
import ReclaimStore

/// Why a registration was refused, per field (the API answers 422 with these).
public struct WebhookRegistrationError: Error, Sendable {
    public let issues: [(field: String, message: String)]
}

/// An API client's webhook endpoints: registration (secret shown once, stored sealed), listing, deletion, the
/// deliveries log and manual retry. Every write takes the caller's transaction.
public enum WebhookRegistry {
    /// Most endpoints one client may register.
    public static let maximumEndpoints = 20

    /// A registered endpoint and its secret, which exists in clear only here.
    public struct Registered: Sendable {
        public let endpoint: WebhookEndpointRecord
        public let secret: String
    }

    /// Checks the URL (https, public destination unless allowed) and events, then stores the endpoint.
    public static func register(
        url: String, events: [String], clientID: UUID, keys: KeyFile, allow: WebhookAllowList, at now: Date,
        on connection: PostgresConnection
    ) throws -> Registered {
        var issues: [(String, String)] = []
        do {
            _ = try WebhookDestination.check(url, allow: allow)
        } catch {
            issues.append(("url", error.description))
        }
        let known = Set(WebhookEvent.allCases.map(\.rawValue))
        if events.isEmpty { issues.append(("events", "Name at least one event.")) }
        for (index, event) in events.enumerated() where !known.contains(event) {
            issues.append(("events[\(index)]", "One of \(WebhookEvent.allCases.map(\.rawValue).joined(separator: ", "))."))
        }
        if try WebhookEndpointStore.list(clientID: clientID, on: connection).count >= maximumEndpoints {
            issues.append(("url", "At most \(maximumEndpoints) endpoints per client."))
        }
        guard issues.isEmpty else { throw WebhookRegistrationError(issues: issues) }
        var unique: [String] = []
        for event in events where !unique.contains(event) { unique.append(event) }
        let id = UUID()
        let secret = WebhookSecrets.make(endpointID: id, keys: keys)
        try WebhookEndpointStore.insert(
            id: id, clientID: clientID, url: url, events: unique, sealedSecret: secret.sealed, secretKeyID: secret.keyID,
            now: now, on: connection)
        guard let endpoint = try WebhookEndpointStore.find(id: id, on: connection) else {
            throw WebhookRegistrationError(issues: [("url", "not stored")])
        }
        return Registered(endpoint: endpoint, secret: secret.text)
    }

    /// The endpoint's recent messages with every attempt, newest first.
    public static func deliveries(endpointID: UUID, limit: Int = 100, on connection: PostgresConnection) throws -> [(OutboxEntry, [OutboxAttempt])] {
        let entries = try OutboxStore.list(endpointID: endpointID, limit: limit, on: connection)
        let attempts = try OutboxStore.attempts(messageIDs: entries.map(\.id), on: connection)
        return entries.map { ($0, attempts[$0.id] ?? []) }
    }
}
