package import AccountCore
package import Foundation
import Logging
import PostgresNIO

/// Federated sign-in (federation-and-limits.md §A): account resolution and linking, each one
/// transaction that reads and locks, asks ``FederationRules``, and writes the plan; pending tokens
/// and used nonces.
extension PostgresAccountStore: FederationStore {
    package func createFlow(stateHash: [UInt8], flow: IdPFlow, now: Date) async throws {
        _ = try await translating {
            try await onConnection { tx in
                try await tx.query(
                    """
                    INSERT INTO idp_flows (state_hash, tenant_id, provider_id, session_id, redirect_uri, context, code_flow, created_at, expires_at)
                    VALUES (\(Data(stateHash)), \(tenant), \(flow.providerID), \(flow.sessionID), \(flow.redirectURI), \(flow.context),
                        \(flow.codeFlow), \(now), \(flow.expiresAt))
                    """)
            }
        }
    }

    package func flow(stateHash: [UInt8]) async throws -> IdPFlow? {
        try await translating {
            try await onConnection { tx in
                for try await (provider, session, redirect, context, codeFlow, expires, used) in try await tx.query(
                    """
                    SELECT provider_id, session_id, redirect_uri, context, code_flow, expires_at, used_at FROM idp_flows
                    WHERE state_hash = \(Data(stateHash)) AND tenant_id = \(tenant)
                    """
                ).decode((String, String, String, String?, Bool, Date, Date?).self) {
                    return IdPFlow(
                        providerID: provider, sessionID: session, redirectURI: redirect, context: context, codeFlow: codeFlow,
                        expiresAt: expires, usedAt: used)
                }
                return nil
            }
        }
    }

    package func isNonceUsed(_ key: [UInt8], now: Date) async throws -> Bool {
        try await translating {
            try await onConnection { tx in
                for try await _ in try await tx.query(
                    "SELECT 1 FROM idp_used_nonces WHERE nonce_key = \(Data(key)) AND expires_at > \(now)")
                {
                    return true
                }
                return false
            }
        }
    }

    package func savePending(tokenHash: [UInt8], assertion: IdPAssertion, now: Date, expiresAt: Date) async throws {
        _ = try await translating {
            try await onConnection { tx in try await tx.insertPending(tokenHash, assertion, now: now, until: expiresAt) }
        }
    }

    package func pending(tokenHash: [UInt8], now: Date) async throws -> IdPAssertion? {
        try await translating {
            try await onConnection { tx in
                for try await json in try await tx.query(
                    """
                    SELECT assertion::text FROM idp_pending WHERE token_hash = \(Data(tokenHash)) AND tenant_id = \(tenant) AND expires_at > \(now)
                    """
                ).decode(String.self) {
                    return try JSONDecoder().decode(IdPAssertion.self, from: Data(json.utf8))
                }
                return nil
            }
        }
    }

    package func userWithFederatedEmail(_ email: String) async throws -> UserRecord? {
        try await translating {
            try await onConnection { tx in
                for try await localID in try await tx.query(
                    """
                    SELECT local_id FROM federated_identities WHERE tenant_id = \(tenant) AND lower(email) = \(email.lowercased())
                    ORDER BY linked_at LIMIT 1
                    """
                ).decode(String.self) {
                    return try await tx.user(localID: localID, lock: false)
                }
                return nil
            }
        }
    }

    /// Thrown inside the transaction to roll it back (the nonce unconsumed) and answer
    /// `needConfirmation`.
    private struct NeedsConfirmation: Error {
        let user: UserRecord
    }

    /// Thrown inside the transaction to roll it back when it would create an account not yet counted.
    private struct NeedsAdmission: Error {}

    package func signInFederated(_ request: FederatedSignIn) async throws -> FederatedSignInOutcome {
        // One re-run when a concurrent sign-in or sign-up won the identity or the email (§A.8).
        for attempt in 1...2 {
            do {
                return try await transaction { tx in try await resolve(request, in: tx) }
            } catch let waiting as NeedsConfirmation {
                return .needConfirmation(waiting.user)
            } catch is NeedsAdmission {
                return .creationNeedsAdmission
            } catch let error as AccountError
                where attempt == 1 && (error.code == .emailExists || error.code == .federatedUserIDAlreadyLinked)
            {
                continue
            }
        }
        throw AccountError(.unavailable, "The account is busy, retry shortly.")
    }

    private func resolve(_ request: FederatedSignIn, in tx: StoreTransaction) async throws -> FederatedSignInOutcome {
        let use = request.use
        let assertion = use.assertion
        let now = use.now
        try await tx.spendSingleUseParts(of: use)
        var linked: UserRecord?
        if let owner = try await tx.identityOwner(assertion) { linked = try await tx.user(localID: owner, lock: true) }
        var emailOwner: UserRecord?
        if linked == nil, let email = assertion.email { emailOwner = try await tx.user(email: email, lock: true) }
        let plan = try FederationRules.resolve(
            assertion, trusted: use.trusted, linked: linked, emailOwner: emailOwner, autoCreate: request.autoCreate)
        var localID: String
        var isNewUser = false
        var recycled = false
        // The user as written, when it is known without reading it back.
        var written: UserRecord?
        switch plan {
        case .signIn(let user):
            localID = user.localID
            // A challenged user signs in at the second factor, which writes the last sign-in (§B.3).
            let challenged = request.challenge?.pending(for: user, session: use.session) != nil
            if !challenged, use.session.signInAttributes == nil, use.session.secondFactor == nil {
                // A returning user: the last sign-in and the new session in one statement, as a
                // password or phone sign-in writes them (the user's row is locked since the read).
                guard let ticket = try await tx.signInWrite(use.session, as: user, now: now) else {
                    throw AccountError(.unavailable, "The account is busy, retry shortly.")
                }
                return .signedIn(user.signedIn(now: now), ticket, isNewUser: false, emailRecycled: false)
            }
            written = challenged ? user : user.signedIn(now: now)
            try await tx.writeUser(written!)
        case .needConfirmation(let user):
            throw NeedsConfirmation(user: user)
        case .link(let user, let strip, let emailRecycled):
            localID = user.localID
            recycled = emailRecycled
            // THE RULE (§A.8): the password, phone, other links and pending codes go; sessions end.
            if let strip { try await tx.strip(strip, from: user, now: now) }
            try await tx.query(
                """
                DELETE FROM federated_identities
                WHERE tenant_id = \(tenant) AND local_id = \(localID) AND provider_id = \(assertion.providerID)
                """)
            try await tx.insertIdentity(assertion, localID: localID, now: now)
            try await tx.writeUser(FederationRules.linked(user, assertion: assertion, strip: strip, now: now))
            try await tx.audit(
                strip == nil ? .identityLinked : .identityLinkedAfterTakeover, localID: localID,
                details: ["providerId": assertion.providerID])
        case .create:
            guard request.creationAdmitted else { throw NeedsAdmission() }
            localID = request.newLocalID
            isNewUser = true
            try await tx.insertUsers([.federatedSignUp(localID: localID, assertion: assertion, trusted: use.trusted, now: now)])
        }
        if written == nil { written = try await tx.user(localID: localID, lock: false) }
        guard let user = written else { throw AccountError(.userNotFound) }
        if let pending = request.challenge?.pending(for: user, session: use.session) {
            try await tx.insertPending(pending)
            return .challenged(user)
        }
        let ticket = try await tx.insertSession(use.session, user: user, now: now)
        return .signedIn(user, ticket, isNewUser: isNewUser, emailRecycled: recycled)
    }

    package func linkFederated(_ request: FederatedLink) async throws -> (UserRecord, MintTicket) {
        try await transaction { tx in
            let use = request.use
            let assertion = use.assertion
            let now = use.now
            try await tx.spendSingleUseParts(of: use)
            guard let user = try await tx.user(localID: request.localID, lock: true) else { throw AccountError(.userNotFound) }
            if user.disabled { throw AccountError(.userDisabled) }
            try await tx.check(request.guardSession, user: user)
            let emailOwner = try await assertion.email.asyncMap { try await tx.localID(ofEmail: $0) } ?? nil
            try FederationRules.checkLink(
                assertion, user: user, identityOwner: try await tx.identityOwner(assertion), emailOwner: emailOwner)
            try await tx.insertIdentity(assertion, localID: user.localID, now: now)
            try await tx.writeUser(FederationRules.linking(assertion, to: user, trusted: use.trusted, now: now))
            try await tx.audit(.identityLinked, localID: user.localID, details: ["providerId": assertion.providerID])
            guard let linked = try await tx.user(localID: user.localID, lock: false) else { throw AccountError(.userNotFound) }
            return (linked, try await tx.insertSession(use.session, user: linked, now: now))
        }
    }
}

extension StoreTransaction {
    /// What every use of a credential writes first: its nonce, its flow, its pending token.
    func spendSingleUseParts(of use: FederatedUse) async throws {
        try await recordNonce(use.usedNonce)
        try await spendFlow(use.usedFlow, now: use.now)
        if let pending = use.pending { try await insertPending(pending.hash, pending.assertion, now: use.now, until: use.now + 3600) }
    }

    /// Keeps a pending token's assertion for an hour (§A.6).
    func insertPending(_ tokenHash: [UInt8], _ assertion: IdPAssertion, now: Date, until: Date) async throws {
        for try await _ in try await execute(
            try Prepared.IdPPendingInsert(
                tokenHash: tokenHash, tenant: tenant, providerID: assertion.providerID, assertion: assertion.jsonText, now: now,
                until: until))
        {}
    }

    /// Records a nonce-bearing token as used; a second use is refused.
    func recordNonce(_ nonce: (key: [UInt8], until: Date)?) async throws {
        guard let nonce else { return }
        var fresh = false
        for try await _ in try await execute(try Prepared.IdPNonceRecord(key: nonce.key, until: nonce.until)) {
            fresh = true
        }
        guard fresh else {
            throw AccountError(.missingOrInvalidNonce, "Duplicate credential received. Please try again with a new credential.")
        }
    }

    /// Marks a redirect flow used; one already used (a concurrent callback won) is refused.
    func spendFlow(_ stateHash: [UInt8]?, now: Date) async throws {
        guard let stateHash else { return }
        var spent = false
        for try await _ in try await query(
            """
            UPDATE idp_flows SET used_at = \(now)
            WHERE state_hash = \(Data(stateHash)) AND tenant_id = \(tenant) AND used_at IS NULL AND expires_at > \(now) RETURNING 1
            """)
        {
            spent = true
        }
        guard spent else { throw AccountError(.invalidIDPResponse, "The sign-in session is unknown or expired.") }
    }

    /// The user holding the identity `(providerId, rawId)`, locked.
    func identityOwner(_ assertion: IdPAssertion) async throws -> String? {
        for try await row in try await execute(
            Prepared.IdentityOwner(tenant: tenant, providerID: assertion.providerID, rawID: assertion.rawID))
        {
            return try row.decode(String.self)
        }
        return nil
    }

    /// Adds the link; a concurrent link of the same identity is `FEDERATED_USER_ID_ALREADY_LINKED`.
    func insertIdentity(_ assertion: IdPAssertion, localID: String, now: Date) async throws {
        var inserted = false
        for try await _ in try await query(
            """
            INSERT INTO federated_identities (tenant_id, local_id, provider_id, raw_id, email, display_name, photo_url, linked_at)
            VALUES (\(tenant), \(localID), \(assertion.providerID), \(assertion.rawID), \(assertion.email), \(assertion.displayName),
                \(assertion.photoURL), \(now))
            ON CONFLICT DO NOTHING RETURNING 1
            """)
        {
            inserted = true
        }
        guard inserted else { throw AccountError(.federatedUserIDAlreadyLinked) }
    }
}
