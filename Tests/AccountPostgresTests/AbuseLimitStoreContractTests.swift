import AccountCore
import AccountPostgres
import AccountTesting
import Foundation
import PostgresNIO
import Testing

/// The abuse-limit port (`AbuseLimitStore`, federation-and-limits.md §E.3, §E.4), against PostgreSQL.
@Suite("AbuseLimitStore contract")
struct AbuseLimitStoreContractTests {
    let t0 = StoreContract.t0

    static func withStores(
        _ body: @escaping @Sendable (any AbuseLimitStore, any AccountStore, ConnectionPool) async throws -> Void
    ) async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            try await body(
                PostgresAbuseLimitStore(database: client, logger: TestDatabase.logger),
                PostgresAccountStore(database: client, logger: TestDatabase.logger), client)
        }
    }

    @Test("a bucket (GCRA) allows its burst, then one a period; a refusal names the wait; a peek takes nothing")
    func buckets() async throws {
        try await Self.withStores { (limits, _, _) async throws in
            let bucket = RateBucket(burst: 3, period: 10)
            let key: [UInt8] = [1, 2, 3]
            #expect(try await limits.peek("b", bucket, key: key, now: t0) == nil)
            for _ in 1...3 { #expect(try await limits.consume("b", bucket, key: key, now: t0) == nil) }
            #expect(try await limits.consume("b", bucket, key: key, now: t0) == 10)
            #expect(try await limits.peek("b", bucket, key: key, now: t0) == 10)
            #expect(try await limits.peek("b", bucket, key: key, now: t0 + 4) == 6)
            #expect(try await limits.consume("b", bucket, key: key, now: t0 + 10) == nil, "one more a period")
            #expect(try await limits.consume("b", bucket, key: key, now: t0 + 10) == 10)
            // Another key and another bucket name are counted apart.
            #expect(try await limits.consume("b", bucket, key: [9], now: t0) == nil)
            #expect(try await limits.consume("other", bucket, key: key, now: t0) == nil)
        }
    }

    @Test("failures count per key and class, start afresh after the reset period; a lock never shortens; clearing says whether it cleared")
    func failuresAndLocks() async throws {
        try await Self.withStores { (limits, _, _) async throws in
            let key: [UInt8] = [7]
            #expect(try await limits.recordFailure(key: key, network: .unknown, now: t0, resetSeconds: 60) == 1)
            #expect(try await limits.recordFailure(key: key, network: .unknown, now: t0 + 1, resetSeconds: 60) == 2)
            #expect(try await limits.recordFailure(key: key, network: .known, now: t0 + 1, resetSeconds: 60) == 1)
            #expect(try await limits.recordFailure(key: key, network: .unknown, now: t0 + 62, resetSeconds: 60) == 1, "afresh")
            try await limits.lock(key: key, network: .unknown, until: t0 + 500, failures: 5)
            try await limits.lock(key: key, network: .unknown, until: t0 + 100, failures: 6)
            let check = try await limits.passwordPrecheck(
                email: "nobody@example.com", emailKey: key, address: nil, addressKey: nil, bucket: nil, since: t0 - 86400, now: t0 + 70)
            #expect(check.network == .unknown && check.hasFailures && check.lockedUntil == t0 + 500, "never shortened")
            #expect(try await limits.clearFailures(key: key, networks: [.unknown]))
            #expect(try await limits.clearFailures(key: key, networks: [.unknown]) == false)
            #expect(try await limits.clearFailures(key: key, networks: NetworkClass.allCases), "the known class was still there")
        }
    }

    @Test(
        "the precheck: an address is known from the account's sessions (an IPv6 /64 too, never a disowned one), the bucket's wait, the class's row"
    )
    func precheck() async throws {
        try await Self.withStores { (limits, accounts, client) async throws in
            var session = StoreContract.session()
            session.ipAddress = "198.51.100.7"
            _ = try await accounts.createUser(StoreContract.user("u1", email: "ann@example.com"), session: session, now: t0)
            var v6 = StoreContract.session()
            v6.ipAddress = "2001:db8:1:2::5"
            _ = try await accounts.startSession(
                for: try #require(try await accounts.user(localID: "u1")), upgradedPassword: nil, session: v6, now: t0)
            func network(_ address: String, now: Date = StoreContract.t0 + 60) async throws -> NetworkClass {
                try await limits.passwordPrecheck(
                    email: "ann@example.com", emailKey: [1], address: address, addressKey: nil, bucket: nil, since: t0 - 86400, now: now
                ).network
            }
            #expect(try await network("198.51.100.7") == .known)
            #expect(try await network("2001:db8:1:2::99") == .known, "the same /64")
            #expect(try await network("2001:db8:1:3::5") == .unknown)
            #expect(try await network("203.0.113.9") == .unknown)
            // A session ended by THE RULE or a reset may have been a squatter's: it proves nothing.
            try await client.query("UPDATE sessions SET revoked_at = now(), revoke_reason = 'EMAIL_LINK_TAKEOVER_PROTECTION'")
            #expect(try await network("198.51.100.7") == .unknown)
            try await client.query("UPDATE sessions SET revoke_reason = 'ADMIN_REVOKED'")
            #expect(try await network("198.51.100.7") == .known, "an ordinary revocation still says where the owner was")

            let bucket = RateBucket(burst: 1, period: 30)
            _ = try await limits.consume("p", bucket, key: [5], now: t0)
            _ = try await limits.consume("p", bucket, key: [5], now: t0)
            let spent = try await limits.passwordPrecheck(
                email: "ann@example.com", emailKey: [1], address: "203.0.113.9", addressKey: [5], bucket: ("p", bucket),
                since: t0 - 86400, now: t0)
            #expect(spent.addressWait == 30 && !spent.hasFailures && spent.lockedUntil == nil)
        }
    }
}
