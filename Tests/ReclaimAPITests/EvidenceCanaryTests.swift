import Foundation
import ReclaimCore
import ReclaimTestSupport
import Testing

/// A full database dump and the logs hold no answer, no full card number and no document or transcript bytes in clear.
@Suite(.serialized) struct EvidenceCanaryTests {
    @Test func aDumpAndTheLogsHoldNoSecretInClear() throws {
        let w = try EvidenceWorld(email: "canary@example.com")
        let answerCanary = "Zanzibarquux"
        let unionPayCard = "6291040000000017"
        let documentCanary = "DOCUMENT-CANARY-7f3a9c"
        let transcriptCanary = "TRANSCRIPT-CANARY-b81e44"

        // Answers: one matching the on-file answer, one wrong canary; cards: the one on file and a UnionPay one.
        try w.mustFile([
            "type": "security_answers",
            "answers": [
                ["question_id": "q1", "answer": EvidenceWorld.onFileAnswer],
                ["question_id": "q2", "answer": answerCanary],
            ],
        ])
        try w.mustFile(["type": "card", "number": EvidenceWorld.onFileCard, "exp_month": 12, "exp_year": 2031])
        try w.mustFile(["type": "card", "number": unionPayCard, "exp_month": 12, "exp_year": 2031])
        #expect(try w.file(["type": "card", "number": unionPayCard, "exp_month": 12, "exp_year": 2031, "cvv": "4821"]).status == 422)
        try w.mustFile(["type": "transcript", "text": "They wrote: \(transcriptCanary)"])
        let document = EvidenceWorld.png(documentCanary)
        #expect(try w.upload(type: "invoice", bytes: document).status == 201)
        // The customer's upload and a tier-3 read go through the same paths.
        let tier3 = try w.world.agent(.tier3)
        for item in try w.evidenceList().items where item.sha256 != nil {
            #expect(try w.world.get("/api/v1/evidence/\(item.id)/content", as: tier3).status == 200)
        }

        let dump = try Shell.run(["pg_dump", "--no-owner", "--dbname=\(w.world.service.database.connectionString)"])
        #expect(dump.contains("evidence_reviews"), "the dump covers the evidence tables")
        let logs = w.world.service.log.lines.joined(separator: "\n")
        func hex(_ text: String) -> String { Array(text.utf8).map { String(format: "%02x", $0) }.joined() }
        let secrets = [
            answerCanary, EvidenceWorld.onFileAnswer, "new york", unionPayCard, EvidenceWorld.onFileCard,
            documentCanary, transcriptCanary,
        ]
        for secret in secrets {
            for haystack in [("dump", dump), ("logs", logs)] {
                #expect(!haystack.1.lowercased().contains(secret.lowercased()), "\(haystack.0) holds \(secret)")
                #expect(!haystack.1.lowercased().contains(hex(secret)), "\(haystack.0) holds \(secret) as hex")
            }
        }
        // The refused security code was never stored (a 4-digit string may occur by chance in sealed hex, so only the logs are searched).
        #expect(!logs.contains("4821"))
        // No document bytes in clear: not even the PNG's first 32 bytes.
        #expect(!dump.contains(document.prefix(32).map { String(format: "%02x", $0) }.joined()))
        // What may be kept is kept: the masked card.
        #expect(dump.contains("629104******0017"))
    }
}
