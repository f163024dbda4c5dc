package import Foundation

/// What a verified federated credential brings to the transaction that uses it, signing in
/// (§A.8) or linking (§A.9).
package struct FederatedUse: Sendable {
    package var assertion: IdPAssertion
    /// Whether the provider proves the assertion's mailbox (§A.7).
    package var trusted: Bool
    package var session: NewSession
    /// The nonce key to record as used, and until when (a nonce-bearing token signs in once).
    package var usedNonce: (key: [UInt8], until: Date)?
    /// The redirect flow (its state's hash) being completed: spent in the same transaction.
    package var usedFlow: [UInt8]?
    /// A new pending token's hash and what it replays, kept in the same transaction (§A.6).
    package var pending: (hash: [UInt8], assertion: IdPAssertion)?
    package var now: Date

    /// Creates a use.
    package init(
        assertion: IdPAssertion, trusted: Bool, session: NewSession, usedNonce: (key: [UInt8], until: Date)?, usedFlow: [UInt8]?,
        pending: (hash: [UInt8], assertion: IdPAssertion)?, now: Date
    ) {
        self.assertion = assertion
        self.trusted = trusted
        self.session = session
        self.usedNonce = usedNonce
        self.usedFlow = usedFlow
        self.pending = pending
        self.now = now
    }
}

/// A federated sign-in (§A.8): the credential's use, whether an account may be created, and its id.
package struct FederatedSignIn: Sendable {
    package var use: FederatedUse
    package var autoCreate: Bool
    package var newLocalID: String
    /// Whether creating an account was already counted against the client's address
    /// (`account_creations_per_ip`, §E.5). When not, a sign-in that would create one rolls back
    /// and answers ``FederatedSignInOutcome/creationNeedsAdmission`` instead: the count is taken
    /// outside any transaction, and only for sign-ins that create.
    package var creationAdmitted: Bool
    /// A pending credential to write instead of the session when the user is challenged
    /// (mfa-phone-tenants.md §B.3).
    package var challenge: ChallengeDraft?

    /// Creates a request.
    package init(
        use: FederatedUse, autoCreate: Bool, newLocalID: String, creationAdmitted: Bool = true, challenge: ChallengeDraft? = nil
    ) {
        self.challenge = challenge
        self.use = use
        self.autoCreate = autoCreate
        self.newLocalID = newLocalID
        self.creationAdmitted = creationAdmitted
    }
}

/// What a federated sign-in came to.
package enum FederatedSignInOutcome: Sendable {
    case signedIn(UserRecord, MintTicket, isNewUser: Bool, emailRecycled: Bool)
    /// The user must answer a second factor: the credential was used and a pending credential
    /// written instead of a session (mfa-phone-tenants.md §B.3).
    case challenged(UserRecord)
    /// §A.8 row 3: nothing changed, nothing was consumed.
    case needConfirmation(UserRecord)
    /// Row 5 with ``FederatedSignIn/creationAdmitted`` false: nothing changed; count the creation
    /// and ask again.
    case creationNeedsAdmission
}

/// Linking an identity to a signed-in user (§A.9).
package struct FederatedLink: Sendable {
    package var use: FederatedUse
    package var localID: String
    package var guardSession: SessionGuard

    /// Creates a request.
    package init(use: FederatedUse, localID: String, guardSession: SessionGuard) {
        self.use = use
        self.localID = localID
        self.guardSession = guardSession
    }
}

/// A redirect flow started by `createAuthUri` (§A.5).
package struct IdPFlow: Sendable, Equatable {
    package var providerID: String
    package var sessionID: String
    package var redirectURI: String
    package var context: String?
    package var codeFlow: Bool
    package var expiresAt: Date
    package var usedAt: Date?

    /// Creates a flow.
    package init(
        providerID: String, sessionID: String, redirectURI: String, context: String?, codeFlow: Bool, expiresAt: Date, usedAt: Date? = nil
    ) {
        self.providerID = providerID
        self.sessionID = sessionID
        self.redirectURI = redirectURI
        self.context = context
        self.codeFlow = codeFlow
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
}

/// The accounts side of federated sign-in; the PostgreSQL adapter implements it.
package protocol FederationStore: Sendable {
    /// Records a flow under its state's hash.
    func createFlow(stateHash: [UInt8], flow: IdPFlow, now: Date) async throws
    /// A flow by its state's hash, used or not.
    func flow(stateHash: [UInt8]) async throws -> IdPFlow?
    /// Whether a nonce key was already used (the early "Duplicate credential" answer).
    func isNonceUsed(_ key: [UInt8], now: Date) async throws -> Bool
    /// Keeps `assertion` for an hour behind a pending token's hash (§A.6).
    func savePending(tokenHash: [UInt8], assertion: IdPAssertion, now: Date, expiresAt: Date) async throws
    /// The assertion behind a live pending token.
    func pending(tokenHash: [UInt8], now: Date) async throws -> IdPAssertion?
    /// §A.8 in one transaction, the nonce recorded in it (`MISSING_OR_INVALID_NONCE : Duplicate…`
    /// when it already was); a race lost on the identity or the email re-runs it once.
    func signInFederated(_ request: FederatedSignIn) async throws -> FederatedSignInOutcome
    /// §A.9 in one transaction.
    func linkFederated(_ request: FederatedLink) async throws -> (UserRecord, MintTicket)
}
