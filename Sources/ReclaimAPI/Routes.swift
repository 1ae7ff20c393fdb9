import HTTPServer

/// The one route table of the service. The router and `/openapi.json` are both built from it.
/// Sections: operations, identity (sessions), cases, accounts, customers. Keep each section's
/// routes together and add the controller it needs to `init`.
struct Routes {
    let operations: OperationsController
    let session: SessionController  // Identity
    let cases: CasesController
    let notes: NotesController
    let accounts: AccountsController
    let status: StatusController

    init(context: ServiceContext, operations: OperationsController) {
        self.operations = operations
        self.session = SessionController(context: context)  // Identity
        self.cases = CasesController(context: context)
        self.notes = NotesController(context: context)
        self.accounts = AccountsController(context: context)
        self.status = StatusController(context: context)
    }

    var all: [APIRoute] {
        operationsRoutes
            + identityRoutes
            + caseRoutes
            + accountRoutes
            + customerRoutes
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

    // MARK: Cases
    var caseRoutes: [APIRoute] {
        let caseNumber404: ResponseDoc = .problem("invalid_case_number (mistyped, no database query) or not_found.")
        let changing: [Int: ResponseDoc] = [
            200: .json("The changed case; ETag carries the new version.", "Case"), 401: .problem("Not authenticated."),
            403: .problem("forbidden / insufficient_tier: recorded as a `denied` event on the case."), 404: caseNumber404,
            409: .problem("invalid_transition, verification_failed (with factors), not_recoverable, answers_not_matched, case_not_open, already_frozen."),
            412: .problem("stale_version: If-Match is not the current version."), 422: .problem("validation_failed, reason_required, unlock_required, unlock_not_allowed."),
            428: .problem("if_match_required."),
        ]
        return [
            APIRoute(.POST, "/api/v1/cases", operationID: "createCase",
                     summary: "Open a case (tier1+ agents, API clients): 201 with Location, ETag and the case plus its access_code, shown this once.",
                     tag: "cases", authentication: .agentOrAPIClient, requestSchema: "NewCase",
                     responses: [201: .json("The case, with access_code.", "CreatedCase"), 400: .problem("Malformed JSON."), 401: .problem("Not authenticated."),
                                 403: .problem("Not allowed."), 422: .problem("validation_failed with errors per field.")],
                     bodyLimit: 64 * 1024, handler: cases.create),
            APIRoute(.GET, "/api/v1/cases", operationID: "caseQueue",
                     summary: "The queue: oldest due first, null due dates last; filters state, tier, overdue, q (case number, account email, serial or IMEI); keyset cursor.",
                     tag: "cases", authentication: .agent,
                     responses: [200: .json("A page of cases.", "CaseList"), 401: .problem("Not authenticated."), 422: .problem("A bad filter, limit or cursor.")],
                     handler: cases.list),
            APIRoute(.GET, "/api/v1/cases/{case_number}", operationID: "getCase", summary: "One case with allowed_actions for the caller and ETag.",
                     tag: "cases", authentication: .agent,
                     responses: [200: .json("The case.", "Case"), 401: .problem("Not authenticated."), 404: caseNumber404],
                     handler: cases.get),
            APIRoute(.POST, "/api/v1/cases/{case_number}/transitions", operationID: "transitionCase",
                     summary: "Take a workflow action (If-Match required); send_reset takes the customer's answers and resets to the primary address on file.",
                     tag: "cases", authentication: .agent, requestSchema: "Transition", responses: changing,
                     bodyLimit: 16 * 1024, handler: cases.transition),
            APIRoute(.POST, "/api/v1/cases/{case_number}/assign", operationID: "assignCase",
                     summary: "Take the case or hand it to a colleague of the case's tier or above (If-Match required).",
                     tag: "cases", authentication: .agent, requestSchema: "Assign", responses: changing,
                     bodyLimit: 4096, handler: cases.assign),
            APIRoute(.POST, "/api/v1/cases/{case_number}/actions/freeze", operationID: "freezeCase",
                     summary: "Freeze the account's purchases and cloud operations while the case is open (tier2+, If-Match required).",
                     tag: "cases", authentication: .agent, responses: changing,
                     bodyLimit: 4096, handler: cases.freeze),
            APIRoute(.POST, "/api/v1/cases/{case_number}/notes", operationID: "addNote",
                     summary: "Add a note: internal (agents only) or customer (also on the status page).",
                     tag: "cases", authentication: .agent, requestSchema: "NewNote",
                     responses: [201: .json("The note.", "Note"), 401: .problem("Not authenticated."), 403: .problem("Not allowed."),
                                 404: caseNumber404, 422: .problem("validation_failed.")],
                     bodyLimit: 64 * 1024, handler: notes.add),
            APIRoute(.GET, "/api/v1/cases/{case_number}/notes", operationID: "listNotes", summary: "Every note on the case, oldest first.",
                     tag: "cases", authentication: .agent,
                     responses: [200: .json("The notes.", "NoteList"), 401: .problem("Not authenticated."), 404: caseNumber404],
                     handler: notes.list),
            APIRoute(.GET, "/api/v1/cases/{case_number}/events", operationID: "caseEvents",
                     summary: "The timeline, oldest first: a SHA-256 hash chain over the JCS form of {seq, at, actor, type, data}.",
                     tag: "cases", authentication: .agent,
                     responses: [200: .json("A page of events.", "EventList"), 401: .problem("Not authenticated."), 404: caseNumber404],
                     handler: cases.events),
        ]
    }

    // MARK: Accounts
    var accountRoutes: [APIRoute] {
        [
            APIRoute(.POST, "/api/v1/accounts", operationID: "createAccount",
                     summary: "Put an account on file (admin agents, API clients): answers argon2id-hashed, cards as first six + last four + fingerprint.",
                     tag: "accounts", authentication: .agentOrAPIClient, requestSchema: "NewAccount",
                     responses: [201: .json("The account, without secrets.", "Account"), 400: .problem("Malformed JSON."), 401: .problem("Not authenticated."),
                                 403: .problem("Not allowed."), 409: .problem("account_exists."), 422: .problem("validation_failed."),
                                 503: .problem("busy: too many hashes queued; see Retry-After.")],
                     bodyLimit: 64 * 1024, deferred: accounts.create),
        ]
    }

    // MARK: Customers
    var customerRoutes: [APIRoute] {
        [
            APIRoute(.POST, "/api/v1/status", operationID: "customerStatus",
                     summary: "A customer's view of their case, with case number and access code; throttled per case number and per address.",
                     tag: "customers", authentication: .customer, requestSchema: "StatusRequest",
                     responses: [200: .json("Where the case stands, in plain words.", "Status"), 400: .problem("Malformed JSON."),
                                 404: .problem("invalid_case_number, or not_found (the same for an unknown case and a wrong code)."),
                                 429: .problem("locked_out: too many failures for this case number or address; see Retry-After.")],
                     bodyLimit: 4096, handler: status.status),
        ]
    }
}
