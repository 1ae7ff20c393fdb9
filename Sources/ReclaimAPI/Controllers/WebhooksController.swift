import Foundation
import HTTPServer
import Notifications
import ReclaimStore

/// `/api/v1/webhooks`: an API client's Standard Webhooks endpoints, their deliveries and manual retries.
final class WebhooksController: Sendable {
    let context: ServiceContext
    let allow: WebhookAllowList

    init(context: ServiceContext) {
        self.context = context
        allow = WebhookAllowList(parsing: context.configuration.webhookAllow)
    }

    struct NewEndpoint: Decodable {
        var url: String
        var events: [String]
    }

    static let notFound = Problem.notFound(detail: "You have no webhook endpoint with this id.")

    /// The calling API client's id (only API clients hold `.manageWebhooks`).
    func clientID(_ request: HTTPRequest) throws -> UUID {
        guard case .apiClient(let client) = try context.authorize(.manageWebhooks, request) else {
            throw Problem.forbidden(detail: "API clients only.")
        }
        return client.id
    }

    func endpointID(_ request: HTTPRequest, _ name: String = "id") throws -> UUID {
        guard let text = request.parameter(name), let id = UUID(uuidString: text) else { throw Self.notFound }
        return id
    }

    static func json(_ endpoint: WebhookEndpointRecord) -> JSONValue {
        [
            "id": .string(endpoint.id.uuidString.lowercased()), "url": .string(endpoint.url), "events": .array(endpoint.events.map(JSONValue.string)),
            "created_at": Timestamp.json(endpoint.createdAt), "disabled_at": Timestamp.json(endpoint.disabledAt),
        ]
    }

    /// One delivery: the message (never its body) with every attempt (time, status, duration, error); also the admin view's.
    static func json(_ entry: OutboxEntry, attempts: [OutboxAttempt]) -> JSONValue {
        [
            "id": .string(entry.id.uuidString.lowercased()), "event": .string(entry.kind), "state": .string(entry.state.rawValue),
            "created_at": Timestamp.json(entry.createdAt), "sent_at": Timestamp.json(entry.sentAt),
            "next_attempt_at": entry.state == .queued ? Timestamp.json(entry.nextAttemptAt) : .null,
            "attempts": .array(
                attempts.map { attempt in
                    [
                        "at": Timestamp.json(attempt.attemptedAt), "status": attempt.status.map { .int(Int64($0)) } ?? .null,
                        "duration_ms": .int(Int64(attempt.durationMilliseconds)), "error": .optional(attempt.error),
                    ]
                }),
        ]
    }

    /// `POST /api/v1/webhooks` `{"url", "events"}` → 201 with `id` and `secret` (`whsec_…`, shown this once).
    @Sendable func create(_ request: HTTPRequest) throws -> HTTPResponse {
        let client = try clientID(request)
        let input = try request.decodeJSON(NewEndpoint.self)
        guard let keys = context.keys else { throw Problem(ErrorCode.notConfigured, detail: "The service has no key file.") }
        let now = context.now
        do {
            return try context.transaction(for: request) { connection in
                let registered = try WebhookRegistry.register(
                    url: input.url, events: input.events, clientID: client, keys: keys, allow: allow, at: now,
                    on: connection)
                guard case .object(var body) = Self.json(registered.endpoint) else { preconditionFailure("an endpoint renders as an object") }
                body["secret"] = .string(registered.secret)
                return CaseHTTP.json(
                    .object(body), status: 201, headers: [("Location", "/api/v1/webhooks/\(registered.endpoint.id.uuidString.lowercased())")])
            }
        } catch let error as WebhookRegistrationError {
            throw Problem.unprocessable(errors: error.issues.map { FieldError(field: $0.field, message: $0.message) })
        }
    }

    /// `GET /api/v1/webhooks`: the client's endpoints (never a secret).
    @Sendable func list(_ request: HTTPRequest) throws -> HTTPResponse {
        let client = try clientID(request)
        let endpoints = try context.pool.withConnection { try WebhookEndpointStore.list(clientID: client, on: $0) }
        return CaseHTTP.json(CaseHTTP.list(endpoints.map(Self.json), nextCursor: nil))
    }

    /// `DELETE /api/v1/webhooks/{id}` → 204; nothing more is sent to it.
    @Sendable func delete(_ request: HTTPRequest) throws -> HTTPResponse {
        let client = try clientID(request)
        let id = try endpointID(request)
        let now = context.now
        guard try context.pool.withTransaction({ try WebhookEndpointStore.delete(id: id, clientID: client, now: now, on: $0) }) else {
            throw Self.notFound
        }
        return HTTPResponse.noContent()
    }

    /// `GET /api/v1/webhooks/{id}/deliveries`: the latest messages, each with its attempts (time, status, duration, error).
    @Sendable func deliveries(_ request: HTTPRequest) throws -> HTTPResponse {
        let client = try clientID(request)
        let id = try endpointID(request)
        let items = try context.pool.withConnection { connection -> [JSONValue] in
            guard try WebhookEndpointStore.find(id: id, clientID: client, on: connection) != nil else { throw Self.notFound }
            return try WebhookRegistry.deliveries(endpointID: id, on: connection).map { Self.json($0, attempts: $1) }
        }
        return CaseHTTP.json(CaseHTTP.list(items, nextCursor: nil))
    }

    /// `POST /api/v1/webhooks/{id}/deliveries/{did}/retry` → 202: the message is queued again, due now, same id, and
    /// the endpoint's rest ends.
    @Sendable func retry(_ request: HTTPRequest) throws -> HTTPResponse {
        let client = try clientID(request)
        let id = try endpointID(request)
        guard let text = request.parameter("delivery_id"), let deliveryID = UUID(uuidString: text) else { throw Self.notFound }
        let now = context.now
        return try context.transaction(for: request) { connection in
            guard let endpoint = try WebhookEndpointStore.find(id: id, clientID: client, on: connection) else { throw Self.notFound }
            if endpoint.disabledAt != nil {
                throw Problem(ErrorCode.endpointDisabled, detail: "The receiver answered 410 Gone; register the endpoint again to receive events.")
            }
            guard try OutboxStore.requeue(id: deliveryID, endpointID: id, now: now, on: connection) else {
                throw Problem.notFound(detail: "This endpoint has no delivery with this id.")
            }
            // Due now means now: a retry the partner asked for does not wait out the endpoint's rest.
            try WebhookEndpointStore.endRest(id: id, on: connection)
            return CaseHTTP.json(["id": .string(deliveryID.uuidString.lowercased()), "state": "queued"], status: 202)
        }
    }
}
