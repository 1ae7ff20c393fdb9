import Crypto
import Foundation
import Logging
import Notifications
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore

/// Why `reclaim demo seed` stopped, in one line for the operator.
public struct DemoSeedError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One seeded case: its number and access code (printed once, stored only hashed) and where it ended.
public struct DemoCase: Sendable {
    public let number: String
    public let accessCode: String
    public let kind: CaseKind
    public let state: CaseState
    public let path: RecoveryPath
    public let accountEmail: String
}

/// What `reclaim demo seed` created.
public struct DemoSeedResult: Sendable {
    public let agents: [NewAgent]
    public let accounts: [String]
    public let cases: [DemoCase]
    public let seconds: Double
}

/// Demo data for a first start: agents of every tier, accounts on file and about 40 cases over every state and path.
/// Everything goes through the operations the command line and the controllers call (`IdentityAdministration`,
/// `PreparedAccount`/`AccountStore`, `CaseOperations`), so the timelines' hash chains and the stored secrets are
/// exactly what real use produces; the seed itself writes no SQL and no event.
public struct DemoSeed: Sendable {
    public let pool: PostgresPool
    public let keys: KeyFile
    public let configuration: ServiceConfiguration
    public let logger: Logger
    let workflow = Workflow()
    var operations: CaseOperations { CaseOperations(keys: keys, workflow: workflow) }

    public init(pool: PostgresPool, keys: KeyFile, configuration: ServiceConfiguration, logger: Logger) {
        self.pool = pool
        self.keys = keys
        self.configuration = configuration
        self.logger = logger
    }

    /// Seeds; refuses a database that already has agents unless `force` (then every new row is extra, nothing is overwritten).
    public func run(force: Bool, now: Date = Date()) throws -> DemoSeedResult {
        let started = ContinuousClock.now
        let hasAgents = try pool.withConnection { try AgentStore.any(on: $0) }
        if hasAgents && !force {
            throw DemoSeedError(
                "the database already has agents, so it is not a fresh one; demo data would mix with real cases (use --force to add it anyway)")
        }
        let agents = try seedAgents(now: now)
        let accounts = try seedAccounts(now: now)
        var cases: [DemoCase] = []
        var index = 0
        // The risk cases claim what an earlier one holds: each opens after the one before it has finished, in the last
        // hours, so the signal it raises on the other lands after that case's history (timelines read forwards).
        var nextClaim = now.addingTimeInterval(-12 * 3_600)
        for plan in Self.plans {
            for _ in 0..<plan.count {
                do {
                    cases.append(try seedCase(plan, index: index, accounts: accounts, agents: agents, now: now, claimAt: &nextClaim))
                } catch {
                    throw DemoSeedError("demo data: the case \"\(plan.summary)\" (\(index)) failed: \(error)")
                }
                index += 1
            }
        }
        let elapsed = ContinuousClock.now - started
        return DemoSeedResult(
            agents: agents.all, accounts: accounts.map(\.email), cases: cases,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    // MARK: Agents

    struct Agents {
        var byTier: [Tier: NewAgent]
        var all: [NewAgent]
        func actor(_ tier: Tier) -> String { "agent:\(byTier[tier]!.id.uuidString.lowercased())" }
    }

    private func seedAgents(now: Date) throws -> Agents {
        let administration = IdentityAdministration(pool: pool, keys: keys)
        let people: [(Tier, String, String, Bool)] = [
            (.tier1, "tier1", "Tamsin Ward (tier 1)", false),
            (.tier2, "tier2", "Idris Okafor (tier 2)", false),
            (.tier3, "tier3", "Mireille Dubois (tier 3, admin)", true),
            (.engineering, "engineering", "Kenji Sato (engineering)", false),
        ]
        var byTier: [Tier: NewAgent] = [:]
        var all: [NewAgent] = []
        for (tier, local, name, admin) in people {
            // Under --force an earlier demo's agents may hold the plain addresses: number the new ones.
            var email = "demo.\(local)@example.com"
            var suffix = 1
            while try pool.withConnection({ try AgentStore.find(email: email, on: $0) }) != nil {
                suffix += 1
                email = "demo\(suffix).\(local)@example.com"
            }
            let agent = try administration.addAgent(email: email, name: name, tier: tier, isAdmin: admin, now: now)
            byTier[tier] = agent
            all.append(agent)
        }
        return Agents(byTier: byTier, all: all)
    }

    // MARK: Accounts

    struct DemoAccount {
        let email: String
        let answers: [(id: String, answer: String)]
        let card: String
        let serial: String
        let imei: String
    }

    static let cardNumbers = [
        "4111111111111111", "5555555555554444", "4012888888881881", "378282246310005", "6011111111111117", "5105105105105100",
        // Accounts of their own for the plans whose cooling-off or stop link touches every case of the account.
        "4000056655665556", "5200828282828210", "4000002500003155", "2223003122003222",
    ]
    /// The accounts the plans take in turn; those after them are only a plan's own (`Plan.ownAccount`).
    static let sharedAccounts = 6
    static let otherCard = "4242424242424242"

    /// A Luhn-valid IMEI from 14 digits.
    static func imei(_ body: String) -> String {
        body + String(Luhn.checkDigit(for: body.compactMap(\.wholeNumberValue)))
    }

    private func seedAccounts(now: Date) throws -> [DemoAccount] {
        let year = Calendar(identifier: .gregorian).component(.year, from: now) + 3
        let hasher = PasswordHash()
        var accounts: [DemoAccount] = []
        // Under --force an earlier demo's accounts hold the plain addresses: number the new ones, so each run's cases
        // share their accounts only with each other (one customer an account; its thief's case is this run's).
        var prefix = "demo"
        var run = 1
        while try pool.withConnection({ try AccountStore.securityQuestions(email: "\(prefix).customer1@example.net", on: $0) }) != nil {
            run += 1
            prefix = "demo\(run)"
        }
        for index in 0..<Self.cardNumbers.count {
            let account = DemoAccount(
                email: "\(prefix).customer\(index + 1)@example.net",
                answers: [("pet", "Biscuit \(index + 1)"), ("city", "Lyon")],
                // A run's own devices too: another run's would be claimed by another account (`device_claimed_elsewhere`).
                card: Self.cardNumbers[index], serial: "C\(String(format: "%02d", run + 1))DEMO\(index + 1)0\(index + 1)QD",
                imei: Self.imei("35481200\(String(format: "%02d", (run - 1) % 100))\(String(format: "%04d", index + 1))"))
            let payload: [String: Any] = [
                "email": account.email,
                "security_questions": [
                    ["id": "pet", "question": "Name of your first pet?", "answer": account.answers[0].answer],
                    ["id": "city", "question": "City where your parents met?", "answer": account.answers[1].answer],
                ],
                "cards": [["number": account.card, "exp_month": 9, "exp_year": year]],
                "devices": [["serial": account.serial, "model": "Phone 14"], ["imei": account.imei, "model": "Phone 14"]],
            ]
            // The import's path: decode, validate, prepare (hash answers, fingerprint cards), insert.
            let decoded = try JSONDecoder().decode(AccountPayload.self, from: JSONSerialization.data(withJSONObject: payload))
            _ = try AccountOperations.putOnFile(try AccountOperations.validate(decoded), hasher: hasher, keys: keys, at: now, pool: pool)
            accounts.append(account)
        }
        return accounts
    }

    // MARK: Cases

    enum Step {
        /// A workflow action (a `complete` after its steps are done: `.unlockElapsed`, never `complete` with an unlock).
        case act(CaseAction, reason: String? = nil)
        case note(String, NoteVisibility)
        case answers
        case card(matched: Bool)
        case device(matched: Bool)
        case transcript(String)
        /// The customer uploads a document of this kind.
        case document(EvidenceKind)
        case assign(Tier)
        case freeze
        /// Tier 3 accepts every pending document (approve needs them accepted).
        case acceptDocuments
        /// Engineering records one checklist step: scheduled a day from the real now (the cooling-off, still running).
        case unlock(UnlockKind)
        /// Engineering records one checklist step and its cooling-off has passed: the service has done it.
        case unlockElapsed(UnlockKind)
        /// The victim used the stop link of the last unlock notice: "this wasn't me".
        case repudiate
        /// Tier 2 merges this duplicate into an earlier open case on the same account.
        case mergeIntoEarlier
        /// Tier 1 flags the case (risk signal `flagged`).
        case flag(String)
        /// Tier 2 corrects the contact address (during a cooling-off: the steps are cancelled, `contact_changed`), after
        /// the victim on the phone read her customer code (a verified call, api.md v1.3).
        case correctContact(String)
        /// An impostor on the phone reads tier 1 nine wrong customer codes: `caller_code_guessed` (the lock has lapsed by
        /// the real now: each case's history lies days back).
        case guessCallCodes
        /// The customer uploads the one demo file every such step uploads (another account's case holds it too).
        case sharedDocument(EvidenceKind)
        /// A reply to the case's mail arrives from its contact address (the case then awaits the desk's answer) or, the
        /// thief's, from its rescue address (kept, files nothing, raises `mail_from_rescue_address`).
        case reply(String, fromRescueAddress: Bool)
    }

    struct Plan {
        let count: Int
        let kind: CaseKind
        let facts: CaseFacts
        let summary: String
        let steps: [Step]
        /// An account of its own instead of one on file (the risk cases' second claimants).
        var accountEmail: String? = nil
        /// The one device it claims instead of its account's.
        var serial: String? = nil
        /// The rescue address the thief added, when the plan needs one (else every other such case has one).
        var rescueEmail: String? = nil
        /// An account on file of its own, by index (past `sharedAccounts`): a running cooling-off makes the account busy and
        /// a stop link stops every case of the account (api.md v1.3), so these cases share their account with no other.
        var ownAccount: Int? = nil
        /// Another customer (name, contact address) on an account on file, by its index: the thief's second case on the
        /// victim's account (api.md v1.3 `parallel_case`). Else each account on file has one customer.
        var otherCustomerOn: (account: Int, name: String, contact: String)? = nil
    }

    static let takeover = CaseFacts(rescueEmailAdded: true, securityQuestionsChanged: true)
    static let locked = CaseFacts(lostModeEnabled: true)

    static let toReview: [Step] = [
        .act(.escalate), .act(.requestDocuments, reason: "Answers did not match; please send proof of ownership."),
        .note("Please upload your purchase invoice or a photo of the box with the IMEI.", .customer),
        // The second document completes what the path needs: the case moves itself to review.
        .document(.invoice), .document(.imeiPhoto),
    ]
    static let deviceToReview: [Step] = [
        .act(.requestDocuments, reason: "Device-only case: proof of purchase needed."), .document(.boxPhoto), .document(.imeiPhoto),
        .document(.lockScreenPhoto),
    ]
    static let toApproved: [Step] = toReview + [.acceptDocuments, .act(.approve)]
    static let deviceToApproved: [Step] = deviceToReview + [.acceptDocuments, .act(.approve)]
    static let toVerified: [Step] = [
        .act(.escalate), .transcript("Customer called from the number on file and described the rescue address change."),
        .card(matched: true), .device(matched: true), .act(.verify), .assign(.engineering),
    ]

    /// Every state and every path, with notes, evidence and a few assignments and freezes.
    static let plans: [Plan] = [
        Plan(
            count: 3, kind: .accountTakeover, facts: takeover, summary: "Signed out everywhere; password and rescue address changed.",
            steps: [.note("Customer reached us through the web form.", .internal)]),
        Plan(count: 2, kind: .activationLock, facts: locked, summary: "Second-hand phone is activation-locked to the previous owner.", steps: []),
        Plan(
            count: 3, kind: .accountTakeover, facts: takeover, summary: "Security questions changed by someone else.",
            steps: [
                .act(.escalate), .note("We are checking your identity against what is on file.", .customer),
                .transcript("Chat: customer confirms the last purchase and the device model."), .card(matched: false),
            ]),
        Plan(
            count: 1, kind: .accountTakeover, facts: CaseFacts(rescueEmailAdded: true, twoStepEnabled: true),
            summary: "Thief turned on two-step verification.",
            steps: [.act(.escalate), .note("Two-step on: only the device can be recovered.", .internal)]),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Card charges the customer does not recognise.",
            steps: [.act(.escalate), .freeze, .note("Account frozen while identity is checked.", .internal)]),
        Plan(
            count: 3, kind: .accountTakeover, facts: takeover, summary: "Locked out after a phishing e-mail.",
            steps: [
                .act(.escalate), .act(.requestDocuments, reason: "Not enough factors matched; proof of ownership needed."),
                .note("Please upload your invoice or the carrier contract.", .customer),
            ]),
        Plan(
            count: 2, kind: .activationLock, facts: locked, summary: "Phone in lost mode after being found.",
            steps: [
                .act(.requestDocuments, reason: "Device-only case: proof of purchase needed."), .note("Please upload a photo of the box.", .customer),
            ]),
        Plan(count: 2, kind: .accountTakeover, facts: takeover, summary: "Rescue address replaced.", steps: toReview),
        Plan(count: 2, kind: .activationLock, facts: locked, summary: "Tablet locked after a reset.", steps: deviceToReview),
        Plan(count: 3, kind: .accountTakeover, facts: takeover, summary: "Rescue address added by a thief.", steps: toVerified),
        Plan(
            count: 2, kind: .accountTakeover, facts: takeover, summary: "Questions changed; customer has the invoice.",
            steps: toApproved + [.note("Invoice matches the device on file.", .internal)]),
        Plan(
            count: 2, kind: .activationLock, facts: locked, summary: "Activation lock after a repair.",
            steps: deviceToApproved + [.assign(.engineering)]),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Invoice just uploaded; the IMEI photo is still to come.",
            steps: [.act(.escalate), .act(.requestDocuments, reason: "Answers did not match; please send proof of ownership."), .document(.invoice)]),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Rescue address removed; the security questions are next.",
            steps: toVerified + [.unlockElapsed(.removeRescueEmail), .note("Rescue address removed; questions still to reset.", .internal)]),
        Plan(
            count: 1, kind: .accountTakeover, facts: CaseFacts(rescueEmailAdded: true), summary: "Rescue address to remove; the cooling-off runs.",
            steps: toVerified + [.unlock(.removeRescueEmail), .note("Removal scheduled: the owner's addresses have been told.", .internal)],
            ownAccount: 6),
        Plan(
            count: 3, kind: .accountTakeover, facts: CaseFacts(rescueEmailAdded: true), summary: "Password changed; customer knows the answers.",
            steps: [.answers, .act(.sendReset), .note("A reset link went to the address on file.", .customer)]),
        Plan(
            count: 1, kind: .accountTakeover, facts: CaseFacts(rescueEmailAdded: true), summary: "Password changed after a SIM swap.",
            steps: [.act(.escalate), .answers, .act(.sendReset)]),
        Plan(
            count: 2, kind: .accountTakeover, facts: takeover, summary: "Rescue address and questions changed.",
            steps: toVerified + [
                .unlockElapsed(.removeRescueEmail), .unlockElapsed(.resetSecurityQuestions), .act(.complete),
                .note("The added rescue address was removed and your security questions reset.", .customer),
            ]),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Questions changed; invoice supplied.",
            steps: toApproved + [.unlockElapsed(.resetSecurityQuestions), .unlockElapsed(.removeRescueEmail), .act(.complete)]),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Caller asked for the rescue address to go; the owner says it was not them.",
            steps: toVerified + [
                .unlock(.removeRescueEmail), .repudiate,
                .note("The owner used the stop link from the notice: the caller was not the owner.", .internal),
            ],
            ownAccount: 7),
        Plan(
            count: 2, kind: .activationLock, facts: locked, summary: "Bought new, locked at first setup.",
            steps: deviceToApproved + [
                .unlockElapsed(.removeActivationLock), .act(.complete),
                .note("The lock is removed: set the device up as new.", .customer),
            ]),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Claims ownership of an account.",
            steps: toReview + [
                .act(.reject, reason: "The invoice is for a different device."), .note("The documents did not show ownership.", .customer),
            ]),
        Plan(
            count: 1, kind: .activationLock, facts: locked, summary: "Locked phone bought at a market.",
            steps: deviceToReview + [.act(.reject, reason: "The box belongs to another IMEI.")]),
        Plan(
            count: 2, kind: .accountTakeover, facts: CaseFacts(rescueEmailAdded: true), summary: "Forgot the password after a takeover attempt.",
            steps: [.answers, .act(.sendReset), .act(.close, reason: "Customer confirmed access is back.")]),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Ownership claim without proof.",
            steps: toReview + [.act(.reject, reason: "No proof of ownership."), .act(.close, reason: "No reply within 30 days.")]),
        Plan(
            count: 1, kind: .activationLock, facts: locked, summary: "Watch locked after a trade-in.",
            steps: deviceToApproved + [.unlockElapsed(.removeActivationLock), .act(.complete), .act(.close, reason: "Done.")]),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Called again from another phone about the same account.",
            steps: [.note("Second call: same account as an open case.", .internal), .mergeIntoEarlier]),
        Plan(
            count: 1, kind: .accountTakeover, facts: CaseFacts(rescueEmailAdded: true), summary: "Reset sent, customer still locked out.",
            steps: [
                .answers, .act(.sendReset), .act(.reopen, reason: "Customer reports the thief changed the password again."),
                .note("Reopened: the reset did not hold.", .internal),
            ]),
        // The thief on the phone (api.md v1.2): two accounts claim one phone, two accounts send one invoice, and an
        // agent's flag. Left before approval, so each stays at risk (approve and unlock are refused until cleared).
        Plan(
            count: 1, kind: .activationLock, facts: locked, summary: "Bought the phone second-hand; it is locked to the seller.",
            steps: [], accountEmail: "resale.buyer@example.com", serial: "F17XK9ZJH3QD"),
        Plan(
            count: 1, kind: .activationLock, facts: locked, summary: "Says the phone is theirs and lost; wants the lock removed.",
            steps: [.note("Caller insisted on speed and would not give the number on file.", .internal)],
            accountEmail: "second.claimant@example.net", serial: "F17XK9ZJH3QD"),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Sent an invoice as proof of purchase.",
            steps: [.act(.escalate), .act(.requestDocuments, reason: "Proof of ownership needed."), .sharedDocument(.invoice)],
            accountEmail: "invoice.one@example.com", serial: "H4KXK9ZJH3QA"),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Sent the same invoice for another account.",
            steps: [.act(.escalate), .act(.requestDocuments, reason: "Proof of ownership needed."), .sharedDocument(.invoice)],
            accountEmail: "invoice.two@example.org", serial: "H4KXK9ZJH3QB"),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Caller pressed to have the security questions changed at once.",
            steps: [.flag("The caller read the answers from a script and hung up when asked for the device model."), .guessCallCodes],
            accountEmail: "pressed.caller@example.com", serial: "J8MXK9ZJH3QC"),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Asked for the invoice; the customer answered by mail.",
            steps: [
                .act(.escalate), .note("Could you send us the invoice for the phone?", .customer),
                .reply("I have it at home, I will send a photo tonight. Thank you!", fromRescueAddress: false),
            ]),
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "A reply came from the address the thief added.",
            steps: [
                .act(.escalate), .note("We are checking your identity against what is on file.", .customer),
                .reply("This is the owner. Remove the other address and unlock it today, please.", fromRescueAddress: true),
            ],
            accountEmail: "rescue.reply@example.com", serial: "K2PXK9ZJH3QE", rescueEmail: "owner.help@mail-drop.example"),
        // The cooling-off holds (api.md v1.3): the contact address corrected while a step waited cancels it.
        Plan(
            count: 1, kind: .accountTakeover, facts: CaseFacts(rescueEmailAdded: true),
            summary: "A caller had the contact address changed while the rescue address's removal waited.",
            steps: toVerified + [.unlock(.removeRescueEmail), .correctContact("new.inbox@example.org")], ownAccount: 8),
        // The thief's other door (api.md v1.3): the victim's case in engineering, then a second case on her account, with
        // her phone and his own name and address. Both carry `parallel_case` and list each other as related. Last, and
        // on an account of their own: the signal lands on every open case of the account.
        Plan(
            count: 1, kind: .accountTakeover, facts: takeover, summary: "Account taken over; the owner proved it by card and phone.",
            steps: toVerified, ownAccount: 9),
        Plan(
            count: 1, kind: .accountTakeover, facts: CaseFacts(securityQuestionsChanged: true),
            summary: "Caller gave the account and the phone's IMEI; says he is the owner's brother and needs the questions reset today.",
            steps: [.note("Would not give the number on file; asked twice how long a reset takes.", .internal)],
            otherCustomerOn: (account: 9, name: "Jordan Blake", contact: "jordan.blake@mail-drop.example")),
    ]

    static let customers = [
        "Amara Nwosu", "王小明", "Lucas Ferreira", "陳美玲", "Sofia Lindqvist", "Hiro Tanaka", "Nadia Haddad", "Owen Price",
        "Priya Raman", "Mateo Rossi", "Elif Yilmaz", "Jonas Becker", "李志强",
    ]

    private func seedCase(
        _ plan: Plan, index: Int, accounts: [DemoAccount], agents: Agents, now: Date, claimAt nextClaim: inout Date
    ) throws -> DemoCase {
        let accountIndex = plan.ownAccount ?? plan.otherCustomerOn?.account ?? index % Self.sharedAccounts
        let account = accounts[accountIndex]
        // Each case gets its own clock, set back so its history spans the past days (some are overdue, as in real life).
        let clock = ServiceClock()
        if plan.accountEmail != nil || plan.otherCustomerOn != nil {
            clock.advance(by: nextClaim.timeIntervalSince(clock.now()))
        } else {
            clock.advance(by: -Double((index % 9) + 1) * 86_400 - 3_600 * Double(index % 7) - 24 * 3_600)
        }
        let creator = agents.actor(.tier1)
        // One customer per account on file (two names on one account is a `parallel_case`); the others by case.
        let customer =
            plan.otherCustomerOn?.name ?? Self.customers[(plan.accountEmail == nil ? accountIndex : index) % Self.customers.count]
        let contact =
            plan.otherCustomerOn?.contact ?? "contact.\(plan.accountEmail == nil ? accountIndex + 1 : index + 1)@example.org"
        func current() -> Date { Timestamp.truncated(clock.now()) }

        let opening = CaseOperations.Opening(
            kind: plan.kind, accountEmail: plan.accountEmail ?? account.email, customerName: customer,
            customerContactEmail: contact,
            devices: [
                plan.serial.map { .init(serial: $0, imei: nil, model: "Phone 13") }
                    ?? .init(serial: account.serial, imei: account.imei, model: "Phone 14")
            ],
            facts: plan.facts, summary: plan.summary,
            // Every other case whose thief added a rescue address knows which: the case page shows it.
            rescueEmail: plan.rescueEmail ?? (plan.facts.rescueEmailAdded && index % 2 == 0 ? "recovery.\(index + 1)@mail-drop.example" : nil))
        let opened = try pool.withTransaction { try operations.open(opening, by: creator, at: current(), on: $0) }
        let number = try CaseNumber(parsing: opened.record.number)
        let year = Calendar(identifier: .gregorian).component(.year, from: current()) + 3
        let hasher = PasswordHash()
        for step in plan.steps {
            clock.advance(by: 3_600 + Double((index * 37) % 60) * 60)
            let record = try pool.withConnection { try operations.load(number, on: $0) }
            let holder = record.snapshot.state.tier ?? record.snapshot.tier
            let actor = agents.actor(holder)
            let at = current()
            switch step {
            case .act(let action, let reason):
                let tier = holder.isAtLeast(action.rule.minimumTier) ? holder : action.rule.minimumTier
                _ = try pool.withTransaction { connection in
                    try operations.transition(
                        number, expectedVersion: record.version, .init(action: action, reason: reason),
                        actorTier: tier, by: agents.actor(tier), at: at, on: connection
                    ).taken()
                }
            case .note(let body, let visibility):
                _ = try pool.withTransaction { try operations.addNote(number, body: body, visibility: visibility, by: actor, at: at, on: $0) }
            case .answers:
                let check = try operations.checkAnswers(
                    account.answers.map { ($0.id, SecurityAnswer.normalize($0.answer)) }, number: number,
                    hasher: hasher, at: at, pool: pool)
                _ = try pool.withTransaction { try operations.fileAnswers(check, number: number, by: actor, at: at, on: $0) }
            case .card(let matched):
                let card = try Self.valid(CardNumber.validate(matched ? account.card : Self.otherCard))
                let expiry = try Self.valid(CardExpiry.validate(month: 9, year: year, now: at))
                _ = try pool.withTransaction { try operations.fileTyped(.card(card, expiry), number: number, by: actor, at: at, on: $0) }
            case .device(let matched):
                let serial = try Self.valid(SerialNumber.validate(matched ? account.serial : "F2LXDEMO9999"))
                _ = try pool.withTransaction { try operations.fileTyped(.device(serial, nil), number: number, by: actor, at: at, on: $0) }
            case .transcript(let text):
                let valid = try Self.valid(Transcript.validate(text))
                _ = try pool.withTransaction { try operations.fileTyped(.transcript(valid), number: number, by: actor, at: at, on: $0) }
            case .document(let kind):
                guard let type = DocumentType(kind) else { preconditionFailure("The demo uploads documents only, not \(kind).") }
                _ = try pool.withTransaction { connection in
                    try operations.fileDocument(
                        type: type, bytes: Self.demoPDF(type, number: number.digits), declaredType: "application/pdf",
                        number: number, by: "customer", at: at, on: connection)
                }
            case .sharedDocument(let kind):
                guard let type = DocumentType(kind) else { preconditionFailure("The demo uploads documents only, not \(kind).") }
                _ = try pool.withTransaction { connection in
                    try operations.fileDocument(
                        type: type, bytes: Self.demoPDF(type, number: "000000000000"), declaredType: "application/pdf", number: number,
                        by: "customer", at: at, on: connection)
                }
            case .reply(let text, let fromRescueAddress):
                let rules = configuration.inboundSettings.rules
                let from = fromRescueAddress ? record.rescueEmail ?? "" : record.customerContactEmail
                let raw = [
                    "From: \(from)", "To: \(ReplyToken.address(rules.replyAddress, for: number, keys: keys))",
                    "Subject: Re: Case \(number.digits)",
                    "Message-ID: <demo-\(number.digits)-\(fromRescueAddress ? "rescue" : "reply")@mail.example>",
                    "Date: \(MIMEMessage.rfc5322Date(at))", "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "", text, "",
                ].joined(separator: "\r\n")
                _ = try pool.withTransaction { try operations.receive(raw: Array(raw.utf8), truncated: false, rules: rules, at: at, on: $0) }
            case .flag(let reason):
                _ = try pool.withTransaction { try operations.flag(number, reason: reason, by: agents.actor(.tier1), at: at, on: $0) }
            case .guessCallCodes:
                let right = CallCodeDerivation.code(.customer, for: record, step: CallCodes.step(at: at), keys: keys)
                for _ in 0..<StatusThrottlePolicy.default.caseLimit {
                    _ = try pool.withTransaction { connection in
                        try operations.verifyCaller(
                            number, proof: .customerCode(right == "000000" ? "000001" : "000000"), actorTier: .tier1, by: agents.actor(.tier1),
                            at: at, on: connection)
                    }
                }
            case .correctContact(let address):
                var correction = CaseOperations.Correction()
                correction.contactEmail = address
                // As at the desk: the victim on the phone reads her customer code, then the agent corrects the address.
                let customerCode = CallCodeDerivation.code(.customer, for: record, step: CallCodes.step(at: at), keys: keys)
                _ = try pool.withTransaction { connection in
                    _ = try operations.verifyCaller(
                        number, proof: .customerCode(customerCode), actorTier: .tier2, by: agents.actor(.tier2), at: at, on: connection)
                    return try operations.correct(
                        number, expectedVersion: record.version, correction, actorTier: .tier2, by: agents.actor(.tier2), at: at, on: connection)
                }
            case .assign(let tier):
                _ = try pool.withTransaction { connection in
                    try operations.assign(
                        number, expectedVersion: record.version, to: agents.byTier[tier]!.id, actorTier: holder,
                        by: agents.actor(holder), at: at, on: connection)
                }
            case .acceptDocuments:
                let pending = try pool.withConnection { try EvidenceStore.list(caseID: record.id, on: $0) }.filter {
                    $0.kind.isDocument && $0.status == .pending
                }
                for document in pending {
                    _ = try pool.withTransaction { connection in
                        try operations.review(
                            evidence: document.id, decision: .accepted, reason: "Matches the device on file.", actorTier: .tier3,
                            by: agents.actor(.tier3), at: at, on: connection)
                    }
                }
            case .unlock(let kind), .unlockElapsed(let kind):
                let elapsed: Bool
                if case .unlockElapsed = step { elapsed = true } else { elapsed = false }
                // A running cooling-off ends a day after the real now, whatever the case's own clock says.
                let delay = elapsed ? 0 : now.addingTimeInterval(86_400).timeIntervalSince(at)
                // An elapsed one is done in the same transaction, at the case's own time: committed apart, a running
                // service's scheduler could do it first, at the real now, ahead of the case's later demo steps.
                _ = try pool.withTransaction { connection in
                    _ = try operations.recordUnlock(
                        number, expectedVersion: record.version, step: kind, reason: nil, actorTier: .engineering,
                        by: agents.actor(.engineering), delay: delay, at: at, on: connection)
                    if elapsed { _ = try operations.doDueUnlock(at: at, on: connection) }
                }
            case .repudiate:
                // The demo cannot read the sealed token back; it issues one as the notice did and uses it.
                let token = "demo-stop-\(record.number)"
                try pool.withTransaction { connection in
                    try ScheduledUnlockStore.insertStopToken(hash: SHA256.hash(token), caseID: record.id, at: at, on: connection)
                    _ = try operations.stopUnlocks(token: token, at: at, on: connection)
                }
            case .mergeIntoEarlier:
                let target = try pool.withConnection { connection in
                    try operations.related(to: record, at: at, on: connection).first { $0.state.isOpen && $0.why.contains(.account) }
                }
                guard let target else { throw DemoSeedError("demo data: no open case on \(account.email) to merge into") }
                let targetNumber = try CaseNumber(parsing: target.number)
                // Each case runs on its own clock: the merge lands on both timelines, so it comes after the later of
                // the two cases' histories, never before the target was opened.
                let targetRecord = try pool.withConnection { try operations.load(targetNumber, on: $0) }
                // Its last event, not only its row's time: a note leaves `updated_at` as it was.
                let lastEvent = try pool.withConnection { try CaseEventStore.list(caseID: targetRecord.id, on: $0) }.last?.at
                let latest = max(targetRecord.createdAt, targetRecord.updatedAt, lastEvent ?? targetRecord.createdAt)
                if latest >= at { clock.advance(by: latest.timeIntervalSince(at) + 3_600) }
                let mergedAt = current()
                _ = try pool.withTransaction { connection in
                    try operations.merge(
                        number, expectedVersion: record.version, into: targetNumber,
                        reason: "Same caller, second channel.", sameCustomerConfirmed: true,  // a second contact address, one person
                        actorTier: .tier2, by: agents.actor(.tier2), at: mergedAt, on: connection)
                }
            case .freeze:
                let tier = holder.isAtLeast(Workflow.freezeMinimumTier) ? holder : Workflow.freezeMinimumTier
                _ = try pool.withTransaction { connection in
                    try operations.freeze(number, expectedVersion: record.version, actorTier: tier, by: agents.actor(tier), at: at, on: connection)
                }
            }
        }
        let final = try pool.withConnection { try operations.load(number, on: $0) }
        if plan.accountEmail != nil || plan.otherCustomerOn != nil { nextClaim = max(nextClaim, final.updatedAt).addingTimeInterval(600) }
        return DemoCase(
            number: number.digits, accessCode: opened.accessCode.display, kind: plan.kind, state: final.snapshot.state,
            path: final.snapshot.path, accountEmail: plan.accountEmail ?? account.email)
    }

    static func valid<T>(_ result: Result<T, ValidationFailure>) throws -> T {
        switch result {
        case .success(let value): return value
        case .failure(let failure):
            throw DemoSeedError("demo data refused: \(failure.issues.map { "\($0.field): \($0.message)" }.joined(separator: "; "))")
        }
    }

    /// A one-page PDF naming the document, with a correct cross-reference table so viewers (the dashboard's
    /// inline preview among them) render it.
    static func demoPDF(_ type: DocumentType, number: String) -> [UInt8] {
        let text = "Reclaim demo: \(type.rawValue.replacingOccurrences(of: "_", with: " ")) for case \(number)"
        let stream = "BT /F1 18 Tf 40 760 Td (\(text)) Tj ET"
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
            "<< /Length \(stream.utf8.count) >>\nstream\n\(stream)\nendstream",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
        var pdf = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(pdf.utf8.count)
            pdf += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let xref = pdf.utf8.count
        pdf += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { pdf += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n" }
        pdf += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Array(pdf.utf8)
    }
}
