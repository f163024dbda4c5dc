package enum TakeoverRules {
    /// The strip `proof` calls for on `user`; nil when the email was already verified (nothing was
    /// attached while unproven).
    package static func plan(for user: UserRecord, proof: MailboxProof) -> StripPlan? {
        guard !user.emailVerified else { return nil }
        switch proof {
        case .emailLink: return StripPlan(removePassword: true, revokeReason: .emailLinkTakeoverProtection)
        case .passwordReset: return StripPlan(removePassword: false, revokeReason: .passwordReset)
        }
    }
}
