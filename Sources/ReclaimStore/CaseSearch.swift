import Foundation

/// The one normalisation of what `q` matches: indexed terms and queries go through it alike.
public enum CaseSearch {
    /// E-mail addresses lower-cased; anything else (case numbers, serials, IMEIs) without spaces or dashes, upper-cased.
    public static func term(for text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 254 else { return nil }
        if trimmed.contains("@") { return trimmed.lowercased() }
        let compact = trimmed.unicodeScalars.filter { !$0.properties.isWhitespace && $0 != "-" }
        let term = String(String.UnicodeScalarView(compact)).uppercased()
        return term.isEmpty ? nil : term
    }

    /// The terms a case is found by.
    public static func terms(number: String, accountEmail: String, devices: [CaseDevice]) -> Set<String> {
        var terms: Set<String> = [number]
        if let email = term(for: accountEmail) { terms.insert(email) }
        for device in devices {
            if let serial = device.serial.flatMap(term(for:)) { terms.insert(serial) }
            if let imei = device.imei.flatMap(term(for:)) { terms.insert(imei) }
        }
        return terms
    }
}
