import Crypto
import Foundation
import Postgres
import ReclaimCore

/// An account on file as submitted (`POST /api/v1/accounts`, one line of `reclaim accounts import`).
public struct AccountPayload: Decodable, Sendable {
    /// A security question and its answer (in clear only until hashed).
    public struct Question: Decodable, Sendable {
        /// Short id such as `q1`.
        public var id: String
        /// The question's text.
        public var question: String
        /// The answer.
        public var answer: String
    }
    /// A payment card (the number in clear only until reduced).
    public struct Card: Decodable, Sendable {
        /// The full number.
        public var number: String
        /// Expiry month.
        public var expMonth: Int
        /// Expiry year (four digits).
        public var expYear: Int
        enum CodingKeys: String, CodingKey {
            case number
            case expMonth = "exp_month"
            case expYear = "exp_year"
        }
    }
    /// A device registered to the account.
    public struct Device: Decodable, Sendable {
        /// Serial number.
        public var serial: String?
        /// IMEI.
        public var imei: String?
        /// Model name.
        public var model: String?
    }
    /// The account's primary address (where resets go).
    public var email: String
    /// Security questions with answers.
    public var securityQuestions: [Question]?
    /// Payment cards on file.
    public var cards: [Card]?
    /// Registered devices.
    public var devices: [Device]?
    /// The addresses the account had before the theft: each told of a scheduled unlock, with the stop link.
    public var noticeAddresses: [String]?
    /// The account holder's phone (E.164), when known.
    public var phone: String?

    enum CodingKeys: String, CodingKey {
        case email, phone
        case securityQuestions = "security_questions"
        case cards, devices
        case noticeAddresses = "notice_addresses"
    }
}

/// An account that passed validation: answers normalised, cards checked, devices validated. Holds secrets: never log it.
public struct ValidatedAccount: Sendable {
    /// A question with its normalised answer.
    public struct Question: Sendable {
        /// Short id.
        public let id: String
        /// The question's text.
        public let question: String
        /// `SecurityAnswer.normalize` of the answer.
        public let normalizedAnswer: String
    }
    /// The primary address.
    public let email: EmailAddress
    /// Questions with normalised answers.
    public let questions: [Question]
    /// Checked card numbers and expiry.
    public let cards: [(number: CardNumber, expMonth: Int, expYear: Int)]
    /// Validated devices.
    public let devices: [CaseDevice]
    /// The addresses told of a scheduled unlock besides `email`.
    public let noticeAddresses: [EmailAddress]
    /// The account holder's phone, when known.
    public let phone: PhoneNumber?

    /// Validates every field, reporting every problem at once (field names as in the request, e.g. `cards[0].number`).
    public static func validate(_ payload: AccountPayload) -> Result<ValidatedAccount, ValidationFailure> {
        var issues = IssueCollector()
        let email = issues.take(EmailAddress.validate(payload.email, field: "email"))
        let phone = payload.phone.flatMap { issues.take(PhoneNumber.validate($0, field: "phone")) }
        var questions: [Question] = []
        var seenIDs = Set<String>()
        for (index, item) in (payload.securityQuestions ?? []).enumerated() {
            let field = "security_questions[\(index)]"
            let id = item.id.trimmingCharacters(in: .whitespaces)
            if id.isEmpty || id.count > 32 { issues.add(field: field + ".id", message: "A question id has 1 to 32 characters.") }
            if !seenIDs.insert(id).inserted { issues.add(field: field + ".id", message: "Question ids are unique within an account.") }
            let question = item.question.trimmingCharacters(in: .whitespacesAndNewlines)
            if question.isEmpty || question.count > 500 { issues.add(field: field + ".question", message: "A question has 1 to 500 characters.") }
            if let answer = issues.take(SecurityAnswer.validate(item.answer, field: field + ".answer")) {
                questions.append(Question(id: id, question: question, normalizedAnswer: answer))
            }
        }
        var cards: [(CardNumber, Int, Int)] = []
        for (index, item) in (payload.cards ?? []).enumerated() {
            let field = "cards[\(index)]"
            let number = issues.take(CardNumber.validate(item.number, field: field + ".number"))
            // Cards on file may have expired since: only the shape of the date is checked.
            if !(1...12).contains(item.expMonth) { issues.add(field: field + ".exp_month", message: "The expiry month is 1 to 12.") }
            if !(1000...9999).contains(item.expYear) { issues.add(field: field + ".exp_year", message: "The expiry year has four digits.") }
            if let number { cards.append((number, item.expMonth, item.expYear)) }
        }
        var devices: [CaseDevice] = []
        for (index, item) in (payload.devices ?? []).enumerated() {
            guard let device = validateDevice(serial: item.serial, imei: item.imei, model: item.model, field: "devices[\(index)]", issues: &issues)
            else { continue }
            devices.append(device)
        }
        var noticeAddresses: [EmailAddress] = []
        let notices = payload.noticeAddresses ?? []
        if notices.count > maximumNoticeAddresses {
            issues.add(field: "notice_addresses", message: "At most \(maximumNoticeAddresses) notice addresses.")
        }
        for (index, text) in notices.prefix(maximumNoticeAddresses).enumerated() {
            if let address = issues.take(EmailAddress.validate(text, field: "notice_addresses[\(index)]")),
                !noticeAddresses.contains(where: { EmailAddress.sameMailbox($0.value, address.value) })
            {
                noticeAddresses.append(address)
            }
        }
        do {
            try issues.check()
        } catch {
            return .failure(error)
        }
        return .success(
            ValidatedAccount(email: email!, questions: questions, cards: cards, devices: devices, noticeAddresses: noticeAddresses, phone: phone))
    }

    /// The most notice addresses an account on file holds.
    public static let maximumNoticeAddresses = 10

    /// One device: a serial or an IMEI (or both), each validated; the model is free text up to 100 characters.
    public static func validateDevice(serial: String?, imei: String?, model: String?, field: String, issues: inout IssueCollector) -> CaseDevice? {
        let serialText = serial?.trimmingCharacters(in: .whitespaces).nilIfEmpty
        let imeiText = imei?.trimmingCharacters(in: .whitespaces).nilIfEmpty
        if serialText == nil && imeiText == nil {
            issues.add(field: field, message: "A device needs a serial number or an IMEI.")
            return nil
        }
        let validSerial = serialText.flatMap { issues.take(SerialNumber.validate($0, field: field + ".serial")) }
        let validIMEI = imeiText.flatMap { issues.take(IMEI.validate($0, field: field + ".imei")) }
        let modelText = model?.trimmingCharacters(in: .whitespacesAndNewlines).nilIfEmpty
        if let modelText, modelText.count > 100 { issues.add(field: field + ".model", message: "A model name has at most 100 characters.") }
        if (serialText != nil && validSerial == nil) || (imeiText != nil && validIMEI == nil) { return nil }
        return CaseDevice(serial: validSerial?.value, imei: validIMEI?.digits, model: modelText)
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

/// An account ready to insert: answers hashed, cards reduced to first six, last four and fingerprint.
public struct PreparedAccount: Sendable {
    /// A question with its argon2id answer hash.
    public struct Question: Sendable {
        let id: String
        let question: String
        let answerHash: String
    }
    /// A card as stored: first six, last four, keyed fingerprint.
    public struct Card: Sendable {
        let summary: CardSummary
        let fingerprint: [UInt8]
        let keyID: String
        let expMonth: Int
        let expYear: Int
    }
    /// The new account's id.
    public let id: UUID
    /// The primary address.
    public let email: EmailAddress
    /// Hashed questions.
    public let questions: [Question]
    /// Reduced cards.
    public let cards: [Card]
    /// Validated devices.
    public let devices: [CaseDevice]
    /// The addresses told of a scheduled unlock besides `email`.
    public let noticeAddresses: [EmailAddress]
    /// The account holder's phone, when known.
    public let phone: PhoneNumber?

    /// Does the slow work (one argon2id hash per answer, ~15 ms each): call it outside any transaction.
    public init(_ account: ValidatedAccount, hasher: PasswordHash, cardKey: (id: String, key: SymmetricKey)) throws {
        id = UUID()
        email = account.email
        questions = try account.questions.map { Question(id: $0.id, question: $0.question, answerHash: try hasher.hash($0.normalizedAnswer)) }
        cards = account.cards.map { card in
            Card(
                summary: card.number.summary, fingerprint: CardFingerprint.compute(card.number, key: cardKey.key), keyID: cardKey.id,
                expMonth: card.expMonth, expYear: card.expYear)
        }
        devices = account.devices
        noticeAddresses = account.noticeAddresses
        phone = account.phone
    }

    /// `{"id", "email", "phone", "security_questions": [{"id", "question"}], "cards": [{"masked", "exp_month", "exp_year"}], "devices": [...]}`:
    /// no secret.
    public var json: JSONValue {
        [
            "id": .string(id.uuidString.lowercased()), "email": .string(email.value), "phone": .optional(phone?.value),
            "security_questions": .array(questions.map { ["id": .string($0.id), "question": .string($0.question)] }),
            "cards": .array(
                cards.map { ["masked": .string($0.summary.masked), "exp_month": .int(Int64($0.expMonth)), "exp_year": .int(Int64($0.expYear))] }),
            "devices": .array(devices.map(\.json)),
            "notice_addresses": .array(noticeAddresses.map { .string($0.value) }),
        ]
    }
}

/// The keyed fingerprint of a card number: equal cards match without the number being stored.
public enum CardFingerprint {
    /// HMAC-SHA256 of the digits under the `card_fingerprint` key.
    public static func compute(_ number: CardNumber, key: SymmetricKey) -> [UInt8] {
        HMACSHA256.authenticate(message: Array(number.digits.utf8), key: key)
    }
}

/// The accounts-on-file tables.
public enum AccountStore {
    /// Inserts an account and its questions, cards and devices; a taken e-mail fails with 23505 on `accounts_email_unique`.
    public static func insert(_ account: PreparedAccount, now: Date, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO accounts (id, email, email_key, notice_addresses, phone, created_at)
            VALUES (\(account.id), \(account.email.value), \(account.email.lookupKey), \(account.noticeAddresses.map(\.value)),
                \(account.phone?.value), \(now))
            """)
        try insertDetails(of: account, id: account.id, on: connection)
    }

    /// The questions, cards and devices of `account`, under the account row `id`.
    static func insertDetails(of account: PreparedAccount, id: UUID, on connection: PostgresConnection) throws {
        for question in account.questions {
            try connection.execute(
                """
                INSERT INTO account_security_questions (account_id, question_id, question, answer_hash)
                VALUES (\(id), \(question.id), \(question.question), \(question.answerHash))
                """)
        }
        for card in account.cards {
            try connection.execute(
                """
                INSERT INTO account_cards (id, account_id, first_six, last_four, number_length, fingerprint, fingerprint_key_id, exp_month, exp_year)
                VALUES (\(UUID()), \(id), \(card.summary.firstSix), \(card.summary.lastFour), \(card.summary.length),
                        \(card.fingerprint), \(card.keyID), \(card.expMonth), \(card.expYear))
                """)
        }
        for device in account.devices {
            try connection.execute(
                """
                INSERT INTO account_devices (id, account_id, serial, imei, model)
                VALUES (\(UUID()), \(id), \(device.serial), \(device.imei), \(device.model))
                """)
        }
    }

    /// The addresses of the account on file for an e-mail (case-insensitive): its `email`, then its notice addresses;
    /// empty when the account is not on file.
    public static func noticeRecipients(email: String, on connection: PostgresConnection) throws -> [String] {
        guard
            let row = try connection.query(
                "SELECT email, array_to_string(notice_addresses, ',') AS notice FROM accounts WHERE email_key = lower(\(email))"
            ).first
        else { return [] }
        let notice = try row.decode("notice", as: String.self).split(separator: ",").map(String.init)
        return [try row.decode("email", as: String.self)] + notice
    }

    /// Replaces what is on file for `email` (case-insensitive) with `account`: its address, phone, notice addresses, questions, cards and devices,
    /// in the caller's transaction; the account keeps its id (and cases find it as before). False when nothing is on file.
    public static func replace(email: String, with account: PreparedAccount, on connection: PostgresConnection) throws -> Bool {
        guard
            let id = try connection.query("SELECT id FROM accounts WHERE email_key = lower(\(email)) FOR UPDATE").first?.decode(0, as: UUID.self)
        else { return false }
        try connection.execute("DELETE FROM account_security_questions WHERE account_id = \(id)")
        try connection.execute("DELETE FROM account_cards WHERE account_id = \(id)")
        try connection.execute("DELETE FROM account_devices WHERE account_id = \(id)")
        try connection.execute(
            """
            UPDATE accounts SET email = \(account.email.value), email_key = \(account.email.lookupKey),
                notice_addresses = \(account.noticeAddresses.map(\.value)), phone = \(account.phone?.value) WHERE id = \(id)
            """)
        try insertDetails(of: account, id: id, on: connection)
        return true
    }

    /// The account on file for an e-mail (case-insensitive): its primary address and answer hashes by question id.
    public static func securityAnswers(email: String, on connection: PostgresConnection) throws -> (email: String, answers: [String: String])? {
        let rows = try connection.query(
            """
            SELECT a.email, q.question_id, q.answer_hash FROM accounts a
            LEFT JOIN account_security_questions q ON q.account_id = a.id WHERE a.email_key = lower(\(email))
            """)
        guard let first = rows.first else { return nil }
        var columns = rows.columns()
        let email = try columns("email")
        let questionID = try columns("question_id")
        let answerHash = try columns("answer_hash")
        var answers: [String: String] = [:]
        for row in rows where !row.isNull(questionID) {
            answers[try row.decode(questionID, as: String.self)] = try row.decode(answerHash, as: String.self)
        }
        return (try first.decode(email, as: String.self), answers)
    }

    /// The security questions on file for an e-mail (case-insensitive), by question id; nil when the account is not on file.
    /// Never an answer or its hash.
    public static func securityQuestions(email: String, on connection: PostgresConnection) throws -> [(id: String, question: String)]? {
        let rows = try connection.query(
            """
            SELECT q.question_id, q.question FROM accounts a
            LEFT JOIN account_security_questions q ON q.account_id = a.id WHERE a.email_key = lower(\(email))
            ORDER BY q.question_id
            """)
        guard !rows.isEmpty else { return nil }
        var columns = rows.columns()
        let id = try columns("question_id")
        let question = try columns("question")
        return try rows.filter { !$0.isNull(id) }.map { (try $0.decode(id, as: String.self), try $0.decode(question, as: String.self)) }
    }
}
