import AccountCore
import AccountTesting
import Foundation
import PostgresNIO
import Synchronization
import Testing

@testable import AccountPostgres

@Suite("Transactions that lose a deadlock run again")
struct ConflictRetryTests {
    @Test("two transactions locking two rows in opposite orders: the victim runs again, both commit exactly once")
    func deadlockVictimRetried() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.execute("CREATE TABLE deadlock_probe (id int PRIMARY KEY, n int NOT NULL)", on: url)
        try await TestDatabase.execute("INSERT INTO deadlock_probe VALUES (1, 0), (2, 0)", on: url)
        // No lock timeout: PostgreSQL's deadlock detector must be what ends the wait. With the pool's
        // 5 s lock timeout, a loaded machine let the timeout fire first ("busy"), which this test is not about.
        let client = try ConnectionPool(
            url: url,
            pool: PoolSettings(
                maximumConnections: 4, minimumConnections: 0, waitSeconds: 60, lockTimeoutSeconds: nil, statementTimeoutSeconds: nil),
            logger: TestDatabase.logger)
        do {
            let store = PostgresAccountStore(database: client, logger: TestDatabase.logger)
            let holding = Counter()  // transactions holding their first row, first attempts only
            let runs = Counter()

            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await Self.bump(1, then: 2, store: store, client: client, holding: holding, runs: runs) }
                group.addTask { try await Self.bump(2, then: 1, store: store, client: client, holding: holding, runs: runs) }
                try await group.waitForAll()
            }

            // At least one transaction lost the deadlock and ran again. On a loaded machine both
            // backends' deadlock checks can fire before either has left the wait graph, and then
            // both are victims and both run again (4): what must hold is the outcome below.
            #expect(runs.value >= 3, "a deadlock victim ran a second time")
            var counts: [Int] = []
            for count in try await client.query("SELECT n FROM deadlock_probe ORDER BY id").decode(Int.self) {
                counts.append(count)
            }
            #expect(counts == [2, 2], "each transaction's two updates committed exactly once")
            await client.shutdown()
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// A count shared by concurrent tasks.
    final class Counter: Sendable {
        private let count = Mutex(0)
        @discardableResult func increment() -> Int {
            count.withLock {
                $0 += 1; return $0
            }
        }
        var value: Int { count.withLock { $0 } }
        func reset() { count.withLock { $0 = 0 } }
    }

    /// Adds 1 to row `first`, waits until the other transaction holds its own first row, then adds
    /// 1 to row `second`: on the first attempt of two opposite calls, a deadlock by construction.
    static func bump(
        _ first: Int, then second: Int, store: PostgresAccountStore, client: ConnectionPool, holding: Counter, runs: Counter
    ) async throws {
        let attempts = Counter()
        try await store.translating {
            let attempt = attempts.increment()
            runs.increment()
            try await client.withTransaction(logger: TestDatabase.logger) { connection in
                try await connection.query("UPDATE deadlock_probe SET n = n + 1 WHERE id = \(first)", logger: TestDatabase.logger)
                if attempt == 1 {
                    // A state, not a time: both transactions hold their first row.
                    holding.increment()
                    while holding.value < 2 { try await Task.sleep(for: .milliseconds(5)) }
                }
                try await connection.query("UPDATE deadlock_probe SET n = n + 1 WHERE id = \(second)", logger: TestDatabase.logger)
            }
        }
    }

    @Test("a conflict that keeps coming is 503 busy after the last attempt; other errors are not retried")
    func boundedAndSelective() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            let store = PostgresAccountStore(database: client, logger: TestDatabase.logger)
            let runs = Counter()
            await #expect(throws: AccountError(.unavailable, "The account is busy, retry shortly.")) {
                try await store.translating {
                    runs.increment()
                    try await client.query(
                        "DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = 'serialization_failure'; END $$", logger: TestDatabase.logger)
                }
            }
            #expect(runs.value == PostgresStore.conflictAttempts)

            runs.reset()
            await #expect(throws: AccountError(.unavailable, "The account is busy, retry shortly.")) {
                try await store.translating {
                    runs.increment()
                    try await client.query(
                        "DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = 'lock_not_available'; END $$", logger: TestDatabase.logger)
                }
            }
            #expect(runs.value == 1, "a lock timeout answers busy at once")
        }
    }
}
