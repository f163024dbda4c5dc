/// The domain's one error vocabulary. Core and the adapters throw it; `AccountAPI` maps each
/// ``AccountError/Code`` to Firebase's wire message in one place.
package struct AccountError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, in Swift names. The API layer owns the wire spelling.
    package enum Code: String, Sendable, CaseIterable {
        // Input
        case missingEmail, invalidEmail, missingPassword, weakPassword, passwordTooLong
        /// Shorter than a minimum the project raised above Firebase's 6: the enforced policy's
        /// refusal (federation-and-limits.md §D.2), where the default policy says `weakPassword`.
        case passwordTooShort
        case missingNewEmail, invalidNewEmail
        case missingIdentifier, invalidIdentifier, missingContinueURI, invalidContinueURI
        case unauthorizedDomain, missingAndroidPackageName, missingIOSBundleID
        case invalidDynamicLinkDomain, invalidHostingLinkDomain
        case missingRequestType, invalidRequestType
        case missingLocalID, invalidLocalID, duplicateLocalID, unexpectedParameter
        case invalidPhoneNumber, phoneNumberExists
        // Phone sign-in (mfa-phone-tenants.md §A.4, §A.5)
        case missingPhoneNumber, missingSessionInfo, invalidSessionInfo, sessionExpired, missingCode, invalidCode
        case invalidTemporaryProof, unsupportedFirstFactor
        // Second factors (mfa-phone-tenants.md §B)
        case unverifiedEmail, secondFactorLimitExceeded, secondFactorExists, missingDisplayName, tooManyEnrollmentAttempts
        case mfaEnrollmentNotFound, invalidMFAEnrollmentID, totpChallengeTimeout, missingMFAPendingCredential
        case invalidMFAPendingCredential, unsupportedSecondFactor, invalidMFAPhoneNumber, duplicateMFAEnrollmentID
        case emailChangeNeedsVerification
        case missingIDToken, invalidIDToken, missingOOBCode, invalidOOBCode, expiredOOBCode
        case missingRefreshToken, invalidRefreshToken, missingGrantType, invalidGrantType
        case invalidClaims, claimsTooLarge, forbiddenClaim, invalidProfileAttribute
        /// A field whose value is well-typed but not acceptable (an unknown `deleteAttribute`, text
        /// PostgreSQL cannot store).
        case invalidArgument
        case invalidPageSelection, sessionNotFound, invalidDuration, localIDListExceedsLimit
        // Accounts and credentials
        case emailExists, emailNotFound, userNotFound, userDisabled
        case invalidPassword, invalidLoginCredentials
        case credentialTooOldLoginAgain
        // Custom tokens (federation-and-limits.md §C)
        case missingCustomToken, invalidCustomToken, credentialMismatch, tenantIDMismatch
        // Configuration resources (custom-token signers; later IdP configurations)
        case invalidConfig, configurationExists, configurationNotFound
        /// The project configuration resource (mfa-phone-tenants.md §0.4, §B.1).
        case emailTemplateUpdateNotAllowed, invalidAdjacentIntervalRange, invalidAuthorizedDomain
        case missingConfigID, invalidConfigID, missingOAuthClientID, missingIssuer, invalidIssuer
        // Federated sign-in (federation-and-limits.md §A.12)
        case missingRequestURI, invalidRequestURI, invalidCredentialOrProviderID, invalidProviderID, invalidIDPResponse
        case missingOrInvalidNonce, userCancelled, invalidPendingToken, providerAlreadyLinked, federatedUserIDAlreadyLinked
        // Tokens and sessions
        case tokenExpired, idTokenRevoked, userTokenExpired
        // Policy
        case operationNotAllowed, passwordLoginDisabled, adminOnlyOperation
        case insufficientPermission, unsupportedTenantOperation
        /// A request-level import fault; `detail` is the whole wire message (`MISSING_HASH_ALGORITHM`, …).
        case importFault
        /// A request Google's proto layer refuses: `detail` is the whole message, status `INVALID_ARGUMENT`
        /// (`Invalid JSON payload received. …`, `Invalid value at …`).
        case malformedRequest
        // Abuse limits (federation-and-limits.md §E): 400 with `Retry-After`
        case tooManyAttempts, quotaExceeded, resetPasswordExceedLimit
        // Infrastructure the client may retry
        case unavailable
    }

    /// The failure.
    package var code: Code
    /// Free text after `CODE : ` on the wire; never holds secrets.
    package var detail: String?
    /// Seconds a refused client waits before trying again (`Retry-After`), for the abuse limits.
    package var retryAfter: Int?

    /// Creates an error with an optional human detail.
    package init(_ code: Code, _ detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    package var description: String {
        detail.map { "\(code.rawValue): \($0)" } ?? code.rawValue
    }
}

extension AccountError {
    /// `SESSION_NOT_FOUND` naming the caller's id only when it could be a session id (base64url,
    /// at most 64 characters): an error message never echoes a caller's arbitrary text back.
    package static func sessionNotFound(_ id: String) -> AccountError {
        let plausible =
            (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
        return AccountError(.sessionNotFound, plausible ? id : "no such session")
    }
}
