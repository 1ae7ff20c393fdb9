import HTTPServer
import Logging

extension ServiceContext {
    /// The request's principal, or 401 `unauthenticated` when it carried no valid credentials.
    public func requirePrincipal(_ request: HTTPRequest) throws -> Principal {
        guard let principal = request.principal else {
            throw Problem.unauthorized(detail: "Sign in, or send an API key.")
        }
        return principal
    }

    /// The principal if it holds `permission`: 401 without credentials, 403 `forbidden` (logged as
    /// `access_denied` with actor, route and permission, never credentials) when it does not.
    @discardableResult
    public func authorize(_ permission: Permission, _ request: HTTPRequest) throws -> Principal {
        let principal = try requirePrincipal(request)
        guard PermissionTable.allows(permission, principal) else {
            denied(principal, permission: permission.rawValue, request)
            throw Problem.forbidden(detail: "Your role may not do this.")
        }
        return principal
    }

    /// The signed-in agent, or 401; 403 for other principals (for agent-only routes such as the session).
    public func requireAgent(_ request: HTTPRequest) throws -> AgentIdentity {
        let principal = try requirePrincipal(request)
        guard case .agent(let agent) = principal else {
            denied(principal, permission: "agent", request)
            throw Problem.forbidden(detail: "Only signed-in agents may do this.")
        }
        return agent
    }

    /// Logs a denial (for handlers that refuse on finer rules, e.g. the workflow's tier of an action).
    public func logDenied(_ principal: Principal, reason: String, _ request: HTTPRequest) {
        denied(principal, permission: reason, request)
    }

    private func denied(_ principal: Principal, permission: String, _ request: HTTPRequest) {
        logger.warning(
            "access_denied",
            [
                "request_id": .string(request.requestID), "actor": .string(principal.actor),
                "route": .string(request.route ?? "unmatched"), "method": .string(request.method.rawValue),
                "permission": .string(permission),
            ])
    }
}
