import AccountCore
import AccountPostgres
import AccountTesting
import Foundation
import Testing

/// What the store contract suites share: a fresh migrated database per test, a store over it, and
/// the values the ports take. The suites speak to the ports (`any AccountStore`, …), not to the
/// adapter, so another implementation would be held to the same contract; PostgreSQL is the one
/// that counts.
enum StoreContract {
    /// A fixed "now": the contract never reads the machine's clock.
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// The store over a fresh migrated database.
    static func withStore(_ body: @escaping @Sendable (PostgresAccountStore) async throws -> Void) async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            try await body(PostgresAccountStore(database: client, logger: TestDatabase.logger))
        }
    }

    static func user(_ localID: String, email: String? = nil, verified: Bool = false, phone: String? = nil, password: Bool = false)
        -> UserRecord
    {
        var user = UserRecord(
            localID: localID, email: email, emailVerified: verified, phoneNumber: phone, createdAt: t0, validSince: 0,
            tokensValidAfter: t0)
        if password {
            user.password = PasswordCredential(stored: StoredPassword(algorithm: StoredPassword.argon2id, hash: [1, 2, 3]), updatedAt: t0)
        }
        return user
    }

    static func session(provider: String = "password") -> NewSession {
        NewSession(random: SystemRandom(), keyID: "k1", provider: provider, method: provider, userAgent: "tests", ipAddress: "127.0.0.1")
    }

    /// A code of `kind`, with no email to send.
    static func code(_ kind: ActionCodeKind, localID: String?, email: String, newEmail: String? = nil, now: Date = t0) -> OutgoingCode {
        OutgoingCode(
            code: NewActionCode(
                random: SystemRandom(), kind: kind, localID: localID, email: email, newEmail: newEmail, settingsJSON: "{}", lang: "en",
                now: now, lifetimes: ActionCodeLifetimes()),
            email: nil)
    }

    /// The refresh of `session` presenting `generation`, its MAC valid or not.
    static func refresh(_ session: String, generation: Int64, now: Date, macValid: Bool = true) -> RefreshRequest {
        RefreshRequest(
            sessionID: session, generation: generation, graceSeconds: 10, userAgent: nil, ipAddress: nil, now: now,
            verifyMAC: { _, _ in macValid })
    }

    /// The domain error `body` throws, nil when it succeeds.
    static func refusal(_ body: () async throws -> Void) async -> AccountError.Code? {
        do {
            try await body()
            return nil
        } catch let error as AccountError {
            return error.code
        } catch {
            Issue.record("not a domain error: \(String(reflecting: error))")
            return nil
        }
    }
}
