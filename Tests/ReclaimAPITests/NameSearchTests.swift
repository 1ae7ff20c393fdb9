import Foundation
import Postgres
import ReclaimStore
import ReclaimTestSupport
import Testing

/// api.md v1.2 "Finding a case": `q` finds a case by the customer's name (Chinese by any two consecutive characters,
/// other scripts by whole words, case- and accent-insensitively) and by the contact address, over HTTP.
@Suite(.serialized) final class NameSearchTests {
    let world: CaseWorld
    /// Each opened case's access code, by number (a change of contact address needs the caller verified).
    var codes: [String: String] = [:]

    init() throws { world = try CaseWorld() }

    func open(name: String, contact: String, as session: AgentSession) throws -> String {
        var body = CaseWorld.caseBody(accountEmail: "acct.\(UUID().uuidString.prefix(8))@example.com", contactEmail: contact, devices: [])
        body.customer.name = name
        let opened = try world.openCase(as: session, body)
        codes[opened.caseNumber] = opened.accessCode
        return opened.caseNumber
    }

    func found(_ query: String, as session: AgentSession) throws -> [String] {
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
        let response = try world.get("/api/v1/cases?q=\(encoded)&state=any", as: session)
        #expect(response.status == 200, "\(response.text)")
        let items = try response.json()["items"] as? [[String: Any]] ?? []
        return items.compactMap { $0["case_number"] as? String }.sorted()
    }

    @Test func namesAndContactAddressesFindTheirCasesAndNothingElse() throws {
        let tier1 = try world.agent(.tier1)
        let wang = try open(name: "王小明", contact: "xm.wang@mail.test", as: tier1)
        let li = try open(name: "李小红", contact: "li@mail.test", as: tier1)
        let jose = try open(name: "José Álvarez-Núñez", contact: "jose@mail.test", as: tier1)
        let ann = try open(name: "Ann Smith", contact: "Ann.Smith@Mail.test", as: tier1)

        #expect(try found("小明", as: tier1) == [wang])
        #expect(try found("王小明", as: tier1) == [wang])
        #expect(try found("王小", as: tier1) == [wang])
        #expect(try found("小", as: tier1).isEmpty, "one character is not a fragment")
        #expect(try found("明小", as: tier1).isEmpty, "the characters in their order")
        #expect(try found("jose", as: tier1) == [jose])
        #expect(try found("ÁLVAREZ", as: tier1) == [jose])
        #expect(try found("nunez alvarez", as: tier1) == [jose])
        #expect(try found("smith", as: tier1) == [ann])
        #expect(try found("Smith Ann", as: tier1) == [ann])
        #expect(try found("Smith Bob", as: tier1).isEmpty, "every word must be the case's")
        #expect(try found("Smi", as: tier1).isEmpty, "whole words only")
        #expect(try found("ann.smith@mail.test", as: tier1) == [ann])
        #expect(try found("XM.WANG@mail.test", as: tier1) == [wang])
        #expect(try found("li@mail.test", as: tier1) == [li])

        // A corrected name and contact address (the caller verified): the old ones find nothing, the new ones the case.
        try world.verifyCaller(wang, accessCode: codes[wang] ?? "", as: tier1)
        let response = try world.client.request(
            "PATCH", "/api/v1/cases/\(wang)", headers: tier1.headers + [("If-Match", "\"1\"")],
            json: ["customer": ["name": "王晓明", "contact_email": "new.wang@mail.test"]])
        #expect(response.status == 200, "\(response.text)")
        #expect(try found("小明", as: tier1).isEmpty)
        #expect(try found("晓明", as: tier1) == [wang])
        #expect(try found("xm.wang@mail.test", as: tier1).isEmpty)
        #expect(try found("new.wang@mail.test", as: tier1) == [wang])
    }

    @Test func casesOpenedBeforeTheNameIndexAreBackfilledByTheMigrator() throws {
        let tier1 = try world.agent(.tier1)
        let number = try open(name: "陈大文 Chan", contact: "chan@mail.test", as: tier1)
        let owner = try world.service.database.connect(as: .owner)
        defer { owner.close() }
        // As a case stored before 0018: its identity terms only, and listed for the data step.
        try owner.execute("DELETE FROM case_search WHERE term LIKE '~%' OR term = 'chan@mail.test'")
        try owner.execute("INSERT INTO case_search_backfill (case_id) SELECT id FROM cases WHERE case_number = \(number)")
        #expect(try found("大文", as: tier1).isEmpty)
        #expect(try CaseStore.backfillSearchTerms(batch: 1, on: owner) == 1)
        #expect(try found("大文", as: tier1) == [number])
        #expect(try found("chan", as: tier1) == [number])
        #expect(try found("chan@mail.test", as: tier1) == [number])
        #expect(try owner.query("SELECT count(*) AS n FROM case_search_backfill").first?.decode("n", as: Int.self) == 0)
    }
}
