package import Foundation

/// What a refresh does with the session it read (identity-toolkit.md §3.3, §4.17): a pure decision, so the
/// store reads, asks, and writes the answer.
package enum RefreshDecision: Sendable, Equatable {
    /// The presented token is the current one: the session moves to the next generation, issued now.
    case rotate
    /// The previous token, presented within the grace window (a client that did not see the
    /// rotation's answer): the current generation is handed out again, nothing changes.
    case tolerate
    /// An older token, or the previous one after the grace window: a stolen token is being
    /// replayed, and the session is revoked.
    case reuse
}

package enum RefreshRules {
    /// The decision for a refresh token of generation `presented`, whose MAC checked out against
    /// `session` or not (`macValid`), for `session` and its owner `user` as read at `now`.
    ///
    /// Refusals come first, in Firebase's order: a token that names no session or fails its MAC is
    /// `INVALID_REFRESH_TOKEN`; a deleted owner `USER_NOT_FOUND`; a disabled one `USER_DISABLED`;
    /// a revoked or expired session `TOKEN_EXPIRED`.
    package static func decide(
        presented: Int64, macValid: Bool, session: SessionRecord?, user: UserRecord?, now: Date, graceSeconds: TimeInterval
    ) throws(AccountError) -> RefreshDecision {
        guard let session, macValid else { throw AccountError(.invalidRefreshToken) }
        guard let user, !session.userDeleted else { throw AccountError(.userNotFound) }
        if user.disabled { throw AccountError(.userDisabled) }
        if session.revokedAt != nil || (session.expiresAt.map { $0 <= now } ?? false) { throw AccountError(.tokenExpired) }
        if presented == session.generation { return .rotate }
        if presented == session.generation - 1, now.timeIntervalSince(session.generationIssuedAt) <= graceSeconds {
            return .tolerate
        }
        return .reuse
    }
}
