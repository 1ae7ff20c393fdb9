import HTTPServer

/// The one route table of the service. The router and `/openapi.json` are both built from it.
/// Sections: operations, identity (sessions), cases, accounts, customers. Keep each section's
/// routes together and add the controller it needs to `init`.
struct Routes {
    let operations: OperationsController
    let session: SessionController  // Identity

    init(context: ServiceContext, operations: OperationsController) {
        self.operations = operations
        self.session = SessionController(context: context)  // Identity
    }

    var all: [APIRoute] {
        operationsRoutes
            + identityRoutes
    }

    // MARK: Operations
    var operationsRoutes: [APIRoute] {
        [
            APIRoute(.GET, "/healthz", operationID: "health", summary: "The process is alive.", tag: "operations",
                     responses: [200: .json("Alive.", "Health")],
                     handler: operations.health),
            APIRoute(.GET, "/readyz", operationID: "readiness", summary: "The database is reachable and migrated to this build's schema.", tag: "operations",
                     responses: [200: .json("Ready to serve.", "Ready"), 503: .problem("Database unreachable or not migrated; see Retry-After.")],
                     handler: operations.ready),
            APIRoute(.GET, "/metrics", operationID: "metrics", summary: "Prometheus metrics.", tag: "operations",
                     responses: [200: .other("Prometheus text exposition format 0.0.4.", mediaType: "text/plain")],
                     handler: operations.prometheus),
            APIRoute(.GET, "/openapi.json", operationID: "openapi", summary: "This document.", tag: "operations",
                     responses: [200: .other("OpenAPI 3.1 document.", mediaType: "application/json")],
                     handler: operations.openAPI),
        ]
    }

    // MARK: Identity
    var identityRoutes: [APIRoute] {
        [
            APIRoute(.POST, "/api/v1/session", operationID: "signIn",
                     summary: "Sign in with email, password and a TOTP code; sets the __Host-reclaim_session cookie (HttpOnly; Secure; SameSite=Strict).",
                     tag: "identity", requestSchema: "SignIn",
                     responses: [201: .json("Signed in; the cookie is set. Send csrf_token as X-CSRF-Token on changing requests.", "Session"),
                                 400: .problem("Malformed JSON."),
                                 401: .problem("invalid_credentials: the same answer for every failure."),
                                 429: .problem("locked_out: too many failures for the account or this address; see Retry-After."),
                                 503: .problem("busy: too many sign-ins waiting; see Retry-After.")],
                     bodyLimit: 4096, deferred: session.signIn),
            APIRoute(.GET, "/api/v1/session", operationID: "currentSession", summary: "The signed-in agent, its CSRF token and permissions.",
                     tag: "identity", authentication: .agent,
                     responses: [200: .json("The current session.", "Session"), 401: .problem("Not signed in, or the session expired.")],
                     handler: session.current),
            APIRoute(.DELETE, "/api/v1/session", operationID: "signOut", summary: "End the session on the server and clear the cookie (needs X-CSRF-Token).",
                     tag: "identity", authentication: .agent,
                     responses: [204: .empty("Signed out."), 401: .problem("Not signed in."), 403: .problem("csrf_failed: X-CSRF-Token missing or wrong.")],
                     handler: session.signOut),
        ]
    }
}
