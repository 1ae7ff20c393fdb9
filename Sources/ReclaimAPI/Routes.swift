import HTTPServer
import ReclaimCore
import ReclaimOperations

/// The one route table of the service. The router and `/openapi.json` are both built from it. Each route lists the
/// answers particular to it; those that follow from its kind (401, 413, 415, 428, ...) are added by
/// `APIRoute.documentedResponses`.
/// Sections: operations, identity (sessions), cases, accounts, customers. Keep each section's
/// routes together and add the controller it needs to `init`.
struct Routes {
    let operations: OperationsController
    let session: SessionController  // Identity
    let cases: CasesController
    let notes: NotesController
    let accounts: AccountsController
    let status: StatusController
    let evidence: EvidenceController
    let admin: AdminController
    let reports: ReportsController
    let passkeys: PasskeyController
    let webhooks: WebhooksController  // Notifications
    let caseMessages: CaseMessagesController  // Notifications
    let inbound: InboundController  // the conversation: unmatched mail
    let adminWebhooks: AdminWebhooksController  // Notifications
    let audit: AuditController  // the transparency log

    init(context: ServiceContext, operations: OperationsController) {
        self.operations = operations
        let session = SessionController(context: context)  // Identity
        self.session = session
        self.passkeys = PasskeyController(context: context, sessions: session)
        self.cases = CasesController(context: context)
        self.notes = NotesController(context: context)
        self.accounts = AccountsController(context: context)
        self.status = StatusController(context: context)
        self.evidence = EvidenceController(context: context)
        self.admin = AdminController(context: context)
        self.reports = ReportsController(context: context)
        self.webhooks = WebhooksController(context: context)  // Notifications
        self.caseMessages = CaseMessagesController(context: context)  // Notifications
        self.inbound = InboundController(context: context)  // the conversation: unmatched mail
        self.adminWebhooks = AdminWebhooksController(context: context)  // Notifications
        self.audit = AuditController(context: context)
    }

    var all: [APIRoute] {
        operationsRoutes
            + identityRoutes
            + caseRoutes
            + evidenceRoutes
            + accountRoutes
            + customerRoutes
            + adminRoutes
            + reportRoutes
            + passkeyRoutes
            + notificationRoutes
            + auditRoutes
    }

    // MARK: Operations
    var operationsRoutes: [APIRoute] {
        [
            APIRoute(
                .GET, "/healthz", operationID: "health", summary: "The process is alive.", tag: "operations",
                responses: [200: .json("Alive.", "Health")],
                handler: operations.health),
            APIRoute(
                .GET, "/readyz", operationID: "readiness", summary: "The database is reachable and migrated to this build's schema.",
                tag: "operations",
                responses: [200: .json("Ready to serve.", "Ready"), 503: .problem("Database unreachable or not migrated; see Retry-After.")],
                handler: operations.ready),
            APIRoute(
                .GET, "/metrics", operationID: "metrics", summary: "Prometheus metrics, for the addresses in RECLAIM_METRICS_ALLOW.",
                tag: "operations",
                responses: [
                    200: .other("Prometheus text exposition format 0.0.4.", mediaType: "text/plain"),
                    403: .problem("The client is not in RECLAIM_METRICS_ALLOW."),
                ],
                handler: operations.prometheus),
            APIRoute(
                .GET, "/openapi.json", operationID: "openapi", summary: "This document.", tag: "operations",
                responses: [200: .other("OpenAPI 3.1 document.", mediaType: "application/json")],
                handler: operations.openAPI),
            APIRoute(
                .GET, "/api/v1/vocabulary", operationID: "vocabulary",
                summary:
                    "Every vocabulary's machine words (case states, tiers, evidence and document kinds, event types, ...) in the service's order: the pages read their lists here.",
                tag: "operations",
                responses: [200: .json("The vocabularies, by name.", "Vocabulary")],
                handler: operations.vocabulary),
        ]
    }

    // MARK: Identity
    var identityRoutes: [APIRoute] {
        [
            APIRoute(
                .POST, "/api/v1/session", operationID: "signIn",
                summary: "Sign in with email, password and a TOTP code; sets the __Host-reclaim_session cookie (HttpOnly; Secure; SameSite=Strict).",
                tag: "identity", requestSchema: "SignIn",
                responses: [
                    201: .json("Signed in; the cookie is set. Send csrf_token as X-CSRF-Token on changing requests.", "Session"),
                    400: .problem("Malformed JSON."),
                    401: .problem("invalid_credentials: the same answer for every failure."),
                    429: .problem("locked_out: too many failures for the account or this address; see Retry-After."),
                    503: .problem("busy: too many sign-ins waiting; see Retry-After."),
                ],
                bodyLimit: 4096, deferred: session.signIn),
            APIRoute(
                .GET, "/api/v1/session", operationID: "currentSession", summary: "The signed-in agent, its CSRF token and permissions.",
                tag: "identity", authentication: .agent,
                responses: [200: .json("The current session.", "Session"), 401: .problem("Not signed in, or the session expired.")],
                handler: session.current),
            APIRoute(
                .DELETE, "/api/v1/session", operationID: "signOut",
                summary: "End the session on the server and clear the cookie (needs X-CSRF-Token).",
                tag: "identity", authentication: .agent,
                responses: [
                    204: .empty("Signed out."), 401: .problem("Not signed in."), 403: .problem("csrf_failed: X-CSRF-Token missing or wrong."),
                ],
                handler: session.signOut),
        ]
    }

    // MARK: Cases
    var caseRoutes: [APIRoute] {
        let caseNumber404: ResponseDoc = .problem("invalid_case_number (mistyped, no database query) or not_found.")
        // The refusals of the case-changing routes, by status, from the refusal catalogue (412 and 428 follow from If-Match).
        let refusals: [any Refusal] = WorkflowRefusal.examples + OperationError.caseChanges
        let changing: [Int: ResponseDoc] = [
            200: .json("The changed case; ETag carries the new version.", "Case"), 401: .problem("Not authenticated."),
            403: .refusals(refusals, status: 403, lead: ["forbidden"], then: ": recorded as a `denied` event on the case."), 404: caseNumber404,
            409: .refusals(refusals, status: 409), 422: .refusals(refusals, status: 422, lead: ["validation_failed"]),
        ]
        return [
            APIRoute(
                .POST, "/api/v1/cases", operationID: "createCase",
                summary:
                    "Open a case (tier1+ agents, API clients): 201 with Location, ETag and the case plus its access_code, shown this once. A contact address that reaches the rescue address's mailbox (case, +tag and the provider's own rules ignored) is 422 naming customer.contact_email.",
                tag: "cases", authentication: .agentOrAPIClient, requestSchema: "NewCase",
                responses: [
                    201: .json("The case, with access_code.", "CreatedCase"), 400: .problem("Malformed JSON."), 401: .problem("Not authenticated."),
                    403: .problem("Not allowed."), 422: .problem("validation_failed with errors per field."),
                ],
                bodyLimit: 64 * 1024, handler: cases.create),
            APIRoute(
                .GET, "/api/v1/cases", operationID: "caseQueue",
                summary:
                    "The queue: oldest due first, null due dates last; filters state (default: open cases only; `any` for open and finished), assignee (`me`: the caller's cases, or an agent's id), opened_after and opened_before (RFC 3339 times: an age of the backlog), tier, overdue, unreviewed (cases with a document pending review, their own or a merged case's), risk (true: cases with an uncleared risk signal), awaiting_reply (the customer's message is the newest), q (case number, account or contact email, serial, IMEI, or the customer's name: in Chinese any two or more consecutive characters, in other scripts whole words, every one given); keyset cursor.",
                tag: "cases", authentication: .agent,
                responses: [
                    200: .json("A page of cases.", "CaseList"), 401: .problem("Not authenticated."), 422: .problem("A bad filter, limit or cursor."),
                ],
                handler: cases.list),
            APIRoute(
                .GET, "/api/v1/cases/{case_number}", operationID: "getCase", summary: "One case with allowed_actions for the caller and ETag.",
                tag: "cases", authentication: .agent,
                responses: [200: .json("The case.", "Case"), 401: .problem("Not authenticated."), 404: caseNumber404],
                handler: cases.get),
            APIRoute(
                .PATCH, "/api/v1/cases/{case_number}", operationID: "correctCase",
                summary:
                    "Correct an open case (tier1+, If-Match required): customer.name, customer.contact_email, language (null: not known), facts (rescue_email included), devices (the whole list) and summary, as a merge patch; one case_corrected event names the fields changed (no personal value in it); the previous contact address is mailed that it changed (the new one masked). A contact address reaching the rescue address's mailbox is 422 naming the field; 409 case_not_open on a finished case, path_decided when the facts would change the path in engineering. A patch that changes nothing answers the case as it is.",
                tag: "cases", authentication: .agent, requestSchema: "CaseCorrection", responses: changing,
                bodyLimit: 64 * 1024, handler: cases.correct
            ).requiringIfMatch(),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/transitions", operationID: "transitionCase",
                summary:
                    "Take a workflow action (If-Match required); send_reset takes the customer's answers and resets to the primary address on file. A complete with an unlock that is a required step not done yet schedules it as POST /unlocks does (cooling-off, notice, stop link) and answers 409 unlocks_outstanding (ETag: the version now); complete again once the service has done it.",
                tag: "cases", authentication: .agent, requestSchema: "Transition", responses: changing,
                bodyLimit: 16 * 1024, deferred: cases.transitionRoute
            ).requiringIfMatch(),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/assign", operationID: "assignCase",
                summary:
                    "Take the case or hand it to a colleague of the case's tier or above (If-Match required); an open case only: a finished one (resolved, rejected, closed, merged) is 409 case_not_open.",
                tag: "cases", authentication: .agent, requestSchema: "Assign", responses: changing,
                bodyLimit: 4096, handler: cases.assign
            ).requiringIfMatch(),
            APIRoute(
                .GET, "/api/v1/agents", operationID: "listAssignees",
                summary:
                    "Active agents of ?tier= or above (all tiers without it), by name, at most 500: whom a case can be handed to (ids, names, tiers only).",
                tag: "cases", authentication: .agent,
                responses: [
                    200: .json("The agents.", "AgentList"), 401: .problem("Not authenticated."), 403: .problem("Not allowed."),
                    422: .problem("An unknown tier."),
                ],
                handler: cases.colleagues),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/actions/freeze", operationID: "freezeCase",
                summary: "Freeze the account's purchases and cloud operations while the case is open (tier2+, If-Match required).",
                tag: "cases", authentication: .agent, responses: changing,
                bodyLimit: 4096, handler: cases.freeze
            ).requiringIfMatch(),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/erasure", operationID: "eraseCase",
                summary:
                    "Erase what identifies the customer of a finished case (admins): name, contact, account and rescue addresses, devices, summary, notes, evidence details and summaries, documents' content, the addresses and bodies of its messages, the personal values on its timeline, its search terms. The case keeps its number, kind, path, states, times and actors; erased fields read null and erased_at is set; the timeline, the admin log and the checkpoints still verify. One transaction; an admin-log entry. 409 case_open while the case is open, already_erased the second time.",
                tag: "cases", authentication: .agent, requestSchema: "Erasure", responses: changing,
                bodyLimit: 8192, handler: cases.erase
            ),
            APIRoute(
                .GET, "/api/v1/cases/{case_number}/export", operationID: "exportCase",
                summary:
                    "Everything held about the customer on a case, for a data-subject request (admins): a ZIP of case.json (the case, timeline, notes, evidence, messages) and each document as documents/<evidence id>.<ext>. Each export is an admin-log entry (case_exported).",
                tag: "cases", authentication: .agent,
                responses: [
                    200: .other("A ZIP archive (stored entries).", mediaTypes: ["application/zip"]), 401: .problem("Not authenticated."),
                    403: .problem("Not an admin: recorded as a `denied` event on the case."), 404: caseNumber404,
                ],
                handler: cases.export),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/merge", operationID: "mergeCase",
                summary:
                    "Merge this duplicate into another open case on the same account email (tier2+, If-Match of this case): state merged with merged_into; its evidence and notes count and show on the target (from_case); both timelines record it. 409 not_same_account, case_not_open; 409 different_customer (with `differing`) when the customers' names or contact addresses differ, unless same_customer_confirmed. The merged number's own access code then sees the target's status and only the notes and evidence its own case brought.",
                tag: "cases", authentication: .agent, requestSchema: "Merge", responses: changing,
                bodyLimit: 4096, handler: cases.merge
            ).requiringIfMatch(),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/unmerge", operationID: "unmergeCase",
                summary:
                    "Undo a merge while the target is open (tier2+, If-Match of the merged case): back to the state before; its items leave the target. 409 case_not_open.",
                tag: "cases", authentication: .agent, requestSchema: "Unmerge", responses: changing,
                bodyLimit: 4096, handler: cases.unmerge
            ).requiringIfMatch(),
            APIRoute(
                .GET, "/api/v1/cases/{case_number}/status", operationID: "clientCaseStatus",
                summary: "API clients: the customer's view (the body of POST /api/v1/status) of a case the client opened; 404 for any other case.",
                tag: "cases", authentication: .apiClient,
                responses: [
                    200: .json("Where the case stands, in plain words.", "Status"), 401: .problem("Not authenticated."),
                    403: .problem("Not allowed (agents use GET /api/v1/cases/{case_number})."), 404: caseNumber404,
                ],
                handler: status.clientStatus),
            APIRoute(
                .GET, "/api/v1/cases/{case_number}/questions", operationID: "caseQuestions",
                summary:
                    "The security questions on file for the case's account (agents): ids and texts, never an answer; matched says whether an answer filed on the case (not rejected) matched it.",
                tag: "cases", authentication: .agent,
                responses: [
                    200: .json("The questions.", "QuestionList"), 401: .problem("Not authenticated."), 403: .problem("Not allowed."),
                    404: .problem("not_found, invalid_case_number, or no_account_on_file: the account is not on file."),
                ],
                handler: cases.questions),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/access-code", operationID: "reissueAccessCode",
                summary:
                    "Issue a new access code for a lost one (agents): it is mailed to the contact address, and answered (access_code, shown once) only with read_out true: tier2+, and only while this agent has verified the caller (caller-verification, within 15 minutes; else 409 caller_not_verified). v1.2's caller_check is 422, naming the new way. The old code stops working, the case number's status lock is cleared, the event names who did it and how the caller was verified. At most one a minute per case.",
                tag: "cases", authentication: .agent, requestSchema: "AccessCodeRequest",
                responses: [
                    201: .json("Whether the code was mailed, and the code itself only with read_out.", "IssuedAccessCode"),
                    401: .problem("Not authenticated."),
                    403: .problem(
                        "forbidden, or insufficient_tier: read_out from below tier2 (nothing is issued); recorded as a `denied` event on the case."
                    ),
                    404: caseNumber404,
                    422: .problem("validation_failed: caller_check is retired (verify the caller, then send read_out)."),
                    409: .problem(
                        "caller_not_verified: read_out without a caller this agent verified (nothing is issued). access_code_just_issued: a code was issued for this case less than a minute ago (and mailed); see Retry-After. Or idempotency_in_progress: the first request with this Idempotency-Key still runs (a retry with the key gets the first code)."
                    ),
                ],
                bodyLimit: 4096, handler: cases.reissueAccessCode
            ).acceptingAgentIdempotencyKey(),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/caller-verification", operationID: "verifyCaller",
                summary:
                    "Verify a caller (tier1+): customer_code (the code on their status page) or mailed_code (a one-time code mailed to the contact address by {\"method\": \"mailed_code\"}, valid 10 minutes). A match is verified for 15 minutes, for this agent, as a caller_verified event; it lets them read out a new access code or correct the contact address. A wrong code is 422 caller_code_wrong and counts against the case's status look-up budget (9 in 8 hours; then 429, a caller_code_locked event and the risk signal caller_code_guessed). A verification never clears a risk signal.",
                tag: "cases", authentication: .agent, requestSchema: "CallerVerificationRequest",
                responses: [
                    200: .json("The caller is verified until verified_until, for this agent.", "CallerVerified"),
                    202: .json(
                        "The one-time code was mailed (mailed false: the contact address is the rescue address; nothing was sent).",
                        "CallerCodeMailed"),
                    401: .problem("Not authenticated."), 403: .problem("forbidden: recorded as a `denied` event on the case."),
                    404: caseNumber404,
                    409: .problem("case_not_open: a finished case has no call codes (mail a one-time code instead). case_erased."),
                    422: .problem(
                        "validation_failed: not exactly one of customer_code, mailed_code, method. caller_code_wrong: not the case's code (counted)."),
                    429: .problem("locked_out: wrong codes spent the case's look-up budget; see Retry-After."),
                ],
                bodyLimit: 4096, handler: cases.verifyCaller),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/actions/unfreeze", operationID: "unfreezeCase",
                summary:
                    "Lift the account's freeze (tier2+, If-Match required); 409 not_frozen when there is none. Resolved, rejected and closed lift it by themselves.",
                tag: "cases", authentication: .agent, responses: changing,
                bodyLimit: 4096, handler: cases.unfreeze
            ).requiringIfMatch(),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/flags", operationID: "flagCase",
                summary:
                    "Flag the case (tier1+): raises the risk signal flagged with the reason (suspected impersonation, coercion, a story that does not hold); approve and unlock steps are then refused (risk_uncleared) until a tier3 or engineering agent clears it. The case with risk_signals.",
                tag: "cases", authentication: .agent, requestSchema: "RiskReason", responses: changing,
                bodyLimit: 8192, handler: cases.flag),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/risk/clear", operationID: "clearRisk",
                summary:
                    "Clear every uncleared risk signal of the case with a reason (tier3, engineering): a risk_cleared event naming them. The agent who cleared may not then approve the case or record its unlock steps (four_eyes): a second agent does. Nothing to clear changes nothing.",
                tag: "cases", authentication: .agent, requestSchema: "RiskReason", responses: changing,
                bodyLimit: 8192, handler: cases.clearRisk),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/unlocks", operationID: "recordUnlock",
                summary:
                    "Record one step of the unlock checklist (engineering, case in engineering, If-Match required): it is scheduled, done by the service RECLAIM_UNLOCK_DELAY seconds later (unlocks.scheduled shows it with effective_at), the case frozen meanwhile, and every address on file for the account is mailed a notice with a stop link. 422 unlock_not_allowed for a step not required, 409 already_done for one done or scheduled.",
                tag: "cases", authentication: .agent, requestSchema: "UnlockStep", responses: changing,
                bodyLimit: 4096, handler: cases.recordUnlock
            ).requiringIfMatch(),
            APIRoute(
                .DELETE, "/api/v1/cases/{case_number}/unlocks/{step}", operationID: "cancelUnlock",
                summary:
                    "Cancel a scheduled unlock step (engineering, If-Match required) with a reason: unlock_cancelled and case.unlock_cancelled; the case stays frozen. 409 unlock_not_scheduled when the step is not scheduled.",
                tag: "cases", authentication: .agent, requestSchema: "CancelUnlock", responses: changing,
                bodyLimit: 4096, handler: cases.cancelUnlock
            ).requiringIfMatch(),
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/notes", operationID: "addNote",
                summary:
                    "Add a note: internal (agents only; on any case) or customer (also on the status page, and mailed; on any case but a merged one, whose customer reads the case it went into).",
                tag: "cases", authentication: .agent, requestSchema: "NewNote",
                responses: [
                    201: .json("The note.", "Note"), 401: .problem("Not authenticated."), 403: .problem("Not allowed."),
                    404: caseNumber404, 409: .refusal(WorkflowRefusal.caseNotOpen), 422: .problem("validation_failed."),
                ],
                bodyLimit: 64 * 1024, handler: notes.add
            ).acceptingAgentIdempotencyKey(),
            APIRoute(
                .GET, "/api/v1/cases/{case_number}/notes", operationID: "listNotes", summary: "Every note on the case, oldest first.",
                tag: "cases", authentication: .agent,
                responses: [200: .json("The notes.", "NoteList"), 401: .problem("Not authenticated."), 404: caseNumber404],
                handler: notes.list),
            APIRoute(
                .GET, "/api/v1/cases/{case_number}/events", operationID: "caseEvents",
                summary: "The timeline, oldest first: a SHA-256 hash chain over the JCS form of {seq, at, actor, type, data}.",
                tag: "cases", authentication: .agent,
                responses: [200: .json("A page of events.", "EventList"), 401: .problem("Not authenticated."), 404: caseNumber404],
                handler: cases.events),
        ]
    }

    // MARK: Evidence
    var evidenceRoutes: [APIRoute] {
        let caseNumber404: ResponseDoc = .problem("invalid_case_number (mistyped, no database query) or not_found.")
        // What a document may be declared as, raw or as the form's file part (the bytes are sniffed either way).
        let documentMediaTypes = MediaType.allCases.map(\.rawValue) + ["application/octet-stream"]
        return [
            APIRoute(
                .POST, "/api/v1/cases/{case_number}/evidence", operationID: "fileEvidence",
                summary:
                    "File evidence (agents, API clients): typed JSON (security_answers, card, device, transcript), a multipart document (fields type, file) or raw bytes with ?type=. A case holds at most RECLAIM_CASE_DOCUMENTS documents (default 100): then 409 too_many_documents. An API client files into a case it opened, or into another open case whose access code it sends in the Reclaim-Access-Code header (a wrong one counts against the case number); otherwise 404. A finished case (resolved, rejected, closed, merged) takes no evidence from anyone: 409 case_not_open.",
                tag: "evidence", authentication: .agentOrAPIClient, requestSchema: "NewEvidence",
                responses: [
                    201: .json("The evidence, summarised: never a secret.", "Evidence"), 400: .problem("Malformed JSON or form."),
                    401: .problem("Not authenticated."), 403: .problem("Not allowed."), 404: caseNumber404,
                    409: .refusal(WorkflowRefusal.caseNotOpen, OperationError.tooManyDocuments(limit: DocumentUpload.defaultCaseLimit)),
                    413: .problem("payload_too_large: more than 10 MiB of file."),
                    415: .problem("unsupported_media_type: not PDF, JPEG, PNG or HEIC, or not the declared type."),
                    422: .problem("validation_failed with errors per field (a card security code is refused, never echoed)."),
                    429: .problem("locked_out: too many wrong answers for the account on file; see Retry-After."),
                    503: .problem("busy: too many answers being checked; see Retry-After."),
                ],
                bodyLimit: DocumentUpload.maximumBytes, deferred: evidence.file
            )
            .acceptingMultipart(schema: "DocumentForm", partTypes: ["file": documentMediaTypes])
            .acceptingBytes(documentMediaTypes)
            .readingQuery(
                "type", oneOf: DocumentType.allCases.map(\.rawValue),
                "The document's type when the body is its raw bytes (required then; JSON and forms name it in the body)."),
            APIRoute(
                .GET, "/api/v1/cases/{case_number}/evidence", operationID: "listEvidence",
                summary: "The evidence on the case (summaries only, oldest first) and what is still missing for its path.",
                tag: "evidence", authentication: .agent,
                responses: [200: .json("The evidence.", "EvidenceList"), 401: .problem("Not authenticated."), 404: caseNumber404],
                handler: evidence.list),
            APIRoute(
                .GET, "/api/v1/cases/{case_number}/verification", operationID: "caseVerification",
                summary: "The two-of-three rule over the evidence filed on the case: each factor matched, mismatched or missing.",
                tag: "evidence", authentication: .agent,
                responses: [200: .json("The outcome.", "Verification"), 401: .problem("Not authenticated."), 404: caseNumber404],
                handler: evidence.verification),
            APIRoute(
                .GET, "/api/v1/evidence/{id}/content", operationID: "evidenceContent",
                summary:
                    "The decrypted bytes of a document or transcript (tier3+), as an attachment (?disposition=inline for a PDF, JPEG or PNG shown in the dashboard); the read is recorded on the timeline.",
                tag: "evidence", authentication: .agent,
                responses: [
                    200: .other(
                        "The bytes, with the sniffed media type (a transcript as UTF-8 text).",
                        mediaTypes: MediaType.allCases.map(\.rawValue) + ["text/plain", "application/octet-stream"]),
                    401: .problem("Not authenticated."), 403: .problem("Below tier3."), 404: .problem("No such evidence, or it has no content."),
                ],
                handler: evidence.content),
            APIRoute(
                .POST, "/api/v1/evidence/{id}/review", operationID: "reviewEvidence",
                summary:
                    "Accept or reject evidence with a reason (tier2+ for typed evidence, tier3+ for documents and transcripts); kept as a separate record and an event. 409 case_not_open when the case it counts on (for a merged case's item, the case it went into) is finished.",
                tag: "evidence", authentication: .agent, requestSchema: "EvidenceReview",
                responses: [
                    200: .json("The evidence with its new status.", "Evidence"), 401: .problem("Not authenticated."),
                    403: .refusals([OperationError.reviewNeedsTier(.tier3)], status: 403, lead: ["forbidden"]),
                    404: .refusal(OperationError.evidenceNotFound),
                    409: .refusal(WorkflowRefusal.caseNotOpen), 422: .problem("validation_failed."),
                ],
                bodyLimit: 8192, handler: evidence.review
            ).acceptingAgentIdempotencyKey(),
        ]
    }

    // MARK: Accounts
    var accountRoutes: [APIRoute] {
        [
            APIRoute(
                .POST, "/api/v1/accounts", operationID: "createAccount",
                summary: "Put an account on file (admin agents, API clients): answers argon2id-hashed, cards as first six + last four + fingerprint.",
                tag: "accounts", authentication: .agentOrAPIClient, requestSchema: "NewAccount",
                responses: [
                    201: .json("The account, without secrets.", "Account"), 400: .problem("Malformed JSON."), 401: .problem("Not authenticated."),
                    403: .problem("Not allowed."), 409: .refusal(OperationError.accountExists), 422: .problem("validation_failed."),
                    503: .problem("busy: too many hashes queued; see Retry-After."),
                ],
                bodyLimit: 64 * 1024, deferred: accounts.create),
            APIRoute(
                .PUT, "/api/v1/accounts/{email}", operationID: "replaceAccount",
                summary:
                    "Replace the account on file for an e-mail (admin agents): the body as for createAccount (its email the new address); answers re-hashed, cards re-fingerprinted. Recorded in the audit log.",
                tag: "accounts", authentication: .agent, requestSchema: "NewAccount",
                responses: [
                    200: .json("The account, without secrets.", "Account"), 400: .problem("Malformed JSON."), 401: .problem("Not authenticated."),
                    403: .problem("Not an admin agent."), 404: .refusal(OperationError.accountNotFound),
                    409: .refusal(OperationError.accountExists), 422: .problem("validation_failed."),
                    503: .problem("busy: too many hashes queued; see Retry-After."),
                ],
                bodyLimit: 64 * 1024, deferred: accounts.replace),
        ]
    }

    // MARK: Customers
    var customerRoutes: [APIRoute] {
        [
            APIRoute(
                .POST, "/api/v1/status", operationID: "customerStatus",
                summary: "A customer's view of their case, with case number and access code; throttled per case number and per address.",
                tag: "customers", authentication: .customer, requestSchema: "StatusRequest",
                responses: [
                    200: .json("Where the case stands, in plain words.", "Status"), 400: .problem("Malformed JSON."),
                    404: .problem("invalid_case_number, or not_found (the same for an unknown case and a wrong code)."),
                    410: .problem("case_erased: the right code, but the customer's data on this finished case was erased."),
                    429: .problem("locked_out: too many failures for this case number or address; see Retry-After."),
                ],
                bodyLimit: 4096, handler: status.status),
            // "This wasn't me": the token of a scheduled unlock's notice, under the status look-up's address throttle.
            APIRoute(
                .POST, "/api/v1/status/stop", operationID: "customerStopUnlocks",
                summary:
                    "The stop link of an unlock notice (no sign-in): cancels every scheduled unlock step of the token's case (actor customer), keeps it frozen and hands it back to tier 3. The same token again is 200 and changes nothing.",
                tag: "customers", authentication: .customer, requestSchema: "StopRequest",
                responses: [
                    200: .json("What was stopped, in the case's language.", "Stopped"), 400: .problem("Malformed JSON."),
                    404: .problem("stop_link_unknown: the token was never issued (each failure counts against the address)."),
                    422: .problem("validation_failed: no token."),
                    429: .problem("locked_out: too many failures from this address; see Retry-After."),
                ],
                bodyLimit: 4096, handler: status.stop),
            // Evidence: a customer's own document upload, under the same throttle as the status look-up.
            APIRoute(
                .POST, "/api/v1/status/evidence", operationID: "customerUploadEvidence",
                summary:
                    "A customer uploads a document (PDF, JPEG, PNG or HEIC) or the ransom conversation (type transcript: also UTF-8 text or a saved e-mail, message/rfc822): multipart fields case_number, access_code, type and file, 10 MiB at most.",
                tag: "customers", authentication: .customer,
                responses: [
                    201: .json("What was filed (type, status, size, sha256, media type).", "CustomerUploadReceipt"),
                    400: .problem("Malformed form."),
                    404: .problem("invalid_case_number, or not_found (the same for an unknown case and a wrong code)."),
                    410: .problem("case_erased: the right code, but the customer's data on this finished case was erased."),
                    409: .problem(
                        "case_not_open: the case is resolved, rejected or closed; nothing is filed. Or too_many_documents (with limit): the case holds RECLAIM_CASE_DOCUMENTS documents already."
                    ),
                    413: .problem("payload_too_large: more than 10 MiB of file."),
                    415: .problem(
                        "unsupported_media_type: not a form, or the file is not PDF, JPEG, PNG or HEIC (a transcript: also UTF-8 text or an e-mail)."),
                    422: .problem("validation_failed: a field is missing."),
                    429: .problem("locked_out: too many failures for this case number or address; see Retry-After."),
                ],
                handler: status.uploadEvidence
            )
            .acceptingMultipart(schema: "CustomerUpload", partTypes: ["file": TranscriptMediaType.declarable + ["application/octet-stream"]]),
        ]
    }

    // MARK: Administration
    var adminRoutes: [APIRoute] {
        let notAdmin: ResponseDoc = .problem("forbidden: only admin agents may administer.")
        let missing: ResponseDoc = .refusal(IdentityAdministrationError.noSuchAgent)
        let noClient: ResponseDoc = .refusal(IdentityAdministrationError.noSuchClient(activeOnly: true))
        let proposed: ResponseDoc = .json(
            "Proposed, not done: another admin exists, and a different admin must confirm it (POST /api/v1/admin/proposals/{id}/confirm).",
            "AdminProposal")
        let twoPeople =
            " While more than one admin exists (disabled ones count), it is 202 with a proposal that takes effect only when a different admin confirms it; a lone admin acts alone."
        return [
            APIRoute(
                .GET, "/api/v1/admin/agents", operationID: "adminListAgents",
                summary: "Every agent by email: tier, role, active or not, last sign-in (admins).", tag: "administration", authentication: .agent,
                responses: [200: .json("A page of agents.", "AdminAgentList"), 403: notAdmin, 422: .problem("A bad limit or cursor.")],
                handler: admin.listAgents),
            APIRoute(
                .POST, "/api/v1/admin/agents", operationID: "adminAddAgent",
                summary: "Create an agent (admins): 201 with its password and TOTP URI, shown this once. Recorded in the audit log."
                    + twoPeople + " The proposer is shown the password, the confirming admin the TOTP URI: neither alone holds both.",
                tag: "administration", authentication: .agent, requestSchema: "AdminNewAgent",
                responses: [
                    201: .json("The agent and its one-time secrets.", "AdminCreatedAgent"),
                    202: .json("Proposed: the proposal and the new agent's password (shown this once).", "AdminProposedAgent"), 403: notAdmin,
                    409: .refusal(IdentityAdministrationError.agentExists), 422: .problem("validation_failed."),
                    503: .problem("busy: too many passwords being hashed; see Retry-After."),
                ],
                bodyLimit: 4096, deferred: admin.addAgent),
            APIRoute(
                .PATCH, "/api/v1/admin/agents/{id}", operationID: "adminChangeAgent",
                summary: "Change an agent's tier, admin flag or active state (admins); deactivating ends its sessions. Recorded in the audit log."
                    + " A change that gives power (a higher tier, admin granted or taken from another admin, passkey_required lifted) is proposed, all of it:"
                    + twoPeople,
                tag: "administration", authentication: .agent, requestSchema: "AdminAgentChange",
                responses: [
                    200: .json("The agent.", "AdminAgent"), 202: proposed, 403: notAdmin, 404: missing,
                    409: .refusal(
                        IdentityAdministrationError.lockout(.selfDemotion), IdentityAdministrationError.lockout(.lastAdmin),
                        IdentityAdministrationError.lockout(.noPasskeyYet)),
                    422: .problem("validation_failed."),
                ],
                bodyLimit: 4096, handler: admin.changeAgent),
            APIRoute(
                .POST, "/api/v1/admin/agents/{id}/reset-password", operationID: "adminResetPassword",
                summary: "Give an agent a new generated password, shown this once; its sessions end (admins). Recorded in the audit log."
                    + " Another agent's:" + twoPeople + " The password is made then and shown only to the confirming admin.",
                tag: "administration", authentication: .agent,
                responses: [
                    200: .json("The new password.", "AdminPasswordReset"), 202: proposed, 403: notAdmin, 404: missing,
                    503: .problem("busy: too many passwords being hashed; see Retry-After."),
                ],
                bodyLimit: 4096, deferred: admin.resetPassword),
            APIRoute(
                .POST, "/api/v1/admin/agents/{id}/reset-totp", operationID: "adminResetTOTP",
                summary: "Give an agent a new TOTP secret, its URI shown this once; its sessions end (admins). Recorded in the audit log."
                    + " Another agent's:" + twoPeople + " The secret is made then and shown only to the confirming admin.",
                tag: "administration", authentication: .agent,
                responses: [200: .json("The new TOTP URI.", "AdminTOTPReset"), 202: proposed, 403: notAdmin, 404: missing],
                bodyLimit: 4096, handler: admin.resetTOTP),
            APIRoute(
                .GET, "/api/v1/admin/proposals", operationID: "adminListProposals",
                summary:
                    "Proposed agent changes, newest first: what, for whom, who proposed it, until when, and where it stands (pending, confirmed, expired, withdrawn); alone says whether the admin asking is the only admin (then changes act at once).",
                tag: "administration", authentication: .agent,
                responses: [200: .json("A page of proposals.", "AdminProposalList"), 403: notAdmin, 422: .problem("A bad limit or cursor.")],
                handler: admin.listProposals),
            APIRoute(
                .POST, "/api/v1/admin/proposals/{id}/confirm", operationID: "adminConfirmProposal",
                summary:
                    "Confirm a proposal as a different admin: it is checked again and takes effect now. The answer carries what the change answers, its one-time secrets shown this once to this admin only. Recorded in the audit log.",
                tag: "administration", authentication: .agent,
                responses: [
                    200: .json("The confirmed proposal and the change's answer.", "AdminConfirmedProposal"), 403: notAdmin,
                    404: .refusal(IdentityAdministrationError.noSuchProposal, IdentityAdministrationError.noSuchAgent),
                    409: .refusals(
                        [
                            IdentityAdministrationError.sameAdmin, IdentityAdministrationError.proposalExpired,
                            IdentityAdministrationError.proposalClosed, IdentityAdministrationError.agentExists,
                        ] + AdministrationLockout.allCases.map(IdentityAdministrationError.lockout), status: 409),
                    503: .problem("busy: too many passwords being hashed; see Retry-After."),
                ],
                bodyLimit: 4096, deferred: admin.confirmProposal),
            APIRoute(
                .POST, "/api/v1/admin/proposals/{id}/withdraw", operationID: "adminWithdrawProposal",
                summary: "Withdraw a pending proposal (its proposer) or decline it (another admin). Recorded in the audit log.",
                tag: "administration", authentication: .agent,
                responses: [
                    200: .json("The withdrawn proposal.", "AdminProposal"), 403: notAdmin, 404: .refusal(IdentityAdministrationError.noSuchProposal),
                    409: .refusals([IdentityAdministrationError.proposalExpired, IdentityAdministrationError.proposalClosed], status: 409),
                ],
                bodyLimit: 4096, handler: admin.withdrawProposal),
            APIRoute(
                .GET, "/api/v1/admin/clients", operationID: "adminListClients",
                summary: "Every API client by creation, revoked ones included (admins).", tag: "administration", authentication: .agent,
                responses: [200: .json("A page of clients.", "AdminClientList"), 403: notAdmin, 422: .problem("A bad limit or cursor.")],
                handler: admin.listClients),
            APIRoute(
                .POST, "/api/v1/admin/clients", operationID: "adminAddClient",
                summary: "Create an API client (admins): 201 with its API key and signing secret, shown this once. Recorded in the audit log.",
                tag: "administration", authentication: .agent, requestSchema: "AdminNewClient",
                responses: [
                    201: .json("The client and its one-time secrets.", "AdminCreatedClient"), 403: notAdmin, 422: .problem("validation_failed."),
                ],
                bodyLimit: 4096, handler: admin.addClient),
            APIRoute(
                .POST, "/api/v1/admin/clients/{id}/rotate", operationID: "adminRotateClient",
                summary: "A new signing secret, shown this once; the previous one keeps signing for 24 hours (admins). Recorded in the audit log.",
                tag: "administration", authentication: .agent,
                responses: [200: .json("The client and its new secret.", "AdminRotatedClient"), 403: notAdmin, 404: noClient],
                bodyLimit: 4096, handler: admin.rotateClient),
            APIRoute(
                .POST, "/api/v1/admin/clients/{id}/rotate-key", operationID: "adminRotateClientKey",
                summary:
                    "A new API key, shown this once; the previous key is refused at once (the signing secret stays) (admins). Recorded in the audit log.",
                tag: "administration", authentication: .agent,
                responses: [200: .json("The client and its new key.", "AdminRotatedClientKey"), 403: notAdmin, 404: noClient],
                bodyLimit: 4096, handler: admin.rotateClientKey),
            APIRoute(
                .DELETE, "/api/v1/admin/clients/{id}", operationID: "adminRevokeClient",
                summary: "Revoke an API client: its key is refused from now on (admins). Recorded in the audit log.",
                tag: "administration", authentication: .agent,
                responses: [200: .json("The revoked client.", "AdminClient"), 403: notAdmin, 404: noClient],
                handler: admin.revokeClient),
            APIRoute(
                .GET, "/api/v1/admin/audit", operationID: "adminAudit",
                summary:
                    "Every administrative change, oldest first: a SHA-256 hash chain over the JCS form of {seq, at, actor, type, data}, as a case timeline.",
                tag: "administration", authentication: .agent,
                responses: [200: .json("A page of events.", "EventList"), 403: notAdmin, 422: .problem("A bad limit or cursor.")],
                handler: admin.audit),
        ]
    }

    // MARK: The transparency log
    var auditRoutes: [APIRoute] {
        let bad: ResponseDoc = .problem("validation_failed: errors name the parameter (missing, not a whole number, or outside today's tree).")
        return [
            APIRoute(
                .GET, "/api/v1/audit/checkpoint", operationID: "auditCheckpoint",
                summary:
                    "The latest signed checkpoint of the transparency log (every timeline event and admin-log entry a leaf of one RFC 9162 tree): a C2SP tlog-checkpoint in a signed note, Ed25519 (origin, tree size, base64 root, blank line, `— <origin> <base64(key id ‖ signature)>`). Signed at most every RECLAIM_CHECKPOINT_SECONDS when the tree grew; no sign-in.",
                tag: "audit", responses: [200: .other("The signed note.", mediaType: "text/plain")],
                handler: audit.checkpoint),
            APIRoute(
                .GET, "/api/v1/audit/key", operationID: "auditKey",
                summary:
                    "The checkpoints' verifier key, `<origin>+<hex key id>+<base64(0x01 ‖ Ed25519 public key)>` (golang.org/x/mod/sumdb/note's form); no sign-in.",
                tag: "audit", responses: [200: .other("The verifier key.", mediaType: "text/plain")],
                handler: audit.key),
            APIRoute(
                .GET, "/api/v1/audit/proof", operationID: "auditInclusionProof",
                summary:
                    "RFC 9162 §2.1.3 inclusion proof of ?leaf= (an event's leaf_index) in the tree's first ?size= leaves (a checkpoint's size); no sign-in.",
                tag: "audit", responses: [200: .json("The proof.", "AuditProof"), 422: bad],
                handler: audit.inclusion),
            APIRoute(
                .GET, "/api/v1/audit/consistency", operationID: "auditConsistencyProof",
                summary:
                    "RFC 9162 §2.1.4 consistency proof from the tree's first ?from= leaves to its first ?to= (1 ≤ from ≤ to ≤ today's size; empty when equal); no sign-in.",
                tag: "audit", responses: [200: .json("The proof.", "AuditProof"), 422: bad],
                handler: audit.consistency),
            APIRoute(
                .GET, "/api/v1/admin/checkpoint", operationID: "adminCheckpoint",
                summary:
                    "The latest checkpoint and whether the service's own tree verifies against it: its signature under the key file's checkpoint keys, its size, and the consistency proof to today's root (admins).",
                tag: "administration", authentication: .agent,
                responses: [
                    200: .json("The checkpoint and the verdict.", "AdminCheckpoint"), 403: .problem("forbidden: only admin agents may administer."),
                ],
                handler: audit.adminCheckpoint),
        ]
    }

    // MARK: Supervision
    var reportRoutes: [APIRoute] {
        [
            APIRoute(
                .GET, "/api/v1/reports/summary", operationID: "reportSummary",
                summary:
                    "Open cases by state and tier, overdue cases, each path's share resolved within its target, time to resolve (p50, p90), the daily trend over ?days= (1-366, default 30, whole UTC days), open, overdue and resolved cases per agent, time to first response and open cases by age (JSON only); ?format=csv for a spreadsheet (tier2+ and admins).",
                tag: "reports", authentication: .agent,
                responses: [
                    200: ResponseDoc(
                        description: "The figures, as JSON or as CSV (one figure a line).",
                        content: [("application/json", "ReportSummary"), ("text/csv", nil)]),
                    403: .problem("forbidden: below tier2 and not an admin."), 422: .problem("validation_failed: days or format."),
                ],
                handler: reports.summary)
        ]
    }

    // MARK: Passkeys
    var passkeyRoutes: [APIRoute] {
        let refused: ResponseDoc = .problem(
            "passkey_refused: the client data, authenticator data or challenge did not pass (the reason is in detail).")
        return [
            APIRoute(
                .POST, "/api/v1/passkeys/registration-options", operationID: "passkeyRegistrationOptions",
                summary:
                    "A fresh challenge (single use, 5 minutes) and the options for navigator.credentials.create: ES256, attestation none, user verification required.",
                tag: "identity", authentication: .agent,
                responses: [200: .json("The options, base64url where the API takes bytes.", "PasskeyRegistrationOptions")],
                bodyLimit: 4096, handler: passkeys.registrationOptions),
            APIRoute(
                .POST, "/api/v1/passkeys", operationID: "registerPasskey",
                summary:
                    "Register a passkey: the browser's client_data_json and attestation_object (base64url); origin, RP ID hash, user presence and verification, challenge checked.",
                tag: "identity", authentication: .agent, requestSchema: "PasskeyRegistration",
                responses: [201: .json("The passkey.", "Passkey"), 409: .problem("passkey_exists."), 422: refused],
                bodyLimit: 16 * 1024, handler: passkeys.register),
            APIRoute(
                .GET, "/api/v1/passkeys", operationID: "listPasskeys", summary: "The signed-in agent's passkeys.",
                tag: "identity", authentication: .agent, responses: [200: .json("The passkeys.", "PasskeyList")],
                handler: passkeys.list),
            APIRoute(
                .DELETE, "/api/v1/passkeys/{id}", operationID: "removePasskey", summary: "Remove one of the signed-in agent's passkeys.",
                tag: "identity", authentication: .agent,
                responses: [
                    204: .empty("Removed."), 404: .problem("No such passkey of yours."),
                    409: .refusal(IdentityAdministrationError.lockout(.lastRequiredPasskey)),
                ],
                handler: passkeys.remove),
            APIRoute(
                .POST, "/api/v1/session/passkey-options", operationID: "passkeySignInOptions",
                summary:
                    "A fresh sign-in challenge (single use, 5 minutes) for navigator.credentials.get; each one counts against this address's budget (as failed sign-ins do).",
                tag: "identity",
                responses: [
                    200: .json("The options.", "PasskeySignInOptions"),
                    429: .problem("rate_limited: too many challenges for this address; see Retry-After."),
                ],
                bodyLimit: 4096, handler: passkeys.signInOptions),
            APIRoute(
                .POST, "/api/v1/session/passkey", operationID: "signInWithPasskey",
                summary:
                    "Sign in with a passkey instead of password and TOTP: the assertion (base64url); challenge, origin, RP ID hash, user presence and verification, ES256 signature and sign count checked. Sets the session cookie.",
                tag: "identity", requestSchema: "PasskeyAssertion",
                responses: [
                    201: .json("Signed in; the cookie is set.", "Session"),
                    401: .problem(
                        "invalid_credentials: the same answer for every refusal (a sign-count regression is also recorded in the admin audit log)."),
                ],
                bodyLimit: 16 * 1024, handler: passkeys.signIn),
        ]
    }

    // MARK: Notifications
    var notificationRoutes: [APIRoute] {
        let notFound: ResponseDoc = .problem("not_found: the caller has no such endpoint (or delivery).")
        return [
            APIRoute(
                .POST, "/api/v1/webhooks", operationID: "createWebhook",
                summary:
                    "Register a Standard Webhooks endpoint (API clients): https only, no loopback/private/link-local destination unless RECLAIM_WEBHOOK_ALLOW lists it; 201 with the whsec_ secret, shown this once.",
                tag: "notifications", authentication: .apiClient, requestSchema: "NewWebhook",
                responses: [
                    201: .json("The endpoint and its secret.", "CreatedWebhook"), 400: .problem("Malformed JSON."),
                    401: .problem("Not authenticated."),
                    403: .problem("Not an API client."), 422: .problem("validation_failed: a refused URL or an unknown event."),
                ],
                bodyLimit: 8 * 1024, handler: webhooks.create),
            APIRoute(
                .GET, "/api/v1/webhooks", operationID: "listWebhooks", summary: "The caller's endpoints (never a secret).",
                tag: "notifications", authentication: .apiClient,
                responses: [200: .json("The endpoints.", "WebhookList"), 401: .problem("Not authenticated."), 403: .problem("Not an API client.")],
                handler: webhooks.list),
            APIRoute(
                .DELETE, "/api/v1/webhooks/{id}", operationID: "deleteWebhook", summary: "Delete an endpoint: nothing more is sent to it.",
                tag: "notifications", authentication: .apiClient,
                responses: [204: .empty("Deleted."), 401: .problem("Not authenticated."), 403: .problem("Not an API client."), 404: notFound],
                handler: webhooks.delete),
            APIRoute(
                .GET, "/api/v1/webhooks/{id}/deliveries", operationID: "listWebhookDeliveries",
                summary: "The endpoint's latest 100 messages, newest first, each with every attempt: time, status, duration, error.",
                tag: "notifications", authentication: .apiClient,
                responses: [
                    200: .json("The deliveries.", "WebhookDeliveryList"), 401: .problem("Not authenticated."), 403: .problem("Not an API client."),
                    404: notFound,
                ],
                handler: webhooks.deliveries),
            APIRoute(
                .POST, "/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry", operationID: "retryWebhookDelivery",
                summary: "Queue a delivery again, due now, with the same webhook-id.",
                tag: "notifications", authentication: .apiClient,
                responses: [
                    202: .json("Queued.", "WebhookRetry"), 401: .problem("Not authenticated."), 403: .problem("Not an API client."),
                    404: notFound, 409: .problem("endpoint_disabled: the receiver answered 410 Gone."),
                ],
                handler: webhooks.retry),
            // What was sent: per case for its agents, per API client for admins (never a body or a secret).
            APIRoute(
                .GET, "/api/v1/cases/{case_number}/messages", operationID: "caseMessages",
                summary:
                    "What the case sent to whom and when, oldest first (agents who read the timeline): each mail and webhook with its state, attempts, next attempt while queued and last error, and each mail refused because the contact address is the rescue address (state refused). Never a body or a secret.",
                tag: "cases", authentication: .agent,
                responses: [
                    200: .json("The messages.", "CaseMessageList"), 401: .problem("Not authenticated."),
                    403: .problem("Not allowed (API clients use their webhook deliveries)."),
                    404: .problem("invalid_case_number (mistyped, no database query) or not_found."),
                ],
                handler: caseMessages.list),
            // The conversation: received mail no rule matched, for agents to attach or discard.
            APIRoute(
                .GET, "/api/v1/inbound", operationID: "inboundList",
                summary:
                    "Received mail no rule matched to a case, newest first (at most 200; tier 1 and up): id, sender (from_rescue_address when it reaches a rescue address any case recorded), subject, text, time and why it is unmatched (no_match, sender_limit, too_large, not_a_message, ...). Auto-submitted and bulk mail (Auto-Submitted other than no, Precedence bulk, junk or list, List-Id) is listed only with kind=auto; another kind is 422.",
                tag: "cases", authentication: .agent,
                responses: [200: .json("The unmatched mail.", "InboundList"), 401: .problem("Not authenticated."), 403: .problem("Not allowed.")],
                handler: inbound.list),
            APIRoute(
                .POST, "/api/v1/inbound/{id}/attach", operationID: "inboundAttach",
                summary:
                    "Attach an unmatched mail to a case (tier 1 and up): it becomes that case's message (matched_by agent), with the message_received event, awaiting_reply and message.received as a matched one.",
                tag: "cases", authentication: .agent, requestSchema: "InboundAttach",
                responses: [
                    200: .json("The message as the case lists it.", "CaseMessageIn"), 401: .problem("Not authenticated."),
                    403: .problem("Not allowed."),
                    404: .problem("No such mail, or no case has this number."), 409: .refusal(OperationError.inboundHandled),
                    422: .problem("validation_failed: case_number."),
                ],
                bodyLimit: 4096, handler: inbound.attach),
            APIRoute(
                .POST, "/api/v1/inbound/{id}/discard", operationID: "inboundDiscard",
                summary: "Discard an unmatched mail from the list (tier 1 and up): kept, with who discarded it, when and why.",
                tag: "cases", authentication: .agent, requestSchema: "InboundDiscard",
                responses: [
                    204: .empty("Discarded."), 401: .problem("Not authenticated."), 403: .problem("Not allowed."),
                    404: .refusal(OperationError.inboundNotFound), 409: .refusal(OperationError.inboundHandled),
                    422: .problem("validation_failed: reason."),
                ],
                bodyLimit: 4096, handler: inbound.discard),
            APIRoute(
                .GET, "/api/v1/admin/clients/{id}/webhooks", operationID: "adminClientWebhooks",
                summary:
                    "An API client's webhook endpoints (deleted ones left out; disabled_at set when the receiver answered 410), each with its latest 20 deliveries and their attempts (admins). Never a secret.",
                tag: "administration", authentication: .agent,
                responses: [
                    200: .json("The endpoints.", "AdminClientWebhookList"), 401: .problem("Not authenticated."),
                    403: .problem("forbidden: only admin agents may administer."), 404: .problem("No such agent or client."),
                ],
                handler: adminWebhooks.list),
            APIRoute(
                .POST, "/api/v1/admin/clients/{id}/webhooks/{endpoint_id}/deliveries/{delivery_id}/retry", operationID: "adminRetryWebhookDelivery",
                summary:
                    "Queue one of the client's deliveries again (a failed or dead-lettered one), due now, with the same webhook-id (admins). Recorded in the audit log.",
                tag: "administration", authentication: .agent,
                responses: [
                    202: .json("Queued.", "WebhookRetry"), 401: .problem("Not authenticated."),
                    403: .problem("forbidden: only admin agents may administer."), 404: .problem("No such client, endpoint or delivery."),
                    409: .problem("endpoint_disabled: the receiver answered 410 Gone."),
                ],
                bodyLimit: 4096, handler: adminWebhooks.retry),
        ]
    }
}
