import Crypto
import Foundation
import HTTPServer
import Postgres
import ReclaimCore
import ReclaimStore

/// `/api/v1/cases...`: create, read, the queue, transitions, assignment, freeze and the timeline.
/// Handlers load, ask `Workflow` to decide, store with an event, respond; no workflow rule lives here.
final class CasesController: Sendable {
    let context: ServiceContext
    let workflow: Workflow
    /// Verifies answers given with `send_reset` (argon2id, ~15 ms each).
    let answerHasher = PasswordHash()
    /// Where `send_reset` checks given answers, so argon2id never runs on an HTTP worker thread.
    let hashQueue: PasswordHashQueue

    init(context: ServiceContext, workflow: Workflow = Workflow(), hashQueue: PasswordHashQueue = PasswordHashQueue(threads: 1, capacity: 32)) {
        self.context = context
        self.workflow = workflow
        self.hashQueue = hashQueue
    }

    var now: Date { Timestamp.truncated(context.clock.now()) }

    // MARK: Create

    struct CreateBody: Decodable {
        struct Customer: Decodable {
            var name: String
            var contactEmail: String
            enum CodingKeys: String, CodingKey { case name, contactEmail = "contact_email" }
        }
        var kind: CaseKind
        var accountEmail: String
        var customer: Customer
        var devices: [AccountPayload.Device]?
        var facts: CaseFacts?
        var summary: String?
        enum CodingKeys: String, CodingKey { case kind, accountEmail = "account_email", customer, devices, facts, summary }
    }

    /// `POST /api/v1/cases`: 201 with `Location`, `ETag` and the case plus its `access_code`, shown this once.
    @Sendable func create(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.createCase, request)
        let body = try request.decodeJSON(CreateBody.self)
        var issues = IssueCollector()
        let accountEmail = issues.take(EmailAddress.validate(body.accountEmail, field: "account_email"))
        let contactEmail = issues.take(EmailAddress.validate(body.customer.contactEmail, field: "customer.contact_email"))
        let name = body.customer.name.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty || name.count > 200 { issues.add(field: "customer.name", message: "A name has 1 to 200 characters.") }
        var devices: [CaseDevice] = []
        for (index, device) in (body.devices ?? []).enumerated() {
            if let valid = ValidatedAccount.validateDevice(serial: device.serial, imei: device.imei, model: device.model,
                                                           field: "devices[\(index)]", issues: &issues) {
                devices.append(valid)
            }
        }
        if (body.devices ?? []).count > 10 { issues.add(field: "devices", message: "At most 10 devices.") }
        let summary = (body.summary ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if summary.count > 5000 { issues.add(field: "summary", message: "A summary has at most 5000 characters.") }
        do { try issues.check() } catch { throw CaseHTTP.problem(for: error) }

        guard let keys = context.keys else { throw Problem.internal }
        let codeKey = keys.activeKey(for: .accessCode)
        let code = AccessCode(entropy: SecureRandom.bytes(10))
        let now = self.now
        let facts = body.facts ?? CaseFacts()
        let snapshot = workflow.opening(kind: body.kind, facts: facts, at: now)
        let dueAt = workflow.dueAt(snapshot)
        var generator = SystemRandomNumberGenerator()  // getrandom(2): unpredictable numbers
        var attempt = 0
        while true {
            attempt += 1
            let new = NewCase(id: UUID(), number: CaseNumber.generate(using: &generator),
                              accessCodeHash: CaseHTTP.accessCodeHash(code.symbols, key: codeKey.key), accessCodeKeyID: codeKey.id,
                              snapshot: snapshot, dueAt: dueAt, accountEmail: accountEmail!.value, customerName: name,
                              customerContactEmail: contactEmail!.value, devices: devices, summary: summary,
                              createdBy: principal.actor, now: now)
            do {
                try context.pool.withTransaction { connection in
                    try CaseStore.insert(new, on: connection)
                    try CaseEventStore.append(caseID: new.id, at: now, actor: principal.actor, type: "case_opened", data: [
                        "kind": .string(body.kind.rawValue), "state": .string(snapshot.state.rawValue), "path": .string(snapshot.path.rawValue),
                        "due_at": Timestamp.json(dueAt),
                    ], on: connection)
                }
            } catch let error as PostgresError where error.constraint == "cases_case_number_unique" && attempt < 5 {
                continue  // 1 in 10^11 per existing case: draw again
            }
            let record = CaseRecord(id: new.id, number: new.number.digits, accessCodeHash: new.accessCodeHash, accessCodeKeyID: codeKey.id,
                                    snapshot: snapshot, dueAt: dueAt, accountEmail: new.accountEmail, customerName: name,
                                    customerContactEmail: new.customerContactEmail, devices: devices, summary: summary,
                                    assigneeID: nil, assigneeName: nil, assigneeTier: nil, frozen: false, createdAt: now, updatedAt: now, version: 1)
            guard case .object(var members) = CaseHTTP.representation(record, actorTier: principal.tier, workflow: workflow, now: now) else {
                throw Problem.internal
            }
            members["access_code"] = .string(code.display)
            return CaseHTTP.json(.object(members), status: 201, headers: [
                ("Location", "/api/v1/cases/\(record.number)"), CaseHTTP.etag(1), ("Cache-Control", "no-store"),
            ])
        }
    }

    // MARK: Read

    /// `GET /api/v1/cases/{case_number}` with `ETag`.
    @Sendable func get(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.readCase, request)
        let number = try CaseHTTP.caseNumber(request)
        guard let record = try context.pool.withConnection({ try CaseStore.find(number: number.digits, on: $0) }) else {
            throw CaseHTTP.caseNotFound
        }
        return respond(record, principal: principal)
    }

    func respond(_ record: CaseRecord, principal: Principal, status: Int = 200) -> HTTPResponse {
        var body: [UInt8] = []
        body.reserveCapacity(1024)
        CaseHTTP.writeRepresentation(record, actorTier: principal.tier, workflow: workflow, now: now, to: &body)
        var response = HTTPResponse.json(status, body: body)
        response.addHeader("ETag", "\"\(record.version)\"")
        return response
    }

    /// `GET /api/v1/cases?state=&tier=&overdue=&q=&limit=&cursor=`: the queue, oldest due first, keyset-paginated.
    @Sendable func list(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.listCases, request)
        var filter = CaseQueueFilter()
        var errors: [FieldError] = []
        if let text = request.query("state"), !text.isEmpty {
            if let state = CaseState(rawValue: text) { filter.state = state } else { errors.append(FieldError(field: "state", message: "unknown state")) }
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
        if let text = request.query("q"), !text.isEmpty {
            if let term = CaseSearch.term(for: text) { filter.term = term } else { errors.append(FieldError(field: "q", message: "too long")) }
        }
        var cursor: CaseQueueCursor?
        if let text = request.query("cursor"), !text.isEmpty {
            if let parsed = CaseQueueCursor(encoded: text) { cursor = parsed } else { errors.append(FieldError(field: "cursor", message: "not a cursor from this list")) }
        }
        let limit = try CaseHTTP.limit(request)
        guard errors.isEmpty else { throw Problem.unprocessable(errors: errors) }
        let now = self.now
        let records = try context.pool.withConnection { connection in
            try CaseStore.queue(filter: filter, after: cursor, limit: limit + 1, now: now, on: connection)
        }
        let page = records.prefix(limit)
        let next = records.count > limit ? page.last.map { CaseQueueCursor(dueAt: $0.dueAt, id: $0.id).encoded } : nil
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
            enum CodingKeys: String, CodingKey { case questionID = "question_id", answer }
        }
        var action: String
        var reason: String?
        var unlock: String?
        /// For `send_reset`: the answers the customer gave, checked against the account on file.
        var answers: [Answer]?
    }

    /// `POST /api/v1/cases/{n}/transitions` with `If-Match`: 200 and the new case.
    /// The route's entry: a transition answers at once, except a `send_reset` carrying answers, which runs on the hash queue.
    @Sendable func transitionRoute(_ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion) {
        struct Peek: Decodable { var action: String?; var answers: [TransitionBody.Answer]? }
        let peek = try? JSONDecoder().decode(Peek.self, from: Data(request.body))
        guard peek?.action == CaseAction.sendReset.rawValue, !(peek?.answers ?? []).isEmpty else {
            completion(Result { try transition(request) })
            return
        }
        let accepted = hashQueue.submit { [self] in completion(Result { try transition(request) }) }
        if !accepted {
            completion(.failure(Problem.unavailable(retryAfter: 2, code: "busy", detail: "Too many answers being checked at once; try again in a moment.")))
        }
    }

    @Sendable func transition(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.transitionCase, request, number: number, attempted: "transition")
        let expected = try CaseHTTP.ifMatch(request)
        let body = try request.decodeJSON(TransitionBody.self)
        guard let action = CaseAction(rawValue: body.action) else {
            throw Problem.unprocessable(errors: [FieldError(field: "action", message: "unknown action")])
        }
        var unlock: UnlockKind?
        if let text = body.unlock {
            guard let parsed = UnlockKind(rawValue: text) else { throw Problem.unprocessable(errors: [FieldError(field: "unlock", message: "unknown unlock")]) }
            unlock = parsed
        }
        if let reason = body.reason, reason.count > 2000 {
            throw Problem.unprocessable(errors: [FieldError(field: "reason", message: "A reason has at most 2000 characters.")])
        }
        guard let record = try context.pool.withConnection({ try CaseStore.find(number: number.digits, on: $0) }) else { throw CaseHTTP.caseNotFound }
        guard record.version == expected else { throw CaseHTTP.stale(current: record.version) }

        var decisionContext = TransitionContext(unlock: unlock, reason: body.reason)
        var resetDestination: String?
        if action == .sendReset, agent.tier.isAtLeast(.tier1) {
            (decisionContext.allOnFileAnswersMatched, resetDestination) = try checkAnswers(body.answers ?? [], accountEmail: record.accountEmail, caseID: record.id)
        }
        if action == .verify {
            // Evidence: the factor outcomes of the evidence filed on the case (the same as GET .../verification).
            decisionContext.verification = VerificationPolicy.evaluate(
                try context.pool.withConnection { try EvidenceStore.factorEvidence(caseID: record.id, on: $0) })
        }
        let now = self.now
        let decision: TransitionDecision
        switch workflow.decide(action, on: record.snapshot, actorTier: agent.tier, context: decisionContext, now: now) {
        case .success(let accepted): decision = accepted
        case .failure(let refusal):
            if refusal.category == .forbidden {
                try recordDenial(caseID: record.id, principal: principal, attempted: action.rawValue, code: refusal.code, request)
            }
            throw CaseHTTP.problem(for: refusal)
        }

        try context.pool.withTransaction { connection in
            guard try CaseStore.applyTransition(id: record.id, expectedVersion: expected, after: decision.after, dueAt: decision.dueAt,
                                                now: now, on: connection) else {
                let current = try CaseStore.find(id: record.id, on: connection)?.version ?? expected
                throw CaseHTTP.stale(current: current)
            }
            try TransitionEvents.append(decision, caseID: record.id, actor: principal.actor, resetDestination: resetDestination, at: now,
                                        on: connection)
        }
        let updated = record.with(snapshot: decision.after, dueAt: .some(decision.dueAt), updatedAt: now, version: expected + 1)
        return respond(updated, principal: principal)
    }

    /// For `send_reset`: whether every on-file answer matched (given now, or filed as evidence on the case and
    /// not rejected), and the on-file primary address.
    /// Each given answer that does not match counts as one failure for the account on file (the domain's budget:
    /// 9 in 8 hours lock the account's answers for 8 hours, even right ones), kept with the status throttles.
    private func checkAnswers(_ answers: [TransitionBody.Answer], accountEmail: String, caseID: UUID) throws -> (Bool, String?) {
        let most = EvidenceController.maximumAnswers
        guard answers.count <= most else { throw Problem.unprocessable(errors: [FieldError(field: "answers", message: "At most \(most) answers.")]) }
        let now = context.clock.now()
        let (onFile, lockedUntil, filedMatches) = try context.pool.withConnection { connection in
            (try AccountStore.securityAnswers(email: accountEmail, on: connection),
             try ThrottleStore.lockedUntil(keys: [ThrottleStore.accountKey(accountEmail)], now: now, on: connection),
             try EvidenceStore.matchedQuestionIDs(caseID: caseID, on: connection))
        }
        if let lockedUntil { throw EvidenceFiling.answersLocked(until: lockedUntil, now: now) }
        guard let onFile else { return (false, nil) }
        var given: [String: String] = [:]
        for answer in answers { given[answer.questionID] = SecurityAnswer.normalize(answer.answer) }
        var matched = filedMatches.intersection(onFile.answers.keys)
        var failures = 0
        for (questionID, hash) in onFile.answers where !matched.contains(questionID) {
            guard let answer = given[questionID], !answer.isEmpty else { continue }
            if answerHasher.verify(answer, against: hash) { matched.insert(questionID) } else { failures += 1 }
        }
        if failures > 0 {
            try context.pool.withTransaction { connection in
                try ThrottleStore.recordAnswerFailures(email: accountEmail, count: failures, now: now, on: connection)
            }
        }
        let all = VerificationPolicy.allOnFileAnswersMatched(onFile: Set(onFile.answers.keys), matched: matched)
        return (all, onFile.email)
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
        let items: [JSONValue] = agents.map { ["id": .string($0.id.uuidString.lowercased()), "name": .string($0.name), "tier": .string($0.tier.rawValue)] }
        return CaseHTTP.json(["items": .array(items)])
    }

    /// `POST /api/v1/cases/{n}/assign` `{"agent_id"}` with `If-Match`.
    @Sendable func assign(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.assignCase, request, number: number, attempted: "assign")
        let expected = try CaseHTTP.ifMatch(request)
        let body = try request.decodeJSON(AssignBody.self)
        let (record, assignee) = try context.pool.withConnection { connection in
            (try CaseStore.find(number: number.digits, on: connection), try AgentStore.find(id: body.agentID, on: connection))
        }
        guard let record else { throw CaseHTTP.caseNotFound }
        guard record.version == expected else { throw CaseHTTP.stale(current: record.version) }
        guard let assignee, !assignee.disabled else {
            throw Problem.unprocessable(errors: [FieldError(field: "agent_id", message: "no such agent")])
        }
        do {
            try Workflow.checkAssignment(actorTier: agent.tier, assigneeTier: assignee.tier, on: record.snapshot)
        } catch {
            try recordDenial(caseID: record.id, principal: principal, attempted: "assign", code: error.code, request)
            throw CaseHTTP.problem(for: error)
        }
        let now = self.now
        try context.pool.withTransaction { connection in
            guard try CaseStore.assign(id: record.id, expectedVersion: expected, agentID: assignee.id, now: now, on: connection) else {
                throw CaseHTTP.stale(current: try CaseStore.find(id: record.id, on: connection)?.version ?? expected)
            }
            try CaseEventStore.append(caseID: record.id, at: now, actor: principal.actor, type: "assigned",
                                      data: ["agent_id": .string(assignee.id.uuidString.lowercased()), "previous": .optional(record.assigneeID?.uuidString.lowercased())],
                                      on: connection)
        }
        let updated = record.with(assigneeID: assignee.id, assigneeName: assignee.name, assigneeTier: assignee.tier, updatedAt: now, version: expected + 1)
        return respond(updated, principal: principal)
    }

    /// `POST /api/v1/cases/{n}/actions/freeze` with `If-Match` (tier2+, open cases).
    @Sendable func freeze(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, agent) = try authorizeOnCase(.freezeCase, request, number: number, attempted: "freeze")
        let expected = try CaseHTTP.ifMatch(request)
        guard let record = try context.pool.withConnection({ try CaseStore.find(number: number.digits, on: $0) }) else { throw CaseHTTP.caseNotFound }
        guard record.version == expected else { throw CaseHTTP.stale(current: record.version) }
        do {
            try Workflow.checkFreeze(actorTier: agent.tier, on: record.snapshot)
        } catch {
            if error.category == .forbidden {
                try recordDenial(caseID: record.id, principal: principal, attempted: "freeze", code: error.code, request)
            }
            throw CaseHTTP.problem(for: error)
        }
        guard !record.frozen else { throw Problem.conflict(code: "already_frozen", detail: "The account is already frozen.") }
        let now = self.now
        try context.pool.withTransaction { connection in
            guard try CaseStore.freeze(id: record.id, expectedVersion: expected, now: now, on: connection) else {
                throw CaseHTTP.stale(current: try CaseStore.find(id: record.id, on: connection)?.version ?? expected)
            }
            try CaseEventStore.append(caseID: record.id, at: now, actor: principal.actor, type: "frozen",
                                      data: ["account_email": .string(record.accountEmail)], on: connection)
        }
        return respond(record.with(frozen: true, updatedAt: now, version: expected + 1), principal: principal)
    }

    // MARK: Timeline

    /// `GET /api/v1/cases/{n}/events`: the timeline, oldest first, `?cursor=` is the last seq seen.
    @Sendable func events(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.readEvents, request)
        let number = try CaseHTTP.caseNumber(request)
        let limit = try CaseHTTP.limit(request)
        var after = 0
        if let text = request.query("cursor"), !text.isEmpty {
            guard let seq = Int(text), seq >= 0 else { throw Problem.unprocessable(errors: [FieldError(field: "cursor", message: "not a cursor from this list")]) }
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
            let assignees = page.compactMap { event -> String? in
                guard event.type == "assigned", case .object(let data) = event.data, case .string(let id)? = data["agent_id"] else { return nil }
                return "agent:" + id
            }
            return (page, next, try ActorNames.names(of: page.map(\.actor) + assignees, on: connection))
        }
        return CaseHTTP.json(CaseHTTP.list(page.map(\.json), nextCursor: next, actors: actors))
    }

    // MARK: Denials

    /// The principal if it holds `permission` and is an agent; otherwise the attempt is recorded on the case (when it
    /// exists) and answered 403, so the timeline shows who tried what.
    func authorizeOnCase(_ permission: Permission, _ request: HTTPRequest, number: CaseNumber, attempted: String) throws -> (Principal, AgentIdentity) {
        let principal = try context.requirePrincipal(request)
        if PermissionTable.allows(permission, principal), case .agent(let agent) = principal { return (principal, agent) }
        if let id = try context.pool.withConnection({ try CaseStore.id(number: number.digits, on: $0) }) {
            try recordDenial(caseID: id, principal: principal, attempted: attempted, code: "forbidden", request)
        }
        return (try context.authorize(permission, request), try context.requireAgent(request))
    }

    /// Appends a `denied` event (the attempt, not its body) and logs it.
    func recordDenial(caseID: UUID, principal: Principal, attempted: String, code: String, _ request: HTTPRequest) throws {
        let now = self.now
        try context.pool.withTransaction { connection in
            try CaseStore.lock(id: caseID, on: connection)
            try CaseEventStore.append(caseID: caseID, at: now, actor: principal.actor, type: "denied",
                                      data: ["attempted": .string(attempted), "code": .string(code)], on: connection)
        }
        context.logDenied(principal, reason: "case.\(attempted): \(code)", request)
    }
}
