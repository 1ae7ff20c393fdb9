import Foundation

/// Why a case may be the thief's and not the victim's (api.md v1.2, "The thief on the phone"): each word is a fact the
/// service noticed or an agent raised. Agents only: the customer never sees a signal.
public enum RiskSignal: String, Sendable, CaseIterable, Codable {
    /// A serial or IMEI of this case is on another account's case, or on file for another account.
    case deviceClaimedElsewhere = "device_claimed_elsewhere"
    /// A document on this case has the SHA-256 of a document on a case of another account.
    case documentReused = "document_reused"
    /// A mail from the case's rescue address (the thief's) arrived.
    case mailFromRescueAddress = "mail_from_rescue_address"
    /// Someone used a "this wasn't me" link of this case.
    case repudiated
    /// An agent flagged the case (suspected impersonation, coercion, a story that does not hold).
    case flagged
    /// Another case shares this case's account or a device and names a different customer (api.md v1.3 "One account,
    /// one story"): one of the two is not the owner's.
    case parallelCase = "parallel_case"
    /// The contact address, the rescue facts or the devices were corrected while an unlock step waited for its time: the
    /// steps were cancelled and a second person schedules them again (api.md v1.3 "The cooling-off holds").
    case contactChanged = "contact_changed"
    /// Wrong call codes (the customer code, or a mailed one-time code) spent the case's look-up budget: someone who is
    /// not the customer may be calling as them (api.md v1.3 "The call, verified both ways").
    case callerCodeGuessed = "caller_code_guessed"
}

/// Four eyes on a case at risk: while a signal is uncleared nobody approves it or records its unlock steps, and the
/// agent who cleared its signals may not be the one who then does (a second person does).
public enum FourEyes {
    /// Why approving or recording an unlock step is refused now.
    public enum Refusal: Error, Sendable, Equatable {
        /// These signals are raised and not cleared.
        case riskUncleared([RiskSignal])
        /// The actor cleared this case's signals.
        case clearedBySameAgent
    }

    /// The lowest tier that clears a case's signals (tier 3 and engineering).
    public static let clearMinimumTier: Tier = .tier3
    /// The lowest tier that flags a case.
    public static let flagMinimumTier: Tier = .tier1

    /// nil when `actor` may approve the case or record its unlock steps; the refusal otherwise. `uncleared`: the
    /// signals raised and not cleared; `clearers`: every actor who cleared a signal of the case.
    public static func check(actor: String, uncleared: [RiskSignal], clearers: Set<String>) -> Refusal? {
        if !uncleared.isEmpty {
            let order = RiskSignal.allCases
            return .riskUncleared(Array(Set(uncleared)).sorted { order.firstIndex(of: $0)! < order.firstIndex(of: $1)! })
        }
        if clearers.contains(actor) { return .clearedBySameAgent }
        return nil
    }

    /// The other cases named by a signal's detail, as the agents read it: "Also claimed on case 1234…, 5678…".
    public static func detail(_ signal: RiskSignal, otherCases: [String], onFileElsewhere: Bool = false) -> String {
        let cases = otherCases.sorted()
        let list = cases.count == 1 ? "case \(cases[0])" : "cases \(cases.joined(separator: ", "))"
        switch signal {
        case .deviceClaimedElsewhere:
            var parts: [String] = []
            if !cases.isEmpty { parts.append("a device of this case is also claimed on \(list), of another account") }
            if onFileElsewhere { parts.append("a device of this case is on file for another account") }
            let text = parts.joined(separator: "; ")
            return text.prefix(1).uppercased() + text.dropFirst() + "."
        case .documentReused:
            return "A document of this case is the same file as one on \(list), of another account."
        case .parallelCase:
            return "Another case on the same account or device names a different customer: \(list)."
        case .mailFromRescueAddress, .repudiated, .flagged, .contactChanged, .callerCodeGuessed:
            return cases.isEmpty ? "" : "See \(list)."
        }
    }
}
