import Foundation

/// The listening socket, opened here rather than by MHD so bind errors name their cause.
enum ListeningSocket {
    static func open(host: String, port: Int) throws -> Int32 {
        guard (0...65535).contains(port) else { throw HTTPServerError.invalidConfiguration("port \(port) is out of range") }
        var storage = sockaddr_storage()
        let length: socklen_t
        let family: Int32
        var v4 = in_addr()
        var v6 = in6_addr()
        let name = host == "localhost" ? "127.0.0.1" : host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if inet_pton(AF_INET, name, &v4) == 1 {
            family = AF_INET
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                address.pointee.sin_family = sa_family_t(AF_INET)
                address.pointee.sin_port = in_port_t(UInt16(port).bigEndian)
                address.pointee.sin_addr = v4
            }
        } else if inet_pton(AF_INET6, name, &v6) == 1 {
            family = AF_INET6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = in_port_t(UInt16(port).bigEndian)
                address.pointee.sin6_addr = v6
            }
        } else {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            hints.ai_flags = AI_PASSIVE
            var result: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(name, String(port), &hints, &result) == 0, let first = result else {
                throw HTTPServerError.cannotResolve(host: host)
            }
            defer { freeaddrinfo(result) }
            family = first.pointee.ai_family
            length = first.pointee.ai_addrlen
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.baseAddress!.copyMemory(from: first.pointee.ai_addr, byteCount: Int(first.pointee.ai_addrlen))
            }
        }

        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HTTPServerError.socketFailed(operation: "socket", host: host, port: port, errno: errno) }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        if bound != 0 {
            let code = errno
            close(descriptor)
            if code == EADDRINUSE { throw HTTPServerError.addressInUse(host: host, port: port) }
            throw HTTPServerError.socketFailed(operation: "bind", host: host, port: port, errno: code)
        }
        // Several worker threads accept from this socket: it must never block one of them.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        guard listen(descriptor, SOMAXCONN) == 0 else {
            let code = errno
            close(descriptor)
            throw HTTPServerError.socketFailed(operation: "listen", host: host, port: port, errno: code)
        }
        return descriptor
    }

    /// The local port of a bound socket.
    static func port(of descriptor: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard ok == 0 else { return 0 }
        return withUnsafeBytes(of: storage) { raw in
            if storage.ss_family == sa_family_t(AF_INET6) {
                return Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            }
            return Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
        }
    }

    /// The IP address of a peer as text ("" when unknown).
    static func text(of address: UnsafePointer<sockaddr>?) -> String {
        guard let address else { return "" }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            var ip = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &ip, &buffer, socklen_t(buffer.count)) != nil else { return "" }
        case AF_INET6:
            var ip = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            guard inet_ntop(AF_INET6, &ip, &buffer, socklen_t(buffer.count)) != nil else { return "" }
        default:
            return ""
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
