import Crypto
import Foundation
import Testing

@testable import ReclaimStore

/// The RFC 8785 serializer and the hash chain, without a database.
@Suite struct CaseEventChainTests {
    @Test func canonicalFormSortsKeysByUTF16AndEscapesMinimally() throws {
        let value: JSONValue = [
            "b": [1, true, nil, "x"],
            "a": ["z": -7, "é": "é", "\u{10000}": 1, "\u{FFFD}": 2],
            "s": "quote \" backslash \\ slash / tab \t nl \n ctl \u{01} del \u{7F} emoji 🙂",
        ]
        // U+10000 is D800 DC00 in UTF-16, so it sorts before U+FFFD (scalar order would put it after).
        let expected =
            #"{"a":{"z":-7,"é":"é","𐀀":1,"�":2},"b":[1,true,null,"x"],"s":"quote \" backslash \\ slash / tab \t nl \n ctl \u0001 del "# + "\u{7F}"
            + #" emoji 🙂"}"#
        #expect(value.canonical == expected)
        #expect(try JSONValue.parse(value.canonical) == value)
        #expect(JSONValue.int(Int64.min).canonical == "-9223372036854775808")
    }

    @Test func theParserReadsWhatJSONDecoderReadsAndRefusesFractions() throws {
        let text = #" { "a" : [1, -2, true, false, null, "x\"y\\z\/\b\f\n\r\t\u00e9\ud83d\ude42"], "b": {}, "c": [] } "#
        let parsed = try JSONValue.parse(text)
        #expect(parsed == (try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))))
        #expect(parsed.canonical == #"{"a":[1,-2,true,false,null,"x\"y\\z/\b\f\n\r\té🙂"],"b":{},"c":[]}"#)
        for bad in ["1.5", "1e3", "01", "[1,]", "{\"a\"}", "\"abc", "tru", "[] x", "\"\u{01}\""] {
            #expect(throws: (any Error).self, "\(bad)") { try JSONValue.parse(bad) }
        }
    }

    @Test func timestampsHaveMillisecondsAndSurviveStorage() {
        let date = Date(timeIntervalSince1970: 1_773_480_413.5897)
        #expect(Timestamp.format(date) == "2026-03-14T09:26:53.590Z")
        #expect(Timestamp.format(Timestamp.truncated(date)) == "2026-03-14T09:26:53.589Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        let reference = ISO8601DateFormatter()
        reference.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for _ in 0..<2000 {
            let whole = Date(timeIntervalSince1970: Double(Int64.random(in: -2_000_000_000...8_000_000_000)) + Double(Int.random(in: 0...999)) / 1000)
            #expect(Timestamp.format(whole) == reference.string(from: whole), "\(whole.timeIntervalSince1970)")
        }
    }

    @Test func chainBreaksAreNamed() {
        let at = Date(timeIntervalSince1970: 1_700_000_000)
        var events: [CaseEvent] = []
        var previous: String?
        for seq in 1...3 {
            let data: JSONValue = ["n": .int(Int64(seq))]
            let hash = CaseEventChain.hash(previous: previous, seq: seq, at: at, actor: "agent:a", type: "t", data: data)
            events.append(CaseEvent(seq: seq, at: at, actor: "agent:a", type: "t", data: data, prevHash: previous, hash: hash))
            previous = hash
        }
        #expect(CaseEventChain.firstBreak(caseNumber: "1", events: events) == nil)
        // The first hash is SHA-256 of "" + the JCS of {seq, at, actor, type, data}.
        #expect(events[0].hash == SHA256Hex.of(#"{"actor":"agent:a","at":"2023-11-14T22:13:20.000Z","data":{"n":1},"seq":1,"type":"t"}"#))
        var edited = events
        edited[1] = CaseEvent(seq: 2, at: at, actor: "agent:b", type: "t", data: events[1].data, prevHash: events[1].prevHash, hash: events[1].hash)
        #expect(CaseEventChain.firstBreak(caseNumber: "1", events: edited)?.seq == 2)
        #expect(CaseEventChain.firstBreak(caseNumber: "1", events: [events[0], events[2]])?.seq == 3)
    }
}

enum SHA256Hex {
    static func of(_ text: String) -> String { SHA256.hexDigest(text) }
}
