import Foundation

/// Calendar arithmetic on PostgreSQL's microsecond timestamps (no Foundation formatters: they are slow).
/// `civilFromDays` is public: the case API's RFC 3339 timestamps use the same conversion.
public enum PostgresTime {
    static let microsPerSecond: Int64 = 1_000_000
    static let microsPerDay: Int64 = 86_400_000_000
    /// 2001-01-01 (Foundation's reference date) minus 2000-01-01 (PostgreSQL's epoch): 366 days.
    static let referenceOffsetMicros: Int64 = 366 * microsPerDay
    /// Days from 1970-01-01 to 2000-01-01.
    static let unixToPostgresDays: Int64 = 10_957

    /// `date` as a timestamptz column gives it back (rounded to the microsecond, as `Date`'s bind rounds it): a value
    /// computed from it compares equal to the one read back.
    public static func stored(_ date: Date) -> Date {
        Date(timeIntervalSinceReferenceDate: (date.timeIntervalSinceReferenceDate * 1_000_000).rounded() / 1_000_000)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date of a day number since 1970-01-01 (civil_from_days).
    public static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// PostgreSQL's ISO text for microseconds since 2000-01-01, e.g. "2026-11-30 07:03:01.123456+00".
    static func format(micros: Int64, withTime: Bool = true, withZone: Bool = true) -> String {
        if micros == Int64.max { return "infinity" }
        if micros == Int64.min { return "-infinity" }
        var days = micros / microsPerDay
        var rest = micros % microsPerDay
        if rest < 0 {
            rest += microsPerDay
            days -= 1
        }
        let (year, month, day) = civilFromDays(days + unixToPostgresDays)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        var text = "\(pad(year > 0 ? year : 1 - year, 4))-\(pad(month, 2))-\(pad(day, 2))"
        if withTime {
            let seconds = rest / microsPerSecond
            let fraction = rest % microsPerSecond
            text += " \(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2))"
            if fraction != 0 {
                var digits = pad(fraction, 6)
                while digits.hasSuffix("0") { digits.removeLast() }
                text += "." + digits
            }
            if withZone { text += "+00" }
        }
        if year <= 0 { text += " BC" }
        return text
    }
}

/// Parsers for PostgreSQL's text output format.
enum PostgresText {
    static func parseInt64(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        guard index < bytes.count else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            // Accumulate negatively so Int64.min parses too.
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.subtractingReportingOverflow(Int64(digit))
            guard !o1, !o2 else { return nil }
            value = next
            index += 1
        }
        if negative { return value }
        return value == Int64.min ? nil : -value
    }

    static func hexNibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }

    /// bytea's hex output: "\x" then two hex digits a byte.
    static func parseHexBytea(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x"), bytes.count % 2 == 0 else { return nil }
        let count = (bytes.count - 2) / 2
        var failed = false
        let out = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for i in 0..<count {
                guard let hi = hexNibble(bytes[2 + 2 * i]), let lo = hexNibble(bytes[3 + 2 * i]) else {
                    failed = true
                    break
                }
                buffer[i] = hi << 4 | lo
                initialized = i + 1
            }
        }
        return failed ? nil : out
    }

    /// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (PostgreSQL's output); also without dashes.
    static func parseUUID(_ bytes: UnsafeRawBufferPointer) -> UUID? {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var nibbles = 0
        let ok = withUnsafeMutableBytes(of: &uuid) { out -> Bool in
            for byte in bytes {
                if byte == UInt8(ascii: "-") { continue }
                guard nibbles < 32, let value = hexNibble(byte) else { return false }
                if nibbles % 2 == 0 { out[nibbles / 2] = value << 4 } else { out[nibbles / 2] |= value }
                nibbles += 1
            }
            return nibbles == 32
        }
        return ok ? UUID(uuid: uuid) : nil
    }

    /// Microseconds since 2000-01-01 UTC of "YYYY-MM-DD[ HH:MM:SS[.ffffff]][±HH[:MM[:SS]]][ BC]" or ±infinity.
    static func parseTimestamp(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        var i = 0
        let n = bytes.count
        func peek() -> UInt8? { i < n ? bytes[i] : nil }
        func number(minDigits: Int, maxDigits: Int) -> Int64? {
            var value: Int64 = 0
            var digits = 0
            while i < n, digits < maxDigits, bytes[i] &- 0x30 < 10 {
                value = value * 10 + Int64(bytes[i] - 0x30)
                i += 1
                digits += 1
            }
            return digits >= minDigits ? value : nil
        }
        func expect(_ c: Character) -> Bool {
            guard peek() == c.asciiValue else { return false }
            i += 1
            return true
        }
        if n > 0 && (bytes[0] == UInt8(ascii: "i") || bytes[0] == UInt8(ascii: "-") && n > 1 && bytes[1] == UInt8(ascii: "i")) {
            let text = String(decoding: bytes, as: UTF8.self)
            return text == "infinity" ? Int64.max : text == "-infinity" ? Int64.min : nil
        }
        guard var year = number(minDigits: 4, maxDigits: 7), expect("-"),
            let month = number(minDigits: 2, maxDigits: 2), expect("-"),
            let day = number(minDigits: 2, maxDigits: 2), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var timeMicros: Int64 = 0
        if peek() == UInt8(ascii: " ") || peek() == UInt8(ascii: "T"), i + 1 < n, bytes[i + 1] &- 0x30 < 10 {
            i += 1
            guard let hour = number(minDigits: 2, maxDigits: 2), expect(":"),
                let minute = number(minDigits: 2, maxDigits: 2), expect(":"),
                let second = number(minDigits: 2, maxDigits: 2), hour <= 24, minute < 60, second <= 60
            else { return nil }
            timeMicros = ((hour * 60 + minute) * 60 + second) * PostgresTime.microsPerSecond
            if expect(".") {
                var scale: Int64 = 100_000
                var fraction: Int64 = 0
                var digits = 0
                while let c = peek(), c &- 0x30 < 10 {
                    if digits < 6 {
                        fraction += Int64(c - 0x30) * scale
                        scale /= 10
                    }
                    digits += 1
                    i += 1
                }
                guard digits > 0 else { return nil }
                timeMicros += fraction
            }
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                i += 1
                guard let hours = number(minDigits: 2, maxDigits: 2) else { return nil }
                var offset = hours * 3600
                if expect(":") {
                    guard let minutes = number(minDigits: 2, maxDigits: 2) else { return nil }
                    offset += minutes * 60
                    if expect(":") {
                        guard let seconds = number(minDigits: 2, maxDigits: 2) else { return nil }
                        offset += seconds
                    }
                }
                // Local time = UTC + offset, so UTC = local - offset.
                timeMicros -= (sign == UInt8(ascii: "+") ? offset : -offset) * PostgresTime.microsPerSecond
            }
        }
        if i + 3 <= n, bytes[i] == UInt8(ascii: " "), bytes[i + 1] == UInt8(ascii: "B"), bytes[i + 2] == UInt8(ascii: "C") {
            year = 1 - year
            i += 3
        }
        guard i == n else { return nil }
        let days = PostgresTime.daysFromCivil(year: year, month: month, day: day) - PostgresTime.unixToPostgresDays
        return days * PostgresTime.microsPerDay + timeMicros
    }
}

/// Renders binary cells as PostgreSQL's text output, so `String` decodes any column the same way in either format.
enum PostgresBinary {
    static func renderText(_ cell: PostgresCell) throws -> String {
        switch cell.typeOID {
        case OID.int2, OID.int4, OID.int8, OID.oid:
            return String(try Int64.decode(from: cell))
        case OID.float4, OID.float8:
            let value = try Double.decode(from: cell)
            if value.isNaN { return "NaN" }
            if value.isInfinite { return value > 0 ? "Infinity" : "-Infinity" }
            return cell.typeOID == OID.float4 ? String(Float(value)) : String(value)
        case OID.bool:
            return try Bool.decode(from: cell) ? "t" : "f"
        case OID.uuid:
            return try UUID.decode(from: cell).uuidString.lowercased()
        case OID.bytea:
            return cell.withBytes { "\\x" + hex($0) }
        case OID.timestamptz, OID.timestamp:
            let micros = cell.withBytes { $0.count == 8 ? Int64(bigEndian: $0.loadUnaligned(as: Int64.self)) : 0 }
            return PostgresTime.format(micros: micros, withZone: cell.typeOID == OID.timestamptz)
        case OID.date:
            let days = cell.withBytes { $0.count == 4 ? Int32(bigEndian: $0.loadUnaligned(as: Int32.self)) : 0 }
            if days == Int32.max { return "infinity" }
            if days == Int32.min { return "-infinity" }
            return PostgresTime.format(micros: Int64(days) * PostgresTime.microsPerDay, withTime: false)
        case OID.jsonb:
            // Binary jsonb is a version byte (1) then the JSON text.
            return cell.withBytes { String(decoding: $0.dropFirst(), as: UTF8.self) }
        default:
            return cell.withBytes { String(decoding: $0, as: UTF8.self) }
        }
    }

    static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (i, byte) in bytes.enumerated() {
                out[2 * i] = digits[Int(byte >> 4)]
                out[2 * i + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }

    /// Column types whose binary form the decoders and `renderText` understand; other results come as text.
    static func understands(_ oid: UInt32) -> Bool {
        switch oid {
        case OID.bool, OID.bytea, OID.name, OID.int8, OID.int2, OID.int4, OID.text, OID.oid, OID.json,
            OID.float4, OID.float8, OID.unknown, OID.bpchar, OID.varchar, OID.date, OID.timestamp,
            OID.timestamptz, OID.uuid, OID.void:
            true
        default:
            false
        }
    }
}
