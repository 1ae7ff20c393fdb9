/// What an API client may reach (api.md v1.1): the cases it opened, and another open case only with that case's
/// access code; a finished case takes nothing more.
public enum ClientFilingScope {
    /// The answer to "may this client file here?".
    public enum Verdict: Sendable, Equatable {
        /// File it.
        case allowed
        /// 404: the client may not know this case.
        case notFound
        /// 409 `case_not_open`: the case is finished, as for customers.
        case notOpen
    }

    /// A client that neither opened the case nor sent its access code learns nothing (404); one that may know it is
    /// told a finished case takes no more evidence.
    public static func verdict(openedByCaller: Bool, accessCodeMatches: Bool, state: CaseState) -> Verdict {
        guard openedByCaller || accessCodeMatches else { return .notFound }
        return state.isOpen ? .allowed : .notOpen
    }
}
