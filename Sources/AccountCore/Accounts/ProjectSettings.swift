/// The project's rules that the domain consults (identity-toolkit.md §1.6), passed down from configuration.
package struct ProjectSettings: Sendable {
    package var projectID: String
    /// What the token route reports as `project_id`.
    package var projectNumber: String
    package var allowPasswordSignup = true
    package var allowAnonymous = false
    package var emailLinkSignin = true
    package var emailEnumerationProtection = false
    /// Password and email changes and deletion need a sign-in at most this old (0 = off).
    package var recentLoginSeconds: Int64 = 300
    package var refreshReuseGraceSeconds: Double = 10
    package var idTokenLifetimeSeconds: Int64 = 3600
    package var passwordPolicy = PasswordPolicy.firebase
    package var authorizedDomains: [String] = ["localhost"]
    /// Where email action links point (accountd's own `/__/auth/action` by default).
    package var actionHandlerURL = "http://127.0.0.1:9099/__/auth/action"
    /// Hosts app links may be built on (default: the action handler's host).
    package var linkDomains: [String] = ["127.0.0.1"]
    /// Legacy Dynamic Links domains accepted in `dynamicLinkDomain`.
    package var dynamicLinkDomains: [String] = []
    /// How long codes live.
    package var codeLifetimes = ActionCodeLifetimes()
    /// The API key links made without a client key carry (the project's first).
    package var linkAPIKey = "demo-api-key"
    /// The product name emails use.
    package var productName = "accountd"
    /// The reCAPTCHA site key the configuration routes name; nothing is ever enforced
    /// (`ACCOUNTD_RECAPTCHA_SITE_KEY`, federation-and-limits.md §D.4).
    package var recaptchaSiteKey = "accountd-recaptcha-off"

    /// Settings with reference defaults.
    package init(projectID: String) {
        self.projectID = projectID
        self.projectNumber = projectID
    }

    /// `iss` of ID tokens.
    package var issuer: String { "https://securetoken.google.com/\(projectID)" }

    /// Whether an answer to this caller hides which accounts exist (identity-toolkit.md §1.6, email
    /// enumeration protection): for a client when the project turns it on, never for an admin.
    package func hidesAccounts(fromAdmin isAdmin: Bool) -> Bool {
        emailEnumerationProtection && !isAdmin
    }
}
