package import AccountCore
package import Foundation
package import Logging
import PostgresNIO

/// Signing keys in PostgreSQL, shared by every replica; private keys arrive and leave sealed.
package struct PostgresSigningKeyStore: SigningKeyStore, PostgresBacked {
    let base: PostgresStore

    /// Creates the store over a running database.
    package init(database: ConnectionPool, logger: Logger) {
        base = PostgresStore(database: database, logger: logger)
    }

    package func publishedKeys(at now: Date) async throws -> [SigningKeyRecord] {
        try await translating { try await readKeys(at: now) }
    }

    private func readKeys(at now: Date) async throws -> [SigningKeyRecord] {
        let rows = try await database.query(
            """
            SELECT kid, public_key_der, certificate_pem, private_key_sealed, kek_id, state, created_at, activated_at, retired_at, remove_after
            FROM signing_keys WHERE remove_after IS NULL OR remove_after > \(now) ORDER BY created_at
            """,
            logger: logger
        )
        var keys: [SigningKeyRecord] = []
        for (kid, publicKey, certificate, sealed, kekID, state, createdAt, activatedAt, retiredAt, removeAfter) in try rows.decode(
            (String, Data, String, Data, String, String, Date, Date?, Date?, Date?).self)
        {
            keys.append(
                SigningKeyRecord(
                    kid: kid, publicKeyDER: Array(publicKey), certificatePEM: certificate, sealedPrivateKey: Array(sealed), kekID: kekID,
                    state: SigningKeyRecord.State(rawValue: state) ?? .retired, createdAt: createdAt, activatedAt: activatedAt,
                    retiredAt: retiredAt, removeAfter: removeAfter))
        }
        return keys
    }

    package func insert(_ key: SigningKeyRecord) async throws {
        try await translating {
            do {
                try await insertRow(key)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                throw SigningKeyConflict()
            }
        }
    }

    private func insertRow(_ key: SigningKeyRecord) async throws {
        try await database.query(
            """
            INSERT INTO signing_keys (kid, public_key_der, certificate_pem, private_key_sealed, kek_id, state, created_at,
                activated_at, retired_at, remove_after)
            VALUES (\(key.kid), \(Data(key.publicKeyDER)), \(key.certificatePEM), \(Data(key.sealedPrivateKey)), \(key.kekID),
                \(key.state.rawValue), \(key.createdAt), \(key.activatedAt), \(key.retiredAt), \(key.removeAfter))
            """,
            logger: logger
        )
    }

    /// Promoting the key that is already current does nothing; promoting one that is neither `next`
    /// nor current (retired, unknown) throws ``SigningKeyConflict``: another replica moved on. The
    /// key's row is locked first, so two replicas promoting one key at once cannot retire it.
    package func promote(kid: String, at now: Date, retiredRemoveAfter: Date) async throws {
        try await transaction { tx in
            var state: String?
            for try await value in try await tx.query("SELECT state FROM signing_keys WHERE kid = \(kid) FOR UPDATE").decode(String.self) {
                state = value
            }
            switch state {
            case "current": return
            case "next": break
            default: throw SigningKeyConflict()
            }
            try await tx.query(
                """
                UPDATE signing_keys SET state = 'retired', retired_at = \(now), remove_after = \(retiredRemoveAfter)
                WHERE state = 'current'
                """)
            try await tx.query("UPDATE signing_keys SET state = 'current', activated_at = \(now) WHERE kid = \(kid) AND state = 'next'")
        }
    }
}
