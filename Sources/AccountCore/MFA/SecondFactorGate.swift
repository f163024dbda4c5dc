package import Foundation

/// Stops a first-factor sign-in of a challenged user (mfa-phone-tenants.md §B.3): instead of a
/// session, a pending credential that `mfaSignIn:finalize` completes. Every sign-in flow asks it,
/// and none issues tokens to a user it challenges.
package struct SecondFactorGate: Sendable {
    private let store: any MFAStore
    private let configs: ProjectConfigService
    private let secrets: any PhoneSecrets
    private let environment: ServiceEnvironment

    /// How long a pending credential lives (§0.2).
    package static let pendingLifetime: TimeInterval = 600

    package init(store: any MFAStore, configs: ProjectConfigService, secrets: any PhoneSecrets, environment: ServiceEnvironment) {
        self.store = store
        self.configs = configs
        self.secrets = secrets
        self.environment = environment
    }

    /// The project's MFA configuration now.
    package func config() async throws -> MFAConfig {
        try await configs.current().mfa
    }

    /// For a sign-in of `user` read before its transaction (a password sign-in): the pending
    /// credential, written after the store re-checked the user under its lock, or nil when the
    /// user is not challenged.
    package func challenge(
        _ user: UserRecord, session: NewSession, upgradedPassword: StoredPassword?
    ) async throws -> SecondFactorRequired? {
        guard !user.factors.isEmpty else { return nil }
        let config = try await config()
        let factors = user.challengingFactors(config)
        guard !factors.isEmpty else { return nil }
        let (draft, credential) = makeDraft(kinds: config.enabledKinds)
        guard let pending = draft.pending(for: user, session: session) else { return nil }
        try await store.createPending(pending, for: user, upgradedPassword: upgradedPassword)
        return SecondFactorRequired(credential: credential, user: user, factors: factors)
    }

    /// For a sign-in that decides its user inside its transaction (email link, IdP): a draft the
    /// store turns into a pending credential instead of a session when the user it signs in has a
    /// factor of an enabled kind; nil when no kind is enabled. The credential is what the caller
    /// answers with if the store used the draft.
    package func draft() async throws -> (ChallengeDraft, credential: String)? {
        let config = try await config()
        guard !config.enabledKinds.isEmpty else { return nil }
        return makeDraft(kinds: config.enabledKinds)
    }

    /// The answer for a user the store challenged with a draft.
    package func required(_ user: UserRecord, credential: String) async throws -> SecondFactorRequired {
        SecondFactorRequired(credential: credential, user: user, factors: user.challengingFactors(try await config()))
    }

    private func makeDraft(kinds: Set<MFAFactor.Kind>) -> (ChallengeDraft, credential: String) {
        let credential = Base64URL.encode(environment.random.bytes(32))
        let now = environment.clock.now()
        return (
            ChallengeDraft(kinds: kinds, hash: secrets.hash(credential), createdAt: now, expiresAt: now + Self.pendingLifetime),
            credential
        )
    }
}

/// A pending credential a store writes in place of a session when the user its transaction signs
/// in has a factor of one of `kinds`.
package struct ChallengeDraft: Sendable {
    package var kinds: Set<MFAFactor.Kind>
    package var hash: [UInt8]
    package var createdAt: Date
    package var expiresAt: Date

    package init(kinds: Set<MFAFactor.Kind>, hash: [UInt8], createdAt: Date, expiresAt: Date) {
        self.kinds = kinds
        self.hash = hash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// The pending credential for `user` (as the transaction leaves it), or nil when the user has
    /// no factor of these kinds and signs in at once. It records what `session` would have been.
    package func pending(for user: UserRecord, session: NewSession) -> NewPendingCredential? {
        guard user.factors.contains(where: { kinds.contains($0.kind) }) else { return nil }
        return NewPendingCredential(
            hash: hash, localID: user.localID, provider: session.signInProvider, method: session.signInMethod,
            signInAttributes: session.signInAttributes, credentialVersion: user.credentialVersion, createdAt: createdAt,
            expiresAt: expiresAt)
    }
}

/// Thrown by a first-factor sign-in whose user must answer a second factor (§B.3): the API answers
/// 200 with the pending credential and the factors, no tokens. `fields` are the RPC's own members
/// of that answer (`kind`, `registered`, …).
package struct SecondFactorRequired: Error, Sendable {
    package var credential: String
    package var user: UserRecord
    /// The user's factors of enabled kinds (the resolver's hints).
    package var factors: [MFAFactor]
    package var fields: [String: JSONValue] = [:]

    package init(credential: String, user: UserRecord, factors: [MFAFactor], fields: [String: JSONValue] = [:]) {
        self.credential = credential
        self.user = user
        self.factors = factors
        self.fields = fields
    }
}

extension MFAConfig {
    /// The kinds a user is challenged for (§B.1).
    package var enabledKinds: Set<MFAFactor.Kind> {
        var kinds: Set<MFAFactor.Kind> = []
        if smsEnabled { kinds.insert(.phone) }
        if totpEnabled { kinds.insert(.totp) }
        return kinds
    }
}
