import Crypto
import Foundation
import ReclaimCore

/// The per-case reply address of every customer mail (api.md v1.2 "The conversation"): the reply address with a
/// `+token` in its local part, `cases+482109375512-k3j9x2ab@reclaim.example`. The token is the case number and a keyed
/// MAC of it (HMAC-SHA-256 under the key file's `access_code` key, domain-separated, its first 40 bits in lower-case
/// base32): it names the case, a phone's mail app keeps it whole, and no one without the key can make one for another
/// case (the worker's per-sender limit keeps guessing at 2^40 out of reach).
public enum ReplyToken {
    /// Base32 characters of the MAC (5 bits each): 40 bits.
    public static let macCharacters = 8

    /// The token for a case: `<12 digits>-<mac>`.
    public static func token(for number: CaseNumber, keys: KeyFile) -> String {
        number.digits + "-" + mac(number, key: keys.activeKey(for: .accessCode).key)
    }

    /// `base` (`cases@reclaim.example`) with the case's token as its `+tag`: the `Reply-To` of the case's mail.
    public static func address(_ base: String, for number: CaseNumber, keys: KeyFile) -> String {
        guard let at = base.lastIndex(of: "@") else { return base }
        let local = base[..<at].split(separator: "+", maxSplits: 1).first.map(String.init) ?? String(base[..<at])
        return local + "+" + token(for: number, keys: keys) + String(base[at...])
    }

    /// The case a recipient address names with a valid token, or nil: the local part must be `base`'s (before any
    /// `+`) with a `+token`, compared without case (mail servers may fold it); any domain (an alias may rewrite it;
    /// the MAC is what cannot be forged). Every `access_code` key of the file is tried, so rotation keeps old replies.
    public static func caseNumber(in address: String, base: String, keys: KeyFile) -> CaseNumber? {
        guard let at = address.lastIndex(of: "@"), let baseAt = base.lastIndex(of: "@") else { return nil }
        let baseLocal = (base[..<baseAt].split(separator: "+", maxSplits: 1).first.map(String.init) ?? "").lowercased()
        let local = address[..<at].lowercased()
        guard !baseLocal.isEmpty, local.hasPrefix(baseLocal + "+") else { return nil }
        let token = local.dropFirst(baseLocal.count + 1)
        let parts = token.split(separator: "-")
        guard parts.count == 2, parts[1].count == macCharacters, let number = try? CaseNumber(parsing: String(parts[0])),
            number.digits == parts[0]
        else { return nil }
        let given = Array(parts[1].utf8)
        for entry in keys.entries(for: .accessCode) where ConstantTime.equals(Array(mac(number, key: entry.key).utf8), given) {
            return number
        }
        return nil
    }

    private static func mac(_ number: CaseNumber, key: SymmetricKey) -> String {
        let full = HMACSHA256.authenticate(message: Array("reclaim reply token v1:\(number.digits)".utf8), key: key)
        return String(Base32.encode(full.prefix(5)).lowercased().prefix(macCharacters))
    }
}
