import Foundation

/// Where a request's body ends, as its headers say, collected while MHD hands the headers over.
///
/// RFC 9112 §6.3 and §5.1: a request whose length two parties could read differently (Content-Length
/// with Transfer-Encoding, Content-Length values that disagree or are not one number, a header name with
/// whitespace before its colon that one party trims and another does not) is refused with 400 and its
/// connection closed, so no byte after it is ever taken for a second request.
///
/// A list in one header (`Content-Length: 5, 5`) is refused even when its members agree: RFC 9110 §8.6
/// lets a recipient either reject it or reduce it to one value, and libmicrohttpd, which frames the body,
/// reads only a plain number. Two separate headers with the same value are still served (MHD reads the first).
struct RequestFraming {
    /// The body length every Content-Length value agrees on.
    private(set) var contentLength: Int?
    /// The Transfer-Encoding as sent (MHD decodes `chunked` itself).
    private(set) var transferEncoding: String?
    private var contentLengthHeaders = 0
    private var lengthInvalid = false
    private var whitespaceInName = false

    /// True when the body has bytes, or is chunked and may.
    var announcesBody: Bool { (contentLength ?? 0) > 0 || transferEncoding != nil }

    /// Notes one request header.
    mutating func note(name: String, value: String) {
        if name.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) { whitespaceInName = true }
        if name.equalsIgnoringASCIICase("content-length") {
            contentLengthHeaders += 1
            // 1*DIGIT and nothing else: no sign, no list, no white space MHD would not read past.
            guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(value) else {
                lengthInvalid = true
                return
            }
            if let known = contentLength, known != length { lengthInvalid = true }
            contentLength = length
        } else if name.equalsIgnoringASCIICase("transfer-encoding") {
            transferEncoding = transferEncoding.map { $0 + ", " + value } ?? value
        }
    }

    /// Why the request must be refused and its connection closed; nil when its framing is unambiguous.
    var problem: Problem? {
        if whitespaceInName {
            return .badRequest(code: HTTPProblemCode.malformedHeader, detail: "A header name holds whitespace; none is allowed before the colon.")
        }
        if contentLengthHeaders > 0 && transferEncoding != nil {
            return .badRequest(code: HTTPProblemCode.ambiguousLength, detail: "A request must not carry both Content-Length and Transfer-Encoding.")
        }
        if lengthInvalid {
            return .badRequest(
                code: HTTPProblemCode.ambiguousLength,
                detail: "Content-Length must be one decimal number, sent once (or repeated with the same value).")
        }
        if let coding = transferEncoding, !coding.trimmingCharacters(in: .whitespaces).equalsIgnoringASCIICase("chunked") {
            // MHD decodes chunked alone: any other coding would leave the body's end unknown.
            return Problem(HTTPProblemCode.unsupportedTransferCoding, detail: "Only the chunked transfer coding is accepted.")
        }
        return nil
    }
}
