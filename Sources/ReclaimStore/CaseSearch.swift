import Foundation
import Postgres

/// The one normalisation of what `q` matches: indexed terms and queries go through it alike.
public enum CaseSearch {
    /// The prefix of a name token, so that a word of a name never meets a serial or a case number spelt the same.
    static let namePrefix = "~"
    /// Name tokens read from one query at most: more only narrow an answer that is already a handful of cases.
    static let queryTokenLimit = 8

    /// E-mail addresses lower-cased; anything else (case numbers, serials, IMEIs) without spaces or dashes, upper-cased.
    public static func term(for text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 254 else { return nil }
        if trimmed.contains("@") { return trimmed.lowercased() }
        let compact = trimmed.unicodeScalars.filter { !$0.properties.isWhitespace && $0 != "-" }
        let term = String(String.UnicodeScalarView(compact)).uppercased()
        return term.isEmpty ? nil : term
    }

    /// The terms that identify a case's account and devices (also what a possible duplicate is found by).
    public static func terms(number: String, accountEmail: String, devices: [CaseDevice]) -> Set<String> {
        var terms: Set<String> = [number]
        if let email = term(for: accountEmail) { terms.insert(email) }
        for device in devices {
            if let serial = device.serial.flatMap(term(for:)) { terms.insert(serial) }
            if let imei = device.imei.flatMap(term(for:)) { terms.insert(imei) }
        }
        return terms
    }

    /// Every term a case is found by: `terms` and the customer's contact address, phone (`+` and digits: never a serial,
    /// an IMEI or a case number) and name tokens (`nameTokens`).
    public static func indexTerms(
        number: String, accountEmail: String, contactEmail: String, phone: String? = nil, name: String, devices: [CaseDevice]
    ) -> Set<String> {
        var all = terms(number: number, accountEmail: accountEmail, devices: devices)
        if let contact = term(for: contactEmail) { all.insert(contact) }
        if let phone = phone.flatMap(term(for:)) { all.insert(phone) }
        all.formUnion(nameTokens(name))
        return all
    }

    /// A name's tokens: each two consecutive characters of a run of Han characters (小明 finds 王小明), and each word of
    /// two or more letters or digits in other scripts, case- and accent-folded (josé finds José).
    public static func nameTokens(_ name: String) -> Set<String> {
        var tokens: Set<String> = []
        var han: [Unicode.Scalar] = []
        var word = String.UnicodeScalarView()
        func endRuns() {
            if han.count >= 2 {
                for index in 0..<(han.count - 1) { tokens.insert(namePrefix + String(han[index]) + String(han[index + 1])) }
            }
            han.removeAll()
            if word.count >= 2 { tokens.insert(namePrefix + String(word)) }
            word.removeAll()
        }
        let folded = name.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        for scalar in folded.unicodeScalars {
            if isHan(scalar) {
                if !word.isEmpty { endRuns() }
                han.append(scalar)
            } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                if !han.isEmpty { endRuns() }
                word.append(scalar)
            } else {
                endRuns()
            }
        }
        endRuns()
        return tokens
    }

    /// What a typed query looks for: its `term` (a number, serial, IMEI or address, as indexed) or, all of them at
    /// once, its name tokens; nil when it is too long to be either.
    public static func query(for text: String) -> CaseSearchQuery? {
        guard let exact = term(for: text) else { return nil }
        let tokens = text.contains("@") ? [] : Array(nameTokens(text).sorted().prefix(queryTokenLimit))
        return CaseSearchQuery(term: exact, nameTokens: tokens)
    }

    /// CJK unified ideographs (with extensions A to H and the compatibility block) and 〇.
    static func isHan(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3007, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3134F: true
        default: false
        }
    }
}

/// A parsed `q`: a case whose terms hold `term`, or every one of `nameTokens`, matches.
public struct CaseSearchQuery: Sendable, Equatable {
    /// The query as one indexed term (`CaseSearch.term`).
    public var term: String
    /// The name tokens that must all be a case's (`CaseSearch.nameTokens`); empty for an address.
    public var nameTokens: [String]

    /// A query of these parts.
    public init(term: String, nameTokens: [String] = []) {
        self.term = term
        self.nameTokens = nameTokens
    }
}

extension CaseStore {
    /// Gives the cases listed in `case_search_backfill` (0018) their terms, `batch` cases a transaction, and returns how many
    /// it did; the migrator runs it after the SQL until the list is empty.
    @discardableResult
    public static func backfillSearchTerms(batch: Int = 500, on connection: PostgresConnection) throws -> Int {
        var done = 0
        while true {
            let count = try connection.withTransaction { transaction in
                let cases = try transaction.query(
                    """
                    SELECT \(columns) FROM \(from)
                    WHERE c.id IN (SELECT case_id FROM case_search_backfill ORDER BY case_id LIMIT \(batch) FOR UPDATE SKIP LOCKED)
                    """
                ).decodeCases()
                for record in cases {
                    let terms = CaseSearch.indexTerms(
                        number: record.number, accountEmail: record.accountEmail, contactEmail: record.customerContactEmail,
                        phone: record.customerPhone, name: record.customerName, devices: record.devices
                    ).sorted()
                    try transaction.execute(
                        "INSERT INTO case_search (term, case_id) SELECT unnest(\(terms)), \(record.id) ON CONFLICT DO NOTHING")
                }
                try transaction.execute("DELETE FROM case_search_backfill WHERE case_id = ANY(\(cases.map(\.id)))")
                return cases.count
            }
            done += count
            if count < batch { return done }
        }
    }
}
