import Foundation

/// Where a request's body ends, as its headers say, collected while MHD hands the headers over.
///
/// RFC 9112 §6.3 and §5.1: a request whose length two parties could read differently (Content-Length
/// with Transfer-Encoding, Content-Length values that disagree, a header name with whitespace before its
/// colon that one party trims and another does not) is refused with 400 and its connection closed, so
/// no byte after it is ever taken for a second request.
struct RequestFraming {
    /// The body length every Content-Length value agrees on.
    private(set) var contentLength: Int?
    /// The Transfer-Encoding as sent (MHD decodes `chunked` itself).
    private(set) var transferEncoding: String?
    private var contentLengthHeaders = 0
    private var lengthsDisagree = false
    private var whitespaceInName = false

    /// True when the body has bytes, or is chunked and may.
    var announcesBody: Bool { (contentLength ?? 0) > 0 || transferEncoding != nil }

    /// Notes one request header.
    mutating func note(name: String, value: String) {
        if name.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) { whitespaceInName = true }
        if name.equalsIgnoringASCIICase("content-length") {
            contentLengthHeaders += 1
            // One plain number is the common case; a list ("3, 3") is allowed when its members agree.
            if let length = Int(value), length >= 0 {
                agree(on: length)
            } else {
                for member in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let length = Int(member.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                        lengthsDisagree = true
                        continue
                    }
                    agree(on: length)
                }
            }
        } else if name.equalsIgnoringASCIICase("transfer-encoding") {
            transferEncoding = transferEncoding.map { $0 + ", " + value } ?? value
        }
    }

    private mutating func agree(on length: Int) {
        if let known = contentLength, known != length { lengthsDisagree = true }
        contentLength = length
    }

    /// Why the request must be refused and its connection closed; nil when its framing is unambiguous.
    var problem: Problem? {
        if whitespaceInName {
            return .badRequest(code: HTTPProblemCode.malformedHeader, detail: "A header name holds whitespace; none is allowed before the colon.")
        }
        if contentLengthHeaders > 0 && transferEncoding != nil {
            return .badRequest(code: HTTPProblemCode.ambiguousLength, detail: "A request must not carry both Content-Length and Transfer-Encoding.")
        }
        if lengthsDisagree {
            return .badRequest(code: HTTPProblemCode.ambiguousLength, detail: "The Content-Length values disagree.")
        }
        if let coding = transferEncoding, !coding.trimmingCharacters(in: .whitespaces).equalsIgnoringASCIICase("chunked") {
            // MHD decodes chunked alone: any other coding would leave the body's end unknown.
            return Problem(HTTPProblemCode.unsupportedTransferCoding, detail: "Only the chunked transfer coding is accepted.")
        }
        return nil
    }

    /// True when a NUL byte hides inside the request line.
    ///
    /// MHD 0.9 parses the request line in place: the method, the target and the version stay in its read
    /// buffer, each part ended by a NUL that MHD wrote over the space after it. A client's NUL ends a part
    /// early (MHD then serves `/a` for `/a\0/b`), and the parts no longer meet: the method's end is then
    /// followed by more than spaces, or the version does not start right after the target's end.
    /// `targetStart` and `targetEnd` (its NUL) are where the target was when MHD gave it to the request-line callback.
    static func requestLineHidesNUL(method: UnsafePointer<CChar>, targetStart target: UInt, targetEnd: UInt, version: UnsafePointer<CChar>,
                                    bufferLimit: Int) -> Bool {
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
