/// One problem with one request field, as listed in a problem document's `errors`.
public struct FieldIssue: Sendable, Hashable, Codable {
    /// The JSON field (or multipart field) at fault.
    public var field: String
    /// What is wrong, in plain words; never echoes a secret.
    public var message: String

    /// An issue.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

/// A value was refused; maps to 422 `validation_failed` with the issues.
public struct ValidationFailure: Error, Sendable, Hashable {
    /// The problems found.
    public var issues: [FieldIssue]

    /// A failure with these issues.
    public init(_ issues: [FieldIssue]) {
        self.issues = issues
    }

    /// A failure with one issue.
    public init(field: String, message: String) {
        self.issues = [FieldIssue(field: field, message: message)]
    }
}

/// Collects issues across several validators so a request reports every bad field at once.
public struct IssueCollector: Sendable {
    /// Issues so far.
    public private(set) var issues: [FieldIssue] = []

    /// An empty collector.
    public init() {}

    /// The value when `result` succeeded; otherwise records its issues and returns nil.
    public mutating func take<Value>(_ result: Result<Value, ValidationFailure>) -> Value? {
        switch result {
        case .success(let value): return value
        case .failure(let failure):
            issues += failure.issues
            return nil
        }
    }

    /// Records an issue.
    public mutating func add(field: String, message: String) {
        issues.append(FieldIssue(field: field, message: message))
    }

    /// Throws the collected issues, if any.
    public func check() throws(ValidationFailure) {
        if !issues.isEmpty { throw ValidationFailure(issues) }
    }
}

extension String {
    // Digits after dropping whitespace and dashes (how people write IMEIs and card numbers); nil on anything else.
    func digitsIgnoringSeparators() -> [Int]? {
        var digits = [Int]()
        for scalar in unicodeScalars {
            if let digit = CaseNumber.asciiDigit(scalar) {
                digits.append(digit)
            } else if scalar.properties.isWhitespace || CaseNumber.isDash(scalar) {
                continue
            } else {
                return nil
            }
        }
        return digits
    }
}

extension Array where Element == Int {
    var digitString: String { String(map { Character(String($0)) }) }
}

/// A phone number in E.164 form (api.md v1.3 "A phone number on file"): `+` and 8 to 15 digits, nothing else (no
/// spaces, dashes or brackets: the form every carrier and the phone's own settings show, and one spelling per number,
/// so two cases with the same number are found as related).
public struct PhoneNumber: Sendable, Hashable, CustomStringConvertible {
    /// `+` and the digits.
    public let value: String

    /// The rule in words, for `/openapi.json` and refusals' readers.
    public static let rule = "E.164: + followed by 8 to 15 digits, nothing else (for example +8613800138000)."
    /// The pattern of the rule, for `/openapi.json`.
    public static let pattern = "^\\+[0-9]{8,15}$"

    /// The number.
    public var description: String { value }

    /// Validates a typed number; surrounding whitespace is trimmed.
    public static func validate(_ text: String, field: String = "phone") -> Result<PhoneNumber, ValidationFailure> {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let scalars = Array(trimmed.unicodeScalars)
        guard scalars.first == "+", (9...16).contains(scalars.count), scalars.dropFirst().allSatisfy({ ("0"..."9").contains($0) }) else {
            return .failure(
                ValidationFailure(field: field, message: "A phone number is written in E.164: + followed by 8 to 15 digits, without spaces."))
        }
        return .success(PhoneNumber(value: trimmed))
    }

    private init(value: String) { self.value = value }
}
