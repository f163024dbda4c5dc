package import Foundation

package enum RefreshRules {
    /// The decision for a refresh token of generation `presented`, whose MAC checked out against
    /// `session` or not (`macValid`), for `session` and its owner `user` as read at `now`.
    ///
    /// Refusals come first, in Firebase's order: a token that names no session or fails its MAC is
    /// `INVALID_REFRESH_TOKEN`; a deleted owner `USER_NOT_FOUND`; a disabled one `USER_DISABLED`;
    /// a revoked or expired session `TOKEN_EXPIRED`. Then the generation rules of §3.3, and one of
    /// ours for the generations it leaves out: a generation later than the session's is the
    /// current one.
    package static func decide(
        presented: Int64, macValid: Bool, session: SessionRecord?, user: UserRecord?, now: Date, graceSeconds: TimeInterval
    ) throws(AccountError) -> RefreshDecision {
        guard let session, macValid else { throw AccountError(.invalidRefreshToken) }
        guard let user, !session.userDeleted else { throw AccountError(.userNotFound) }
        if user.disabled { throw AccountError(.userDisabled) }
        if session.revokedAt != nil || (session.expiresAt.map { $0 <= now } ?? false) { throw AccountError(.tokenExpired) }
        // A later generation whose MAC verifies was minted here, for this session: the database has
        // lost the rotations it made (a failover to an asynchronous standby, a restore from a
        // backup). Its holder is the client that kept up; it rotates on from there, rather than
        // every such session being revoked as reuse. (The next generation must fit.)
        if presented >= session.generation, presented < Int64.max { return .rotate }
        if presented == session.generation - 1, now.timeIntervalSince(session.generationIssuedAt) <= graceSeconds {
            return .tolerate
        }
        return .reuse
    }
}
