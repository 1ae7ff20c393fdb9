import Foundation
import HTTPServer
import ReclaimCore

/// A signed-in agent, as resolved from the session cookie.
public struct AgentIdentity: Sendable, Equatable {
    public let id: UUID
    public let name: String
    public let email: String
    public let tier: Tier
    public let isAdmin: Bool
    /// The session the request came with (to end it on sign-out).
    public let sessionID: UUID

    public init(id: UUID, name: String, email: String, tier: Tier, isAdmin: Bool, sessionID: UUID) {
        self.id = id
        self.name = name
        self.email = email
        self.tier = tier
        self.isAdmin = isAdmin
        self.sessionID = sessionID
    }
}

/// A partner system authenticated by API key (and, on POSTs, a verified signature).
public struct ClientIdentity: Sendable, Equatable {
    public let id: UUID
    public let name: String

    public init(id: UUID, name: String) {
        self.id = id
        self.name = name
    }
}

/// Who is making a request. Resolved once, by the authentication middleware.
public enum Principal: Sendable, Equatable {
    case agent(AgentIdentity)
    case apiClient(ClientIdentity)
    /// A victim who proved case number + access code on a status endpoint.
    case customer(CaseNumber)

    /// The agent's tier, nil for API clients and customers.
    public var tier: Tier? {
        if case .agent(let agent) = self { return agent.tier }
        return nil
    }

    /// A short text for events and logs: `agent:<uuid>`, `client:<uuid>`, `customer`.
    public var actor: String {
        switch self {
        case .agent(let agent): "agent:\(agent.id.uuidString.lowercased())"
        case .apiClient(let client): "client:\(client.id.uuidString.lowercased())"
        case .customer: "customer"
        }
    }

    /// The agent id inside an `agent:<uuid>` actor, nil for any other actor.
    public static func agentID(fromActor actor: String) -> UUID? {
        actor.hasPrefix("agent:") ? UUID(uuidString: String(actor.dropFirst(6))) : nil
    }
}

/// Where the middleware leaves the principal on the request.
public enum PrincipalKey: RequestStorageKey {
    public typealias Value = Principal
}

extension HTTPRequest {
    /// The authenticated caller, or nil when the request carried no valid credentials.
    public var principal: Principal? {
        get { self[PrincipalKey.self] }
        set { self[PrincipalKey.self] = newValue }
    }
}
