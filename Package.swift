// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Reclaim",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "reclaim", targets: ["reclaim"]),
    ],
    targets: [
        // C libraries: one system-library module each, imported by exactly one Swift module.
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        // JSON-lines logging, passed in to every library that logs.
        .target(name: "Logging"),

        // Wrappers: the only importers of their C modules.
        .target(name: "Postgres", dependencies: ["CPostgres"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "Crypto", "Logging"]),
        .target(name: "Crypto", dependencies: ["CSodium", "COpenSSL"]),
        // HTTP POST and SMTP send over libcurl; the only importer of CCurl.
        .target(name: "Curl", dependencies: ["CCurl"]),

        // Received mail: a MIME parser for real mail (pure, Foundation and glibc's iconv only) and the Maildir reader.
        .target(name: "InboundMail"),

        // The domain (no I/O), storage, the HTTP API and the executable.
        .target(name: "ReclaimCore"),
        .target(name: "ReclaimStore", dependencies: ["Postgres", "ReclaimCore", "Crypto", "Logging"]),
        // One function per case operation (load, decide with ReclaimCore, store, append typed events); domain errors only.
        .target(name: "ReclaimOperations", dependencies: ["ReclaimCore", "ReclaimStore", "InboundMail", "Crypto", "Postgres", "Logging"]),
        // The outbox's delivery worker: mail (MIME over SMTP, or .eml files) and Standard Webhooks, over Curl.
        .target(name: "Notifications", dependencies: ["Curl", "InboundMail", "HTTPServer", "ReclaimCore", "ReclaimStore", "ReclaimOperations", "Crypto", "Postgres", "Logging"]),
        .target(name: "ReclaimAPI", dependencies: ["ReclaimCore", "ReclaimStore", "ReclaimOperations", "Notifications", "HTTPServer", "Crypto", "Postgres", "Logging"]),
        .executableTarget(name: "reclaim", dependencies: ["ReclaimAPI", "ReclaimOperations", "ReclaimStore", "ReclaimCore", "Crypto", "HTTPServer", "Postgres", "Logging"]),

        // Shared by the integration tests: TestDatabase (template + clone per test), a raw HTTP client, a throwaway Dovecot.
        .target(name: "ReclaimTestSupport", dependencies: ["InboundMail", "Postgres", "ReclaimStore", "ReclaimOperations", "ReclaimAPI", "HTTPServer", "Crypto", "Logging"]),

        .testTarget(name: "LoggingTests", dependencies: ["Logging"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "ReclaimTestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "ReclaimTestSupport"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto"]),
        .testTarget(name: "ReclaimCoreTests", dependencies: ["ReclaimCore"]),
        .testTarget(name: "ReclaimStoreTests", dependencies: ["ReclaimStore", "ReclaimTestSupport", "Crypto", "Postgres", "ReclaimCore"]),
        .testTarget(name: "ReclaimOperationsTests", dependencies: ["ReclaimOperations", "ReclaimTestSupport", "ReclaimStore", "ReclaimCore", "Crypto", "Postgres"]),
        .testTarget(name: "NotificationsTests", dependencies: ["Notifications", "Curl", "InboundMail", "ReclaimTestSupport", "ReclaimAPI", "ReclaimOperations", "ReclaimStore", "ReclaimCore", "Crypto", "Postgres", "Logging"]),
        .testTarget(name: "InboundMailTests", dependencies: ["InboundMail", "Curl", "ReclaimTestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "ReclaimAPITests", dependencies: ["ReclaimAPI", "ReclaimTestSupport", "HTTPServer", "Postgres", "Crypto"]),
    ],
    swiftLanguageModes: [.v6]
)
