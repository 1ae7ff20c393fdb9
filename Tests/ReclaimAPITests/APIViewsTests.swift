import Foundation
import ReclaimStore
import ReclaimTestSupport
import Testing

/// The typed views the tests read answers through must be as strict as the casts they replaced: a member the API
/// always sends may be null but not absent, and an absent member is told apart from a null one.
@Suite struct APIViewsTests {
    static let caseJSON = """
        {"account_email":"a@example.com","allowed_actions":["escalate"],"assignee":null,"case_number":"123456789018",
         "created_at":"2026-01-01T00:00:00.000Z","customer":{"contact_email":"c@example.net","name":"Ada"},
         "devices":[{"imei":null,"model":null,"serial":"C02XK1ZJH3QD"}],"due_at":null,
         "facts":{"rescue_email":null,"rescue_email_added":true},"frozen":false,"kind":"account_takeover","language":"en","overdue":false,"path":"undetermined",
         "state":"new","summary":"s","tier":"tier1","updated_at":"2026-01-01T00:00:00.000Z","version":1}
        """

    static func response(_ text: String) -> TestHTTPResponse {
        TestHTTPResponse(status: 200, reason: "OK", headers: [], body: Array(text.utf8))
    }

    @Test func aCaseDecodesWithNullsAndWithoutAnAccessCode() throws {
        let view = try Self.response(Self.caseJSON).decode(CaseView.self)
        #expect(view.dueAt == nil && view.assignee == nil && view.accessCode == nil)
        #expect(view.facts == ["rescue_email_added": true])  // dictionary keys are not rewritten
        #expect(view.devices.first?.serial == "C02XK1ZJH3QD" && view.devices.first?.imei == nil)
    }

    @Test func aCaseWithoutAMemberTheAPIAlwaysSendsIsRefused() throws {
        for member in ["\"due_at\":null,", "\"assignee\":null,", "\"version\":1"] {
            var text = Self.caseJSON.replacingOccurrences(of: member, with: "")
            if member == "\"version\":1" { text = text.replacingOccurrences(of: ",}", with: "}") }
            #expect(throws: TestHTTPError.self, "without \(member)") { try Self.response(text).decode(CaseView.self) }
        }
        let wrongType = Self.caseJSON.replacingOccurrences(of: "\"due_at\":null", with: "\"due_at\":5")
        #expect(throws: TestHTTPError.self) { try Self.response(wrongType).decode(CaseView.self) }
    }

    @Test func absentAndNullMembersAreToldApart() throws {
        let value = try Self.response(#"{"a":null,"b":"x","n":3}"#).value()
        #expect(value["a"] == .null && value["a"]?.isNull == true)
        #expect(value["missing"] == nil)
        #expect(value["b"] == "x" && value["b"]?.stringValue == "x" && value["n"]?.intValue == 3)
    }

    @Test func aProblemNamesItsFields() throws {
        let problem = try Self.response(
            """
            {"type":"about:blank","title":"Unprocessable","status":422,"code":"validation_failed","request_id":"r1",
             "errors":[{"field":"account_email","message":"bad"},{"field":"devices[0].imei","message":"bad"}]}
            """
        ).problem()
        #expect(problem.code == "validation_failed" && problem.status == 422 && problem.requestID == "r1")
        #expect(problem.fields == ["account_email", "devices[0].imei"])
        #expect(throws: TestHTTPError.self) { try Self.response(#"{"status":404}"#).problem() }
    }

    @Test func aCaseBodyOmitsDeviceIdentifiersLeftNil() throws {
        let body = CaseWorld.caseBody(devices: [.init(imei: "490154203237518")])
        let sent = try JSONDecoder().decode(JSONValue.self, from: Data(try body.bytes))
        #expect(sent["devices"] == [["imei": "490154203237518"]])
        #expect(sent["customer"] == ["name": "Ada Victim", "contact_email": "victim.home@example.net"])
        #expect(sent["account_email"] == "victim@example.com")
    }
}
