import Foundation
import InboundMail

/// A throwaway Dovecot (Debian's `dovecot-imapd`) for the inbound-mail tests: started as an unprivileged process
/// (the `dovecot` user when the tests run as root, else the current user) from a config file of its own (`-c`),
/// on two free loopback ports (`imap://` with STARTTLS, `imaps://`), with passwd-file users, Maildirs under a
/// scratch directory and a certificate from a throwaway CA. Mail arrives as a mail server delivers it: through
/// `dovecot-lda`, or written into the user's Maildir (`tmp/`, then renamed into `new/`).
public final class TestDovecot: @unchecked Sendable {
    /// The scratch directory (config, certificates, Maildirs, log); removed by `stop()`.
    public let directory: String
    public let imapPort: Int
    public let imapsPort: Int
    /// The CA certificate that signed the server's: what a client verifies it with.
    public let caFile: String
    /// A CA certificate that did not sign it: verification against it must fail.
    public let otherCAFile: String
    /// User name → password (the passwd-file).
    public let users: [String: String]
    private let masterPID: pid_t
    /// Who runs Dovecot and owns its files, when the tests run as root.
    private let owner: (uid: uid_t, gid: gid_t)?

    /// The default user: an e-mail address as login, a password with characters a URL must encode.
    public static let defaultUsers = ["cases@reclaim.test": "s3cret p@ss/%x"]

    /// `tls: false` serves plain `imap://` only (`ssl = no`, no STARTTLS offered, no `imaps://` port: `imapsPort` is
    /// 0), for a `reclaim serve` process, which verifies a server against the system's CAs, never the throwaway one.
    public init(users: [String: String] = TestDovecot.defaultUsers, tls: Bool = true) throws {
        self.users = users
        directory = NSTemporaryDirectory() + "reclaim-dovecot-" + UUID().uuidString.prefix(8)
        let fileManager = FileManager.default
        for folder in ["", "/run", "/state", "/home", "/staging"] {
            try fileManager.createDirectory(atPath: directory + folder, withIntermediateDirectories: true)
        }
        caFile = directory + "/ca.crt"
        otherCAFile = directory + "/other-ca.crt"
        try Self.makeCertificates(in: directory)

        let runAs: String
        if getuid() == 0 {
            guard let entry = getpwnam("dovecot") else { throw TestDovecotError("no dovecot user (install dovecot-imapd)") }
            owner = (entry.pointee.pw_uid, entry.pointee.pw_gid)
            runAs = "dovecot"
        } else {
            owner = nil
            runAs = String(cString: getpwuid(getuid()).pointee.pw_name)
        }
        let group =
            owner.flatMap { getgrgid($0.gid) }.map { String(cString: $0.pointee.gr_name) }
            ?? String(cString: getgrgid(getgid()).pointee.gr_name)
        let uid = owner?.uid ?? getuid()

        try users.map { "\($0.key):{PLAIN}\($0.value)::::::" }.joined(separator: "\n").appending("\n")
            .write(toFile: directory + "/users", atomically: true, encoding: .utf8)
        var started: (pid: pid_t, imap: Int, imaps: Int)?
        var lastError = ""
        // A port found free may be taken before Dovecot binds it: try again with others.
        for _ in 0..<5 where started == nil {
            let imap = Self.freeLoopbackPort()
            let imaps = tls ? Self.freeLoopbackPort() : 0
            try Self.configuration(directory: directory, user: runAs, group: group, uid: uid, imap: imap, imaps: imaps, tls: tls)
                .write(toFile: directory + "/dovecot.conf", atomically: true, encoding: .utf8)
            if let owner { try Self.chown(directory, owner) }
            let (status, output) = try Self.run(Self.asOwner(["/usr/sbin/dovecot", "-c", directory + "/dovecot.conf"], root: owner != nil))
            if status == 0, let pid = Self.waitForPID(directory + "/run/master.pid"), Self.waitForListener(imap), !tls || Self.waitForListener(imaps)
            {
                started = (pid, imap, imaps)
            } else {
                lastError = output + ((try? String(contentsOfFile: directory + "/dovecot.log", encoding: .utf8)) ?? "")
                if let pid = Self.waitForPID(directory + "/run/master.pid", seconds: 0.1) { Self.terminate(pid) }
            }
        }
        guard let started else {
            try? fileManager.removeItem(atPath: directory)
            throw TestDovecotError("dovecot did not start: \(lastError)")
        }
        (masterPID, imapPort, imapsPort) = started
    }

    deinit { stop() }

    /// The mailbox URL for `user`, credentials percent-encoded.
    public func url(user: String? = nil, tls: Bool, mailbox: String = "INBOX", password: String? = nil) -> String {
        let user = user ?? users.keys.sorted()[0]
        let secret = password ?? users[user] ?? ""
        return "\(tls ? "imaps" : "imap")://\(Self.encoded(user)):\(Self.encoded(secret))@127.0.0.1:\(tls ? imapsPort : imapPort)/\(mailbox)"
    }

    /// Delivers one message through `dovecot-lda`, as an MTA hands mail to Dovecot (into `mailbox`, created if need be).
    public func deliver(_ message: [UInt8], to user: String? = nil, mailbox: String = "INBOX") throws {
        let user = user ?? users.keys.sorted()[0]
        let (status, output) = try Self.run(
            Self.asOwner(
                [
                    "/usr/lib/dovecot/dovecot-lda", "-c", directory + "/dovecot.conf", "-d", user,
                    "-f", "sender@example.net", "-m", mailbox,
                ], root: owner != nil), input: message)
        guard status == 0 else { throw TestDovecotError("dovecot-lda exited \(status): \(output)") }
    }

    /// Runs `doveadm` on this Dovecot (e.g. `["mailbox", "delete", "-u", user, "Replies"]`).
    public func doveadm(_ arguments: [String]) throws {
        let (status, output) = try Self.run(Self.asOwner(["/usr/bin/doveadm", "-c", directory + "/dovecot.conf"] + arguments, root: owner != nil))
        guard status == 0 else { throw TestDovecotError("doveadm \(arguments.joined(separator: " ")) exited \(status): \(output)") }
    }

    /// Delivers many messages at once into `user`'s INBOX as a Maildir-writing MTA does: each file written in a
    /// staging Maildir, then renamed into `new/` (Dovecot notices new files itself).
    public func deliverToMaildir(_ messages: [[UInt8]], to user: String? = nil) throws {
        let user = user ?? users.keys.sorted()[0]
        let inbox = Maildir(path: directory + "/home/\(user)/Maildir")
        let staging = Maildir(path: directory + "/staging")
        try inbox.create()
        try staging.create()
        if let owner { try Self.chown(directory + "/home", owner) }
        for message in messages {
            let entry = try staging.deliver(message)
            let path = staging.path + "/new/" + entry.name
            if let owner, Foundation.chown(path, owner.uid, owner.gid) != 0 { throw TestDovecotError("chown \(path) failed") }
            guard rename(path, inbox.path + "/new/" + entry.name) == 0 else { throw TestDovecotError("rename into \(inbox.path) failed") }
        }
    }

    /// Stops Dovecot and removes the scratch directory.
    public func stop() {
        if Self.isAlive(masterPID) { Self.terminate(masterPID) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: - Setting up

    static func configuration(directory: String, user: String, group: String, uid: uid_t, imap: Int, imaps: Int, tls: Bool = true) -> String {
        let ssl =
            tls
            ? """
            ssl = yes
            ssl_cert = <\(directory)/server.crt
            ssl_key = <\(directory)/server.key
            ssl_min_protocol = TLSv1.2
            """ : "ssl = no"
        let imapsListener =
            tls
            ? """
              inet_listener imaps {
                address = 127.0.0.1
                port = \(imaps)
                ssl = yes
              }
            """ : ""
        return """
            # Throwaway Dovecot for Reclaim's tests (TestDovecot.swift): loopback only, one unprivileged user, no chroot.
            protocols = imap
            listen = 127.0.0.1
            base_dir = \(directory)/run
            state_dir = \(directory)/state
            log_path = \(directory)/dovecot.log
            default_internal_user = \(user)
            default_internal_group = \(group)
            default_login_user = \(user)
            first_valid_uid = 1
            first_valid_gid = 0
            \(ssl)
            disable_plaintext_auth = no
            auth_mechanisms = plain login
            mail_fsync = never
            mail_max_userip_connections = 100
            passdb {
              driver = passwd-file
              args = scheme=PLAIN username_format=%u \(directory)/users
            }
            userdb {
              driver = static
              args = uid=\(uid) gid=\(group) home=\(directory)/home/%u
            }
            mail_location = maildir:~/Maildir
            lda_mailbox_autocreate = yes
            service anvil {
              chroot =
            }
            service imap-login {
              chroot =
              inet_listener imap {
                address = 127.0.0.1
                port = \(imap)
              }
            \(imapsListener)
            }
            service pop3-login {
              chroot =
            }
            service submission-login {
              chroot =
            }

            """
    }

    /// A CA, a server certificate for 127.0.0.1 and localhost signed by it, and a second, unrelated CA (P-256 keys).
    static func makeCertificates(in directory: String) throws {
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n".write(
            toFile: directory + "/server.ext", atomically: true, encoding: .utf8)
        func file(_ name: String) -> String { directory + "/" + name }
        let authority = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]
        let steps: [[String]] = [
            ["req", "-x509"] + key + ["-days", "2", "-subj", "/CN=Reclaim test CA", "-keyout", file("ca.key"), "-out", file("ca.crt")] + authority,
            ["req"] + key + ["-subj", "/CN=127.0.0.1", "-keyout", file("server.key"), "-out", file("server.csr")],
            [
                "x509", "-req", "-in", file("server.csr"), "-CA", file("ca.crt"), "-CAkey", file("ca.key"), "-CAcreateserial",
                "-CAserial", file("ca.srl"), "-days", "2", "-out", file("server.crt"), "-extfile", file("server.ext"),
            ],
            ["req", "-x509"] + key + ["-days", "2", "-subj", "/CN=Reclaim test CA", "-keyout", file("other-ca.key"), "-out", file("other-ca.crt")]
                + authority,
        ]
        for arguments in steps {
            let (status, output) = try run(["/usr/bin/openssl"] + arguments)
            guard status == 0 else { throw TestDovecotError("openssl \(arguments[0]) failed: \(output)") }
        }
    }

    static func asOwner(_ command: [String], root: Bool) -> [String] {
        root ? ["/usr/sbin/runuser", "-u", "dovecot", "--"] + command : command
    }

    static func chown(_ path: String, _ owner: (uid: uid_t, gid: gid_t)) throws {
        let (status, output) = try run(["/bin/chown", "-R", "\(owner.uid):\(owner.gid)", path])
        // A file dovecot removed during the walk (its uidlist lock) is no failure: there is nothing left to own.
        let lines = output.split(separator: "\n")
        let vanishedOnly = !lines.isEmpty && lines.allSatisfy { $0.hasSuffix("No such file or directory") }
        guard status == 0 || vanishedOnly else { throw TestDovecotError("chown failed: \(output)") }
    }

    /// Runs a command to its end: its exit status and what it wrote (stdout and stderr together, through a file, so
    /// a daemon it leaves behind holds nothing of ours). posix_spawn rather than Process: the child gets an empty
    /// signal mask (the test process may block SIGTERM, and Dovecot must obey it) and is reaped here.
    @discardableResult
    static func run(_ command: [String], input: [UInt8] = []) throws -> (Int32, String) {
        let scratch = NSTemporaryDirectory() + "reclaim-run-" + UUID().uuidString
        let inputFile = scratch + ".in"
        let outputFile = scratch + ".out"
        guard FileManager.default.createFile(atPath: inputFile, contents: Data(input)) else { throw TestDovecotError("cannot write \(inputFile)") }
        defer {
            unlink(inputFile)
            unlink(outputFile)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputFile, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        var defaults = sigset_t()
        sigemptyset(&empty)
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGUSR1] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let arguments = command.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, &attributes, arguments, environ)
        guard spawned == 0 else { throw TestDovecotError("cannot start \(command[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? ""
        // WIFEXITED / WEXITSTATUS, which Swift does not import (a signal's death reads as 128 + its number).
        let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (exitStatus, output)
    }

    static func waitForPID(_ file: String, seconds: Double = 10) -> pid_t? {
        let end = Date().addingTimeInterval(seconds)
        repeat {
            if let text = try? String(contentsOfFile: file, encoding: .utf8), let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return pid
            }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < end
        return nil
    }

    static func waitForListener(_ port: Int, seconds: Double = 10) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        repeat {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopback(port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if connected == 0 { return true }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < end
        return false
    }

    /// SIGKILL to the master's process group (it calls setsid, so the group is this Dovecot and nothing else): a
    /// throwaway server has nothing to flush, and Dovecot's own shutdown takes seconds. Waits until it is gone.
    static func terminate(_ pid: pid_t) {
        guard pid > 1, getpgid(pid) == pid else {
            kill(pid, SIGKILL)
            return
        }
        kill(-pid, SIGKILL)
        let end = Date().addingTimeInterval(10)
        while isAlive(pid) && Date() < end { Thread.sleep(forTimeInterval: 0.01) }
    }

    /// Whether `pid` runs (a zombie waiting for its parent to reap it does not).
    static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return kill(pid, 0) == 0 }
        return !stat[close...].dropFirst(2).hasPrefix("Z")
    }

    static func loopback(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return address
    }

    /// A loopback port nobody listens on right now.
    static func freeLoopbackPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")) ?? text
    }
}

/// TestDovecot could not do what was asked.
public struct TestDovecotError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
