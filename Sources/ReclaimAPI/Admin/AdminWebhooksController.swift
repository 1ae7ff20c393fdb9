import Foundation
import HTTPServer
import Notifications
import ReclaimStore

/// `GET /api/v1/admin/clients/{id}/webhooks` (admin agents only): an API client's live endpoints, each with its latest
/// deliveries and their attempts, for support to see what a partner received. Never a secret, never a body.
final class AdminWebhooksController: Sendable {
    let context: ServiceContext
    /// Deliveries shown per endpoint, newest first.
    static let recentDeliveries = 20

    init(context: ServiceContext) {
        self.context = context
    }

    /// `{"items": [endpoint + "active" + "recent_deliveries"]}`, endpoints oldest first; deleted ones left out; 404 for
    /// an unknown client (a revoked one still answers: its endpoints and their log stay on record).
    @Sendable func list(_ request: HTTPRequest) throws -> HTTPResponse {
        guard case .agent = try context.authorize(.administer, request) else { throw Problem.forbidden(detail: "Only admin agents may do this.") }
        let missing = Problem.notFound(detail: "No such agent or client.")
        guard let text = request.parameter("id"), let clientID = UUID(uuidString: text) else { throw missing }
        let items = try context.pool.withConnection { connection -> [JSONValue] in
            guard try APIClientStore.exists(id: clientID, on: connection) else { throw missing }
            return try WebhookEndpointStore.list(clientID: clientID, on: connection).map { endpoint in
                guard case .object(var members) = WebhooksController.json(endpoint) else { preconditionFailure("an endpoint renders as an object") }
                members["active"] = .bool(endpoint.disabledAt == nil)
                members["recent_deliveries"] = .array(
                    try WebhookRegistry.deliveries(endpointID: endpoint.id, limit: Self.recentDeliveries, on: connection)
                        .map { WebhooksController.json($0, attempts: $1) })
                return .object(members)
            }
        }
        return CaseHTTP.json(["items": .array(items)])
    }

    /// `POST /api/v1/admin/clients/{id}/webhooks/{endpoint_id}/deliveries/{delivery_id}/retry` (admin agents): queues a
    /// failed or dead-lettered delivery again, due now, with the same webhook-id, as the partner's own retry does
    /// (`WebhooksController.retry`); recorded on the admin log in the same transaction.
    @Sendable func retry(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.administer, request)
        guard case .agent = principal, let keys = context.keys else { throw Problem.forbidden(detail: "Only admin agents may do this.") }
        let missing = Problem.notFound(detail: "No such client, endpoint or delivery.")
        guard let clientID = request.parameter("id").flatMap(UUID.init(uuidString:)),
            let endpointID = request.parameter("endpoint_id").flatMap(UUID.init(uuidString:)),
            let deliveryID = request.parameter("delivery_id").flatMap(UUID.init(uuidString:))
        else { throw missing }
        let now = context.now
        return try context.transaction(for: request) { connection in
            guard let endpoint = try WebhookEndpointStore.find(id: endpointID, clientID: clientID, on: connection) else { throw missing }
            if endpoint.disabledAt != nil {
                throw Problem(ErrorCode.endpointDisabled, detail: "The receiver answered 410 Gone; the partner must register the endpoint again.")
            }
            guard try OutboxStore.requeue(id: deliveryID, endpointID: endpointID, now: now, on: connection) else { throw missing }
            try WebhookEndpointStore.endRest(id: endpointID, on: connection)
            try IdentityAdministration(pool: context.pool, keys: keys).recordWebhookRetry(
                clientID: clientID, endpointID: endpointID, deliveryID: deliveryID, now: now, by: principal.actor, on: connection)
            return CaseHTTP.json(["id": .string(deliveryID.uuidString.lowercased()), "state": "queued"], status: 202)
        }
    }
}
