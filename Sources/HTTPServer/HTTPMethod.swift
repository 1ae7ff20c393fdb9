/// The request methods the server routes; anything else is answered 405 or 404 without calling a handler.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // The methods as RFC 9110 spells them: the raw values are the request line's words.
    case GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS

    /// Parses the method token MHD hands over (case-sensitive, as RFC 9110 says).
    init?(token: UnsafePointer<CChar>) {
        // GET is checked byte by byte first: it is most requests, and this skips building a String.
        if token[0] == 0x47, token[1] == 0x45, token[2] == 0x54, token[3] == 0 {
            self = .GET
            return
        }
        guard let method = HTTPMethod(rawValue: String(cString: token)) else { return nil }
        self = method
    }
}
