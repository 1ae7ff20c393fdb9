import Foundation
import Postgres
import ReclaimCore

/// A case's corrected details as they are to be stored (validated; every field the whole new value).
public struct CorrectedCase: Sendable {
    /// See `CaseRecord`.
    public var customerName: String
    /// See `CaseRecord`.
    public var customerContactEmail: String
    /// See `CaseRecord` (nil: not known).
    public var language: CustomerLanguage?
    /// See `CaseRecord`.
    public var rescueEmail: String?
    /// The facts, and the path and due date they lead to.
    public var snapshot: CaseSnapshot
    /// See `CaseRecord`.
    public var dueAt: Date?
    /// See `CaseRecord`.
    public var devices: [CaseDevice]
    /// See `CaseRecord`.
    public var summary: String
    /// See `CaseRecord`.
    public var formerRescueEmails: [String] = []
    /// See `CaseRecord` (nil: none).
    public var customerPhone: String? = nil

    /// A correction from its parts.
    public init(
        customerName: String, customerContactEmail: String, language: CustomerLanguage?, rescueEmail: String?, snapshot: CaseSnapshot,
        dueAt: Date?, devices: [CaseDevice], summary: String
    ) {
        self.customerName = customerName
        self.customerContactEmail = customerContactEmail
        self.language = language
        self.rescueEmail = rescueEmail
        self.snapshot = snapshot
        self.dueAt = dueAt
        self.devices = devices
        self.summary = summary
    }
}

extension CaseStore {
    /// Stores a case's corrected details if it is still at `expectedVersion`; false when someone changed it first.
    /// The row stays locked until the transaction ends. The search terms follow the devices, the name, the contact address and the phone.
    public static func correct(id: UUID, expectedVersion: Int, to corrected: CorrectedCase, now: Date, on connection: PostgresConnection) throws
        -> Bool
    {
        let facts = corrected.snapshot.facts
        let devices = JSONValue.array(corrected.devices.map(\.json)).canonical
        let updated = try connection.query(
            """
            UPDATE cases SET customer_name = \(corrected.customerName), customer_contact_email = \(corrected.customerContactEmail),
                customer_phone = \(corrected.customerPhone),
                language = \(corrected.language?.rawValue), rescue_email = \(corrected.rescueEmail),
                former_rescue_emails = string_to_array(\(corrected.formerRescueEmails.joined(separator: " ")), ' ', ''),
                rescue_email_added = \(facts.rescueEmailAdded), security_questions_changed = \(facts.securityQuestionsChanged),
                two_step_enabled = \(facts.twoStepEnabled), lost_mode_enabled = \(facts.lostModeEnabled),
                path = \(corrected.snapshot.path.rawValue), due_at = \(corrected.dueAt), devices = \(devices)::jsonb, summary = \(corrected.summary),
                updated_at = \(now), version = version + 1
            WHERE id = \(id) AND version = \(expectedVersion)
            RETURNING case_number, account_email
            """)
        guard let row = updated.first else { return false }
        let terms = CaseSearch.indexTerms(
            number: try row.decode("case_number", as: String.self), accountEmail: try row.decode("account_email", as: String.self),
            contactEmail: corrected.customerContactEmail, phone: corrected.customerPhone, name: corrected.customerName, devices: corrected.devices
        ).sorted()
        // The terms of what was removed go; those of what was added come (one statement each, one text[] parameter).
        try connection.execute("DELETE FROM case_search WHERE case_id = \(id) AND NOT (term = ANY(\(terms)))")
        try connection.execute("INSERT INTO case_search (term, case_id) SELECT unnest(\(terms)), \(id) ON CONFLICT DO NOTHING")
        return true
    }
}
