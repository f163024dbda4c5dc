package import Foundation

package enum EmailLinkRules {
    /// The presented code, as the store found it (nil: unknown), is a live sign-in link sent to
    /// exactly `email` (identity-toolkit.md §4.3: completion only with the address the link was sent to).
    package static func accept(_ code: ActionCodeRecord?, email: String, now: Date) throws(AccountError) {
        guard let code else { throw AccountError(.invalidOOBCode) }
        try code.requireUsable(kinds: [.emailSignIn], now: now)
        guard code.email == email else {
            throw AccountError(.invalidEmail, "The email provided does not match the sign-in email address.")
        }
    }

    /// Linking the address to a signed-in user: `owner` is the account that has the address (if
    /// any), `user` the signed-in user as locked (nil: gone), `sessionLive` whether the caller's
    /// session is still live. The errors come in Firebase's order: the address taken, the user
    /// gone, the session revoked, the user disabled.
    package static func link(
        email: String, owner: String?, user: UserRecord?, session: SessionGuard, sessionLive: Bool
    ) throws(AccountError) -> EmailLinkPlan {
        if let owner, owner != user?.localID ?? "" { throw AccountError(.emailExists) }
        guard let user else { throw AccountError(.userNotFound) }
        try session.admit(live: sessionLive, validSince: user.validSince)
        if user.disabled { throw AccountError(.userDisabled) }
        let replaced = user.email.flatMap { $0 == email ? nil : $0 }
        return .link(user, replacedEmail: replaced)
    }

    /// Signing in with the address: `existing` is its account as locked (nil: none yet).
    package static func signIn(existing: UserRecord?) throws(AccountError) -> EmailLinkPlan {
        guard let existing else { return .create }
        if existing.disabled { throw AccountError(.userDisabled) }
        return .signIn(existing, strip: TakeoverRules.plan(for: existing, proof: .emailLink))
    }

    /// `user` once an email link for `email` signed it in or linked the address to it: the
    /// address is its email, proven, and a method of the `password` provider; the account is no
    /// longer anonymous. After `strip` when THE RULE applies.
    package static func completed(_ user: UserRecord, email: String, strip: StripPlan?, now: Date) -> UserRecord {
        var after = strip?.applied(to: user) ?? user
        if after.email != email { after = after.replacingEmail(with: email, verified: true) }
        after.emailVerified = true
        after.emailLinkSignin = true
        after.anonymous = false
        after.lastLoginAt = now
        return after
    }
}

extension SessionGuard {
    /// identity-toolkit.md §3.2 step 5, under the user's row lock: the caller's session is `live` and the
    /// token it presented is not older than the user's `validSince`.
    package func admit(live: Bool, validSince: Int64) throws(AccountError) {
        guard live, issuedAt >= validSince else { throw AccountError(.tokenExpired) }
    }
}
