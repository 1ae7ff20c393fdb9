import Foundation
import ReclaimCore
import ReclaimStore
import ReclaimTestSupport
import Testing

extension CaseWorld {
    /// `PATCH /api/v1/cases/{n}` with `json` as `session`, with `If-Match: "ifMatch"` when given.
    func patch(_ number: String, as session: AgentSession, json: Any, ifMatch: Int?) throws -> TestHTTPResponse {
        var headers = session.headers
        if let ifMatch { headers.append(("If-Match", "\"\(ifMatch)\"")) }
        return try client.request("PATCH", "/api/v1/cases/\(number)", headers: headers, json: json)
    }

    /// A correction that must succeed; the case after it.
    @discardableResult
    func mustPatch(_ number: String, as session: AgentSession, json: Any, ifMatch: Int) throws -> CaseView {
        let response = try patch(number, as: session, json: json, ifMatch: ifMatch)
        guard response.status == 200 else { throw CaseTestError("PATCH answered \(response.status): \(response.text)") }
        return try response.decode(CaseView.self)
    }

    /// The data of the case's `case_corrected` events, oldest first.
    func corrections(_ number: String, as session: AgentSession) throws -> [JSONValue] {
        try events(number, as: session).filter { $0.type == "case_corrected" }.map(\.data)
    }
}

/// api.md v1.2 "A case can be corrected": `PATCH /api/v1/cases/{n}` over HTTP, field by field, with its events,
/// its refusals (422, 412/428, 409) and the rescue rule from the attacker's side.
@Suite(.serialized) final class CaseCorrectionTests {
    let world: CaseWorld

    init() throws { world = try CaseWorld() }

    func fields(_ response: TestHTTPResponse) throws -> [String] {
        (try response.problem().errors ?? []).map(\.field)
    }

    @Test func eachFieldIsCorrectedWithOneEventNamingItAndNoPersonalValueInIt() throws {
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber

        var response = try world.patch(number, as: tier1, json: ["customer": ["name": "Ada Lovelace"]], ifMatch: 1)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.header("ETag") == "\"2\"")
        var now = try response.decode(CaseView.self)
        #expect(now.customer.name == "Ada Lovelace" && now.customer.contactEmail == "victim.home@example.net" && now.version == 2)

        now = try world.mustPatch(number, as: tier1, json: ["language": "zh-Hant"], ifMatch: 2)
        #expect(now.language == "zh-Hant")
        now = try world.mustPatch(number, as: tier1, json: ["language": NSNull()], ifMatch: 3)
        #expect(now.language == nil, "not known")
        #expect(try world.caseBody(number, as: tier1)["language"] is NSNull)

        now = try world.mustPatch(
            number, as: tier1, json: ["facts": ["security_questions_changed": true, "rescue_email": "thief@evil.test"]], ifMatch: 4)
        #expect(now.facts["security_questions_changed"] == true && now.rescueEmail == "thief@evil.test" && now.facts["rescue_email_added"] == true)
        #expect(
            now["unlocks"] as? [String: [String]] == ["required": ["remove_rescue_email", "reset_security_questions"], "done": [], "scheduled": []])

        now = try world.mustPatch(
            number, as: tier1,
            json: [
                "devices": [
                    ["serial": "F2LXK9ABCD12", "model": "Tablet"],
                    ["imei": "490154203237518", "serial": "C02XK1ZJH3QD", "model": "Phone 12"],
                ]
            ],
            ifMatch: 5)
        #expect(
            now.devices.map { [$0.serial, $0.imei, $0.model] } == [
                ["F2LXK9ABCD12", nil, "Tablet"], ["C02XK1ZJH3QD", "490154203237518", "Phone 12"],
            ])
        now = try world.mustPatch(
            number, as: tier1, json: ["devices": [["serial": "F2LXK9ABCD12", "model": "Tablet"]], "summary": "Typo fixed."],
            ifMatch: 6)
        #expect(now.devices.count == 1 && now.summary == "Typo fixed." && now.version == 7)
        // The search follows the devices: the new serial finds the case, the removed IMEI no longer does.
        let found = try world.get("/api/v1/cases?q=F2LXK9ABCD12", as: tier1).json()["items"] as? [[String: Any]]
        #expect(found?.compactMap { $0["case_number"] as? String }.contains(number) == true)
        let gone = try world.get("/api/v1/cases?q=490154203237518", as: tier1).json()["items"] as? [[String: Any]]
        #expect(gone?.isEmpty == true)

        let corrections = try world.corrections(number, as: tier1)
        #expect(
            corrections.map { $0["fields"] } == [
                ["customer.name"], ["language"], ["language"], ["facts.rescue_email", "facts.security_questions_changed"], ["devices"],
                ["devices", "summary"],
            ])
        #expect(corrections[1]["language"] == "zh-Hant" && corrections[2]["language"] == .null)
        #expect(corrections[3]["facts"] == ["security_questions_changed": true] && corrections[3]["rescue_email"] == "added")
        #expect(corrections[3]["unlocks_required"] == ["remove_rescue_email", "reset_security_questions"])
        #expect(corrections[4]["devices"] == ["added": 1, "removed": 0] && corrections[5]["devices"] == ["added": 0, "removed": 1])
        // No personal value on the timeline, which cannot be rewritten: the case itself holds them.
        let timeline = corrections.map(\.canonical).joined()
        for value in ["Ada", "evil.test", "F2LXK9ABCD12", "Tablet", "Typo", "example.net"] { #expect(!timeline.contains(value), "\(value)") }

        // A correction to what the case already says changes nothing: no event, no new version.
        let same = try world.patch(number, as: tier1, json: ["summary": "Typo fixed.", "customer": ["name": "Ada Lovelace"]], ifMatch: 7)
        #expect(same.status == 200 && same.header("ETag") == "\"7\"")
        #expect(try world.corrections(number, as: tier1).count == 6)
    }

    /// api.md v1.3 "A phone number on file": `customer.phone` given at opening, corrected and removed, in E.164 or 422
    /// naming it; the case is found by it; the timeline names the field, never the number.
    @Test func aPhoneIsGivenAtOpeningCorrectedAndRemovedAndOnlyE164IsAccepted() throws {
        let tier1 = try world.agent(.tier1)
        var body = CaseWorld.caseBody()
        body.customer.phone = "+86 139 7744 0231"
        let refused = try world.post("/api/v1/cases", as: tier1, encoded: body)
        #expect(refused.status == 422, "\(refused.text)")
        #expect(try fields(refused) == ["customer.phone"])
        body.customer.phone = "+8613977440231"
        let created = try world.openCase(as: tier1, body)
        let number = created.caseNumber
        #expect(created.customer.phone == "+8613977440231")
        #expect(try world.get("/api/v1/cases/\(number)", as: tier1).decode(CaseView.self).customer.phone == "+8613977440231")
        // The phone is a search term (as written: + and digits).
        let found = try world.get("/api/v1/cases?q=%2B8613977440231", as: tier1).json()["items"] as? [[String: Any]]
        #expect(found?.compactMap { $0["case_number"] as? String } == [number])

        for typed in ["13977440231", "+8613977440231a", "+1234567", "+1234567890123456", "(+86)13977440231"] {
            let bad = try world.patch(number, as: tier1, json: ["customer": ["phone": typed]], ifMatch: 1)
            #expect(bad.status == 422, "\(typed)")
            #expect(try fields(bad) == ["customer.phone"], "\(typed)")
        }
        let wrongType = try world.patch(number, as: tier1, json: ["customer": ["phone": 8_613_977_440_231]], ifMatch: 1)
        #expect(wrongType.status == 422)
        #expect(try fields(wrongType) == ["customer.phone"])
        // Who is called back changes only on a verified call (api.md v1.3): refused before, taken after.
        let unverified = try world.patch(number, as: tier1, json: ["customer": ["phone": "+14155550123"]], ifMatch: 1)
        #expect(unverified.status == 409)
        #expect(try unverified.problem().code == "caller_not_verified")
        try world.verifyCaller(number, accessCode: try #require(created.accessCode), as: tier1)
        var now = try world.mustPatch(number, as: tier1, json: ["customer": ["phone": "+14155550123"]], ifMatch: 1)
        #expect(now.customer.phone == "+14155550123" && now.version == 2)
        let moved = try world.get("/api/v1/cases?q=%2B8613977440231", as: tier1).json()["items"] as? [[String: Any]]
        #expect(moved?.isEmpty == true, "the old number no longer finds the case")
        now = try world.mustPatch(number, as: tier1, json: ["customer": ["phone": NSNull()]], ifMatch: 2)
        #expect(now.customer.phone == nil && now.version == 3)
        #expect((try world.caseBody(number, as: tier1)["customer"] as? [String: Any])?["phone"] is NSNull)
        let corrections = try world.corrections(number, as: tier1)
        #expect(corrections.map { $0["fields"] } == [["customer.phone"], ["customer.phone"]])
        let timeline = try world.get("/api/v1/cases/\(number)/events?limit=200", as: tier1).text
        for digits in ["13977440231", "4155550123"] { #expect(!timeline.contains(digits), "\(digits) on the timeline") }
    }

    @Test func unknownFieldsWrongTypesAndAnEmptyPatchAre422NamingEachFieldAndChangeNothing() throws {
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        let refused: [(body: Any, fields: [String])] = [
            ([String: Any](), [""]),
            (["color": "red"], ["color"]),
            (["state": "resolved"], ["state"]),
            (["account_email": "other@example.com"], ["account_email"]),
            (["customer": [String: Any]()], ["customer"]),
            (["customer": ["name": 5, "nickname": "Ada"]], ["customer.name", "customer.nickname"]),
            (["customer": ["name": "  "]], ["customer.name"]),
            (["customer": ["contact_email": "not an address"]], ["customer.contact_email"]),
            (["customer": "Ada"], ["customer"]),
            (["language": "fr"], ["language"]),
            (["language": 1], ["language"]),
            (["facts": ["two_step_enabled": "yes"]], ["facts.two_step_enabled"]),
            (["facts": ["rescue_email": "nobody"]], ["facts.rescue_email"]),
            (["facts": ["rescue_email": 7]], ["facts.rescue_email"]),
            (["facts": ["stolen": true]], ["facts.stolen"]),
            (["facts": ["rescue_email_added": false, "rescue_email": "thief@evil.test"]], ["facts.rescue_email_added"]),
            (["devices": "C02XK1ZJH3QD"], ["devices"]),
            (["devices": [["serial": "bad!"]]], ["devices[0].serial"]),
            (["devices": [["model": "Phone"]]], ["devices[0]"]),
            (["devices": [["serial": "C02XK1ZJH3QD", "colour": "red"]]], ["devices[0].colour"]),
            (["devices": Array(repeating: ["serial": "C02XK1ZJH3QD"], count: 11)], ["devices"]),
            (["summary": NSNull()], ["summary"]),
            (["summary": String(repeating: "x", count: 5001)], ["summary"]),
        ]
        for (body, expected) in refused {
            let response = try world.patch(number, as: tier1, json: body, ifMatch: 1)
            #expect(response.status == 422, "\(body): \(response.text)")
            #expect(try response.problem().code == "validation_failed")
            #expect(try fields(response) == expected, "\(body)")
        }
        let notAnObject = try world.patch(number, as: tier1, json: [["customer": ["name": "X"]]], ifMatch: 1)
        #expect(notAnObject.status == 422)
        let malformed = try world.client.request(
            "PATCH", "/api/v1/cases/\(number)", headers: tier1.headers + [("If-Match", "\"1\""), ("Content-Type", "application/json")],
            body: Array("{\"summary\":".utf8))
        #expect(malformed.status == 400)
        let after = try world.caseBody(number, as: tier1)
        #expect(after["version"] as? Int == 1)
        #expect(try world.corrections(number, as: tier1).isEmpty)
    }

    @Test func ifMatchIsRequiredAndAStaleOneIs412WithTheVersionNow() throws {
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        let missing = try world.patch(number, as: tier1, json: ["summary": "x"], ifMatch: nil)
        #expect(missing.status == 428)
        try world.mustPatch(number, as: tier1, json: ["summary": "First"], ifMatch: 1)
        let stale = try world.patch(number, as: tier1, json: ["summary": "Second"], ifMatch: 1)
        #expect(stale.status == 412)
        #expect(stale.header("ETag") == "\"2\"")
        #expect(try world.caseBody(number, as: tier1)["summary"] as? String == "First")
    }

    @Test func aFinishedCaseIs409CaseNotOpenAndOnlyAgentsMayCorrect() throws {
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        let (number, code) = try world.awaitingDocuments(tier1: tier1, tier2: tier2)
        try world.customerUpload(number, code: code, type: "invoice")
        try world.customerUpload(number, code: code, type: "imei_photo")
        let rejected = try world.must(number, "reject", as: tier3, version: 4, extra: ["reason": "The invoice is for another device."])
        #expect(rejected.state == "rejected")
        let refused = try world.patch(number, as: tier1, json: ["summary": "Too late"], ifMatch: 5)
        #expect(refused.status == 409, "\(refused.text)")
        #expect(try refused.problem().code == "case_not_open")

        // An API client (even the one that opened a case) and a stranger: refused, and nothing changes.
        let client = try world.service.addClient(name: "Carrier")
        let body = try world.openCase(as: tier1).caseNumber
        let bytes = Array(#"{"summary":"by a partner"}"#.utf8)
        var headers = world.service.clientHeaders(client, method: "PATCH", target: "/api/v1/cases/\(body)", body: bytes)
        headers += [("Content-Type", "application/json"), ("If-Match", "\"1\"")]
        let partner = try world.client.request("PATCH", "/api/v1/cases/\(body)", headers: headers, body: bytes)
        #expect(partner.status == 403)
        let anonymous = try world.client.request("PATCH", "/api/v1/cases/\(body)", headers: [("If-Match", "\"1\"")], json: ["summary": "x"])
        #expect(anonymous.status == 401)
        #expect(try world.caseBody(body, as: tier1)["version"] as? Int == 1)
        #expect(try world.events(body, as: tier1).contains { $0.type == "denied" && $0.data["attempted"] == "correct" })
    }

    @Test func twoStepTurnedOnAtTriageMakesTheCaseDeviceOnlyAndOffAgainUndoesIt() throws {
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        let deviceOnly = try world.mustPatch(number, as: tier1, json: ["facts": ["two_step_enabled": true]], ifMatch: 1)
        #expect(deviceOnly.path == "activation_lock")
        #expect(deviceOnly["unlocks"] as? [String: [String]] == ["required": ["remove_activation_lock"], "done": [], "scheduled": []])
        #expect(!deviceOnly.allowedActions.contains("send_reset"))
        #expect(try world.corrections(number, as: tier1).last?["path"] == ["from": "undetermined", "to": "activation_lock"])
        let back = try world.mustPatch(number, as: tier1, json: ["facts": ["two_step_enabled": false]], ifMatch: 2)
        #expect(back.path == "undetermined" && back.allowedActions.contains("escalate"))
        #expect(back["unlocks"] as? [String: [String]] == ["required": ["remove_rescue_email"], "done": [], "scheduled": []])
    }

    @Test func whileDocumentsAreAwaitedThePathFollowsAndWhatArrivedMayAlreadyMeetIt() throws {
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        // Documents path, invoice in: two-step turns out to be on, so the device path asks for the lock screen too.
        let (first, firstCode) = try world.awaitingDocuments(tier1: tier1, tier2: tier2)
        try world.customerUpload(first, code: firstCode, type: "invoice")
        let switched = try world.mustPatch(first, as: tier2, json: ["facts": ["two_step_enabled": true]], ifMatch: 3)
        #expect(switched.path == "activation_lock" && switched.state == "awaiting_documents")
        let status = try world.status(first, firstCode).decode(StatusView.self)
        #expect(status.missing == ["imei_photo", "lock_screen_photo"])

        // Device path with the invoice and IMEI photo in: two-step was a mistake, and the documents path is met already.
        let (second, secondCode) = try world.awaitingDocuments(facts: ["two_step_enabled": true], tier1: tier1, tier2: tier2)
        try world.customerUpload(second, code: secondCode, type: "invoice")
        try world.customerUpload(second, code: secondCode, type: "imei_photo")
        let met = try world.mustPatch(second, as: tier2, json: ["facts": ["two_step_enabled": false]], ifMatch: 3)
        #expect(met.path == "documents")
        #expect(met.state == "document_review", "every requirement of the new path has a document: the case moves itself")
        let moved = try world.events(second, as: tier1).last
        #expect(moved?.type == "transition" && moved?.actor == "system")
    }

    @Test func inEngineeringAChangeOfPathIs409PathDecidedButTheChecklistFollowsOtherFacts() throws {
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        let (number, code) = try world.awaitingDocuments(tier1: tier1, tier2: tier2)
        try world.customerUpload(number, code: code, type: "invoice")
        try world.customerUpload(number, code: code, type: "imei_photo")
        for id in try world.pendingDocuments(number, as: tier3) { try world.mustReview(id, "accepted", as: tier3) }
        try world.must(number, "approve", as: tier3, version: 4)
        // Past tier 1, what the thief changed is tier 2's to correct (api.md v1.3).
        #expect(try world.patch(number, as: tier1, json: ["facts": ["security_questions_changed": true]], ifMatch: 5).status == 403)
        let decided = try world.patch(number, as: tier2, json: ["facts": ["two_step_enabled": true]], ifMatch: 5)
        #expect(decided.status == 409, "\(decided.text)")
        #expect(try decided.problem().code == "path_decided")
        let more = try world.mustPatch(number, as: tier2, json: ["facts": ["security_questions_changed": true]], ifMatch: 5)
        #expect(more.path == "documents")
        #expect(
            more["unlocks"] as? [String: [String]] == ["required": ["remove_rescue_email", "reset_security_questions"], "done": [], "scheduled": []])
    }

    /// The rescue rule from the attacker's side: the thief's own mailbox, spelt another way, as the contact address.
    @Test func aContactAddressReachingTheRescueMailboxIs422AtOpeningAndOnCorrection() throws {
        let tier1 = try world.agent(.tier1)
        func body(contact: String, rescue: String) -> [String: Any] {
            [
                "kind": "account_takeover", "account_email": "victim@example.com", "customer": ["name": "Ada Victim", "contact_email": contact],
                "facts": ["rescue_email": rescue],
            ]
        }
        let opening = try world.post("/api/v1/cases", as: tier1, json: body(contact: "evil+x@example.com", rescue: "Evil@example.com"))
        #expect(opening.status == 422, "\(opening.text)")
        #expect(try fields(opening) == ["customer.contact_email"])
        let dots = try world.post("/api/v1/cases", as: tier1, json: body(contact: "E.V.I.L@googlemail.com", rescue: "evil+thief@gmail.com"))
        #expect(dots.status == 422, "\(dots.text)")
        #expect(try fields(dots) == ["customer.contact_email"])
        #expect((try world.get("/api/v1/cases", as: tier1).json()["items"] as? [Any])?.isEmpty == true)

        let opened = try world.post("/api/v1/cases", as: tier1, json: body(contact: "ada@example.net", rescue: "Evil@example.com"))
        #expect(opened.status == 201, "\(opened.text)")
        let number = try #require(try opened.json()["case_number"] as? String)
        let contact = try world.patch(number, as: tier1, json: ["customer": ["contact_email": "evil+x@example.com"]], ifMatch: 1)
        #expect(contact.status == 422)
        #expect(try fields(contact) == ["customer.contact_email"])
        let rescue = try world.patch(number, as: tier1, json: ["facts": ["rescue_email": "ADA+case@Example.NET"]], ifMatch: 1)
        #expect(rescue.status == 422)
        #expect(try fields(rescue) == ["facts.rescue_email"])
        // Gmail's own rules: dots and googlemail.com reach the same mailbox.
        let gmail = try world.patch(
            number, as: tier1, json: ["customer": ["contact_email": "e.v.i.l@gmail.com"], "facts": ["rescue_email": "evil+2@googlemail.com"]],
            ifMatch: 1)
        #expect(gmail.status == 422)
        #expect(try fields(gmail) == ["customer.contact_email"])
        #expect(try world.caseBody(number, as: tier1)["version"] as? Int == 1)
    }
}
