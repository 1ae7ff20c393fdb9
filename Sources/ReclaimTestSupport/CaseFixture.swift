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

    /// POSTs `body` encoded as JSON as `session` (nil: anonymous), with `If-Match: "ifMatch"` when given.
    public func post(_ path: String, as session: AgentSession?, encoded body: some Encodable, ifMatch: Int? = nil) throws -> TestHTTPResponse {
        var headers = session?.headers ?? []
        if let ifMatch { headers.append(("If-Match", "\"\(ifMatch)\"")) }
        return try client.request("POST", path, headers: headers, encoded: body)
    }

    /// A valid case body, with the parts tests vary as parameters.
    public static func caseBody(
        kind: String = "account_takeover", accountEmail: String = "victim@example.com", contactEmail: String = "victim.home@example.net",
        facts: [String: Bool] = ["rescue_email_added": true],
        devices: [CaseBody.Device] = [.init(serial: "C02XK1ZJH3QD", imei: "490154203237518", model: "Phone 12")]
    ) -> CaseBody {
        CaseBody(
            kind: kind, accountEmail: accountEmail, customer: .init(name: "Ada Victim", contactEmail: contactEmail), devices: devices,
            facts: facts, summary: "Credential stuffing; rescue address added.")
    }

    /// Opens a case as `session` and returns it (with `access_code`).
    public func openCase(as session: AgentSession, _ body: CaseBody = CaseWorld.caseBody()) throws -> CaseView {
        let response = try post("/api/v1/cases", as: session, encoded: body)
        guard response.status == 201 else { throw CaseTestError("create answered \(response.status): \(response.text)") }
        return try response.decode(CaseView.self)
    }

    /// Takes an action; returns the response.
    public func act(_ number: String, _ action: String, as session: AgentSession, version: Int?, extra: [String: Any] = [:]) throws
        -> TestHTTPResponse
    {
        var body: [String: Any] = ["action": action]
        body.merge(extra) { $1 }
        return try post("/api/v1/cases/\(number)/transitions", as: session, json: body, ifMatch: version)
    }

    /// Schedules an unlock step (`POST …/unlocks`, the cooling-off): the only way a step is ever done.
    public func scheduleUnlock(_ number: String, _ step: String, as session: AgentSession, version: Int?) throws -> TestHTTPResponse {
        try post("/api/v1/cases/\(number)/unlocks", as: session, json: ["step": step], ifMatch: version)
    }

    /// Takes an action that must succeed; returns the new case.
    @discardableResult
    public func must(_ number: String, _ action: String, as session: AgentSession, version: Int, extra: [String: Any] = [:]) throws -> CaseView {
        let response = try act(number, action, as: session, version: version, extra: extra)
        guard response.status == 200 else { throw CaseTestError("\(action) answered \(response.status): \(response.text)") }
        return try response.decode(CaseView.self)
    }

    /// The case's timeline (up to 200 events).
    public func events(_ number: String, as session: AgentSession) throws -> [EventView] {
        let response = try get("/api/v1/cases/\(number)/events?limit=200", as: session)
        guard response.status == 200 else { throw CaseTestError("events answered \(response.status)") }
        return try response.decode(ListView<EventView>.self).items
    }

    /// The customer's status look-up, from `forwardedFor` when given (for trusted-proxy tests).
    public func status(_ number: String, _ code: String, forwardedFor: String? = nil) throws -> TestHTTPResponse {
        try client.request(
            "POST", "/api/v1/status", headers: forwardedFor.map { [("X-Forwarded-For", $0)] } ?? [],
            json: ["case_number": number, "access_code": code])
    }

    /// The call codes the customer's own look-up shows (`{"desk", "customer", "valid_until"}`, api.md v1.3).
    public func callCodes(_ number: String, _ code: String) throws -> [String: Any] {
        let response = try status(number, code)
        guard response.status == 200, let codes = try response.json()["call_codes"] as? [String: Any] else {
            throw CaseTestError("status answered \(response.status) without call codes: \(response.text)")
        }
        return codes
    }

    /// The victim on the phone reads the customer code from her status page and `session` checks it: the caller is then
    /// verified for `session` (the read-out of a new access code, a change of contact address). Returns `verified_until`.
    @discardableResult
    public func verifyCaller(_ number: String, accessCode code: String, as session: AgentSession) throws -> String {
        try service.verifyCaller(number, accessCode: code, as: session)
    }

    /// A direct connection to the service's database (close it when done).
    public func database() throws -> PostgresConnection { try service.database.connect() }
}

/// The body of `POST /api/v1/cases` (api.md); `var`s so a test can spoil one field.
public struct CaseBody: Encodable, Sendable {
    public var kind: String
    public var accountEmail: String
    public var customer: Customer
    public var devices: [Device]
    public var facts: [String: Bool]
    public var summary: String
    /// The customer's language; not sent when nil (the case then has none of its own).
    public var language: String?

    /// The customer's name, contact address and phone (not sent when nil).
    public struct Customer: Encodable, Sendable {
        public var name: String
        public var contactEmail: String
        public var phone: String?
        public init(name: String, contactEmail: String, phone: String? = nil) {
            self.name = name
            self.contactEmail = contactEmail
            self.phone = phone
        }
        enum CodingKeys: String, CodingKey {
            case name, phone
            case contactEmail = "contact_email"
        }
    }

    /// A device; an identifier left nil is not sent at all.
    public struct Device: Encodable, Sendable {
        public var serial: String?
        public var imei: String?
        public var model: String?
        public init(serial: String? = nil, imei: String? = nil, model: String? = nil) {
            self.serial = serial
            self.imei = imei
            self.model = model
        }
    }

    public init(kind: String, accountEmail: String, customer: Customer, devices: [Device], facts: [String: Bool], summary: String) {
        self.kind = kind
        self.accountEmail = accountEmail
        self.customer = customer
        self.devices = devices
        self.facts = facts
        self.summary = summary
    }

    /// The JSON bytes, for requests a test signs or sends by hand.
    public var bytes: [UInt8] { get throws { Array(try JSONEncoder().encode(self)) } }

    enum CodingKeys: String, CodingKey {
        case kind
        case accountEmail = "account_email"
        case customer, devices, facts, summary, language
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .kind)
        try c.encode(accountEmail, forKey: .accountEmail)
        try c.encode(customer, forKey: .customer)
        try c.encode(devices, forKey: .devices)
        try c.encode(facts, forKey: .facts)
        try c.encode(summary, forKey: .summary)
        try c.encodeIfPresent(language, forKey: .language)
    }
}

extension TestService {
    /// The victim on the phone reads the customer code from her status page (`POST /api/v1/status`) and `session` checks
    /// it (`POST …/caller-verification`): the caller is then verified for `session`. Returns `verified_until`.
    @discardableResult
    public func verifyCaller(_ number: String, accessCode code: String, as session: AgentSession) throws -> String {
        let status = try client().request("POST", "/api/v1/status", json: ["case_number": number, "access_code": code])
        guard status.status == 200, let codes = try status.json()["call_codes"] as? [String: Any], let customer = codes["customer"] as? String else {
            throw CaseTestError("status answered \(status.status) without call codes: \(status.text)")
        }
        let response = try client().request(
            "POST", "/api/v1/cases/\(number)/caller-verification", headers: session.headers, json: ["customer_code": customer])
        guard response.status == 200, let until = try response.json()["verified_until"] as? String else {
            throw CaseTestError("caller-verification answered \(response.status): \(response.text)")
        }
        return until
    }
}
