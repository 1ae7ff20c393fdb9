import Foundation
import Testing

@testable import HTTPServer

/// RFC 8259, strictly: what `JSONInput.check` takes and refuses, without sockets.
@Suite struct JSONInputTests {
    func check(_ text: String) -> JSONInput.Findings { JSONInput.check(Array(text.utf8)) }

    @Test func takesEveryFormOfJSONText() {
        let documents = [
            "{}", "[]", "0", "-0", "1.5e10", "-12.25E-3", "1E+2", "\"\"", "true", "false", "null", " \t\r\n{ } \n",
            #"{"a":1,"b":[1,2,{"c":null}],"d":{"e":"f"}}"#, #"[[[[]]],{}]"#, #"{"a":"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00"}"#,
            "{\"é\":\"日本語 😀\"}", #"{"a":{"a":{"a":1}}}"#, #"[{"k":1},{"k":2}]"#,
        ]
        for document in documents {
            #expect(check(document) == JSONInput.Findings(), "\(document.debugDescription)")
            // The same texts Foundation reads, so nothing valid is refused.
            #expect(
                (try? JSONSerialization.jsonObject(with: Data(document.utf8), options: [.fragmentsAllowed])) != nil, "\(document.debugDescription)")
        }
    }

    @Test func refusesWhatRFC8259DoesNot() {
        let malformed = [
            "", " ", "{", "[1,2", #"{"a":1,}"#, "[1,2,]", "[,]", "{,}", #"{"a":1,,"b":2}"#, "[1,,2]", #"{"a" 1}"#, #"{a:1}"#, "{'a':1}",
            "[01]", "[1.]", "[.5]", "[1e]", "[+1]", "[-]", "[NaN]", "[Infinity]", "[0x10]", "[tru]", "[nul]", "[True]",
            "{} {}", "[1] x", "/* c */ {}", "{} // c", #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":"\u12G4"}"#, "[\"a\tb\"]", "[\"a\nb\"]",
            "[\"\u{0}\"]", "{\"a\":1}\u{0}", "[\"unterminated]",
        ]
        for text in malformed {
            #expect(check(text).malformed != nil, "\(text.debugDescription)")
        }
        #expect(check(#"{"a":1,}"#).malformed == "it has a trailing comma")
        #expect(check("[1,2,]").malformed == "it has a trailing comma")
        // Foundation takes the trailing comma: the reason this check exists.
        #expect((try? JSONSerialization.jsonObject(with: Data(#"{"a":1,}"#.utf8))) != nil)
    }

    @Test func refusesBytesThatAreNotUTF8() {
        let bad: [[UInt8]] = [
            [0xFF], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC3], [0xE2, 0x82], [0x80],
        ]
        for sequence in bad {
            let body = Array("[\"".utf8) + sequence + Array("\"]".utf8)
            #expect(JSONInput.check(body).malformed == "it is not UTF-8", "\(sequence)")
        }
        #expect(
            JSONInput.check(Array("[\"".utf8) + [0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80] + Array("\"]".utf8)) == JSONInput.Findings())
    }

    @Test func namesEveryRepeatedKeyByItsPath() {
        #expect(check(#"{"a":1,"a":2}"#).duplicateKeys == ["a"])
        #expect(check(#"{"a":1,"b":2,"a":3,"a":4}"#).duplicateKeys == ["a"])
        #expect(
            check(#"{"customer":{"name":"x","name":"y"},"devices":[{"imei":"1"},{"imei":"2","imei":"3"}]}"#).duplicateKeys
                == ["customer.name", "devices[1].imei"])
        // The same key however it is escaped.
        #expect(check(#"{"a":1,"\u0061":2}"#).duplicateKeys == ["a"])
        #expect(check(#"{"é":1,"\u00e9":2}"#).duplicateKeys == ["é"])
        #expect(check(#"{"a\/b":1,"a/b":2}"#).duplicateKeys == ["a/b"])
        // Not repeats: the same key in sibling or nested objects, keys that differ only in case.
        #expect(check(#"{"a":{"a":1},"b":{"a":2}}"#).duplicateKeys.isEmpty)
        #expect(check(#"[{"a":1},{"a":1}]"#).duplicateKeys.isEmpty)
        #expect(check(#"{"a":1,"A":2}"#).duplicateKeys.isEmpty)
        // A large object is compared through a set: found the same, in linear time.
        let many = (0..<5000).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect(check("{" + many + "}").duplicateKeys.isEmpty)
        #expect(check("{" + many + ",\"k17\":0,\"k4999\":1}").duplicateKeys == ["k17", "k4999"])
    }

    @Test func namesEveryFieldHoldingNUL() {
        #expect(check(#"{"email":"a\u0000b","list":["x","\u0000"],"n":{"\u0000k":"v"}}"#).fieldsHoldingNUL == ["email", "list[1]", "n.\u{0}k"])
        // An escaped backslash before u0000 is text, not U+0000.
        #expect(check(#"{"a":"\\u0000"}"#).fieldsHoldingNUL.isEmpty)
        #expect(check(#""\u0000""#).fieldsHoldingNUL == [""])
    }

    @Test func deepNestingCostsNoStack() {
        let depth = 100_000
        let deep = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(check(deep) == JSONInput.Findings())
        #expect(check(String(repeating: "[", count: depth)).malformed == "it ends early")
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(check(objects) == JSONInput.Findings())
    }
}
