import Foundation
import Testing

@testable import ReclaimCore

private func ftyp(major: String, compatible: [String]) -> [UInt8] {
    let size = 16 + 4 * compatible.count
    var bytes: [UInt8] = [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
    bytes += Array("ftyp".utf8) + Array(major.utf8) + [0, 0, 0, 0]
    for brand in compatible { bytes += Array(brand.utf8) }
    return bytes + [0, 0, 0, 8] + Array("meta".utf8)
}

@Suite struct EvidenceTests {
    @Test func sniffsTheFourAcceptedTypes() {
        #expect(sniffMediaType(Array("%PDF-1.7\n%âãÏÓ\n".utf8)) == .pdf)
        #expect(sniffMediaType([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46]) == .jpeg)
        #expect(sniffMediaType([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]) == .png)
        for brand in ["heic", "heix", "mif1", "msf1", "heim", "heis", "hevc"] {
            #expect(sniffMediaType(ftyp(major: brand, compatible: [])) == .heic, "major \(brand)")
        }
        #expect(sniffMediaType(ftyp(major: "mif1", compatible: ["mif1", "heic"])) == .heic)
        #expect(sniffMediaType(ftyp(major: "isom", compatible: ["mif1", "heic"])) == .heic)
        #expect(MediaType.allCases.map(\.rawValue) == ["application/pdf", "image/jpeg", "image/png", "image/heic"])
    }

    @Test func refusesEverythingElse() {
        let html = Array("<!DOCTYPE html><html><body><img src=x onerror=alert(1)></body></html>".utf8)
        #expect(sniffMediaType(html) == nil, "HTML declared as PNG is still HTML")
        #expect(sniffMediaType([]) == nil)
        #expect(sniffMediaType([0x89, 0x50, 0x4E, 0x47]) == nil, "truncated PNG signature")
        #expect(sniffMediaType([0xFF, 0xD8]) == nil)
        #expect(sniffMediaType(Array("%PD".utf8)) == nil)
        #expect(sniffMediaType(Array(" %PDF-1.7".utf8)) == nil)
        #expect(sniffMediaType(Array("GIF89a".utf8)) == nil)
        #expect(sniffMediaType(ftyp(major: "isom", compatible: ["mp41", "avc1"])) == nil, "MP4 video")
        #expect(sniffMediaType(ftyp(major: "avif", compatible: ["mif1", "miaf"])) == nil, "AVIF")
        #expect(sniffMediaType(ftyp(major: "mif1", compatible: ["avif"])) == nil, "AVIF with a generic major brand")
        #expect(sniffMediaType(Array(ftyp(major: "heic", compatible: []).prefix(12))) == nil, "truncated ftyp")
        var badSize = ftyp(major: "heic", compatible: [])
        badSize[3] = 8
        #expect(sniffMediaType(badSize) == nil, "ftyp box too small for its brand")
    }

    @Test func uploadLimits() throws {
        #expect(try DocumentUpload.validate([0xFF, 0xD8, 0xFF, 0xDB]).get() == .jpeg)
        var big = [UInt8](repeating: 0, count: DocumentUpload.maximumBytes)
        big.replaceSubrange(0..<5, with: Array("%PDF-".utf8))
        #expect(try DocumentUpload.validate(big).get() == .pdf)
        big.append(0)
        #expect(throws: ValidationFailure(field: "file", message: "A file has at most 10 MiB.")) { try DocumentUpload.validate(big).get() }
        #expect(throws: ValidationFailure(field: "file", message: "The file is empty.")) { try DocumentUpload.validate([]).get() }
        #expect(throws: ValidationFailure.self) { try DocumentUpload.validate(Array("<html>".utf8)).get() }
    }

    @Test func kinds() {
        // The document types are the kinds that are documents, in the same order, found by kind and by name; a mail
        // attachment is a document only the mail files (no upload or accepted_as names it).
        #expect(!DocumentType.allCases.isEmpty)
        #expect(EvidenceKind.allCases.filter { $0.isDocument && $0 != .mailAttachment }.compactMap(\.documentType) == DocumentType.allCases)
        #expect(EvidenceKind.mailAttachment.isDocument && EvidenceKind.mailAttachment.documentType != nil)
        #expect(DocumentType(rawValue: "mail_attachment") == nil)
        #expect(DocumentType.allCases.allSatisfy { $0.evidenceKind.documentType == $0 && DocumentType(rawValue: $0.rawValue) == $0 })
        // Typed evidence (a factor) and the transcript are the kinds that are no document, by kind or by name.
        #expect(EvidenceKind.allCases.allSatisfy { $0.isDocument == ($0.factor == nil && $0 != .transcript) })
        #expect(
            EvidenceKind.allCases.filter { $0 != .mailAttachment }.allSatisfy {
                ($0.documentType == nil) != $0.isDocument && (DocumentType(rawValue: $0.rawValue) == nil) != $0.isDocument
            })
        #expect(DocumentType(rawValue: "receipt") == nil)
        #expect(EvidenceKind.allCases.compactMap(\.factor) == [.securityAnswer, .card, .device])
        #expect(!EvidenceKind.transcript.isDocument && EvidenceKind.transcript.factor == nil)
    }
}

@Suite struct TranscriptSniffingTests {
    @Test func savedMailsTextAndScreenshotsAreRecognisedAndNothingElse() {
        let mail = Array("From: a@example.com\r\nSubject: pay\r\n  folded\r\nDate: Mon, 30 Nov 2026 09:00:00 +0800\r\n\r\nPay now.".utf8)
        #expect(sniffTranscriptMediaType(mail) == .email)
        #expect(sniffTranscriptMediaType(Array("From: a@example.com\nTo: b@example.com\n\nbody".utf8)) == .email)
        // Headers without From, or a body before any blank line, are text, not mail.
        #expect(sniffTranscriptMediaType(Array("Subject: x\r\nDate: y\r\n\r\n".utf8)) == .plainText)
        #expect(sniffTranscriptMediaType(Array("From: a\r\nSubject: b".utf8)) == .plainText)
        #expect(sniffTranscriptMediaType(Array("\u{FEFF}他说：付钱。\n".utf8)) == .plainText)
        #expect(sniffTranscriptMediaType([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]) == .document(.png))
        #expect(sniffTranscriptMediaType(Array("%PDF-1.7".utf8)) == .document(.pdf))
        #expect(sniffTranscriptMediaType([0xC3, 0x28]) == nil)  // not UTF-8
        #expect(sniffTranscriptMediaType(Array("a\u{0}b".utf8)) == nil)
        #expect(sniffTranscriptMediaType(Array("bell\u{7}".utf8)) == nil)
        // Documents are never sniffed as text.
        #expect(sniffMediaType(Array("hello".utf8)) == nil)
        #expect(sniffTranscriptMediaType([0xED, 0xA0, 0x80]) == nil)  // an encoded surrogate
        #expect(sniffTranscriptMediaType([0xE0, 0x80, 0xAF]) == nil)  // an overlong form
        #expect(sniffTranscriptMediaType(Array("ends mid-character ".utf8) + [0xE6, 0x97]) == nil)
        #expect(
            UploadKind(rawValue: "transcript") == .transcript && UploadKind(rawValue: "invoice") == .document(DocumentType(.invoice)!)
                && UploadKind(rawValue: "card") == nil)
    }
}

@Suite struct TranscriptTextCheckTests {
    /// The check fed in pieces split anywhere (inside a character too) finds what it finds over the whole.
    @Test func piecesSplitAnywhereGiveTheWholeAnswer() {
        let texts: [[UInt8]] = [
            Array("他说：付钱。 Pay now 😀 é\n\t\r\u{0C}".utf8), Array("a\u{0}b".utf8), Array("bell\u{7}".utf8), Array("del\u{7F}".utf8),
            [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x98], Array("ok".utf8) + [0xE6, 0x97, 0xA5],
        ]
        for text in texts {
            var whole = TranscriptTextCheck()
            text.withUnsafeBytes { whole.feed($0) }
            for split in 0...text.count {
                var pieces = TranscriptTextCheck()
                text[..<split].withUnsafeBytes { pieces.feed($0) }
                text[split...].withUnsafeBytes { pieces.feed($0) }
                #expect(
                    pieces.isUTF8 == whole.isUTF8 && pieces.holdsNUL == whole.holdsNUL && pieces.holdsControl == whole.holdsControl,
                    "\(text) split at \(split)")
            }
            // And the same as Swift's own UTF-8 validation.
            #expect(whole.isUTF8 == (String(validating: text, as: UTF8.self) != nil), "\(text)")
        }
    }
}
