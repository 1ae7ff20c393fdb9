import Foundation
import Postgres
import ReclaimAPI
import ReclaimCore

/// Why a case-API test helper could not go on (an unexpected status, a missing body).
public struct CaseTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A running service with helpers for the case API, for every test target (case, workflow, queue, status, timeline, evidence).
public final class CaseWorld {
    public let service: TestService
    public let client: TestHTTPClient

    /// Starts a service on a fresh database; `configure` may adjust its configuration first.
    public init(configure: (inout ServiceConfiguration) -> Void = { _ in }) throws {
        service = try TestService(configure: configure)
        client = service.client()
    }

    deinit { service.stop() }

    /// A new agent of `tier`, signed in over HTTP.
    public func agent(_ tier: Tier, admin: Bool = false) throws -> AgentSession { try service.signIn(tier: tier, admin: admin) }

    /// POSTs `json` (a dictionary or array) as `session` (nil: anonymous), with `If-Match: "ifMatch"` when given.
    public func post(_ path: String, as session: AgentSession?, json: Any, ifMatch: Int? = nil) throws -> TestHTTPResponse {
        var headers = session?.headers ?? []
        if let ifMatch { headers.append(("If-Match", "\"\(ifMatch)\"")) }
        return try client.request("POST", path, headers: headers, json: json)
    }

    /// GETs `path` with the session's cookie (nil: anonymous).
    public func get(_ path: String, as session: AgentSession?) throws -> TestHTTPResponse {
        try client.request("GET", path, headers: session.map { [("Cookie", $0.cookie)] } ?? [])
    }

    /// A valid case body, with the parts tests vary as parameters.
    public static func caseBody(kind: String = "account_takeover", accountEmail: String = "victim@example.com", contactEmail: String = "victim.home@example.net",
                                facts: [String: Bool] = ["rescue_email_added": true], devices: [[String: String]] = [["serial": "C02XK1ZJH3QD", "imei": "490154203237518", "model": "Phone 12"]]) -> [String: Any] {
        ["kind": kind, "account_email": accountEmail, "customer": ["name": "Ada Victim", "contact_email": contactEmail],
         "devices": devices, "facts": facts, "summary": "Credential stuffing; rescue address added."]
    }

    /// Opens a case as `session` and returns its body (with `access_code`).
    public func openCase(as session: AgentSession, _ body: [String: Any] = CaseWorld.caseBody()) throws -> [String: Any] {
        let response = try post("/api/v1/cases", as: session, json: body)
        guard response.status == 201 else { throw CaseTestError("create answered \(response.status): \(response.text)") }
        return try response.json()
    }

    /// Takes an action; returns the response.
    public func act(_ number: String, _ action: String, as session: AgentSession, version: Int?, extra: [String: Any] = [:]) throws -> TestHTTPResponse {
        var body: [String: Any] = ["action": action]
        body.merge(extra) { $1 }
        return try post("/api/v1/cases/\(number)/transitions", as: session, json: body, ifMatch: version)
    }

    /// Takes an action that must succeed; returns the new case.
    @discardableResult
    public func must(_ number: String, _ action: String, as session: AgentSession, version: Int, extra: [String: Any] = [:]) throws -> [String: Any] {
        let response = try act(number, action, as: session, version: version, extra: extra)
        guard response.status == 200 else { throw CaseTestError("\(action) answered \(response.status): \(response.text)") }
        return try response.json()
    }

    /// The case's timeline (up to 200 events).
    public func events(_ number: String, as session: AgentSession) throws -> [[String: Any]] {
        let response = try get("/api/v1/cases/\(number)/events?limit=200", as: session)
        guard response.status == 200 else { throw CaseTestError("events answered \(response.status)") }
        return try response.json()["items"] as? [[String: Any]] ?? []
    }

    /// The customer's status look-up, from `forwardedFor` when given (for trusted-proxy tests).
    public func status(_ number: String, _ code: String, forwardedFor: String? = nil) throws -> TestHTTPResponse {
        try client.request("POST", "/api/v1/status", headers: forwardedFor.map { [("X-Forwarded-For", $0)] } ?? [],
                           json: ["case_number": number, "access_code": code])
    }

    /// A direct connection to the service's database (close it when done).
    public func database() throws -> PostgresConnection { try service.database.connect() }
}
