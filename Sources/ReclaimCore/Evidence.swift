/// Every kind of evidence a case can hold: typed evidence (answers, card, device, transcript) and documents.
public enum EvidenceKind: String, Sendable, Codable, CaseIterable {
    /// Answers to the security questions on file.
    case securityAnswers = "security_answers"
    /// The payment card on file.
    case card
    /// A device serial or IMEI.
    case device
    /// The conversation with whoever locked the device.
    case transcript
    /// Proof of purchase.
    case invoice
    /// The warranty card.
    case warrantyCard = "warranty_card"
    /// A photo of the back of the box (serial and IMEI printed).
    case boxPhoto = "box_photo"
    /// The carrier contract naming the device.
    case carrierContract = "carrier_contract"
    /// A police report, where there is one.
    case policeReport = "police_report"
    /// A photo of the serial/IMEI, ideally of the "Hello" setup screen.
    case imeiPhoto = "imei_photo"
    /// A photo of the activation-lock or lost-mode screen.
    case lockScreenPhoto = "lock_screen_photo"
    /// A file attached to a mail the customer sent (api.md v1.2): unreviewed until accepted as what it proves
    /// (`accepted_as`); never uploaded as such.
    case mailAttachment = "mail_attachment"

    /// The identity factor typed evidence speaks to; nil for transcripts and documents.
    public var factor: Factor? {
        switch self {
        case .securityAnswers: .securityAnswer
        case .card: .card
        case .device: .device
        default: nil
        }
    }

    /// True for uploaded documents (stored encrypted, like transcripts); `DocumentType` lists them.
    public var isDocument: Bool {
        switch self {
        case .securityAnswers, .card, .device, .transcript: false
        case .invoice, .warrantyCard, .boxPhoto, .carrierContract, .policeReport, .imeiPhoto, .lockScreenPhoto, .mailAttachment: true
        }
    }

    /// The document type, when this is an uploaded document.
    public var documentType: DocumentType? { DocumentType(self) }

    /// Least tier that may review it: tier 3 for documents and transcripts, tier 2 for answers, card and device.
    public var reviewMinimumTier: Tier { factor == nil ? .tier3 : .tier2 }
}

/// The documents and photos a customer or partner may upload: the evidence kinds that are documents, in
/// `EvidenceKind`'s order (declared there once).
public struct DocumentType: RawRepresentable, Sendable, Hashable, Codable, CaseIterable {
    /// The same kind as evidence.
    public let evidenceKind: EvidenceKind

    /// The document type of `kind`; nil unless `kind` is a document.
    public init?(_ kind: EvidenceKind) {
        guard kind.isDocument else { return nil }
        evidenceKind = kind
    }

    /// The document type named `rawValue` (`invoice`, …); nil for anything else, typed evidence and mail attachments
    /// (which only mail files) included: what an upload or an `accepted_as` may name.
    public init?(rawValue: String) {
        guard let kind = EvidenceKind(rawValue: rawValue), kind != .mailAttachment else { return nil }
        self.init(kind)
    }

    /// The evidence kind's name.
    public var rawValue: String { evidenceKind.rawValue }

    /// Every document type one uploads, in `EvidenceKind`'s order (a mail attachment is filed by the mail, not uploaded).
    public static let allCases: [DocumentType] = EvidenceKind.allCases.filter { $0 != .mailAttachment }.compactMap(DocumentType.init)
}

/// The media types accepted for documents, named by their MIME type.
public enum MediaType: String, Sendable, Codable, CaseIterable {
    /// PDF document.
    case pdf = "application/pdf"
    /// JPEG image.
    case jpeg = "image/jpeg"
    /// PNG image.
    case png = "image/png"
    /// HEIC image (HEIF with HEVC), what phones take photos in.
    case heic = "image/heic"
}

/// The media type of `bytes` from their content alone (PDF, JPEG, PNG, HEIC); nil for anything else.
/// A declared `Content-Type` is never trusted: an HTML page labelled image/png is nil.
public func sniffMediaType(_ bytes: [UInt8]) -> MediaType? {
    if bytes.starts(with: Array("%PDF-".utf8)) { return .pdf }
    if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
    if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
    if isHEIC(bytes) { return .heic }
    return nil
}

// ISO BMFF: the first box is `ftyp` with a major brand, a minor version and compatible brands.
// HEIC when the major brand or a compatible brand is an HEIF brand; AVIF (also `mif1`-based) is
// not accepted unless an HEVC brand is present too.
private func isHEIC(_ bytes: [UInt8]) -> Bool {
    guard bytes.count >= 16, bytes[4..<8].elementsEqual("ftyp".utf8) else { return false }
    let declaredSize = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
    guard declaredSize >= 16, declaredSize % 4 == 0 else { return false }
    let end = min(declaredSize, bytes.count, 1024)
    var brands = [String(decoding: bytes[8..<12], as: UTF8.self)]
    var offset = 16
    while offset + 4 <= end {
        brands.append(String(decoding: bytes[offset..<offset + 4], as: UTF8.self))
        offset += 4
    }
    let hevcBrands: Set = ["heic", "heix", "heim", "heis", "hevc"]
    let genericBrands: Set = ["mif1", "msf1"]
    if brands.contains(where: hevcBrands.contains) { return true }
    if brands.contains(where: { $0 == "avif" || $0 == "avis" }) { return false }
    return brands.contains(where: genericBrands.contains)
}

/// Limits and checks for uploaded documents.
public enum DocumentUpload {
    /// Largest file accepted: 10 MiB.
    public static let maximumBytes = 10 * 1024 * 1024
    /// How many documents a case holds at most (`RECLAIM_CASE_DOCUMENTS`'s default): an export is bounded with it.
    public static let defaultCaseLimit = 100

    /// The sniffed media type, refused when empty, too large or not PDF/JPEG/PNG/HEIC.
    public static func validate(_ bytes: [UInt8], field: String = "file") -> Result<MediaType, ValidationFailure> {
        if bytes.isEmpty { return .failure(ValidationFailure(field: field, message: "The file is empty.")) }
        if bytes.count > maximumBytes { return .failure(ValidationFailure(field: field, message: "A file has at most 10 MiB.")) }
        guard let type = sniffMediaType(bytes) else {
            return .failure(ValidationFailure(field: field, message: "Only PDF, JPEG, PNG and HEIC files are accepted."))
        }
        return .success(type)
    }
}

/// What a ransom conversation (`transcript`) may be uploaded as: a screenshot or PDF (as documents), plain UTF-8
/// text, or a saved e-mail (`message/rfc822`); the raw value is the media type stored and served.
public enum TranscriptMediaType: Sendable, Hashable {
    /// A screenshot (PNG, JPEG, HEIC) or a PDF.
    case document(MediaType)
    /// Plain UTF-8 text (a pasted chat, an exported conversation).
    case plainText
    /// A saved e-mail with its headers.
    case email

    /// The media type stored and served.
    public var rawValue: String {
        switch self {
        case .document(let type): type.rawValue
        case .plainText: "text/plain; charset=utf-8"
        case .email: "message/rfc822"
        }
    }

    /// Every media type a transcript upload may declare.
    public static let declarable: [String] = MediaType.allCases.map(\.rawValue) + ["text/plain", "message/rfc822"]
}

/// The media type of an uploaded transcript from its bytes alone: a document type, a saved e-mail (a header block
/// with `From:` and one of `Date:`, `Subject:`, `To:`, `Message-ID:`), else plain text when the bytes are UTF-8 with no
/// control characters but tab, line breaks and form feed; nil for anything else (binary, other encodings).
public func sniffTranscriptMediaType(_ bytes: [UInt8]) -> TranscriptMediaType? {
    var text = TranscriptTextCheck()
    bytes.withUnsafeBytes { text.feed($0) }
    return sniffTranscriptMediaType(head: Array(bytes.prefix(TranscriptTextCheck.headLength)), text: text)
}

/// The same for bytes read in pieces: `head` is their first `TranscriptTextCheck.headLength` bytes (all the document
/// and e-mail checks look at), `text` what `TranscriptTextCheck` found over all of them.
public func sniffTranscriptMediaType(head: [UInt8], text: TranscriptTextCheck) -> TranscriptMediaType? {
    if let document = sniffMediaType(head) { return .document(document) }
    if text.holdsNUL { return nil }
    if looksLikeEmail(head) { return .email }
    guard text.isUTF8 && !text.holdsControl else { return nil }
    return .plainText
}

/// What a transcript's whole text must be, checked a piece at a time (an upload read back from disk): no NUL, UTF-8
/// (Unicode 15 Table 3-7: no overlong form, no surrogate, nothing past U+10FFFF), no control character but tab, line
/// feed, form feed and carriage return. A sequence may span two pieces.
public struct TranscriptTextCheck: Sendable {
    /// How much of the start the document and e-mail checks read.
    public static let headLength = 64 * 1024
    /// True once a NUL byte was seen.
    public private(set) var holdsNUL = false
    /// True once a control character other than tab, line breaks and form feed was seen.
    public private(set) var holdsControl = false
    private var malformed = false
    /// Continuation bytes the current sequence still needs, and the range its next byte must be in.
    private var needed = 0
    private var low: UInt8 = 0x80
    private var high: UInt8 = 0xBF

    /// A check that has seen nothing.
    public init() {}

    /// True when everything fed is well-formed UTF-8 and ends on a whole character.
    public var isUTF8: Bool { !malformed && needed == 0 }

    /// Reads the next piece.
    public mutating func feed(_ piece: UnsafeRawBufferPointer) {
        for byte in piece {
            if needed > 0 {
                guard byte >= low && byte <= high else {
                    malformed = true
                    needed = 0
                    continue
                }
                low = 0x80
                high = 0xBF
                needed -= 1
                continue
            }
            switch byte {
            case 0x00: holdsNUL = true
            case 0x09, 0x0A, 0x0C, 0x0D: break
            case 0x01...0x1F, 0x7F: holdsControl = true
            case 0x20...0x7E: break
            case 0xC2...0xDF: needed = 1
            case 0xE0:
                needed = 2
                low = 0xA0
            case 0xE1...0xEC, 0xEE, 0xEF: needed = 2
            case 0xED:
                needed = 2
                high = 0x9F
            case 0xF0:
                needed = 3
                low = 0x90
            case 0xF1...0xF3: needed = 3
            case 0xF4:
                needed = 3
                high = 0x8F
            default: malformed = true
            }
        }
    }
}

// RFC 5322: header fields (name, colon, value; folded lines start with white space) up to the first empty line.
private func looksLikeEmail(_ bytes: [UInt8]) -> Bool {
    // Bytes, not Characters: "\r\n" is one Character in Swift and would never split on "\n".
    var names = Set<String>()
    for rawLine in bytes.prefix(64 * 1024).split(separator: 0x0A, omittingEmptySubsequences: false) {
        let line = rawLine.last == 0x0D ? rawLine.dropLast() : rawLine
        if line.isEmpty { return names.contains("from") && !names.isDisjoint(with: ["date", "subject", "to", "message-id"]) }
        if line.first == 0x20 || line.first == 0x09 {
            if names.isEmpty { return false }
            continue
        }
        // A field name is printable US-ASCII without the colon (RFC 5322 section 2.2).
        guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex,
            line[..<colon].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return false }
        names.insert(String(decoding: line[..<colon], as: UTF8.self).lowercased())
    }
    return false
}

/// What an upload files: a document of one type, or the ransom conversation (`transcript`).
public enum UploadKind: Sendable, Hashable {
    case document(DocumentType)
    case transcript

    /// `invoice`, …, `lock_screen_photo` or `transcript`.
    public init?(rawValue: String) {
        if rawValue == EvidenceKind.transcript.rawValue {
            self = .transcript
        } else if let type = DocumentType(rawValue: rawValue) {
            self = .document(type)
        } else {
            return nil
        }
    }

    /// Every word the `type` field may hold.
    public static let allRawValues: [String] = DocumentType.allCases.map(\.rawValue) + [EvidenceKind.transcript.rawValue]

    /// The kind of evidence filed.
    public var evidenceKind: EvidenceKind {
        switch self {
        case .document(let type): type.evidenceKind
        case .transcript: .transcript
        }
    }
}
