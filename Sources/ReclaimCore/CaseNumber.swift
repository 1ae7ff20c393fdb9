import Foundation

/// Why a typed case number was refused; all map to the problem code `invalid_case_number`.
public enum CaseNumberError: Error, Sendable, Equatable {
    /// Something other than digits, whitespace or dashes.
    case invalidCharacter
    /// Not 12 digits (the count found, capped for very long input).
    case wrongLength(digits: Int)
    /// The Damm check digit does not match: a typo.
    case checkDigitMismatch
}

/// The customer's handle for a case: 12 digits, the last a Damm check digit.
///
/// Any such number parses (one starting with 0 is looked up like another, and simply not found); `generate`
/// only issues numbers whose first digit is 1...9, so a spreadsheet or phone keypad that drops a leading zero
/// cannot turn an issued number into a different one.
///
/// Damm was chosen over Luhn because it catches every single-digit error and every adjacent
/// transposition, so a mistyped number is refused without touching the database.
public struct CaseNumber: Sendable, Hashable, Codable, CustomStringConvertible, Comparable {
    /// The 12 digits, no separators.
    public let digits: String

    /// Total length including the check digit.
    public static let length = 12

    // The Damm quasigroup of order 10 (weakly totally anti-symmetric, zero diagonal).
    private static let damm: [[Int]] = [
        [0, 3, 1, 7, 5, 9, 8, 6, 4, 2],
        [7, 0, 9, 2, 1, 5, 4, 8, 6, 3],
        [4, 2, 0, 6, 8, 7, 1, 3, 5, 9],
        [1, 7, 5, 0, 9, 8, 3, 4, 2, 6],
        [6, 1, 2, 3, 0, 4, 5, 9, 7, 8],
        [3, 6, 7, 4, 2, 0, 9, 5, 8, 1],
        [5, 8, 6, 9, 7, 2, 0, 1, 3, 4],
        [8, 9, 4, 5, 3, 6, 2, 0, 1, 7],
        [9, 4, 3, 8, 6, 1, 7, 2, 0, 5],
        [2, 5, 8, 1, 4, 3, 6, 7, 9, 0],
    ]

    /// The Damm check digit for `digits` (each 0...9); appending it makes the interim digit 0.
    public static func dammCheckDigit(_ digits: some Sequence<Int>) -> Int {
        var interim = 0
        for digit in digits {
            precondition((0...9).contains(digit), "dammCheckDigit: not a decimal digit")
            interim = damm[interim][digit]
        }
        return interim
    }

    /// A fresh number: 11 random digits (the first 1...9) and the check digit.
    public static func generate(using generator: inout some RandomNumberGenerator) -> CaseNumber {
        var values = [Int.random(in: 1...9, using: &generator)]
        for _ in 1..<(length - 1) { values.append(Int.random(in: 0...9, using: &generator)) }
        values.append(dammCheckDigit(values))
        return CaseNumber(unchecked: values)
    }

    private init(unchecked values: [Int]) {
        digits = String(values.map { Character(String($0)) })
    }

    /// Parses what a person typed or pasted: digits with any whitespace or dashes mixed in
    /// (full-width forms too, via NFKC); anything else, a wrong length or a failing check is refused.
    public init(parsing text: String) throws(CaseNumberError) {
        // Bounded before normalising so a huge input costs nothing.
        guard text.utf8.count <= 256 else { throw .wrongLength(digits: Self.length + 1) }
        var values = [Int]()
        // NFKC only when needed: it maps full-width digits and dashes, and costs more than the rest.
        let folded = text.utf8.allSatisfy { $0 < 0x80 } ? text : text.precomposedStringWithCompatibilityMapping
        for scalar in folded.unicodeScalars {
            if let digit = Self.asciiDigit(scalar) {
                values.append(digit)
                if values.count > Self.length { throw .wrongLength(digits: values.count) }
            } else if scalar.properties.isWhitespace || Self.isDash(scalar) {
                continue
            } else {
                throw .invalidCharacter
            }
        }
        guard values.count == Self.length else { throw .wrongLength(digits: values.count) }
        guard Self.dammCheckDigit(values) == 0 else { throw .checkDigitMismatch }
        self.init(unchecked: values)
    }

    /// True when `text` parses as a case number.
    public static func isValid(_ text: String) -> Bool {
        (try? CaseNumber(parsing: text)) != nil
    }

    /// The digits in groups of four ("4821 0937 5512"), easier to read aloud.
    public var grouped: String {
        let chars = Array(digits)
        return stride(from: 0, to: chars.count, by: 4).map { String(chars[$0..<min($0 + 4, chars.count)]) }.joined(separator: " ")
    }

    /// The 12 digits.
    public var description: String { digits }

    /// Orders by digits (numbers have equal length, so this is numeric order).
    public static func < (lhs: CaseNumber, rhs: CaseNumber) -> Bool { lhs.digits < rhs.digits }

    /// Decodes from a JSON string, with the same leniency as `init(parsing:)`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid case number")
        }
    }

    /// Encodes as a JSON string of 12 digits.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(digits)
    }

    static func asciiDigit(_ scalar: Unicode.Scalar) -> Int? {
        (48...57).contains(scalar.value) ? Int(scalar.value - 48) : nil
    }

    // Hyphen-minus and the dash family that word processors substitute for it.
    static func isDash(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2D, 0x2010...0x2015, 0x2212, 0xFE58, 0xFE63, 0xFF0D: true
        default: false
        }
    }
}
