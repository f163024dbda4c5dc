package import AccountCore
package import Foundation
import Logging
import PostgresNIO

/// Custom tokens (federation-and-limits.md §C): the registered signers, and the sign-in
/// transaction with its replay row.
extension PostgresAccountStore: CustomTokenSignerStore {
    package func signers(email: String) async throws -> [CustomTokenSigner] {
        try await translating {
            try await onConnection { tx in
                try await Self.decodeSigners(
                    tx.query(
                        "SELECT \(unescaped: Self.signerColumns) FROM custom_token_signers WHERE tenant_id = \(tenant) AND email = \(email)"
                    ))
            }
        }
    }

    package func signers(project: String) async throws -> [CustomTokenSigner] {
        try await translating {
            try await onConnection { tx in
                try await Self.decodeSigners(
                    tx.query(
                        """
                        SELECT \(unescaped: Self.signerColumns) FROM custom_token_signers
                        WHERE tenant_id = \(tenant) AND project = \(project) ORDER BY created_at, signer_id
                        """))
            }
        }
    }

    package func addSigners(_ signers: [CustomTokenSigner]) async throws {
        try await transaction { tx in
            for signer in signers {
                try await tx.query(
                    """
                    INSERT INTO custom_token_signers (signer_id, tenant_id, project, email, key_id, spki, fingerprint, source, keys_url,
                        created_at)
                    VALUES (\(signer.signerID), \(tenant), \(signer.project), \(signer.email), \(signer.keyID), \(Data(signer.spki)),
                        sha256(\(Data(signer.fingerprintInput))), \(signer.source), \(signer.keysURL), \(signer.createdAt))
                    """)
                try await tx.audit(
                    .customTokenSignerAdded, localID: nil,
                    details: ["signerId": signer.signerID, "serviceAccountEmail": signer.email, "keyId": signer.keyID ?? ""])
            }
            for email in Set(signers.map(\.email)) { try await tx.notify(.signers(email)) }
        }
    }

    package func removeSigner(project: String, signerID: String) async throws -> Bool {
        try await transaction { tx in
            var removed: String?
            for try await email in try await tx.query(
                """
                DELETE FROM custom_token_signers WHERE tenant_id = \(tenant) AND project = \(project) AND signer_id = \(signerID)
                RETURNING email
                """
            ).decode(String.self) {
                removed = email
            }
            guard let removed else { return false }
            try await tx.audit(.customTokenSignerRemoved, localID: nil, details: ["signerId": signerID])
            try await tx.notify(.signers(removed))
            return true
        }
    }

    package func signInWithCustomToken(
        localID: String, replay: (hash: [UInt8], until: Date)?, session: NewSession, now: Date
    ) async throws -> (user: UserRecord, ticket: MintTicket, isNewUser: Bool) {
        try await transaction { tx in
            if let replay {
                var fresh = false
                for try await _ in try await tx.query(
                    """
                    INSERT INTO used_custom_tokens (token_hash, expires_at) VALUES (\(Data(replay.hash)), \(replay.until))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """)
                {
                    fresh = true
                }
                guard fresh else { throw AccountError(.invalidCustomToken, "Custom token has already been used.") }
            }
            // A first sign-in creates the user; two at once for one new uid: the primary key lets
            // one insert, and the other waits on that row and signs in as an existing user.
            let created = !(try await tx.insertUsers([.customTokenSignUp(localID: localID, now: now)], ifAbsent: true).isEmpty)
            guard let existing = try await tx.user(localID: localID, lock: true) else { throw AccountError(.userNotFound) }
            // A refusal rolls the replay row back with everything else: the token stays usable.
            if existing.disabled { throw AccountError(.userDisabled) }
            let user = existing.signedInWithCustomToken(now: now)
            try await tx.writeUser(user)
            let ticket = try await tx.insertSession(session, user: user, now: now)
            if let overlay = session.claimsOverlay {
                try await tx.query(
                    "UPDATE sessions SET claims_overlay = \(overlay) WHERE tenant_id = \(tenant) AND session_id = \(session.sessionID)")
            }
            if created { try await tx.audit(.userCreated, localID: localID, details: ["provider": "custom"], always: false) }
            return (user, ticket, created)
        }
    }

    static let signerColumns = "signer_id, project, email, key_id, spki, source, keys_url, created_at"

    static func decodeSigners(_ rows: PostgresRowSequence) async throws -> [CustomTokenSigner] {
        var signers: [CustomTokenSigner] = []
        for try await (id, project, email, keyID, spki, source, keysURL, createdAt) in rows.decode(
            (String, String, String, String?, Data, String, String?, Date).self)
        {
            signers.append(
                CustomTokenSigner(
                    signerID: id, project: project, email: email, keyID: keyID, spki: Array(spki), source: source, keysURL: keysURL,
                    createdAt: createdAt))
        }
        return signers
    }
}
