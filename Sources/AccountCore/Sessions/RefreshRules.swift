package import Foundation

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
