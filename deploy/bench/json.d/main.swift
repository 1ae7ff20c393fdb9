// Parse time per typical body: the strict RFC 8259 check every JSON body gets (`JSONInput.check`, compiled from
// Sources/HTTPServer/JSONInput.swift as it is) beside Foundation's JSONSerialization and JSONDecoder on the same bytes.
import Foundation

struct StatusBody: Decodable { var case_number: String; var access_code: String }
struct TransitionBody: Decodable { var action: String; var reason: String? }

func nanos() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

/// Median of five rounds of `count` calls, in nanoseconds per call.
func measure(_ count: Int, _ work: () -> Int) -> Double {
    var rounds: [Double] = []
    var sink = 0
    for _ in 0..<5 {
        let start = nanos()
        for _ in 0..<count { sink &+= work() }
        rounds.append(Double(nanos() - start) / Double(count))
    }
    if sink == 42 { print("") }
    return rounds.sorted()[2]
}

@main struct JSONBench {
    static func main() {
        let count = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 100_000
        let bodies: [(name: String, text: String, decode: ((JSONDecoder, Data) -> Bool)?)] = [
            ("status look-up", #"{"case_number":"482109375512","access_code":"ABCD-EFGH-JKLM-NPQR"}"#,
             { (try? $0.decode(StatusBody.self, from: $1)) != nil }),
            ("transition", #"{"action":"start_verification","reason":"The customer called back with the receipt."}"#,
             { (try? $0.decode(TransitionBody.self, from: $1)) != nil }),
            ("case opening", #"{"kind":"account_takeover","account_email":"victim@example.com","customer":{"name":"Ada Lovelace","contact_email":"ada@example.net","phone":"+44 20 7946 0958"},"devices":[{"serial":"C02XK0AAJGH5","imei":"490154203237518"}],"facts":{"two_step_enabled":true,"recovery_email_changed":false},"language":"en","note":"Customer says the thief changed the password on Tuesday evening."}"#, nil),
        ]
        print("| body | bytes | JSONInput.check | JSONSerialization | JSONDecoder |")
        print("|---|---|---|---|---|")
        let decoder = JSONDecoder()
        for body in bodies {
            let bytes = Array(body.text.utf8)
            let data = Data(bytes)
            let check = measure(count) { JSONInput.check(bytes).malformed == nil ? 1 : 0 }
            let serialization = measure(count) { (try? JSONSerialization.jsonObject(with: data)) != nil ? 1 : 0 }
            let decoded = body.decode.map { decode in measure(count) { decode(decoder, data) ? 1 : 0 } }
            print("| \(body.name) | \(bytes.count) | \(String(format: "%.2f", check / 1000)) µs | \(String(format: "%.2f", serialization / 1000)) µs | "
                  + (decoded.map { String(format: "%.2f µs", $0 / 1000) } ?? "–") + " |")
        }
    }
}
