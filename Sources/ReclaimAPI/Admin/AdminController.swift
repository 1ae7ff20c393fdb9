import Crypto
import Foundation
import HTTPServer
import Postgres
import ReclaimCore
import ReclaimStore

/// `/api/v1/admin/…` (admin agents only): agents, API clients and the audit log. Every change goes through
/// `IdentityAdministration`, the path the command line takes too, which records it on the admin chain.
/// Creating an agent and resetting a password hash with argon2id, so those run on a small queue of their own.
final class AdminController: Sendable {
    let context: ServiceContext
    let hashQueue: WorkQueue

    init(context: ServiceContext, hashQueue: WorkQueue = WorkQueue(threads: 1, capacity: 8)) {
        self.context = context
        self.hashQueue = hashQueue
    }

    struct NewAgentRequest: Decodable {
        let email: String
        let name: String
        let tier: Tier
        let admin: Bool?
    }

    struct AgentChange: Decodable {
        let tier: Tier?
        let active: Bool?
        let admin: Bool?
        let passkeyRequired: Bool?

        enum CodingKeys: String, CodingKey {
            case tier, active, admin
            case passkeyRequired = "passkey_required"
        }
    }

    struct NewClientRequest: Decodable {
        let name: String
    }

    // MARK: Agents

    /// `GET /api/v1/admin/agents?limit=&cursor=`: every agent by email (state, tier, role, last sign-in), keyset-paginated.
    @Sendable func listAgents(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, administration) = try authorize(request)
        let limit = try CaseHTTP.limit(request)
        var after: String?
        if let text = request.query("cursor"), !text.isEmpty {
            guard let bytes = Hex.decode(text), let email = String(bytes: bytes, encoding: .utf8) else {
                throw Problem.unprocessable(errors: [FieldError(field: "cursor", message: "not a cursor from this list")])
            }
            after = email
        }
        let agents = try administration.listAgents(afterEmail: after, limit: limit + 1)
        let page = agents.prefix(limit)
        let next = agents.count > limit ? page.last.map { Hex.encode(Array($0.email.lowercased().utf8)) } : nil
        return CaseHTTP.json(CaseHTTP.list(page.map(Self.json), nextCursor: next))
    }

    /// `POST /api/v1/admin/agents`: 201 with the agent, its password and TOTP URI, shown this once; or, while another
    /// admin exists, 202 with the proposal and the password (the confirming admin is shown the TOTP URI).
    @Sendable func addAgent(_ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion) {
        let body: NewAgentRequest
        let actor: String
        let administration: IdentityAdministration
        do {
            (actor, administration) = try authorize(request)
            body = try request.decodeJSON(NewAgentRequest.self)
        } catch {
            completion(.failure(error))
            return
        }
        let now = context.now
        submit(completion) {
            switch try administration.requestAddAgent(
                email: body.email, name: body.name, tier: body.tier, isAdmin: body.admin ?? false, now: now, by: actor)
            {
            case .proposed(let proposal, let password): return Self.accepted(proposal, password: password)
            case .done(let agent):
                return CaseHTTP.json(
                    Self.json(agent, createdAt: now, password: agent.password), status: 201,
                    headers: [("Location", "/api/v1/admin/agents/\(agent.id.lowercased)"), ("Cache-Control", "no-store")])
            }
        }
    }

    /// `PATCH /api/v1/admin/agents/{id}` `{tier?, active?, admin?}`: 200 with the agent; deactivating ends its sessions.
    /// A change that gives power is 202 with its proposal while another admin exists.
    @Sendable func changeAgent(_ request: HTTPRequest) throws -> HTTPResponse {
        let (actor, administration) = try authorize(request)
        let id = try Self.id(request)
        let change = try request.decodeJSON(AgentChange.self)
        guard change.tier != nil || change.active != nil || change.admin != nil || change.passkeyRequired != nil else {
            throw Problem.unprocessable(
                detail: "Send at least one of tier, active and admin.",
                errors: [FieldError(field: "tier", message: "send tier, active or admin")])
        }
        switch try administration.requestAgentChange(
            .id(id), tier: change.tier, active: change.active, admin: change.admin, passkeyRequired: change.passkeyRequired, now: context.now,
            by: actor)
        {
        case .done(let agent): return CaseHTTP.json(Self.json(agent))
        case .proposed(let proposal, _): return Self.accepted(proposal, password: nil)
        }
    }

    /// `POST /api/v1/admin/agents/{id}/reset-password`: 200 `{id, password}`, shown this once; the agent's sessions end.
    /// Another agent's, while another admin exists: 202 with the proposal (the confirming admin is shown the password).
    @Sendable func resetPassword(_ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion) {
        let actor: String
        let administration: IdentityAdministration
        let id: UUID
        do {
            (actor, administration) = try authorize(request)
            id = try Self.id(request)
        } catch {
            completion(.failure(error))
            return
        }
        let now = context.now
        submit(completion) {
            switch try administration.requestPasswordReset(.id(id), now: now, by: actor) {
            case .done(let reset): return Self.passwordReset(id: reset.id, password: reset.password)
            case .proposed(let proposal, _): return Self.accepted(proposal, password: nil)
            }
        }
    }

    /// `POST /api/v1/admin/agents/{id}/reset-totp`: 200 `{id, totp_uri}`, shown this once; the agent's sessions end.
    /// Another agent's, while another admin exists: 202 with the proposal (the confirming admin is shown the URI).
    @Sendable func resetTOTP(_ request: HTTPRequest) throws -> HTTPResponse {
        let (actor, administration) = try authorize(request)
        let id = try Self.id(request)
        switch try administration.requestTOTPReset(.id(id), now: context.now, by: actor) {
        case .done(let agent): return Self.totpReset(agent)
        case .proposed(let proposal, _): return Self.accepted(proposal, password: nil)
        }
    }

    // MARK: Proposals

    /// `GET /api/v1/admin/proposals?limit=&cursor=`: proposals newest first, with who proposed what, their actors' names,
    /// and whether the admin asking is alone (then their changes act at once).
    @Sendable func listProposals(_ request: HTTPRequest) throws -> HTTPResponse {
        let (actor, administration) = try authorize(request)
        let limit = try CaseHTTP.limit(request)
        var after: UUID?
        if let text = request.query("cursor"), !text.isEmpty {
            guard let id = UUID(uuidString: text) else {
                throw Problem.unprocessable(errors: [FieldError(field: "cursor", message: "not a cursor from this list")])
            }
            after = id
        }
        let proposals = try administration.listProposals(after: after, limit: limit + 1)
        let page = proposals.prefix(limit)
        let next = proposals.count > limit ? page.last.map(\.id.lowercased) : nil
        let now = context.now
        let actors = try context.pool.withConnection { connection in
            try ActorNames.names(of: page.flatMap { [$0.proposedBy] + ($0.decidedBy.map { [$0] } ?? []) }, on: connection)
        }
        guard case .object(var list) = CaseHTTP.list(page.map { Self.json($0, now: now) }, nextCursor: next, actors: actors) else {
            throw Problem.internal
        }
        list["alone"] = .bool(try administration.isLoneAdmin(actor))
        return CaseHTTP.json(.object(list))
    }

    /// `POST /api/v1/admin/proposals/{id}/confirm`: a different admin confirms; 200 with the proposal and what the change
    /// answers (a new agent's TOTP URI, a reset password or TOTP URI: shown this once, to this admin only).
    @Sendable func confirmProposal(_ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion) {
        let actor: String
        let administration: IdentityAdministration
        let id: UUID
        do {
            (actor, administration) = try authorize(request)
            id = try Self.proposalID(request)
        } catch {
            completion(.failure(error))
            return
        }
        let now = context.now
        submit(completion) {
            let (proposal, change) = try administration.confirmProposal(id: id, now: now, by: actor)
            let result: JSONValue =
                switch change {
                case .agentAdded(let agent): Self.json(agent, createdAt: now, password: nil)
                case .agentChanged(let agent): Self.json(agent)
                case .passwordReset(let id, let password): ["id": .string(id.lowercased), "password": .string(password)]
                case .totpReset(let agent): ["id": .string(agent.id.lowercased), "totp_uri": .string(agent.totpURI)]
                }
            return CaseHTTP.json(["proposal": Self.json(proposal, now: now), "result": result], headers: [("Cache-Control", "no-store")])
        }
    }

    /// `POST /api/v1/admin/proposals/{id}/withdraw`: the proposer withdraws it, or another admin declines it; 200 with it.
    @Sendable func withdrawProposal(_ request: HTTPRequest) throws -> HTTPResponse {
        let (actor, administration) = try authorize(request)
        let id = try Self.proposalID(request)
        let now = context.now
        return CaseHTTP.json(Self.json(try administration.withdrawProposal(id: id, now: now, by: actor), now: now))
    }

    /// 202 with a proposal, and the proposer's half of a new agent's credentials when there is one.
    static func accepted(_ proposal: AdminProposal, password: String?) -> HTTPResponse {
        guard let password, case .object(var members) = json(proposal, now: proposal.proposedAt) else {
            return CaseHTTP.json(json(proposal, now: proposal.proposedAt), status: 202)
        }
        members["password"] = .string(password)
        return CaseHTTP.json(.object(members), status: 202, headers: [("Cache-Control", "no-store")])
    }

    static func json(_ proposal: AdminProposal, now: Date) -> JSONValue {
        [
            "id": .string(proposal.id.lowercased), "kind": .string(proposal.kind.rawValue),
            "target": ["id": .string(proposal.targetAgentID.lowercased), "email": .string(proposal.targetEmail)], "change": proposal.change,
            "proposed_by": .string(proposal.proposedBy), "proposed_at": Timestamp.json(proposal.proposedAt),
            "expires_at": Timestamp.json(proposal.expiresAt), "status": .string(proposal.status(at: now).rawValue),
            "decided_by": .optional(proposal.decidedBy), "decided_at": Timestamp.json(proposal.decidedAt),
        ]
    }

    /// A new agent as created, with its one-time secrets (`password` nil: the confirming admin, shown only the TOTP URI).
    static func json(_ agent: NewAgent, createdAt: Date, password: String?) -> JSONValue {
        guard
            case .object(var members) = json(
                AgentSummary(
                    id: agent.id, email: agent.email, name: agent.name, tier: agent.tier, isAdmin: agent.isAdmin, disabled: false,
                    lastSignInAt: nil, createdAt: createdAt))
        else { return .null }
        if let password { members["password"] = .string(password) }
        members["totp_uri"] = .string(agent.totpURI)
        return .object(members)
    }

    static func passwordReset(id: UUID, password: String) -> HTTPResponse {
        CaseHTTP.json(["id": .string(id.lowercased), "password": .string(password)], headers: [("Cache-Control", "no-store")])
    }

    static func totpReset(_ agent: NewAgent) -> HTTPResponse {
        CaseHTTP.json(["id": .string(agent.id.lowercased), "totp_uri": .string(agent.totpURI)], headers: [("Cache-Control", "no-store")])
    }

    // MARK: API clients

    /// `GET /api/v1/admin/clients?limit=&cursor=`: every client by creation (revoked ones too), keyset-paginated.
    @Sendable func listClients(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, administration) = try authorize(request)
        let limit = try CaseHTTP.limit(request)
        var after: (Date, UUID)?
        if let text = request.query("cursor"), !text.isEmpty {
            let parts = text.split(separator: "_", maxSplits: 1)
            guard parts.count == 2, let millis = Int64(parts[0]), let id = UUID(uuidString: String(parts[1])) else {
                throw Problem.unprocessable(errors: [FieldError(field: "cursor", message: "not a cursor from this list")])
            }
            after = (Date(timeIntervalSince1970: Double(millis) / 1000), id)
        }
        let clients = try administration.listClients(after: after, limit: limit + 1)
        let page = clients.prefix(limit)
        let next =
            clients.count > limit ? page.last.map { "\(Int64(($0.createdAt.timeIntervalSince1970 * 1000).rounded()))_\($0.id.lowercased)" } : nil
        return CaseHTTP.json(CaseHTTP.list(page.map(Self.json), nextCursor: next))
    }

    /// `POST /api/v1/admin/clients` `{name}`: 201 with the client, its API key and signing secret, shown this once.
    @Sendable func addClient(_ request: HTTPRequest) throws -> HTTPResponse {
        let (actor, administration) = try authorize(request)
        let body = try request.decodeJSON(NewClientRequest.self)
        let now = context.now
        let client = try administration.addClient(name: body.name, now: now, by: actor)
        guard
            case .object(var members) = Self.json(
                APIClientSummary(
                    id: client.id, name: client.name, createdAt: now, revokedAt: nil, rotatedAt: nil,
                    previousSecretExpiresAt: nil))
        else { throw Problem.internal }
        members["api_key"] = .string(client.apiKey)
        members["signing_secret"] = .string(client.signingSecret)
        return CaseHTTP.json(
            .object(members), status: 201, headers: [("Location", "/api/v1/admin/clients/\(client.id.lowercased)"), ("Cache-Control", "no-store")])
    }

    /// `POST /api/v1/admin/clients/{id}/rotate`: 200 with the client and its new signing secret (shown once); the old one works 24 h more.
    @Sendable func rotateClient(_ request: HTTPRequest) throws -> HTTPResponse {
        let (actor, administration) = try authorize(request)
        let id = try Self.id(request)
        let rotated = try administration.rotateClient(id: id, now: context.now, by: actor)
        guard case .object(var members) = Self.json(try administration.client(id: id)) else { throw Problem.internal }
        members["signing_secret"] = .string(rotated.signingSecret)
        return CaseHTTP.json(.object(members), headers: [("Cache-Control", "no-store")])
    }

    /// `POST /api/v1/admin/clients/{id}/rotate-key`: a new API key, shown once; the previous key is refused at once.
    @Sendable func rotateClientKey(_ request: HTTPRequest) throws -> HTTPResponse {
        let (actor, administration) = try authorize(request)
        let id = try Self.id(request)
        let key = try administration.rotateClientKey(id: id, now: context.now, by: actor)
        guard case .object(var members) = Self.json(try administration.client(id: id)) else { throw Problem.internal }
        members["api_key"] = .string(key)
        return CaseHTTP.json(.object(members), headers: [("Cache-Control", "no-store")])
    }

    /// `DELETE /api/v1/admin/clients/{id}`: revokes the client (its key is refused from now on); 200 with the client.
    @Sendable func revokeClient(_ request: HTTPRequest) throws -> HTTPResponse {
        let (actor, administration) = try authorize(request)
        let id = try Self.id(request)
        try administration.revokeClient(id: id, now: context.now, by: actor)
        return CaseHTTP.json(Self.json(try administration.client(id: id)))
    }

    // MARK: Audit

    /// `GET /api/v1/admin/audit?limit=&cursor=`: the admin chain, oldest first; `cursor` is the last seq seen.
    @Sendable func audit(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, administration) = try authorize(request)
        let limit = try CaseHTTP.limit(request)
        var after = 0
        if let text = request.query("cursor"), !text.isEmpty {
            guard let seq = Int(text), seq >= 0 else {
                throw Problem.unprocessable(errors: [FieldError(field: "cursor", message: "not a cursor from this list")])
            }
            after = seq
        }
        let events = try administration.auditLog(afterSeq: after, limit: limit + 1)
        let page = events.prefix(limit)
        let next = events.count > limit ? page.last.map { String($0.seq) } : nil
        let actors = try context.pool.withConnection { try ActorNames.names(of: page.map(\.actor), on: $0) }
        return CaseHTTP.json(CaseHTTP.list(page.map(\.json), nextCursor: next, actors: actors))
    }

    // MARK: Shared

    /// The admin's actor and the administration path, or 401/403 (logged as `access_denied`).
    private func authorize(_ request: HTTPRequest) throws -> (actor: String, administration: IdentityAdministration) {
        let principal = try context.authorize(.administer, request)
        guard case .agent = principal, let keys = context.keys else { throw Problem.forbidden(detail: "Only admin agents may do this.") }
        return (
            principal.actor,
            IdentityAdministration(pool: context.pool, keys: keys, proposalLifetime: context.configuration.proposalHours * 3600)
        )
    }

    /// Runs a hashing job on the queue, or answers 503 `busy` when it is full.
    private func submit(_ completion: @escaping HTTPResponder.Completion, _ job: @escaping @Sendable () throws -> HTTPResponse) {
        let accepted = hashQueue.submit { [self] in completion(Result { try job() }) }
        if !accepted {
            completion(
                .failure(
                    Problem.unavailable(
                        retryAfter: 2, code: ErrorCode.busy, detail: "Too many passwords being hashed at once; try again in a moment.")))
        }
    }

    /// The `{id}` path parameter, or 404 without a query.
    private static func id(_ request: HTTPRequest) throws -> UUID {
        guard let text = request.parameter("id"), let id = UUID(uuidString: text) else { throw Problem.notFound(detail: "No such agent or client.") }
        return id
    }

    /// The `{id}` path parameter of a proposal, or 404 without a query.
    private static func proposalID(_ request: HTTPRequest) throws -> UUID {
        guard let text = request.parameter("id"), let id = UUID(uuidString: text) else { throw Problem.notFound(detail: "No proposal has this id.") }
        return id
    }

    static func json(_ agent: AgentSummary) -> JSONValue {
        [
            "id": .string(agent.id.lowercased), "email": .string(agent.email), "name": .string(agent.name), "tier": .string(agent.tier.rawValue),
            "admin": .bool(agent.isAdmin), "active": .bool(!agent.disabled), "last_sign_in_at": Timestamp.json(agent.lastSignInAt),
            "created_at": Timestamp.json(agent.createdAt), "passkey_required": .bool(agent.passkeyRequired), "passkeys": .int(Int64(agent.passkeys)),
        ]
    }

    static func json(_ client: APIClientSummary) -> JSONValue {
        [
            "id": .string(client.id.lowercased), "name": .string(client.name), "active": .bool(client.revokedAt == nil),
            "created_at": Timestamp.json(client.createdAt), "revoked_at": Timestamp.json(client.revokedAt),
            "rotated_at": Timestamp.json(client.rotatedAt),
            "previous_secret_valid_until": Timestamp.json(client.previousSecretExpiresAt),
        ]
    }
}
