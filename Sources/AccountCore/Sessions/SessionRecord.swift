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

    /// Creates a record.
    package init(
        sessionID: String, localID: String, createdAt: Date, authTime: Int64, signInProvider: String, signInMethod: String,
        userAgent: String? = nil, ipAddress: String? = nil, lastRefreshAt: Date? = nil, generation: Int64 = 0,
        generationIssuedAt: Date, salt: [UInt8], keyID: String, lastMintAt: Date? = nil, expiresAt: Date? = nil,
        revokedAt: Date? = nil, revokeReason: RevokeReason? = nil, userDeleted: Bool = false, claimsOverlay: String? = nil,
        signInAttributes: String? = nil
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
    }
}

/// Why a session ended (identity-toolkit.md §2.7).
package enum RevokeReason: String, Sendable, CaseIterable {
    case adminRevoked = "ADMIN_REVOKED"
    case allSessionsRevoked = "ALL_SESSIONS_REVOKED"
    case passwordChanged = "PASSWORD_CHANGED"
    case passwordReset = "PASSWORD_RESET"
    case emailChanged = "EMAIL_CHANGED"
    case emailLinkTakeoverProtection = "EMAIL_LINK_TAKEOVER_PROTECTION"
    /// A trusted IdP proved the mailbox of an account whose email was never verified (federation-and-limits.md §A.8).
    case idpTakeoverProtection = "IDP_TAKEOVER_PROTECTION"
    case userDisabled = "USER_DISABLED"
    case userDeleted = "USER_DELETED"
    case refreshTokenReuse = "REFRESH_TOKEN_REUSE"
    case accountOverwritten = "ACCOUNT_OVERWRITTEN"
    case idleTimeout = "IDLE_TIMEOUT"
    case expired = "EXPIRED"

    /// Sessions ended because the mailbox's owner proved it (THE RULE) or reset the password: they
    /// may have been a squatter's, so they prove nothing about where the owner signs in from (the
    /// known-network test of federation-and-limits.md §E.4 ignores them, decision 15).
    package static let disowned: [RevokeReason] = [.emailLinkTakeoverProtection, .idpTakeoverProtection, .passwordReset]
}

/// What a new session starts with; the store writes it in the transaction that signs the user in.
package struct NewSession: Sendable {
    package var sessionID: String
    package var signInProvider: String
    package var signInMethod: String
    package var userAgent: String?
    package var ipAddress: String?
    package var salt: [UInt8]
    package var keyID: String
    /// A custom token's claims for this session's ID tokens (§C.4).
    package var claimsOverlay: String?
    /// The IdP's extra claims (`firebase.sign_in_attributes`, §A.10).
    package var signInAttributes: String?

    /// Creates a draft with fresh random id and salt.
    package init(
        random: any RandomSource, keyID: String, provider: String, method: String, userAgent: String?, ipAddress: String?
    ) {
        var id = random.bytes(16)
        // Never a leading "-": accountctl would read the id as an option (`sessions revoke -…`).
        // 0xF8–0xFB encode to "-"; clearing the top bit makes them "e". Still 16 bytes.
        if id[0] >> 2 == 62 { id[0] &= 0x7F }
        self.sessionID = Base64URL.encode(id)
        self.salt = random.bytes(16)
        self.keyID = keyID
        self.signInProvider = provider
        self.signInMethod = method
        self.userAgent = userAgent.map { String($0.prefix(512)) }
        self.ipAddress = ipAddress
    }
}

/// A session's right to mint an ID token at second `iat`, recorded in the transaction that
/// validated the session (identity-toolkit.md §3.5 item 3).
package struct MintTicket: Sendable, Equatable {
    /// The token's `iat`; never before the user's `validSince`.
    package var issuedAt: Int64
    /// The session's sign-in second.
    package var authTime: Int64

    /// Creates a ticket.
    package init(issuedAt: Int64, authTime: Int64) {
        self.issuedAt = issuedAt
        self.authTime = authTime
    }
}

/// The arithmetic of identity-toolkit.md §3.5.
package enum RevocationRules {
    /// Whole seconds since the epoch, floored.
    package static func seconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }

    /// V for a revoke-all at instant R: ⌊R⌋ unless a token of the user was minted in [⌊R⌋, R),
    /// then ⌊R⌋+1; never below the previous V.
    package static func validSince(revokedAt: Date, lastMint: Date?, previous: Int64) -> Int64 {
        let floor = seconds(revokedAt)
        var value = floor
        if let lastMint, seconds(lastMint) >= floor { value = floor + 1 }
        return max(value, previous)
    }

    /// The `iat` for a mint at `now`: the current second, or V if that is later (the caller waits
    /// until then before signing, so `iat` is never in the future).
    package static func issuedAt(now: Date, validSince: Int64) -> Int64 {
        max(seconds(now), validSince)
    }

    /// The `iat` of a mint at `now` and the instant to record as the session's last mint (never
    /// before second `iat`, so a later revoke-all in that second sees it).
    package static func mint(now: Date, validSince: Int64) -> (issuedAt: Int64, recordedAt: Date) {
        let issuedAt = issuedAt(now: now, validSince: validSince)
        return (issuedAt, max(now, Date(timeIntervalSince1970: Double(issuedAt))))
    }
}
