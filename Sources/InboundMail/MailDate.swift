import Foundation

/// RFC 5322 `Date:` values, with the obsolete forms still sent: no weekday, no seconds, two- and three-digit
/// years, zone names (`GMT`, `EST`, …, military letters as +0000), comments (`(CST)`), extra blanks and dots.
public enum MailDate {
    /// The instant, or nil when the value is not a date.
    public static func parse(_ text: String) -> Date? {
        // Comments out, commas and blanks as separators.
        var cleaned = ""
        var depth = 0
        for character in text {
            if character == "(" {
                depth += 1
                continue
            }
            if character == ")" {
                depth = max(0, depth - 1)
                continue
            }
            if depth == 0 { cleaned.append(character == "," ? " " : character) }
        }
        var words = cleaned.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        if let first = words.first, first.first?.isLetter == true, month(first) == nil { words.removeFirst() }  // weekday
        guard words.count >= 4 else { return nil }
        // Day and month in either order (`1 Dec 2026`, `Dec 1 2026`).
        var dayText = words[0]
        var monthText = words[1]
        if month(dayText) != nil { swap(&dayText, &monthText) }
        guard let day = number(dayText.filter { $0 != "." }), (1...31).contains(day),
            let monthNumber = month(monthText), var year = number(words[2])
        else { return nil }
        if words[2].count == 2 { year += year < 50 ? 2000 : 1900 } else if words[2].count == 3 { year += 1900 }
        guard (1900...9999).contains(year) else { return nil }
        let time = words[3].split(separator: ":", omittingEmptySubsequences: false)
        guard time.count == 2 || time.count == 3, let hour = number(String(time[0])), let minute = number(String(time[1])),
            (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        let second = time.count == 3 ? number(String(time[2])) : 0
        guard let second, (0...60).contains(second) else { return nil }
        let offset = words.count > 4 ? zoneOffset(words[4]) : 0
        guard let offset else { return nil }
        let days = daysFromCivil(year: year, month: monthNumber, day: day)
        let seconds = ((days * 24 + hour) * 60 + minute) * 60 + min(second, 59) - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func number(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 4, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func month(_ text: String) -> Int? {
        let prefix = text.prefix(3).lowercased()
        guard text.count >= 3 else { return nil }
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    /// Seconds east of UTC for `+hhmm`, `-hhmm`, or a zone name; unknown names read as UTC, as RFC 5322 says.
    private static func zoneOffset(_ text: String) -> Int? {
        if let sign = text.first, sign == "+" || sign == "-" {
            let digits = text.dropFirst()
            guard digits.count == 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else { return 0 }
            let seconds = (value / 100) * 3600 + (value % 100) * 60
            return sign == "-" ? -seconds : seconds
        }
        let names: [String: Int] = [
            "ut": 0, "utc": 0, "gmt": 0, "z": 0, "edt": -4, "est": -5, "cdt": -5, "cst": -6,
            "mdt": -6, "mst": -7, "pdt": -7, "pst": -8,
        ]
        return (names[text.lowercased()] ?? 0) * 3600
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
