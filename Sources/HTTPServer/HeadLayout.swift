import Foundation

/// Whether the head MHD parsed reads exactly as RFC 9112 §2.2, §3 and §5 allow: every line ends in CRLF, no
/// field line is folded onto the next (obs-fold), no field holds a NUL or another control byte, nothing hides
/// in the request line.
///
/// libmicrohttpd 0.9.75 accepts all of these and hands over only what is left: it ends a line at a bare LF,
/// joins a folded line onto the field before it, and a NUL simply ends the value it sits in (the rest of the
/// line is dropped). The head can still be read as sent, because MHD parses it in place in its read buffer,
/// writing a NUL over each colon and over each line's CR and LF. So a head sent as RFC 9112 asks lies in
/// the buffer exactly as: `method NUL target NUL version NUL NUL`, then per field `name NUL [SP/HT…] value
/// NUL NUL`, then `NUL NUL` for the empty line, ending `header_size` bytes after the method. `HeadLayout`
/// walks the field pointers MHD reports against that picture: a bare LF leaves one NUL where two belong, a
/// NUL inside a value leaves bytes between its end and the next line, a folded field is moved out of the
/// buffer altogether. Any difference is 400 and the connection closes, as for ambiguous framing.
struct HeadLayout {
    /// Where the next field line must start.
    private var next: UInt
    /// One past the head's last byte (the LF of the empty line); nothing at or after it is read.
    private let end: UInt
    private var broken = false

    /// Starts after the request line: `version` (8 bytes, MHD refuses any other length) is followed by its CRLF.
    /// `method` is where MHD's buffer holds the request line and `headerSize` how long MHD found the head to be.
    init(method: UnsafePointer<CChar>, version: UnsafePointer<CChar>, headerSize: Int) {
        end = UInt(bitPattern: method) + UInt(max(0, headerSize))
        next = UInt(bitPattern: version) + UInt(strlen(version))
        // The two NULs of the request line's CRLF.
        if !isNUL(next) || !isNUL(next + 1) { broken = true }
        next += 2
    }

    /// Checks one field line, in the order MHD received them.
    mutating func note(name: UnsafePointer<CChar>, nameSize: Int, value: UnsafePointer<CChar>?, valueSize: Int) {
        guard !broken else { return }
        let start = UInt(bitPattern: name)
        // A folded field was moved out of the buffer (MHD grows it elsewhere): it does not start where the line did.
        guard start == next, nameSize > 0, let value, start + UInt(nameSize) < end,
            UnsafeRawBufferPointer(start: name, count: nameSize).allSatisfy(Self.isTokenByte)
        else { return fail() }
        // The colon's NUL, then the optional white space MHD skipped, then the value.
        var cursor = start + UInt(nameSize) + 1
        let valueStart = UInt(bitPattern: value)
        guard valueStart >= cursor, valueStart + UInt(valueSize) < end else { return fail() }
        while cursor < valueStart {
            guard let byte = UnsafePointer<UInt8>(bitPattern: cursor)?.pointee, byte == 0x20 || byte == 0x09 else { return fail() }
            cursor += 1
        }
        guard UnsafeRawBufferPointer(start: value, count: valueSize).allSatisfy(Self.isFieldValueByte) else { return fail() }
        let valueEnd = valueStart + UInt(valueSize)
        // The line's CR and LF, each overwritten by a NUL; a NUL sent inside the value leaves the rest of the line here instead.
        guard isNUL(valueEnd), isNUL(valueEnd + 1) else { return fail() }
        next = valueEnd + 2
    }

    /// True when every line was in place and the head ends with the empty line's CRLF exactly where MHD found its end.
    var isIntact: Bool {
        !broken && next + 2 == end && isNUL(next) && isNUL(next + 1)
    }

    private mutating func fail() {
        broken = true
    }

    /// Reads only inside the head.
    private func isNUL(_ address: UInt) -> Bool {
        address < end && UnsafePointer<UInt8>(bitPattern: address)?.pointee == 0
    }

    static let problem = Problem.badRequest(
        code: HTTPProblemCode.malformedHeader,
        detail:
            "The request head is not HTTP/1.1 as RFC 9112 writes it: every line must end in CRLF, no header may be folded onto the next line, and no header may hold a NUL or another control character."
    )

    /// RFC 9110 §5.6.2 tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
    }

    /// RFC 9110 §5.5: visible characters, obs-text, space and tab; no other control byte.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte >= 0x20 ? byte != 0x7F : byte == 0x09
    }

    /// True when a NUL byte hides inside the request line.
    ///
    /// MHD 0.9 parses the request line in place: the method, the target and the version stay in its read
    /// buffer, each part ended by a NUL that MHD wrote over the space after it. A client's NUL ends a part
    /// early (MHD then serves `/a` for `/a\0/b`), and the parts no longer meet: the method's end is then
    /// followed by more than spaces, or the version does not start right after the target's end.
    /// `targetStart` and `targetEnd` (its NUL) are where the target was when MHD gave it to the request-line callback.
    static func requestLineHidesNUL(
        method: UnsafePointer<CChar>, targetStart target: UInt, targetEnd: UInt, version: UnsafePointer<CChar>,
        bufferLimit: Int
    ) -> Bool {
        let methodEnd = UInt(bitPattern: method) + UInt(strlen(method))
        guard target > methodEnd, target - methodEnd <= UInt(bufferLimit) else { return true }
        // Between the method's NUL and the target, only the extra spaces MHD skipped.
        var address = methodEnd + 1
        while address < target {
            guard let byte = UnsafePointer<UInt8>(bitPattern: address), byte.pointee == 0x20 else { return true }
            address += 1
        }
        return UInt(bitPattern: version) != targetEnd + 1
    }
}
