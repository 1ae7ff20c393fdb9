import Foundation

/// Serves GET and HEAD for paths no route claims, from one directory, with ETag and Last-Modified.
/// Paths are resolved conservatively: no `..`, no encoded slashes, no NUL, no dotfiles, no directory
/// listings, and symlinks must resolve inside the root.
public struct StaticFiles: Sendable {
    /// The root as given.
    public let root: String
    /// Request path → file relative to the root, e.g. "/" → "index.html"; checked first.
    public let aliases: [String: String]
    /// The root with symlinks resolved; every served file's real path lies under it.
    let realRoot: String?

    /// Serves files under `root`; `aliases` maps request paths to files relative to it.
    public init(root: String, aliases: [String: String] = [:]) {
        self.root = root
        self.aliases = aliases
        self.realRoot = Self.realPath(root)
    }

    /// What serving a path came to.
    enum Outcome {
        case file(HTTPResponse)
        case notFound
    }

    /// Answers a GET or HEAD for `rawPath` (still percent-encoded, no query).
    func respond(rawPath: Substring, decodedPath: String, request headers: [(name: String, value: String)]) -> Outcome {
        guard let realRoot, let relative = relativePath(rawPath: rawPath, decodedPath: decodedPath) else { return .notFound }
        guard let real = Self.realPath(realRoot + "/" + relative), real.hasPrefix(realRoot + "/") else { return .notFound }
        let descriptor = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return .notFound }
        let file = OpenFile(descriptor: descriptor)
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return .notFound }

        let size = Int(info.st_size)
        let modified = Int(info.st_mtim.tv_sec)
        let etag = "\"\(String(size, radix: 16))-\(String(modified, radix: 16))-\(String(Int(info.st_mtim.tv_nsec), radix: 16))\""
        let lastModified = HTTPDate.format(modified)
        var response = HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", Self.contentType(forPath: real)),
                ("ETag", etag),
                ("Last-Modified", lastModified),
                // Revalidate every time: the dashboard changes with deployments and ETags make that cheap.
                ("Cache-Control", "no-cache"),
            ])
        if Self.notModified(etag: etag, modified: modified, headers: headers) {
            response.status = 304
            response.headers.removeFirst()
            return .file(response)
        }
        file.size = size
        response.file = file
        return .file(response)
    }

    /// The file path below the root for a request path, or nil when the path is not safe to serve.
    func relativePath(rawPath: Substring, decodedPath: String) -> String? {
        if let alias = aliases[decodedPath] { return alias }
        var parts: [String] = []
        let segments = PercentEncoding.rawSegments(of: rawPath)
        guard !segments.isEmpty else { return nil }
        for segment in segments {
            // Decode each segment on its own, so "%2F" cannot smuggle a separator past the checks.
            guard let decoded = PercentEncoding.decode(segment), !decoded.isEmpty else { return nil }
            for byte in decoded.utf8 where byte == 0 || byte == 0x2F || byte == 0x5C {
                return nil
            }
            // Rejects ".", "..", and hidden files such as ".env" or ".git".
            if decoded.hasPrefix(".") { return nil }
            parts.append(decoded)
        }
        return parts.joined(separator: "/")
    }

    /// If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
    static func notModified(etag: String, modified: Int, headers: [(name: String, value: String)]) -> Bool {
        if let header = headers.first(where: { $0.name.equalsIgnoringASCIICase("if-none-match") }) {
            for candidate in header.value.split(separator: ",") {
                var tag = candidate.trimmingCharacters(in: .whitespaces)
                if tag == "*" { return true }
                if tag.hasPrefix("W/") { tag.removeFirst(2) }
                if tag == etag { return true }
            }
            return false
        }
        if let header = headers.first(where: { $0.name.equalsIgnoringASCIICase("if-modified-since") }),
            let since = HTTPDate.parse(header.value)
        {
            return modified <= since
        }
        return false
    }

    /// Content types by extension; unknown files are served as opaque bytes.
    static func contentType(forPath path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return "application/octet-stream" }
        switch path[path.index(after: dot)...].lowercased() {
        case "html", "htm": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "json", "map": return "application/json"
        case "webmanifest": return "application/manifest+json"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "woff2": return "font/woff2"
        case "woff": return "font/woff"
        case "txt": return "text/plain; charset=utf-8"
        default: return "application/octet-stream"
        }
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// An open file descriptor that is closed exactly once: by MHD after sending, or here if never sent.
///
/// `@unchecked Sendable`: it is created and consumed on the one worker thread answering the request.
final class OpenFile: @unchecked Sendable {
    private(set) var descriptor: Int32
    var size = 0

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// Gives the descriptor away (MHD_create_response_from_fd closes it with the response).
    func take() -> Int32 {
        defer { descriptor = -1 }
        return descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }
}

/// IMF-fixdate formatting and parsing (`Sun, 06 Nov 1994 08:49:37 GMT`), by hand: no locale, and none of
/// DateFormatter's cost (an ICU formatter made per call was 8 % of the service's CPU while it sent mail).
public enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `seconds` since 1970 in UTC, the zone written as `zone` (`GMT` for HTTP; mail's RFC 5322 writes `+0000`).
    public static func format(_ seconds: Int, zone: String = "GMT") -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) \(zone)"
    }

    /// Parses the IMF-fixdate form only (the one RFC 9110 requires senders to use); nil otherwise.
    public static func parse(_ text: String) -> Int? {
        // "Sun, 06 Nov 1994 08:49:37 GMT": fixed positions, so no locale-dependent parser is needed.
        let bytes = Array(text.utf8)
        guard bytes.count == 29, bytes[3] == 0x2C, bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20, bytes[16] == 0x20,
            bytes[19] == 0x3A, bytes[22] == 0x3A, bytes[25] == 0x20, bytes[26...] == [0x47, 0x4D, 0x54]
        else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for byte in bytes[range] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int32(byte - 0x30)
            }
            return value
        }
        let monthName = String(decoding: bytes[8..<11], as: UTF8.self)
        guard let month = months.firstIndex(of: monthName), let day = number(5..<7), let year = number(12..<16),
            let hour = number(17..<19), let minute = number(20..<22), let second = number(23..<25)
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = Int32(month)
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Int(timegm(&parts))
    }
}
