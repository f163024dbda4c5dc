import Foundation

extension AccountService {
    /// A verified ID token's caller.
    package struct Authenticated: Sendable {
        package var localID: String
        package var sessionID: String
        package var issuedAt: Int64
        package var authTime: Int64
        package var signInProvider: String
        package var claims: [String: JSONValue]

        /// The second factor the caller's session passed (mfa-phone-tenants.md §B.10), from its claims.
        package var secondFactor: SecondFactorClaim? {
            guard let firebase = claims["firebase"]?.objectValue,
                let kind = firebase["sign_in_second_factor"]?.stringValue, let id = firebase["second_factor_identifier"]?.stringValue
            else { return nil }
            return SecondFactorClaim(kind: kind == "totp" ? .totp : .phone, enrollmentID: id)
        }

        /// The guard that re-checks this caller's session inside a write.
        package var sessionGuard: SessionGuard { SessionGuard(sessionID: sessionID, issuedAt: issuedAt) }
    }

    /// Which column of identity-toolkit.md §3.2 applies.
    package enum VerificationMode: Sendable {
        /// Client endpoints: expiry is `INVALID_ID_TOKEN`, revocation `TOKEN_EXPIRED`.
        case clientEndpoint
        /// `accounts:verifyIdToken`: `TOKEN_EXPIRED`, and with `checkRevoked` the account checks and
        /// `ID_TOKEN_REVOKED`.
        case verify(checkRevoked: Bool)
    }

    /// Signs the ID token for a ticket (waiting for its second when V is ahead of the clock) and
    /// makes the refresh token of the session's generation.
    func mint(_ user: UserRecord, _ session: NewSession, _ ticket: MintTicket) async throws -> TokenBundle {
        try await mint(
            user, sessionID: session.sessionID, provider: session.signInProvider, generation: 0, salt: session.salt,
            keyID: session.keyID, ticket: ticket, overlay: session.claimsOverlay, signInAttributes: session.signInAttributes,
            secondFactor: session.secondFactor
        )
    }

    func mint(
        _ user: UserRecord, sessionID: String, provider: String, generation: Int64, salt: [UInt8], keyID: String, ticket: MintTicket,
        overlay: String? = nil, signInAttributes: String? = nil, secondFactor: SecondFactorClaim? = nil
    ) async throws -> TokenBundle {
        let wait = Double(ticket.issuedAt) - clock.now().timeIntervalSince1970
        if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000) + 1)) }
        let claims = IDTokenClaims.make(
            user: user, sessionID: sessionID, signInProvider: provider, ticket: ticket, settings: settings, overlay: overlay,
            signInAttributes: signInAttributes, secondFactor: secondFactor)
        let idToken = try await signer.sign(claims: claims)
        let refreshToken = try refreshCodec.token(sessionID: sessionID, generation: generation, salt: salt, keyID: keyID)
        return TokenBundle(idToken: idToken, refreshToken: refreshToken)
    }

    /// identity-toolkit.md §3.2: checks a presented ID token in the order the reference gives.
    package func authenticate(_ idToken: String?, mode: VerificationMode = .clientEndpoint) async throws -> Authenticated {
        guard let idToken, !idToken.isEmpty else { throw AccountError(.missingIDToken) }
        let claims = try await signer.verify(idToken)
        guard claims["iss"]?.stringValue == settings.issuer, claims["aud"]?.stringValue == settings.projectID,
            let sub = claims["sub"]?.stringValue, (1...128).contains(sub.count),
            let iat = claims["iat"]?.intValue, let exp = claims["exp"]?.intValue,
            let sessionID = claims["sid"]?.stringValue
        else { throw AccountError(.invalidIDToken) }
        if exp <= RevocationRules.seconds(clock.now()) {
            if case .verify = mode { throw AccountError(.tokenExpired) }
            throw AccountError(.invalidIDToken)
        }
        let provider = claims["firebase"]?.objectValue?["sign_in_provider"]?.stringValue ?? "password"
        let caller = Authenticated(
            localID: sub, sessionID: sessionID, issuedAt: iat, authTime: claims["auth_time"]?.intValue ?? iat,
            signInProvider: provider, claims: claims
        )
        if case .verify(checkRevoked: false) = mode { return caller }
        let state = try await sessionState(sessionID)
        guard let state, state.userExists, state.localID == sub else { throw AccountError(.userNotFound) }
        if state.userDisabled { throw AccountError(.userDisabled) }
        guard state.sessionLive, iat >= state.validSince else {
            if case .verify = mode { throw AccountError(.idTokenRevoked) }
            throw AccountError(.tokenExpired)
        }
        return caller
    }

    /// The session's revocation state, from this replica's cache or the database.
    func sessionState(_ sessionID: String) async throws -> SessionState? {
        if let cached = cache.state(forSession: sessionID) { return cached }
        let fill = cache.beginFill()
        guard let state = try await store.sessionState(sessionID: sessionID) else { return nil }
        cache.store(state, forSession: sessionID, since: fill)
        return state
    }

    /// `POST /v1/token` (identity-toolkit.md §4.17).
    package func refresh(grantType: String?, refreshToken: String?, client: Client) async throws -> (UserRecord, TokenBundle) {
        guard let grantType, !grantType.isEmpty else { throw AccountError(.missingGrantType) }
        guard grantType == "refresh_token" else { throw AccountError(.invalidGrantType) }
        guard let refreshToken, !refreshToken.isEmpty else { throw AccountError(.missingRefreshToken) }
        // A token whose MAC can be checked alone is checked here: a forged one never reaches the database.
        guard let decoded = refreshCodec.decode(refreshToken) else { throw AccountError(.invalidRefreshToken) }
        let (sessionID, generation) = (decoded.sessionID, decoded.generation)
        let codec = refreshCodec
        let result = try await store.refresh(
            RefreshRequest(
                sessionID: sessionID, generation: generation, graceSeconds: settings.refreshReuseGraceSeconds,
                userAgent: client.userAgent, ipAddress: client.ipAddress, now: clock.now(),
                verifyMAC: { salt, keyID in codec.verify(refreshToken, salt: salt, keyID: keyID) }
            )
        )
        switch result {
        case .reused:
            throw AccountError(.tokenExpired)
        case .refreshed(let user, let session, let ticket):
            let tokens = try await mint(
                user, sessionID: session.sessionID, provider: session.signInProvider, generation: session.generation,
                salt: session.salt, keyID: session.keyID, ticket: ticket, overlay: session.claimsOverlay,
                signInAttributes: session.signInAttributes, secondFactor: session.secondFactor
            )
            return (user, tokens)
        }
    }
}
