import Crypto
import Foundation
import HTTPServer
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore

/// `/api/v1/cases...`: create, read, the queue, transitions, assignment, freeze and the timeline.
/// Handlers load, ask `Workflow` to decide, store with an event, respond; no workflow rule lives here.
final class CasesController: Sendable {
    let context: ServiceContext
    let workflow: Workflow
    let operations: CaseOperations
    /// Verifies answers given with `send_reset` (argon2id, ~15 ms each).
    let answerHasher = PasswordHash()
    /// Where `send_reset` checks given answers, so argon2id never runs on an HTTP worker thread.
    let hashQueue: WorkQueue

    init(context: ServiceContext, workflow: Workflow = Workflow(), hashQueue: WorkQueue = WorkQueue(threads: 1, capacity: 32)) {
        self.context = context
        self.workflow = workflow
        self.operations = CaseOperations(
            keys: context.keys, workflow: workflow, relatedWindow: context.configuration.relatedWindow,
            documentLimit: context.configuration.caseDocuments)
        self.hashQueue = hashQueue
    }

    var now: Date { context.now }

    // MARK: Create

    struct CreateBody: Decodable {
        struct Customer: Decodable {
            var name: String
            var contactEmail: String
            var phone: String?
            enum CodingKeys: String, CodingKey {
                case name, phone
                case contactEmail = "contact_email"
            }
        }
        var kind: CaseKind
        var accountEmail: String
        var customer: Customer
        var devices: [AccountPayload.Device]?
        var facts: Facts?
        var summary: String?
        var language: CustomerLanguage?
        enum CodingKeys: String, CodingKey {
            case kind
            case accountEmail = "account_email"
            case customer, devices, facts, summary, language
        }

        /// The workflow's facts and the rescue address the thief added, when known.
        struct Facts: Decodable {
            var facts: CaseFacts
            var rescueEmail: String?
            enum CodingKeys: String, CodingKey { case rescueEmail = "rescue_email" }
            init(from decoder: any Decoder) throws {
                facts = try CaseFacts(from: decoder)
                rescueEmail = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .rescueEmail)
            }
        }
    }

    /// `POST /api/v1/cases`: 201 with `Location`, `ETag` and the case plus its `access_code`, shown this once.
    @Sendable func create(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.createCase, request)
        let body = try request.decodeJSON(CreateBody.self)
        var opening = CaseOperations.Opening(
            kind: body.kind, accountEmail: body.accountEmail, customerName: body.customer.name, customerContactEmail: body.customer.contactEmail,
            devices: (body.devices ?? []).map { .init(serial: $0.serial, imei: $0.imei, model: $0.model) },
            facts: body.facts?.facts ?? CaseFacts(), summary: body.summary ?? "", rescueEmail: body.facts?.rescueEmail,
            language: body.language)
        opening.customerPhone = body.customer.phone
        let now = self.now
        return try context.transaction(for: request) { connection in
            let opened = try operations.open(opening, by: principal.actor, at: now, on: connection)
            guard
                case .object(var members) = CaseHTTP.representation(
                    opened.record, actorTier: principal.tier, workflow: workflow, now: now,
                    riskSignals: try RiskSignalStore.list(caseID: opened.record.id, on: connection), related: opened.related)
            else {
                throw Problem.internal
            }
            members["access_code"] = .string(opened.accessCode.display)
            members["possible_duplicates"] = .array(
                opened.possibleDuplicates.map { ["case_number": .string($0.number), "state": .string($0.state.rawValue)] })
            return CaseHTTP.json(
                .object(members), status: 201,
                headers: [
                    ("Location", "/api/v1/cases/\(opened.record.number)"), CaseHTTP.etag(1), ("Cache-Control", "no-store"),
                ])
        }
    }

    // MARK: Read

    /// `GET /api/v1/cases/{case_number}` with `ETag`.
    @Sendable func get(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.readCase, request)
        let number = try CaseHTTP.caseNumber(request)
        let now = self.now
        let found = try context.pool.withConnection { connection -> (CaseRecord, [RiskSignalRecord], [RelatedCase], CaseCall?)? in
            guard let record = try CaseStore.find(number: number.digits, on: connection) else { return nil }
            // The call codes are the agents' (an API client reads no code).
            var call: CaseCall?
            if principal.tier != nil {
                call = CaseCall(
                    record, verification: try operations.anyCallerVerification(caseID: record.id, at: now, on: connection), keys: context.keys,
                    now: now)
            }
            return (
                record, try RiskSignalStore.list(caseID: record.id, on: connection), try operations.related(to: record, at: now, on: connection),
                call
            )
        }
        guard let (record, signals, related, call) = found else { throw CaseHTTP.caseNotFound }
        return respond(record, principal: principal, riskSignals: signals, related: related, call: call)
    }

    func respond(
        _ record: CaseRecord, principal: Principal, status: Int = 200, riskSignals: [RiskSignalRecord]? = nil, related: [RelatedCase]? = nil,
        call: CaseCall? = nil
    ) -> HTTPResponse {
        var body: [UInt8] = []
        body.reserveCapacity(1024)
        CaseHTTP.writeRepresentation(
            record, actorTier: principal.tier, workflow: workflow, now: now, riskSignals: riskSignals, related: related, call: call, to: &body)
        var response = HTTPResponse.json(status, body: body)
        response.addHeader("ETag", "\"\(record.version)\"")
        return response
    }

    /// `GET /api/v1/cases?state=&tier=&overdue=&q=&assignee=&opened_after=&opened_before=&limit=&cursor=`: the queue, oldest due first, keyset-paginated.
    @Sendable func list(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.listCases, request)
        var filter = CaseQueueFilter()
        var errors: [FieldError] = []
        // No state: open cases only (the queue starts with open work); `any`: open and finished.
        if let text = request.query("state"), !text.isEmpty {
            if let state = CaseState(rawValue: text) {
                filter.state = state
            } else if text != "any" {
                errors.append(FieldError(field: "state", message: "unknown state"))
            }
        } else {
            filter.openOnly = true
        }
        if let text = request.query("assignee"), !text.isEmpty {
            if text == "me", case .agent(let agent) = principal {
                filter.assignee = agent.id
            } else if let id = UUID(uuidString: text) {
                // One agent's cases (the reports' workload links to them).
                filter.assignee = id
            } else {
                errors.append(FieldError(field: "assignee", message: "me (a signed-in agent's own cases) or an agent's id"))
            }
        }
        for (name, keyPath) in [("opened_after", \CaseQueueFilter.openedAfter), ("opened_before", \CaseQueueFilter.openedBefore)] {
            guard let text = request.query(name), !text.isEmpty else { continue }
            if let date = Timestamp.parse(text) {
                filter[keyPath: keyPath] = date
            } else {
                errors.append(FieldError(field: name, message: "an RFC 3339 time, e.g. 2026-12-01T00:00:00Z"))
            }
        }
        if let text = request.query("tier"), !text.isEmpty {
            if let tier = Tier(rawValue: text) { filter.tier = tier } else { errors.append(FieldError(field: "tier", message: "unknown tier")) }
        }
        if let text = request.query("overdue"), !text.isEmpty {
            switch text {
            case "true": filter.overdue = true
            case "false": filter.overdue = false
            default: errors.append(FieldError(field: "overdue", message: "true or false"))
            }
        }
        if let text = request.query("awaiting_reply"), !text.isEmpty {
            switch text {
            case "true": filter.awaitingReply = true
            case "false": filter.awaitingReply = false
            default: errors.append(FieldError(field: "awaiting_reply", message: "true or false"))
            }
        }
        if let text = request.query("unreviewed"), !text.isEmpty {
            switch text {
            case "true": filter.unreviewed = true
            case "false": filter.unreviewed = false
            default: errors.append(FieldError(field: "unreviewed", message: "true or false"))
            }
        }
        if let text = request.query("risk"), !text.isEmpty {
            switch text {
            case "true": filter.risk = true
            case "false": filter.risk = false
            default: errors.append(FieldError(field: "risk", message: "true or false"))
            }
        }
        if let text = request.query("q"), !text.isEmpty {
            if let search = CaseSearch.query(for: text) { filter.search = search } else { errors.append(FieldError(field: "q", message: "too long")) }
        }
        var cursor: CaseQueueOrder.Cursor?
        if let text = request.query("cursor"), !text.isEmpty {
            if let parsed = CaseQueueOrder.Cursor(encoded: text) {
                cursor = parsed
            } else {
                errors.append(FieldError(field: "cursor", message: "not a cursor from this list"))
            }
        }
        let limit = try CaseHTTP.limit(request)
        guard errors.isEmpty else { throw Problem.unprocessable(errors: errors) }
        let now = self.now
        let records = try context.pool.withConnection { connection in
            try CaseStore.queue(filter: filter, after: cursor, limit: limit + 1, now: now, on: connection)
        }
        let page = records.prefix(limit)
        let next = records.count > limit ? page.last.map { CaseQueueOrder.Cursor(after: $0).encoded } : nil
        // {"items":[...],"next_cursor":...} in JCS order, the items written directly.
        var body = Array("{\"items\":[".utf8)
        body.reserveCapacity(page.count * 900 + 64)
        for (index, record) in page.enumerated() {
            if index > 0 { body.append(0x2C) }
            CaseHTTP.writeRepresentation(record, actorTier: principal.tier, workflow: workflow, now: now, to: &body)
        }
        body.append(contentsOf: "],\"next_cursor\":".utf8)
        if let next { JSONValue.writeString(next, to: &body) } else { body.append(contentsOf: "null".utf8) }
        body.append(0x7D)
        return HTTPResponse.json(200, body: body)
    }

    // MARK: Transitions

    struct TransitionBody: Decodable {
        struct Answer: Decodable {
            var questionID: String
            var answer: String
            enum CodingKeys: String, CodingKey {
                case questionID = "question_id"
                case answer
            }
        }
        var action: String
        var reason: String?
        var unlock: String?
        /// For `send_reset`: the answers the customer gave, checked against the account on file.
        var answers: [Answer]?
    }

    /// A transition as asked, parsed once at the edge.
    struct AskedTransition: Sendable {
        let number: CaseNumber
        let principal: Principal
        let agent: AgentIdentity
        let expected: Int
        let transition: CaseOperations.Transition
        /// For `send_reset`: the answers given with it, to check (argon2id) before the transaction.
        let answers: [(questionID: String, normalized: String)]?
    }

    /// `POST /api/v1/cases/{n}/transitions` with `If-Match`: 200 and the new case. The body is parsed once, here; a
    /// transition answers at once, except a `send_reset` carrying answers, which is checked on the hash queue.
    @Sendable func transitionRoute(_ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion) {
        let asked: AskedTransition
        do {
            asked = try askedTransition(request)
        } catch {
            completion(.failure(error))
            return
        }
        guard asked.answers != nil else {
            completion(Result { try transition(asked, request) })
            return
        }
        let accepted = hashQueue.submit { [self] in completion(Result { try transition(asked, request) }) }
        if !accepted {
            completion(
                .failure(
                    Problem.unavailable(retryAfter: 2, code: ErrorCode.busy, detail: "Too many answers being checked at once; try again in a moment.")
                ))
        }
    }

    func askedTransition(_ request: HTTPRequest) throws -> AskedTransition {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.transitionCase, request, number: number, attempted: "transition")
        let expected = try CaseHTTP.ifMatch(request)
        let body = try request.decodeJSON(TransitionBody.self)
        guard let action = CaseAction(rawValue: body.action) else {
            throw Problem.unprocessable(errors: [FieldError(field: "action", message: "unknown action")])
        }
        var unlock: UnlockKind?
        if let text = body.unlock {
            guard let parsed = UnlockKind(rawValue: text) else {
                throw Problem.unprocessable(errors: [FieldError(field: "unlock", message: "unknown unlock")])
            }
            unlock = parsed
        }
        var answers: [(questionID: String, normalized: String)]?
        if action == .sendReset, let given = body.answers, !given.isEmpty, agent.tier.isAtLeast(.tier1) {
            answers = given.map { ($0.questionID, SecurityAnswer.normalize($0.answer)) }
        }
        return AskedTransition(
            number: number, principal: principal, agent: agent, expected: expected,
            transition: CaseOperations.Transition(
                action: action, reason: body.reason, unlock: unlock, unlockDelay: context.configuration.unlockDelay), answers: answers)
    }

    func transition(_ asked: AskedTransition, _ request: HTTPRequest) throws -> HTTPResponse {
        var transition = asked.transition
        if let answers = asked.answers {
            // Checked before the transaction (argon2id per answer); each wrong one counts against the account on file.
            transition.givenAnswers = try operations.checkAnswers(
                answers, number: asked.number, hasher: answerHasher, at: context.clock.now(),
                pool: context.pool)
        }
        let now = self.now
        return try context.transaction(for: request, attempting: transition.action.rawValue) { connection in
            let outcome = try operations.transition(
                asked.number, expectedVersion: asked.expected, transition, actorTier: asked.agent.tier,
                by: asked.principal.actor, at: now, on: connection)
            // A `complete` with an unlock keeps the step it scheduled: it commits, and `unlocks_outstanding` is the answer.
            if let refusal = outcome.refusal { return ProblemMapping.response(refusal, to: request) }
            return respond(outcome.record, principal: asked.principal)
        }
    }

    // MARK: Unlock checklist

    struct UnlockBody: Decodable {
        var step: UnlockKind
        var reason: String?
    }

    /// `POST /api/v1/cases/{n}/unlocks` `{"step", "reason"}` with `If-Match` (engineering): schedules one checklist step
    /// `RECLAIM_UNLOCK_DELAY` seconds ahead (the cooling-off), freezes the case, and mails the notice with the stop link.
    @Sendable func recordUnlock(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.recordUnlock, request, number: number, attempted: "unlock")
        let expected = try CaseHTTP.ifMatch(request)
        let body = try request.decodeJSON(UnlockBody.self)
        let now = self.now
        let delay = context.configuration.unlockDelay
        return try context.transaction(for: request, attempting: "unlock") { connection in
            respond(
                try operations.recordUnlock(
                    number, expectedVersion: expected, step: body.step, reason: body.reason, actorTier: agent.tier,
                    by: principal.actor, delay: delay, at: now, on: connection), principal: principal)
        }
    }

    struct CancelUnlockBody: Decodable {
        var reason: String?
    }

    /// `DELETE /api/v1/cases/{n}/unlocks/{step}` `{"reason"}` with `If-Match` (engineering): cancels a scheduled step.
    @Sendable func cancelUnlock(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.recordUnlock, request, number: number, attempted: "unlock_cancel")
        guard let text = request.parameter("step"), let step = UnlockKind(rawValue: text) else {
            throw Problem.unprocessable(errors: [FieldError(field: "step", message: "unknown unlock step")])
        }
        let expected = try CaseHTTP.ifMatch(request)
        let body = try request.decodeJSON(CancelUnlockBody.self)
        let now = self.now
        return try context.transaction(for: request, attempting: "unlock_cancel") { connection in
            respond(
                try operations.cancelUnlock(
                    number, expectedVersion: expected, step: step, reason: body.reason, actorTier: agent.tier,
                    by: principal.actor, at: now, on: connection), principal: principal)
        }
    }

    // MARK: Risk

    struct RiskBody: Decodable {
        var reason: String
    }

    /// `POST /api/v1/cases/{n}/flags` `{"reason"}` (tier1+): raises `flagged`; the case with its `risk_signals`.
    @Sendable func flag(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, _) = try authorizeOnCase(.flagCase, request, number: number, attempted: "flag")
        let body = try request.decodeJSON(RiskBody.self)
        let now = self.now
        return try context.transaction(for: request, attempting: "flag") { connection in
            let record = try operations.flag(number, reason: body.reason, by: principal.actor, at: now, on: connection)
            return respond(record, principal: principal, riskSignals: try RiskSignalStore.list(caseID: record.id, on: connection))
        }
    }

    /// `POST /api/v1/cases/{n}/risk/clear` `{"reason"}` (tier3, engineering): clears every uncleared signal.
    @Sendable func clearRisk(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, _) = try authorizeOnCase(.clearRisk, request, number: number, attempted: "clear_risk")
        let body = try request.decodeJSON(RiskBody.self)
        let now = self.now
        return try context.transaction(for: request, attempting: "clear_risk") { connection in
            let record = try operations.clearRisk(number, reason: body.reason, by: principal.actor, at: now, on: connection)
            return respond(record, principal: principal, riskSignals: try RiskSignalStore.list(caseID: record.id, on: connection))
        }
    }

    // MARK: Assign and freeze

    struct AssignBody: Decodable {
        var agentID: UUID
        enum CodingKeys: String, CodingKey { case agentID = "agent_id" }
    }

    /// The most agents `GET /api/v1/agents` lists.
    static let colleagueLimit = 500

    /// `GET /api/v1/agents?tier=`: active agents of that tier or above (all without it), by name, for the dashboard's
    /// "hand over" choice; ids, names and tiers only. Allowed to whoever may assign cases.
    @Sendable func colleagues(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.assignCase, request)
        var least = Tier.tier1
        if let text = request.query("tier"), !text.isEmpty {
            guard let tier = Tier(rawValue: text) else { throw Problem.unprocessable(errors: [FieldError(field: "tier", message: "unknown tier")]) }
            least = tier
        }
        let agents = try context.pool.withConnection { connection in
            try AgentStore.colleagues(tiers: Tier.allCases.filter { $0.isAtLeast(least) }, limit: Self.colleagueLimit, on: connection)
        }
        let items: [JSONValue] = agents.map {
            ["id": .string($0.id.uuidString.lowercased()), "name": .string($0.name), "tier": .string($0.tier.rawValue)]
        }
        return CaseHTTP.json(["items": .array(items)])
    }

    /// `POST /api/v1/cases/{n}/assign` `{"agent_id"}` with `If-Match`.
    @Sendable func assign(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.assignCase, request, number: number, attempted: "assign")
        let expected = try CaseHTTP.ifMatch(request)
        let body = try request.decodeJSON(AssignBody.self)
        let now = self.now
        return try context.transaction(for: request, attempting: "assign") { connection in
            respond(
                try operations.assign(
                    number, expectedVersion: expected, to: body.agentID, actorTier: agent.tier, by: principal.actor, at: now,
                    on: connection), principal: principal)
        }
    }

    /// `POST /api/v1/cases/{n}/actions/freeze` with `If-Match` (tier2+, open cases).
    @Sendable func freeze(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.freezeCase, request, number: number, attempted: "freeze")
        let expected = try CaseHTTP.ifMatch(request)
        let now = self.now
        return try context.transaction(for: request, attempting: "freeze") { connection in
            respond(
                try operations.freeze(number, expectedVersion: expected, actorTier: agent.tier, by: principal.actor, at: now, on: connection),
                principal: principal)
        }
    }

    /// `POST /api/v1/cases/{n}/actions/unfreeze` with `If-Match` (tier2+): lifts a freeze; 409 `not_frozen` without one.
    @Sendable func unfreeze(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.unfreezeCase, request, number: number, attempted: "unfreeze")
        let expected = try CaseHTTP.ifMatch(request)
        let now = self.now
        return try context.transaction(for: request, attempting: "unfreeze") { connection in
            respond(
                try operations.unfreeze(number, expectedVersion: expected, actorTier: agent.tier, by: principal.actor, at: now, on: connection),
                principal: principal)
        }
    }

    /// `GET /api/v1/cases/{n}/questions` (agents): the security questions on file for the case's account, never an
    /// answer; each says whether a filed answer matched it. 404 `no_account_on_file` when the account is not on file.
    @Sendable func questions(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.readCase, request)
        let number = try CaseHTTP.caseNumber(request)
        let questions = try context.pool.withConnection { try operations.questions(number, on: $0) }
        return CaseHTTP.json([
            "items": .array(questions.map { ["id": .string($0.id), "question": .string($0.question), "matched": .bool($0.matched)] })
        ])
    }

    struct AccessCodeBody: Decodable {
        /// Read the new code out to the caller this agent verified (tier2+); otherwise it is only mailed.
        var readOut: Bool?
        /// v1.2's free-text account of how the caller was verified: retired, answered 422 naming the new way.
        var callerCheck: JSONValue?
        enum CodingKeys: String, CodingKey {
            case readOut = "read_out"
            case callerCheck = "caller_check"
        }
    }

    /// `POST /api/v1/cases/{n}/access-code` `{"read_out"?}` (agents): 201 `{"mailed"}`, plus `access_code` (shown once)
    /// only with `read_out: true` (tier2+, a caller this agent verified); the old code stops working. An empty body reads
    /// as `{}` (mail only). v1.2's `caller_check` is 422: a sentence proves nothing (api.md v1.3).
    @Sendable func reissueAccessCode(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.reissueAccessCode, request, number: number, attempted: "access_code")
        let body = request.body.isEmpty && request.header("content-type") == nil ? AccessCodeBody() : try request.decodeJSON(AccessCodeBody.self)
        if body.callerCheck != nil {
            throw Problem.unprocessable(errors: [
                FieldError(
                    field: "caller_check",
                    message:
                        "caller_check is retired: verify the caller with POST /api/v1/cases/\(number.digits)/caller-verification (their customer code, or a mailed one-time code), then send {\"read_out\": true}."
                )
            ])
        }
        let now = self.now
        return try context.transaction(for: request, attempting: "access_code") { connection in
            let issued = try operations.reissueAccessCode(
                number, readOut: body.readOut ?? false, actorTier: agent.tier, by: principal.actor, at: now, on: connection)
            var answer: [String: JSONValue] = ["mailed": .bool(issued.mailed)]
            if let code = issued.code { answer["access_code"] = .string(code.display) }
            return CaseHTTP.json(.object(answer), status: 201, headers: [("Cache-Control", "no-store")])
        }
    }

    struct CallerVerificationBody: Decodable {
        var customerCode: String?
        var mailedCode: String?
        var method: String?
        enum CodingKeys: String, CodingKey {
            case customerCode = "customer_code"
            case mailedCode = "mailed_code"
            case method
        }
    }

    /// `POST /api/v1/cases/{n}/caller-verification` (tier1+): `{"customer_code"}` or `{"mailed_code"}` checks the caller's
    /// proof (200 `{"verified_until", "method"}`; a wrong code 422 `caller_code_wrong`, committed as a failure of the
    /// case's look-up budget; a spent budget 429); `{"method": "mailed_code"}` mails a one-time code to the contact
    /// address (202 `{"mailed", "expires_at"}`).
    @Sendable func verifyCaller(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.verifyCaller, request, number: number, attempted: "caller_verification")
        let body = try request.decodeJSON(CallerVerificationBody.self)
        let given = [body.customerCode != nil, body.mailedCode != nil, body.method != nil].filter { $0 }.count
        guard given == 1 else {
            throw Problem.unprocessable(errors: [
                FieldError(field: "", message: "Send exactly one of customer_code, mailed_code, or method \"mailed_code\" (to mail a one-time code).")
            ])
        }
        let now = self.now
        if let method = body.method {
            guard method == CallCodes.Method.mailedCode.rawValue else {
                throw Problem.unprocessable(errors: [FieldError(field: "method", message: "Only \"mailed_code\" is mailed.")])
            }
            return try context.transaction(for: request, attempting: "caller_verification") { connection in
                let expires = try operations.mailCallerCode(number, actorTier: agent.tier, by: principal.actor, at: now, on: connection)
                return CaseHTTP.json(
                    ["mailed": .bool(expires != nil), "expires_at": Timestamp.json(expires)], status: 202, headers: [("Cache-Control", "no-store")])
            }
        }
        let proof: CaseOperations.CallerProof = body.customerCode.map { .customerCode($0) } ?? .mailedCode(body.mailedCode ?? "")
        // A wrong code is committed (it counts against the budget) before it is refused.
        var outcome = CaseOperations.CallerCheck.wrong
        let response = try context.transaction(for: request, attempting: "caller_verification") { connection in
            outcome = try operations.verifyCaller(number, proof: proof, actorTier: agent.tier, by: principal.actor, at: now, on: connection)
            guard case .verified(let until) = outcome else { return CaseHTTP.json([:]) }
            let method: CallCodes.Method = body.customerCode != nil ? .statusCode : .mailedCode
            return CaseHTTP.json(
                ["verified_until": Timestamp.json(until), "method": .string(method.rawValue)], headers: [("Cache-Control", "no-store")])
        }
        switch outcome {
        case .verified: return response
        case .wrong: throw OperationError.callerCodeWrong
        case .locked(let until): throw OperationError.callerCodeLocked(until: until, now: now)
        }
    }

    // MARK: Merge

    struct MergeBody: Decodable {
        var into: String
        var reason: String?
        /// The agent's word that two cases naming different customers are one person's (api.md v1.2).
        var sameCustomerConfirmed: Bool?
        enum CodingKeys: String, CodingKey {
            case into, reason
            case sameCustomerConfirmed = "same_customer_confirmed"
        }
    }

    struct UnmergeBody: Decodable {
        var reason: String?
    }

    /// `POST /api/v1/cases/{n}/merge` `{"into", "reason", "same_customer_confirmed"}` with the merged case's `If-Match` (tier2+).
    @Sendable func merge(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.mergeCases, request, number: number, attempted: "merge")
        let expected = try CaseHTTP.ifMatch(request)
        let body = try request.decodeJSON(MergeBody.self)
        guard let into = try? CaseNumber(parsing: body.into) else {
            throw Problem.unprocessable(errors: [FieldError(field: "into", message: "not a case number (12 digits with a check digit)")])
        }
        let now = self.now
        return try context.transaction(for: request, attempting: "merge") { connection in
            respond(
                try operations.merge(
                    number, expectedVersion: expected, into: into, reason: body.reason,
                    sameCustomerConfirmed: body.sameCustomerConfirmed ?? false, actorTier: agent.tier, by: principal.actor,
                    at: now, on: connection), principal: principal)
        }
    }

    /// `POST /api/v1/cases/{n}/unmerge` `{"reason"}` with the merged case's `If-Match` (tier2+), while the target is open.
    @Sendable func unmerge(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.mergeCases, request, number: number, attempted: "unmerge")
        let expected = try CaseHTTP.ifMatch(request)
        let body = try request.decodeJSON(UnmergeBody.self)
        let now = self.now
        return try context.transaction(for: request, attempting: "unmerge") { connection in
            respond(
                try operations.unmerge(
                    number, expectedVersion: expected, reason: body.reason, actorTier: agent.tier, by: principal.actor, at: now,
                    on: connection), principal: principal)
        }
    }

    // MARK: Timeline

    /// `GET /api/v1/cases/{n}/events`: the timeline, oldest first, `?cursor=` is the last seq seen.
    @Sendable func events(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.readEvents, request)
        let number = try CaseHTTP.caseNumber(request)
        let limit = try CaseHTTP.limit(request)
        var after = 0
        if let text = request.query("cursor"), !text.isEmpty {
            guard let seq = Int(text), seq >= 0 else {
                throw Problem.unprocessable(errors: [FieldError(field: "cursor", message: "not a cursor from this list")])
            }
            after = seq
        }
        let (page, next, actors) = try context.pool.withConnection { connection -> (ArraySlice<CaseEvent>, String?, JSONValue) in
            guard let id = try CaseStore.id(number: number.digits, on: connection) else {
                throw CaseHTTP.caseNotFound
            }
            let events = try CaseEventStore.list(caseID: id, afterSeq: after, limit: limit + 1, on: connection)
            let page = events.prefix(limit)
            let next = events.count > limit ? page.last.map { String($0.seq) } : nil
            // The agents who acted, and those a case was handed to.
            let assignees = page.compactMap(CaseTimeline.assignee(of:))
            return (page, next, try ActorNames.names(of: page.map(\.actor) + assignees, on: connection))
        }
        return CaseHTTP.json(CaseHTTP.list(page.map(\.json), nextCursor: next, actors: actors))
    }

    // MARK: Denials

    /// The principal if it holds `permission` and is an agent; otherwise the attempt is recorded on the case (when it
    /// exists) and answered 403, so the timeline shows who tried what.
    func authorizeOnCase(_ permission: Permission, _ request: HTTPRequest, number: CaseNumber, attempted: String) throws -> (Principal, AgentIdentity)
    {
        let principal = try context.requirePrincipal(request)
        if PermissionTable.allows(permission, principal), case .agent(let agent) = principal { return (principal, agent) }
        if let id = try context.pool.withConnection({ try CaseStore.id(number: number.digits, on: $0) }) {
            try context.recordDenial(caseID: id, attempted: attempted, code: HTTPProblemCode.forbidden.code, by: principal, request)
        }
        return (try context.authorize(permission, request), try context.requireAgent(request))
    }
}
