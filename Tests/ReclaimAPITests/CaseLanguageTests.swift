import Foundation
import ReclaimCore
import ReclaimTestSupport
import Testing

/// v1.1 "Cases": the customer's `language` (v1.2: none unless given) and the `facts.rescue_email` the thief added, on creation and in the case.
@Suite struct CaseLanguageTests {
    func body(_ extra: [String: Any]) -> [String: Any] {
        var body: [String: Any] = [
            "kind": "account_takeover", "account_email": "victim@example.com",
            "customer": ["name": "Li Wei", "contact_email": "li.wei@example.net"],
        ]
        body.merge(extra) { $1 }
        return body
    }

    @Test func aCaseOpenedWithoutALanguageHasNoneAndAChosenOneIsKeptWithTheRescueAddress() throws {
        let service = try TestService()
        defer { service.stop() }
        let agent = try service.signIn(tier: .tier1)
        let client = service.client()
        // The agent's own Accept-Language is not the customer's: it never becomes the case's language.
        let plain = try client.request("POST", "/api/v1/cases", headers: agent.headers + [("Accept-Language", "zh-TW")], json: body([:]))
        #expect(plain.status == 201)
        #expect(try plain.json()["language"] is NSNull)
        #expect((try plain.json()["facts"] as? [String: Any])?["rescue_email"] is NSNull)
        let plainNumber = try #require(try plain.json()["case_number"] as? String)
        #expect(try client.request("GET", "/api/v1/cases/\(plainNumber)", headers: [("Cookie", agent.cookie)]).json()["language"] is NSNull)
        // null is "not known" too.
        let null = try client.request("POST", "/api/v1/cases", headers: agent.headers, json: body(["language": NSNull()]))
        #expect(null.status == 201, "\(null.text)")
        #expect(try null.json()["language"] is NSNull)

        let chinese = try client.request(
            "POST", "/api/v1/cases", headers: agent.headers,
            json: body(["language": "zh-Hans", "facts": ["rescue_email": "thief@example.org"]]))
        #expect(chinese.status == 201, "\(chinese.text)")
        let number = try #require(try chinese.json()["case_number"] as? String)
        let read = try client.request("GET", "/api/v1/cases/\(number)", headers: [("Cookie", agent.cookie)]).json()
        #expect(read["language"] as? String == "zh-Hans")
        let facts = read["facts"] as? [String: Any]
        #expect(facts?["rescue_email"] as? String == "thief@example.org")
        #expect(facts?["rescue_email_added"] as? Bool == true)  // a known rescue address means one was added
    }

    @Test func anUnknownLanguageOrABadRescueAddressIs422AndNothingIsOpened() throws {
        let service = try TestService()
        defer { service.stop() }
        let agent = try service.signIn(tier: .tier1)
        let client = service.client()
        let language = try client.request("POST", "/api/v1/cases", headers: agent.headers, json: body(["language": "fr"]))
        #expect(language.status == 422)
        #expect(((try language.json()["errors"] as? [[String: Any]]) ?? []).contains { $0["field"] as? String == "language" })
        let rescue = try client.request("POST", "/api/v1/cases", headers: agent.headers, json: body(["facts": ["rescue_email": "not an address"]]))
        #expect(rescue.status == 422)
        #expect(((try rescue.json()["errors"] as? [[String: Any]]) ?? []).contains { $0["field"] as? String == "facts.rescue_email" })
        let queue = try client.request("GET", "/api/v1/cases", headers: [("Cookie", agent.cookie)]).json()
        #expect((queue["items"] as? [Any])?.isEmpty == true)
    }
}
