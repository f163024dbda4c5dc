extension Telemetry {
    /// The providers Firebase names (and ours), kept as they are; any other is one of a configured
    /// family (`oidc.*`, `saml.*`) or `other`: a label value is never what a client made up.
    private static let knownProviders: Set<String> = [
        "password", "emailLink", "phone", "anonymous", "custom", "google.com", "facebook.com", "github.com", "twitter.com",
        "apple.com", "microsoft.com", "yahoo.com", "playgames.google.com", "gc.apple.com", "linkedin.com",
    ]

    /// A sign-in provider as a label value.
    package static func providerLabel(_ provider: String) -> String {
        if knownProviders.contains(provider) { return provider }
        if provider.hasPrefix("oidc.") { return "oidc" }
        if provider.hasPrefix("saml.") { return "saml" }
        return "other"
    }

    /// The provider an account was created with, as a label value.
    package static func creationProvider(_ user: UserRecord) -> String {
        if user.anonymous { return "anonymous" }
        if user.customAuth { return "custom" }
        if user.password != nil { return "password" }
        if let identity = user.federated.first { return providerLabel(identity.providerID) }
        if user.phoneNumber != nil { return "phone" }
        if user.emailLinkSignin { return "emailLink" }
        return "other"
    }

    /// What applied the takeover rule, from the reason its sessions were revoked with.
    package static func takeoverTrigger(_ reason: RevokeReason) -> String {
        switch reason {
        case .emailLinkTakeoverProtection: "email_link"
        case .idpTakeoverProtection: "idp"
        case .passwordReset: "password_reset"
        default: "other"
        }
    }

    /// A Firebase error message's code (`EMAIL_EXISTS` of `EMAIL_EXISTS : details`), if it is one:
    /// upper-case letters, digits and underscores only, so a label never carries a client's text.
    package static func errorCode(_ message: String) -> String {
        var code = Substring(message)
        if let space = code.firstIndex(of: " ") { code = code[..<space] }
        guard !code.isEmpty, code.count <= 64,
            code.utf8.allSatisfy({ ($0 >= 65 && $0 <= 90) || ($0 >= 48 && $0 <= 57) || $0 == 95 })
        else { return "OTHER" }
        return String(code)
    }
}
