package import Foundation

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
