import Foundation

/// Custom-token sign-in (federation-and-limits.md §C) and the signers an operator registers for it.
package struct CustomTokenService: Sendable {
    package let accounts: AccountService
    package let environment: ServiceEnvironment
    /// Where a custom-token sign-in creates or signs in its user.
    package let users: any AccountStore
    package let signers: any CustomTokenSignerStore
    package let crypto: any CustomTokenCrypto
    /// Fetches the keys of `keysUrl` signers; without it such signers cannot be registered.
    package let documents: (any SignerKeyDocuments)?
    /// Whether the Admin SDK's unsigned emulator-mode tokens are accepted (§C.6; `demo-` only).
    package let acceptUnsigned: Bool

    /// Wires the service.
    package init(
        accounts: AccountService, environment: ServiceEnvironment, users: any AccountStore, signers: any CustomTokenSignerStore,
        crypto: any CustomTokenCrypto,
        documents: (any SignerKeyDocuments)? = nil, acceptUnsigned: Bool
    ) {
        self.accounts = accounts
        self.environment = environment
        self.users = users
        self.signers = signers
        self.crypto = crypto
        self.documents = documents
        self.acceptUnsigned = acceptUnsigned
    }

    /// What a sign-in returns.
    package struct SignedIn: Sendable {
        package var user: UserRecord
        package var tokens: AccountService.TokenBundle
        package var isNewUser: Bool
    }

    /// `accounts:signInWithCustomToken`: §C.3's checks in order (steps 2–13 counted against the
    /// client's address, §E.5), then one transaction that creates or signs in the user, records
    /// the token as used, and starts a session whose ID tokens carry the token's claims (§C.4).
    package func signIn(token raw: String?, client: AccountService.Client) async throws -> SignedIn {
        guard let raw, !raw.isEmpty else { throw AccountError(.missingCustomToken) }
        let (token, grant) = try await environment.limiter.countingCredentialFailures(address: client.ipAddress) {
            let token = try CustomTokenRules.parse(raw, acceptUnsigned: acceptUnsigned)
            if !token.isUnsigned { try await verifySignature(token) }
            return (token, try CustomTokenRules.grant(token, now: environment.clock.now()))
        }
        var session = accounts.newSession(provider: "custom", method: "custom", client: client)
        session.claimsOverlay = grant.claimsOverlay
        // An unsigned token (tests, local development) may be used again; a signed one once (§C.5).
        // The key is the signed part, not the text sent: another spelling of the same signature
        // (base64 padding, spare bits) is the same token.
        let replay = token.isUnsigned ? nil : (hash: crypto.sha256(token.signingInput), until: grant.replayUntil)
        let started = try await environment.limiter.countingCredentialFailures(address: client.ipAddress) {
            try await users.signInWithCustomToken(
                localID: grant.localID, replay: replay, session: session, now: environment.clock.now())
        }
        let tokens = try await accounts.mint(started.user, session, started.ticket)
        return SignedIn(user: started.user, tokens: tokens, isNewUser: started.isNewUser)
    }

    /// Step 7: a key registered for the token's `iss` in this project (with a `kid`, only keys
    /// registered without one or with that one) verifies the signature; a key of another project
    /// that verifies it is `CREDENTIAL_MISMATCH`.
    private func verifySignature(_ token: CustomToken) async throws {
        let issuer = try CustomTokenRules.issuer(of: token)
        let candidates = try await signers.signers(email: issuer).filter { signer in
            token.keyID == nil || signer.keyID == nil || signer.keyID == token.keyID
        }
        let project = environment.settings.projectID
        for ours in [true, false] {
            for signer in candidates where (signer.project == project) == ours {
                guard await verifies(token, signer) else { continue }
                if ours { return }
                throw AccountError(.credentialMismatch)
            }
        }
        throw AccountError(.invalidCustomToken)
    }

    /// Whether `signer`'s key, or one of the keys published at its `keysUrl` (the token's `kid`'s,
    /// refetched once when it is not there yet: a rotation), verifies `token`. Keys that cannot be
    /// fetched verify nothing.
    private func verifies(_ token: CustomToken, _ signer: CustomTokenSigner) async -> Bool {
        let check = { (spki: [UInt8]) in crypto.verifyRS256(signature: token.signature, signingInput: token.signingInput, spki: spki) }
        guard let url = signer.keysURL else { return check(signer.spki) }
        for refresh in [false, true] {
            guard let keys = try? await publishedKeys(url, refresh: refresh) else { return false }
            let named = keys.filter { token.keyID == nil || $0.keyID == token.keyID }
            if named.contains(where: { check($0.spki) }) { return true }
            // Refetch only for a kid the document does not name: a wrong signature is not a rotation.
            if token.keyID == nil || !named.isEmpty { return false }
        }
        return false
    }

    /// The RSA keys of the document at `url`: a JWKS, or `{kid: PEM certificate}` (Google's x509
    /// metadata).
    private func publishedKeys(_ url: String, refresh: Bool) async throws -> [SignerKey] {
        guard let documents else { throw AccountError(.invalidConfig, "keysUrl signers are not available on this server.") }
        let document = try await documents.document(at: url, refresh: refresh)
        if case .array(let entries)? = document["keys"] {
            // Only the RSA keys: a JWKS may publish others beside them.
            let rsa = entries.filter { $0.objectValue?["kty"]?.stringValue == "RSA" }
            guard !rsa.isEmpty else { throw AccountError(.invalidConfig, "The JWKS at keysUrl holds no RSA key.") }
            return try crypto.signerKeys(publicKeyPEM: nil, certificatePEM: nil, jwks: JSONValue.object(["keys": .array(rsa)]).serialized())
        }
        var keys: [SignerKey] = []
        for (kid, value) in document.sorted(by: { $0.key < $1.key }) {
            guard let pem = value.stringValue, pem.contains("-----BEGIN CERTIFICATE-----") else {
                throw AccountError(.invalidConfig, "The document at keysUrl is neither a JWKS nor a map of key ids to certificates.")
            }
            keys += try crypto.signerKeys(publicKeyPEM: nil, certificatePEM: pem, jwks: nil).map { SignerKey(keyID: kid, spki: $0.spki) }
        }
        guard !keys.isEmpty else { throw AccountError(.invalidConfig, "The document at keysUrl holds no key.") }
        return keys
    }

    // MARK: Signers (§C.2)

    /// A registration: the service account and one source of keys.
    package struct Registration: Sendable {
        package var serviceAccountEmail: String?
        package var publicKeyPEM: String?
        package var certificatePEM: String?
        package var jwks: String?
        /// Where the keys are published (fetched on use, cached as §B.4's JWKS).
        package var keysURL: String?
        package var keyID: String?

        /// Creates a registration.
        package init(
            serviceAccountEmail: String?, publicKeyPEM: String?, certificatePEM: String?, jwks: String?, keysURL: String? = nil,
            keyID: String?
        ) {
            self.serviceAccountEmail = serviceAccountEmail
            self.publicKeyPEM = publicKeyPEM
            self.certificatePEM = certificatePEM
            self.jwks = jwks
            self.keysURL = keysURL
            self.keyID = keyID
        }
    }

    /// Registers the keys of `registration` for this project; one signer per key.
    package func addSigner(_ registration: Registration) async throws -> [CustomTokenSigner] {
        guard let email = registration.serviceAccountEmail?.trimmingCharacters(in: .whitespaces), !email.isEmpty,
            email.count <= 320, email.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }), email.contains("@")
        else { throw AccountError(.invalidConfig, "serviceAccountEmail must be an email address.") }
        let sources = [
            ("publicKeyPem", registration.publicKeyPEM), ("x509Certificate", registration.certificatePEM), ("jwks", registration.jwks),
            ("keysUrl", registration.keysURL),
        ].filter { $0.1 != nil }
        guard sources.count == 1, let source = sources.first?.0 else {
            throw AccountError(.invalidConfig, "Give exactly one of publicKeyPem, x509Certificate, jwks, keysUrl.")
        }
        if let keyID = registration.keyID, keyID.isEmpty || keyID.count > 256 {
            throw AccountError(.invalidConfig, "keyId must be 1-256 characters.")
        }
        let now = environment.clock.now()
        if let url = registration.keysURL {
            // Fetched now (or found fresh in the cache), so a typo or an unreachable host is refused
            // here, not at the first sign-in.
            guard url.count <= 2048, url.lowercased().hasPrefix("https://") || url.lowercased().hasPrefix("http://") else {
                throw AccountError(.invalidConfig, "keysUrl must be an https URL.")
            }
            do {
                _ = try await publishedKeys(url, refresh: false)
            } catch let error as AccountError {
                throw error
            } catch {
                throw AccountError(.invalidConfig, "keysUrl could not be fetched: \(String(describing: error).prefix(200))")
            }
            let signer = CustomTokenSigner(
                signerID: "cts_" + accounts.randomIdentifier(count: 20, alphabet: Self.alphabet), project: environment.settings.projectID,
                email: email, keyID: registration.keyID, spki: [], source: source, keysURL: url, createdAt: now)
            try await signers.addSigners([signer])
            return [signer]
        }
        let keys = try crypto.signerKeys(
            publicKeyPEM: registration.publicKeyPEM, certificatePEM: registration.certificatePEM, jwks: registration.jwks)
        let created = keys.map { key in
            CustomTokenSigner(
                signerID: "cts_" + accounts.randomIdentifier(count: 20, alphabet: Self.alphabet), project: environment.settings.projectID,
                email: email, keyID: registration.keyID ?? key.keyID, spki: key.spki, source: source, createdAt: now)
        }
        try await signers.addSigners(created)
        return created
    }

    /// This project's signers.
    package func listSigners() async throws -> [CustomTokenSigner] {
        try await signers.signers(project: environment.settings.projectID)
    }

    /// Removes one; `CONFIGURATION_NOT_FOUND` when it is not this project's.
    package func removeSigner(_ signerID: String) async throws {
        guard try await signers.removeSigner(project: environment.settings.projectID, signerID: signerID) else {
            throw AccountError(.configurationNotFound)
        }
    }

    /// The SHA-256 of a signer's key (of its URL for a `keysUrl` signer), hex: what an operator
    /// compares with `openssl`'s.
    package func fingerprint(_ signer: CustomTokenSigner) -> String {
        Hex.encode(crypto.sha256(signer.fingerprintInput))
    }

    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
}
