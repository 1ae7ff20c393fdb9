import Foundation

/// Where a request's body ends, as its headers say, collected while MHD hands the headers over.
///
/// RFC 9112 §6.3 and §5.1: a request whose length two parties could read differently (Content-Length
/// with Transfer-Encoding, Content-Length values that disagree or are not one number, a header name with
/// whitespace before its colon that one party trims and another does not) is refused with 400 and its
/// connection closed, so no byte after it is ever taken for a second request.
///
/// A list in one header (`Content-Length: 5, 5`) and two separate headers are refused even when their values
/// agree: RFC 9110 §8.6 lets a recipient either reject them or reduce them to one value, and a front end that
/// reduces them differently (or reads the last where MHD reads the first) is one way to smuggle a request.
///
/// RFC 9112 §3.2: an HTTP/1.1 request without `Host`, or any request with two, is 400 (two front ends could
/// route it to different hosts). HTTP/1.0 did not require it.
struct RequestFraming {
    /// The body length every Content-Length value agrees on.
    private(set) var contentLength: Int?
    /// The Transfer-Encoding as sent (MHD decodes `chunked` itself).
    private(set) var transferEncoding: String?
    private var contentLengthHeaders = 0
    private var hostHeaders = 0
    private var lengthInvalid = false
    private var whitespaceInName = false

    /// True when the body has bytes, or is chunked and may.
    var announcesBody: Bool { (contentLength ?? 0) > 0 || transferEncoding != nil }

    /// Notes one request header.
    mutating func note(name: String, value: String) {
        if name.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) { whitespaceInName = true }
        if name.equalsIgnoringASCIICase("host") {
            hostHeaders += 1
        } else if name.equalsIgnoringASCIICase("content-length") {
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
    /// `requiresHost` is false for HTTP/1.0, and when the version is not known (MHD refused the head itself).
    func problem(requiresHost: Bool) -> Problem? {
        if hostHeaders > 1 || (requiresHost && hostHeaders == 0) {
            return .badRequest(code: HTTPProblemCode.badHost, detail: "A request must carry exactly one Host header (HTTP/1.0: at most one).")
        }
        return problem
    }

    /// The length's own problem, whatever the version.
    var problem: Problem? {
        if whitespaceInName {
            return .badRequest(code: HTTPProblemCode.malformedHeader, detail: "A header name holds whitespace; none is allowed before the colon.")
        }
        if contentLengthHeaders > 0 && transferEncoding != nil {
            return .badRequest(code: HTTPProblemCode.ambiguousLength, detail: "A request must not carry both Content-Length and Transfer-Encoding.")
        }
        if lengthInvalid || contentLengthHeaders > 1 {
            return .badRequest(
                code: HTTPProblemCode.ambiguousLength,
                detail: "Content-Length must be one decimal number, sent once.")
        }
        if let coding = transferEncoding, !coding.trimmingCharacters(in: .whitespaces).equalsIgnoringASCIICase("chunked") {
            // MHD decodes chunked alone: any other coding would leave the body's end unknown.
            return Problem(HTTPProblemCode.unsupportedTransferCoding, detail: "Only the chunked transfer coding is accepted.")
        }
        return nil
    }
}
