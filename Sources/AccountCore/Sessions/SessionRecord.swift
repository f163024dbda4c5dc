package import Foundation

/// One sign-in (identity-toolkit.md §2.7). Refresh tokens are not stored: only the generation and the salt
/// their MAC key derives from.
package struct SessionRecord: Sendable, Equatable {
    package var sessionID: String
    package var localID: String
    package var createdAt: Date
    /// The sign-in second; unchanged by refreshes.
    package var authTime: Int64
    /// `password`, `anonymous`, `custom`, `phone` or an IdP id.
    package var signInProvider: String
    /// `password`, `emailLink`, `anonymous`, `custom` or an IdP id.
    package var signInMethod: String
    package var userAgent: String?
    package var ipAddress: String?
    package var lastRefreshAt: Date?
    /// n of identity-toolkit.md §3.3.
    package var generation: Int64
    /// When generation n was issued (the grace window counts from here).
    package var generationIssuedAt: Date
    package var salt: [UInt8]
    package var keyID: String
    package var lastMintAt: Date?
    package var expiresAt: Date?
    package var revokedAt: Date?
    package var revokeReason: RevokeReason?
    /// The user was deleted; the row is a tombstone.
    package var userDeleted: Bool
    /// A custom token's claims (a JSON object) that this session's ID tokens carry on top of the
    /// account's (federation-and-limits.md §C.4).
    package var claimsOverlay: String?
    /// The IdP's extra claims of the sign-in, a JSON object (`firebase.sign_in_attributes`, §A.10).
    package var signInAttributes: String?
    /// The second factor the sign-in passed (mfa-phone-tenants.md §B.10).
    package var secondFactor: SecondFactorClaim?

    /// Creates a record.
    package init(
        sessionID: String, localID: String, createdAt: Date, authTime: Int64, signInProvider: String, signInMethod: String,
        userAgent: String? = nil, ipAddress: String? = nil, lastRefreshAt: Date? = nil, generation: Int64 = 0,
        generationIssuedAt: Date, salt: [UInt8], keyID: String, lastMintAt: Date? = nil, expiresAt: Date? = nil,
        revokedAt: Date? = nil, revokeReason: RevokeReason? = nil, userDeleted: Bool = false, claimsOverlay: String? = nil,
        signInAttributes: String? = nil, secondFactor: SecondFactorClaim? = nil
    ) {
        self.sessionID = sessionID
        self.localID = localID
        self.createdAt = createdAt
        self.authTime = authTime
        self.signInProvider = signInProvider
        self.signInMethod = signInMethod
        self.userAgent = userAgent
        self.ipAddress = ipAddress
        self.lastRefreshAt = lastRefreshAt
        self.generation = generation
        self.generationIssuedAt = generationIssuedAt
        self.salt = salt
        self.keyID = keyID
        self.lastMintAt = lastMintAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.revokeReason = revokeReason
        self.userDeleted = userDeleted
        self.claimsOverlay = claimsOverlay
        self.signInAttributes = signInAttributes
        self.secondFactor = secondFactor
    }
}
