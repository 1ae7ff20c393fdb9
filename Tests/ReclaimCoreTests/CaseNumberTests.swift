import Foundation
import Testing

@testable import ReclaimCore

@Suite struct CaseNumberTests {
    @Test func dammReferenceVectors() {
        #expect(CaseNumber.dammCheckDigit([5, 7, 2]) == 4)
        #expect(CaseNumber.dammCheckDigit([5, 7, 2, 4]) == 0)
        #expect(CaseNumber.dammCheckDigit([Int]()) == 0)
        // Appending the check digit always brings the interim digit back to 0.
        var rng = SeededGenerator(seed: 1)
        for _ in 0..<500 {
            let payload = (0..<11).map { _ in Int.random(in: 0...9, using: &rng) }
            #expect(CaseNumber.dammCheckDigit(payload + [CaseNumber.dammCheckDigit(payload)]) == 0)
        }
    }

    @Test func generatedNumbersHaveTheRightShape() throws {
        var rng = SeededGenerator(seed: 2)
        var firstDigits = Set<Character>()
        for _ in 0..<2_000 {
            let number = CaseNumber.generate(using: &rng)
            #expect(number.digits.count == 12)
            #expect(number.digits.allSatisfy(\.isASCII) && number.digits.allSatisfy(\.isNumber))
            #expect(number.digits.first != "0")
            firstDigits.insert(number.digits.first!)
            #expect(try CaseNumber(parsing: number.digits) == number)
        }
        #expect(firstDigits.count == 9)
    }

    @Test func everySingleDigitSubstitutionIsCaught() {
        var rng = SeededGenerator(seed: 3)
        var checked = 0
        for _ in 0..<200 {
            let digits = Array(CaseNumber.generate(using: &rng).digits)
            for position in digits.indices {
                for replacement in "0123456789" where replacement != digits[position] {
                    var typo = digits
                    typo[position] = replacement
                    #expect(!CaseNumber.isValid(String(typo)), "\(String(typo)) should be refused")
                    checked += 1
                }
            }
        }
        #expect(checked == 200 * 12 * 9)
    }

    @Test func everyAdjacentTranspositionIsCaught() {
        var rng = SeededGenerator(seed: 4)
        var checked = 0
        for _ in 0..<200 {
            let digits = Array(CaseNumber.generate(using: &rng).digits)
            for position in 0..<(digits.count - 1) where digits[position] != digits[position + 1] {
                var typo = digits
                typo.swapAt(position, position + 1)
                do {
                    _ = try CaseNumber(parsing: String(typo))
                    Issue.record("\(String(typo)) should be refused")
                } catch {
                    #expect(error == .checkDigitMismatch)
                }
                checked += 1
            }
        }
        #expect(checked > 1_500)
    }

    @Test(arguments: [
        "4821 0937 5512", "4821-0937-5512", " 482109375512\n", "4821\u{2013}0937\u{2013}5512",
        "４８２１０９３７５５１２", "4821\u{00A0}0937\u{3000}5512", "48-21 09-37 55-12",
    ])
    func pastedFormsAreAccepted(_ text: String) throws {
        let valid = try Self.validNumber()
        let spaced = Self.substitute(template: text, digits: valid.digits)
        #expect(try CaseNumber(parsing: spaced) == valid)
    }

    @Test func refusalsAreTyped() throws {
        let valid = try Self.validNumber().digits
        #expect(throws: CaseNumberError.invalidCharacter) { try CaseNumber(parsing: valid + "x") }
        #expect(throws: CaseNumberError.invalidCharacter) { try CaseNumber(parsing: "48210937551O") }
        #expect(throws: CaseNumberError.invalidCharacter) { try CaseNumber(parsing: valid.replacingOccurrences(of: valid.prefix(1), with: "+")) }
        #expect(throws: CaseNumberError.wrongLength(digits: 11)) { try CaseNumber(parsing: String(valid.dropLast())) }
        #expect(throws: CaseNumberError.wrongLength(digits: 13)) { try CaseNumber(parsing: valid + "0") }
        #expect(throws: CaseNumberError.wrongLength(digits: 0)) { try CaseNumber(parsing: "") }
        #expect(throws: CaseNumberError.wrongLength(digits: 0)) { try CaseNumber(parsing: " - ") }
        #expect(throws: CaseNumberError.wrongLength(digits: 13)) { try CaseNumber(parsing: String(repeating: " ", count: 300)) }
        let leadingZero = [0] + (1...10).map { $0 % 10 }
        let zeroNumber = (leadingZero + [CaseNumber.dammCheckDigit(leadingZero)]).map(String.init).joined()
        // A leading zero is a well-formed number (none is issued, so it is simply not found).
        #expect(try CaseNumber(parsing: zeroNumber).digits == zeroNumber)
        #expect(try CaseNumber(parsing: "012345678906").digits == "012345678906")
        var wrong = Array(valid)
        wrong[11] = wrong[11] == "9" ? "0" : Character(String(Int(String(wrong[11]))! + 1))
        #expect(throws: CaseNumberError.checkDigitMismatch) { try CaseNumber(parsing: String(wrong)) }
    }

    @Test func codableAsPlainDigits() throws {
        let number = try Self.validNumber()
        let json = try JSONEncoder().encode([number])
        #expect(String(decoding: json, as: UTF8.self) == "[\"\(number.digits)\"]")
        #expect(try JSONDecoder().decode([CaseNumber].self, from: json) == [number])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([CaseNumber].self, from: Data("[\"123456789012\"]".utf8)) }
        #expect(number.grouped.split(separator: " ").map(\.count) == [4, 4, 4])
    }

    static func validNumber() throws -> CaseNumber {
        let payload = [4, 8, 2, 1, 0, 9, 3, 7, 5, 5, 1]
        return try CaseNumber(parsing: (payload + [CaseNumber.dammCheckDigit(payload)]).map(String.init).joined())
    }

    // Puts `digits` into the digit slots of `template` (keeping its separators), mapping full-width slots too.
    static func substitute(template: String, digits: String) -> String {
        var source = Array(digits).makeIterator()
        return String(
            template.map { c -> Character in
                if c.isASCII, c.isNumber { return source.next()! }
                if let scalar = c.unicodeScalars.first, (0xFF10...0xFF19).contains(scalar.value) {
                    let d = source.next()!.wholeNumberValue!
                    return Character(Unicode.Scalar(0xFF10 + UInt32(d))!)
                }
                return c
            })
    }
}
