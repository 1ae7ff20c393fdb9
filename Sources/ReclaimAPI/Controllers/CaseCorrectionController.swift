import Foundation
import HTTPServer
import ReclaimCore
import ReclaimOperations
import ReclaimStore

/// `PATCH /api/v1/cases/{n}`: correcting a case's details (api.md v1.2 "A case can be corrected").
extension CasesController {
    /// `PATCH /api/v1/cases/{n}` with `If-Match` (tier1+, open cases): 200 with the corrected case and its new `ETag`.
    @Sendable func correct(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, _) = try authorizeOnCase(.correctCase, request, number: number, attempted: "correct")
        let expected = try CaseHTTP.ifMatch(request)
        let correction = try Self.correction(from: CaseHTTP.jsonObject(request))
        let now = self.now
        return try context.transaction(for: request, attempting: "correct") { connection in
            respond(
                try operations.correct(
                    number, expectedVersion: expected, correction, actorTier: principal.tier ?? .tier1, by: principal.actor, at: now,
                    on: connection),
                principal: principal)
        }
    }

    /// The correction a merge-patch body asks for; 422 naming every unknown member and every value of the wrong type.
    static func correction(from body: [String: JSONValue]) throws -> CaseOperations.Correction {
        var errors: [FieldError] = []
        var correction = CaseOperations.Correction()
        func refuse(_ field: String, _ message: String) { errors.append(FieldError(field: field, message: message)) }
        func string(_ value: JSONValue, _ field: String) -> String? {
            if case .string(let text) = value { return text }
            refuse(field, "Expected text.")
            return nil
        }
        func optionalString(_ value: JSONValue, _ field: String) -> String?? {
            if case .null = value { return .some(nil) }
            return string(value, field).map { .some($0) }
        }
        func object(_ value: JSONValue, _ field: String, members: Set<String>, nonEmpty: Bool = true) -> [String: JSONValue]? {
            guard case .object(let object) = value else {
                refuse(field, "Expected an object.")
                return nil
            }
            for name in object.keys.sorted() where !members.contains(name) { refuse("\(field).\(name)", "Not a field that can be corrected.") }
            if nonEmpty, object.isEmpty { refuse(field, "Give at least one field to change.") }
            return object
        }
        for name in body.keys.sorted() {
            let value = body[name]!
            switch name {
            case "customer":
                guard let customer = object(value, "customer", members: ["name", "contact_email", "phone"]) else { continue }
                if let name = customer["name"] { correction.customerName = string(name, "customer.name") }
                if let contact = customer["contact_email"] { correction.contactEmail = string(contact, "customer.contact_email") }
                if let phone = customer["phone"], let given = optionalString(phone, "customer.phone") { correction.phone = given }
            case "language":
                if case .null = value {
                    correction.language = .some(nil)
                    continue
                }
                if case .string(let text) = value, let language = CustomerLanguage(rawValue: text) {
                    correction.language = .some(language)
                    continue
                }
                refuse("language", "One of \(CustomerLanguage.allCases.map(\.rawValue).joined(separator: ", ")), or null when not known.")
            case "facts":
                let names = Set(CaseFact.allCases.map(\.rawValue)).union(["rescue_email"])
                guard let facts = object(value, "facts", members: names) else { continue }
                if let rescue = facts["rescue_email"], let given = optionalString(rescue, "facts.rescue_email") { correction.rescueEmail = given }
                for fact in CaseFact.allCases {
                    guard let given = facts[fact.rawValue] else { continue }
                    if case .bool(let flag) = given {
                        correction.facts[fact] = flag
                    } else {
                        refuse("facts.\(fact.rawValue)", "Expected true or false.")
                    }
                }
            case "devices":
                guard case .array(let items) = value else {
                    refuse("devices", "Expected a list of devices.")
                    continue
                }
                var devices: [CaseOperations.Opening.Device] = []
                for (index, item) in items.enumerated() {
                    let field = "devices[\(index)]"
                    guard let device = object(item, field, members: ["serial", "imei", "model"], nonEmpty: false) else { continue }
                    func part(_ key: String) -> String? { device[key].flatMap { optionalString($0, "\(field).\(key)") } ?? nil }
                    devices.append(.init(serial: part("serial"), imei: part("imei"), model: part("model")))
                }
                correction.devices = devices
            case "summary":
                correction.summary = string(value, "summary")
            default:
                refuse(name, "Not a field that can be corrected.")
            }
        }
        if body.isEmpty { refuse("", "Give at least one field to change.") }
        // By field name, so that a member's own errors and those of its unknown neighbours read in one order.
        guard errors.isEmpty else { throw Problem.unprocessable(errors: errors.sorted { $0.field < $1.field }) }
        return correction
    }
}
