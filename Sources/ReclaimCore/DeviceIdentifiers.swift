/// The Luhn (mod 10) check used by IMEIs and most card numbers.
public enum Luhn {
    /// True when the last digit is the Luhn check digit of the others (each element 0...9).
    public static func isValid(_ digits: [Int]) -> Bool {
        guard digits.count >= 2 else { return false }
        return checkDigit(for: digits.dropLast()) == digits.last
    }

    /// True when `text` is all ASCII digits and passes Luhn.
    public static func isValid(_ text: String) -> Bool {
        var digits = [Int]()
        for scalar in text.unicodeScalars {
            guard let digit = CaseNumber.asciiDigit(scalar) else { return false }
            digits.append(digit)
        }
        return isValid(digits)
    }

    /// The digit that makes `payload` followed by it pass Luhn.
    public static func checkDigit(for payload: some BidirectionalCollection<Int>) -> Int {
        var sum = 0
        // Doubling starts from the rightmost payload digit, which sits next to the check digit.
        for (index, digit) in payload.reversed().enumerated() {
            precondition((0...9).contains(digit), "Luhn: not a decimal digit")
            if index % 2 == 0 {
                let doubled = digit * 2
                sum += doubled > 9 ? doubled - 9 : doubled
            } else {
                sum += digit
            }
        }
        return (10 - sum % 10) % 10
    }
}

/// A device's IMEI (15 digits, Luhn check digit) or IMEISV (16 digits: 14 shared with the IMEI, 2 of software version, no check).
public struct IMEI: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The digits as given, separators removed.
    public let digits: String

    /// True for a 16-digit IMEISV.
    public var isSoftwareVersion: Bool { digits.count == 16 }

    /// The 14 digits an IMEI and its IMEISV share (type allocation code and serial): compare devices by this.
    public var identity: String { String(digits.prefix(14)) }

    /// The digits.
    public var description: String { digits }

    /// Validates a typed IMEI or IMEISV; spaces and dashes are ignored.
    public static func validate(_ text: String, field: String = "imei") -> Result<IMEI, ValidationFailure> {
        guard let digits = text.digitsIgnoringSeparators(), !digits.isEmpty else {
            return .failure(ValidationFailure(field: field, message: "An IMEI has only digits."))
        }
        switch digits.count {
        case 15:
            guard Luhn.isValid(digits) else {
                return .failure(ValidationFailure(field: field, message: "The IMEI's check digit does not match: please re-read it."))
            }
        case 16:
            break
        default:
            return .failure(ValidationFailure(field: field, message: "An IMEI has 15 digits (16 for an IMEISV)."))
        }
        return .success(IMEI(digits: digits.digitString))
    }

    private init(digits: String) { self.digits = digits }

    /// Decodes and validates a JSON string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        switch IMEI.validate(try container.decode(String.self)) {
        case .success(let imei): self = imei
        case .failure(let failure):
            throw DecodingError.dataCorruptedError(in: container, debugDescription: failure.issues.first?.message ?? "invalid IMEI")
        }
    }

    /// Encodes the digits as a JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(digits)
    }
}

/// A device serial number as printed on the box: 8 to 14 ASCII letters and digits, upper case.
public struct SerialNumber: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The normalised serial.
    public let value: String

    /// Allowed lengths.
    public static let lengths = 8...14

    /// The serial.
    public var description: String { value }

    /// Validates a typed serial: surrounding whitespace trimmed, upper-cased; anything but letters and digits refused.
    public static func validate(_ text: String, field: String = "serial") -> Result<SerialNumber, ValidationFailure> {
        let trimmed = text.unicodeScalars.drop { $0.properties.isWhitespace }.reversed().drop { $0.properties.isWhitespace }.reversed()
        var out = ""
        for scalar in trimmed {
            guard scalar.isASCII, scalar.properties.isAlphabetic || CaseNumber.asciiDigit(scalar) != nil else {
                return .failure(ValidationFailure(field: field, message: "A serial number has only letters and digits."))
            }
            out.unicodeScalars.append(scalar)
        }
        guard lengths.contains(out.count) else {
            return .failure(ValidationFailure(field: field, message: "A serial number has 8 to 14 letters and digits."))
        }
        return .success(SerialNumber(value: out.uppercased()))
    }

    private init(value: String) { self.value = value }

    /// Decodes and validates a JSON string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        switch SerialNumber.validate(try container.decode(String.self)) {
        case .success(let serial): self = serial
        case .failure(let failure):
            throw DecodingError.dataCorruptedError(in: container, debugDescription: failure.issues.first?.message ?? "invalid serial")
        }
    }

    /// Encodes the serial as a JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
