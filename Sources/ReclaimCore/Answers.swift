import Foundation

/// Security answers: one normalisation for on-file answers and filed answers alike.
///
/// Hazard: on-file answers are stored as hashes of `normalize`'s output, so changing it
/// invalidates every stored answer. Change it only with a migration that re-collects them.
public enum SecurityAnswer {
    /// Longest normalised answer accepted (characters).
    public static let maximumLength = 256

    /// NFKC, case fold, NFKC again (folding may un-normalise), drop default-ignorable characters
    /// (zero-width spaces and joiners pasted along), trim, and collapse every run of Unicode
    /// whitespace (U+3000 included) to one space: "ＢＥＲＬＩＮ  " and "berlin" compare equal.
    public static func normalize(_ answer: String) -> String {
        let folded = answer.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive], locale: nil)
            .precomposedStringWithCompatibilityMapping
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in folded.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !out.isEmpty
            } else if scalar.properties.isDefaultIgnorableCodePoint {
                continue
            } else {
                if pendingSpace { out.append(" ") }
                pendingSpace = false
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// The normalised answer, refused when empty or longer than `maximumLength`.
    public static func validate(_ answer: String, field: String = "answer") -> Result<String, ValidationFailure> {
        let normalized = normalize(answer)
        if normalized.isEmpty { return .failure(ValidationFailure(field: field, message: "The answer is empty.")) }
        if normalized.count > maximumLength {
            return .failure(ValidationFailure(field: field, message: "An answer has at most \(maximumLength) characters."))
        }
        return .success(normalized)
    }
}

/// The transcript of a conversation with whoever locked the device.
public enum Transcript {
    /// Largest transcript accepted: 256 KiB of UTF-8.
    public static let maximumBytes = 256 * 1024

    /// The text, refused when blank or over `maximumBytes`.
    public static func validate(_ text: String, field: String = "text") -> Result<String, ValidationFailure> {
        if text.utf8.count > maximumBytes { return .failure(ValidationFailure(field: field, message: "A transcript has at most 256 KiB of text.")) }
        if text.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) {
            return .failure(ValidationFailure(field: field, message: "The transcript is empty."))
        }
        return .success(text)
    }
}
