import Foundation

/// The call, verified both ways (api.md v1.3): each open case has a desk code (the agents show it, the customer checks
/// it) and a customer code (the customer reads it out, the agent checks it), six digits that change every 10 minutes;
/// the previous one is still accepted for one more minute. A caller who reads the customer code, or a one-time code
/// mailed to the contact address, is verified for 15 minutes, to the agent who checked it.
public enum CallCodes {
    /// Which of the two codes.
    public enum Role: String, Sendable, CaseIterable {
        /// Shown to agents and to the customer: "if we call you, we will tell you this code".
        case desk
        /// Shown only to the customer: "if you call us, read us this code".
        case customer
    }

    /// How a caller was verified, as the `caller_verified` event says.
    public enum Method: String, Sendable, CaseIterable {
        /// The customer read the customer code from their status page (they hold the access code).
        case statusCode = "status_code"
        /// The customer read a one-time code mailed to the contact address (they read that mailbox).
        case mailedCode = "mailed_code"
    }

    /// Digits of every call code (and of a mailed one-time code).
    public static let digits = 6
    /// How long one code is shown.
    public static let period: TimeInterval = 600
    /// How long the previous code is still accepted once the next is shown (a customer reading it as it changes).
    public static let grace: TimeInterval = 60
    /// How long a verified caller stays verified.
    public static let verificationLifetime: TimeInterval = 900
    /// How long a mailed one-time code works.
    public static let mailedCodeLifetime: TimeInterval = 600
    /// The lowest tier that verifies a caller.
    public static let verifyMinimumTier = Tier.tier1
    /// The lowest tier that acts on a verified call on a case with an uncleared risk signal.
    public static let atRiskMinimumTier = Tier.tier2

    /// The time step shown at `date` (RFC 6238's counter with a 600 s step).
    public static func step(at date: Date) -> UInt64 {
        let steps = (date.timeIntervalSince1970 / period).rounded(.down)
        return steps > 0 ? UInt64(steps) : 0
    }

    /// When the code shown at `date` gives way to the next one.
    public static func validUntil(at date: Date) -> Date {
        Date(timeIntervalSince1970: Double(step(at: date) + 1) * period)
    }

    /// The steps whose codes are accepted at `date`: the current one, and the previous one during its grace minute.
    public static func acceptedSteps(at date: Date) -> [UInt64] {
        let now = step(at: date)
        let intoStep = date.timeIntervalSince1970 - Double(now) * period
        return now > 0 && intoStep < grace ? [now, now - 1] : [now]
    }

    /// The six digits of a code as typed or read out ("482 109", "482-109", full-width digits), or nil.
    public static func normalize(_ typed: String) -> String? {
        guard typed.utf8.count <= 64 else { return nil }
        var out = ""
        for scalar in typed.precomposedStringWithCompatibilityMapping.unicodeScalars {
            if scalar.properties.isWhitespace || CaseNumber.isDash(scalar) { continue }
            guard ("0"..."9").contains(scalar) else { return nil }
            out.unicodeScalars.append(scalar)
            if out.count > digits { return nil }
        }
        return out.count == digits ? out : nil
    }

    /// Whether a call is verified now: its latest verification by this agent, still within its lifetime.
    public static func isVerified(until: Date?, now: Date) -> Bool { until.map { $0 > now } ?? false }

    /// Why an agent may not act on a call now (read out a new access code, correct the contact address or phone).
    public enum Refusal: Error, Sendable, Equatable {
        /// No verification by this agent is in force.
        case notVerified
        /// The case has an uncleared risk signal: the agent must be at least this tier.
        case needsTier(Tier)
    }

    /// nil when `actorTier` may act on this call; the refusal otherwise (the tier first: it does not change by verifying).
    public static func gate(verifiedUntil: Date?, now: Date, atRisk: Bool, actorTier: Tier) -> Refusal? {
        if atRisk, !actorTier.isAtLeast(atRiskMinimumTier) { return .needsTier(atRiskMinimumTier) }
        return isVerified(until: verifiedUntil, now: now) ? nil : .notVerified
    }
}
