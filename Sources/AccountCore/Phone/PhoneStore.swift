package import Foundation

/// Phone sign-in's persistence (mfa-phone-tenants.md §A.4–A.7). Every call is one transaction.
package protocol PhoneStore: Sendable {
    /// Writes a verification session and, for a real number, its SMS to the outbox (§A.4 step 8).
    func startPhoneVerification(_ session: NewPhoneSession, sms: SealedSMS?) async throws
    /// Checks the proof, resolves the account, signs in or creates it, and spends the proof
    /// (§A.5). A wrong code is counted whatever else happens; a refusal after the proof leaves it
    /// usable.
    func signInWithPhone(_ request: PhoneSignIn) async throws -> PhoneOutcome
    /// Checks the proof and links the number to the caller's account, or spends the session on a
    /// `temporaryProof` when the number is another account's (§A.5 "Link").
    func linkPhone(_ request: PhoneLink) async throws -> PhoneOutcome
    /// The live sessions kept for the demo test inbox, oldest first (§A.7).
    func inboxCodes(now: Date) async throws -> [InboxCode]
}

/// Hashes and MACs of phone sign-in's one-time material (§0.2); AccountCrypto implements it.
package protocol PhoneSecrets: Sendable {
    /// SHA-256, for `sessionInfo` and `temporaryProof`.
    func hash(_ value: String) -> [UInt8]
    /// HMAC-SHA256 under the codes key of `sessionInfo` ‖ `code`.
    func codeMAC(sessionInfo: String, code: String) -> [UInt8]
}
