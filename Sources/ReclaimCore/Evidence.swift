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

    /// The identity factor typed evidence speaks to; nil for transcripts and documents.
    public var factor: Factor? {
        switch self {
        case .securityAnswers: .securityAnswer
        case .card: .card
        case .device: .device
        default: nil
        }
    }

    /// The document type, when this is an uploaded document.
    public var documentType: DocumentType? { DocumentType(rawValue: rawValue) }

    /// True for uploaded documents (stored encrypted, like transcripts).
    public var isDocument: Bool { documentType != nil }

    /// Least tier that may review it: tier 3 for documents and transcripts, tier 2 for answers, card and device.
    public var reviewMinimumTier: Tier { factor == nil ? .tier3 : .tier2 }
}

/// The documents and photos a customer or partner may upload.
public enum DocumentType: String, Sendable, Codable, CaseIterable {
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

    /// The same kind as evidence.
    public var evidenceKind: EvidenceKind { EvidenceKind(rawValue: rawValue)! }
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
