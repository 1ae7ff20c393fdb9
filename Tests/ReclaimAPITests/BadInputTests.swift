import Foundation
import ReclaimAPI
import ReclaimCore
import ReclaimTestSupport
import Testing

/// api.md v1.1 "Bad input, everywhere", from the attacker's side: bodies built by hand, byte for byte, as a client
/// probing the service would send them. 400 only for bytes that are not JSON; JSON of the wrong shape is 422.
@Suite(.serialized) struct BadInputTests {
    static let jsonType = ("Content-Type", "application/json")

    /// POSTs `text` as the body exactly as written (so `\u0000` reaches the server as the six-character escape).
    static func post(
        _ world: CaseWorld, _ path: String, _ text: String, as session: AgentSession? = nil,
        headers: [(String, String)] = [jsonType]
    ) throws -> TestHTTPResponse {
        try world.client.request("POST", path, headers: (session?.headers ?? []) + headers, body: Array(text.utf8))
    }

    /// The problem's code and the fields its `errors` name.
    static func problem(_ response: TestHTTPResponse) throws -> (code: String?, fields: [String]) {
        let document = try response.json()
        let fields = (document["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
        return (document["code"] as? String, fields)
    }

    static func caseJSON(
        accountEmail: String = #""account_email":"victim@example.com","#, contactEmail: String = "victim.home@example.net",
        kind: String = "account_takeover", devices: String = #"[{"serial":"C02XK1ZJH3QD","imei":"490154203237518"}]"#
    ) -> String {
        #"{"kind":"\#(kind)",\#(accountEmail)"customer":{"name":"Ada Victim","contact_email":"\#(contactEmail)"},"devices":\#(devices)}"#
    }

    // MARK: U+0000

    @Test func nulInTheSignInEmailIs422NamingEmailNot500() throws {
        let world = try CaseWorld()
        let response = try Self.post(world, "/api/v1/session", #"{"email":"a\u0000@example.com","password":"correct horse battery","totp":"123456"}"#)
        #expect(response.status == 422)
        let problem = try Self.problem(response)
        #expect(problem.code == "validation_failed")
        #expect(problem.fields == ["email"])
        #expect(response.header("Content-Type") == "application/problem+json")
        // The same in the password or a member name: nothing with U+0000 gets near the database.
        let password = try Self.post(world, "/api/v1/session", #"{"email":"a@example.com","password":"pass\u0000word-long","totp":"123456"}"#)
        #expect(password.status == 422)
        #expect(try Self.problem(password).fields == ["password"])
        let key = try Self.post(world, "/api/v1/session", #"{"email":"a@example.com","password":"password-long","totp":"1","x\u0000":1}"#)
        #expect(key.status == 422)
        // An escaped backslash before "u0000" is an ordinary string, not U+0000: the usual 401.
        let escaped = try Self.post(world, "/api/v1/session", #"{"email":"a\\u0000@example.com","password":"correct horse battery","totp":"123456"}"#)
        #expect(escaped.status == 401)
    }

    @Test func nulInANoteOrNestedCaseFieldIs422NamingThePath() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        let note = try Self.post(world, "/api/v1/cases/\(number)/notes", #"{"body":"call back\u0000later","visibility":"internal"}"#, as: tier1)
        #expect(note.status == 422)
        #expect(try Self.problem(note).fields == ["body"])
        #expect(try (world.get("/api/v1/cases/\(number)/notes", as: tier1).json()["items"] as? [Any])?.isEmpty == true)

        let contact = try Self.post(world, "/api/v1/cases", Self.caseJSON(contactEmail: #"x\u0000@example.net"#), as: tier1)
        #expect(contact.status == 422)
        #expect(try Self.problem(contact).fields == ["customer.contact_email"])
        let imei = try Self.post(world, "/api/v1/cases", Self.caseJSON(devices: #"[{"imei":"4901542032375\u00008"}]"#), as: tier1)
        #expect(imei.status == 422)
        #expect(try Self.problem(imei).fields == ["devices[0].imei"])
    }

    @Test func nulInBodiesReadByTheSmallParserIs422() throws {
        let world = try CaseWorld()
        // The status look-up (unauthenticated, the hot route) parses with JSONValue, not JSONDecoder.
        let status = try Self.post(world, "/api/v1/status", #"{"case_number":"4821\u00000937","access_code":"x"}"#)
        #expect(status.status == 422)
        #expect(try Self.problem(status) == ("validation_failed", ["case_number"]))
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        let transcript = try Self.post(world, "/api/v1/cases/\(number)/evidence", #"{"type":"transcript","text":"he said \u0000"}"#, as: tier1)
        #expect(transcript.status == 422)
        #expect(try Self.problem(transcript).fields == ["text"])
    }

    @Test func nulInAPathSegmentOrQueryIs422NotA500() throws {
        // api.md v1.3 "Smaller doors": U+0000 anywhere, percent-encoded in the path or the query, is refused at the edge.
        // `/api/v1/cases/%00` was a 500 (PostgreSQL cannot hold U+0000 in text); `?q=` reached the search.
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        let probes: [(target: String, fields: [String])] = [
            ("/api/v1/cases/%00", ["path"]),
            ("/api/v1/cases/\(number)%00", ["path"]),
            ("/api/v1/cases/\(number)/notes%00/x", ["path"]),
            ("/api/v1/cases?q=%00", ["q"]),
            ("/api/v1/cases?q=ada%00victim&state=open", ["q"]),
            ("/api/v1/cases?%00=1", ["query"]),
            ("/api/v1/cases?q=%00&state=%00", ["q", "state"]),
            ("/%00.html", ["path"]),
            ("/nowhere/%00", ["path"]),
        ]
        for (target, fields) in probes {
            let response = try world.get(target, as: tier1)
            #expect(response.status == 422, "\(target)")
            #expect(response.header("Content-Type") == "application/problem+json", "\(target)")
            #expect(try Self.problem(response) == ("validation_failed", fields), "\(target)")
        }
        // Without a session too, and with a body: nothing is read or routed.
        #expect(try world.client.request("GET", "/api/v1/cases/%00").status == 422)
        #expect(try Self.post(world, "/api/v1/status?x=%00", #"{"case_number":"x","access_code":"x"}"#).status == 422)
        // The case is still there, and an ordinary search still answers.
        #expect(try world.get("/api/v1/cases/\(number)", as: tier1).status == 200)
        #expect(try world.get("/api/v1/cases?q=ada", as: tier1).status == 200)
        // Every route documents the 422 (the two pages, static files, take no parameters).
        let paths = try #require(try world.client.request("GET", "/openapi.json").json()["paths"] as? [String: [String: [String: Any]]])
        for (path, operations) in paths {
            for (method, operation) in operations where operation["tags"] as? [String] != ["pages"] {
                #expect((operation["responses"] as? [String: Any])?["422"] != nil, "\(method) \(path)")
            }
        }
    }

    // MARK: Well-formed JSON of the wrong shape

    @Test func aCaseWithoutAccountEmailIs422NamingIt() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let missing = try Self.post(world, "/api/v1/cases", Self.caseJSON(accountEmail: ""), as: tier1)
        #expect(missing.status == 422)
        #expect(try Self.problem(missing) == ("validation_failed", ["account_email"]))
        let nested = try Self.post(
            world, "/api/v1/cases", #"{"kind":"activation_lock","account_email":"v@example.com","customer":{"name":"Ada"}}"#, as: tier1)
        #expect(nested.status == 422)
        #expect(try Self.problem(nested).fields == ["customer.contact_email"])
        let null = try Self.post(world, "/api/v1/cases", Self.caseJSON(accountEmail: #""account_email":null,"#), as: tier1)
        #expect(null.status == 422)
        #expect(try Self.problem(null).fields == ["account_email"])
    }

    @Test func aFieldOfTheWrongTypeIs422NamingIt() throws {
        let world = try CaseWorld()
        let email = try Self.post(world, "/api/v1/session", #"{"email":5,"password":"correct horse battery","totp":"123456"}"#)
        #expect(email.status == 422)
        #expect(try Self.problem(email) == ("validation_failed", ["email"]))
        let tier1 = try world.agent(.tier1)
        let imei = try Self.post(world, "/api/v1/cases", Self.caseJSON(devices: #"[{"imei":490154203237518}]"#), as: tier1)
        #expect(imei.status == 422)
        #expect(try Self.problem(imei).fields == ["devices[0].imei"])
        let devices = try Self.post(world, "/api/v1/cases", Self.caseJSON(devices: #""none""#), as: tier1)
        #expect(devices.status == 422)
        #expect(try Self.problem(devices).fields == ["devices"])
        // Small-parser routes: a string expected, a number given; a fraction the small parser cannot hold; not an object.
        let status = try Self.post(world, "/api/v1/status", #"{"case_number":482109375512,"access_code":"x"}"#)
        #expect(status.status == 422)
        #expect(try Self.problem(status).fields == ["case_number"])
        let fraction = try Self.post(world, "/api/v1/status", #"{"case_number":"482109375512","access_code":1.5}"#)
        #expect(fraction.status == 422)
        #expect(try Self.problem(fraction).fields == ["access_code"])
        let array = try Self.post(world, "/api/v1/status", #"["482109375512","x"]"#)
        #expect(array.status == 422)
        #expect(try Self.problem(array).code == "validation_failed")
    }

    @Test func anUnknownEnumValueIs422NamingIt() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let kind = try Self.post(world, "/api/v1/cases", Self.caseJSON(kind: "stolen_bike"), as: tier1)
        #expect(kind.status == 422)
        #expect(try Self.problem(kind) == ("validation_failed", ["kind"]))
        let facts = try Self.post(
            world, "/api/v1/cases",
            #"{"kind":"account_takeover","account_email":"v@example.com","customer":{"name":"A","contact_email":"a@example.net"},"facts":{"two_step_enabled":"yes"}}"#,
            as: tier1)
        #expect(facts.status == 422)
        #expect(try Self.problem(facts).fields == ["facts.two_step_enabled"])
    }

    @Test func bytesThatAreNotJSONAre400() throws {
        let world = try CaseWorld()
        for text in ["{", "not json", #"{"email" "a@example.com"}"#, "{\"email\":\"a\u{0}\"}"] {
            let response = try Self.post(world, "/api/v1/session", text)
            #expect(response.status == 400, "\(text.debugDescription)")
            #expect(try Self.problem(response).code == "malformed_json")
        }
        let status = try Self.post(world, "/api/v1/status", "{\"case_number\": ")
        #expect(status.status == 400)
        #expect(try Self.problem(status).code == "malformed_json")
        let tier1 = try world.agent(.tier1)
        #expect(try Self.post(world, "/api/v1/cases", "[1,", as: tier1).status == 400)
        // Not JSON at all is still 415 where the media type is wrong.
        #expect(try Self.post(world, "/api/v1/status", "{}", headers: [("Content-Type", "text/plain")]).status == 415)
    }

    // MARK: RFC 8259, strictly

    @Test func aTrailingCommaIsNotJSONOnAnyRoute() throws {
        // Foundation's parsers take it; the service does not, whichever parser the route then uses.
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        let bodies: [(path: String, text: String, session: AgentSession?)] = [
            ("/api/v1/session", #"{"email":"a@example.com","password":"correct horse battery","totp":"123456",}"#, nil),
            ("/api/v1/status", #"{"case_number":"\#(number)","access_code":"AAAA-BBBB-CCCC-DDDD",}"#, nil),
            ("/api/v1/cases", Self.caseJSON(devices: #"[{"serial":"C02XK1ZJH3QD","imei":"490154203237518"},]"#), tier1),
            ("/api/v1/cases/\(number)/notes", #"{"body":"call back","visibility":"internal",}"#, tier1),
        ]
        for (path, text, session) in bodies {
            let response = try Self.post(world, path, text, as: session)
            #expect(response.status == 400, "\(path)")
            #expect(try Self.problem(response).code == "malformed_json", "\(path)")
        }
        #expect(try (world.get("/api/v1/cases/\(number)/notes", as: tier1).json()["items"] as? [Any])?.isEmpty == true)
    }

    @Test func aRepeatedKeyIs422NamingIt() throws {
        // With a repeated key one value silently won; a client (or a proxy that checked the other value) meant something else.
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        let status = try Self.post(world, "/api/v1/status", #"{"case_number":"\#(number)","access_code":"x","case_number":"012345678906"}"#)
        #expect(status.status == 422)
        #expect(try Self.problem(status) == ("validation_failed", ["case_number"]))
        let nested = try Self.post(
            world, "/api/v1/cases",
            #"{"kind":"account_takeover","account_email":"v@example.com","customer":{"name":"A","contact_email":"a@example.net","\u006eame":"B"}}"#,
            as: tier1)
        #expect(nested.status == 422)
        #expect(try Self.problem(nested) == ("validation_failed", ["customer.name"]))
        let note = try Self.post(
            world, "/api/v1/cases/\(number)/notes", #"{"body":"shown","visibility":"customer","visibility":"internal"}"#, as: tier1)
        #expect(note.status == 422)
        #expect(try Self.problem(note).fields == ["visibility"])
        #expect(try (world.get("/api/v1/cases/\(number)/notes", as: tier1).json()["items"] as? [Any])?.isEmpty == true)
    }

    // MARK: Case numbers

    @Test func aWellFormedCaseNumberStartingWithZeroIsLookedUp() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let lookup = try world.get("/api/v1/cases/012345678906", as: tier1)
        #expect(lookup.status == 404)
        #expect(try Self.problem(lookup).code == "not_found")
        let status = try world.status("012345678906", "AAAA-BBBB-CCCC-DDDD")
        #expect(status.status == 404)
        #expect(try Self.problem(status).code == "not_found")
        // A typo in the same number is still refused without a look-up.
        let typo = try world.get("/api/v1/cases/012345678960", as: tier1)
        #expect(try Self.problem(typo).code == "invalid_case_number")
    }

    // MARK: /openapi.json

    @Test func openAPIDeclaresHeadersStatusesAndMediaTypes() throws {
        let world = try CaseWorld()
        let document = try world.client.request("GET", "/openapi.json").json()
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        func operation(_ method: String, _ path: String) throws -> [String: Any] { try #require(paths[path]?[method]) }
        func headers(_ operation: [String: Any]) -> [String: Bool] {
            var found: [String: Bool] = [:]
            for parameter in operation["parameters"] as? [[String: Any]] ?? [] where parameter["in"] as? String == "header" {
                found[parameter["name"] as? String ?? ""] = parameter["required"] as? Bool ?? false
            }
            return found
        }
        func mediaTypes(_ operation: [String: Any]) -> Set<String> {
            Set(((operation["requestBody"] as? [String: Any])?["content"] as? [String: Any] ?? [:]).keys)
        }
        func statuses(_ operation: [String: Any]) -> Set<String> { Set((operation["responses"] as? [String: Any] ?? [:]).keys) }

        for path in ["/api/v1/cases/{case_number}/transitions", "/api/v1/cases/{case_number}/assign", "/api/v1/cases/{case_number}/actions/freeze"] {
            let changing = try operation("post", path)
            #expect(headers(changing)["If-Match"] == true, "\(path)")
            #expect(statuses(changing).isSuperset(of: ["412", "428"]), "\(path)")
        }
        for path in ["/api/v1/cases", "/api/v1/cases/{case_number}/evidence", "/api/v1/accounts"] {
            let post = try operation("post", path)
            #expect(headers(post)["Idempotency-Key"] == false, "\(path)")
            #expect(headers(post)["If-Match"] == nil, "\(path)")
        }
        #expect(headers(try operation("post", "/api/v1/status")).isEmpty)
        #expect(headers(try operation("post", "/api/v1/cases/{case_number}/notes"))["If-Match"] == nil)

        let customerUpload = try operation("post", "/api/v1/status/evidence")
        #expect(mediaTypes(customerUpload) == ["multipart/form-data"])
        #expect(statuses(customerUpload).isSuperset(of: ["413", "415", "431", "422", "429"]))
        let filing = try operation("post", "/api/v1/cases/{case_number}/evidence")
        #expect(
            mediaTypes(filing) == [
                "application/json", "multipart/form-data", "application/pdf", "image/jpeg", "image/png", "image/heic",
                "application/octet-stream",
            ])
        #expect(statuses(filing).isSuperset(of: ["400", "401", "403", "404", "409", "413", "415", "422", "429", "431", "503"]))
        #expect(mediaTypes(try operation("post", "/api/v1/session")) == ["application/json"])
        #expect(statuses(try operation("get", "/healthz")).isSuperset(of: ["431"]))
    }

    /// The declarations match what the service does: JSON sent where only a form is declared is refused with 415, and
    /// exactly the routes declaring If-Match answer 428 without it.
    @Test func declarationsMatchBehaviour() throws {
        let world = try CaseWorld()
        let json = try world.client.request("POST", "/api/v1/status/evidence", json: ["case_number": "482109375512", "access_code": "x"])
        #expect(json.status == 415)
        let tier3 = try world.agent(.tier3)
        let number = try world.openCase(as: tier3).caseNumber
        let declared = Set(world.service.service.routes.filter(\.requiresIfMatch).map(\.path))
        for route in world.service.service.routes where route.method == .POST && route.path.hasPrefix("/api/v1/cases/{case_number}/") {
            let path = route.path.replacingOccurrences(of: "{case_number}", with: number)
            let response = try world.post(path, as: tier3, json: [String: Any]())
            #expect((response.status == 428) == declared.contains(route.path), "\(route.path) answered \(response.status)")
        }
    }
}
