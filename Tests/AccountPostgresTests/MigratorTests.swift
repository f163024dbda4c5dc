import AccountCore
import AccountPostgres
import AccountTesting
import Foundation
import PostgresNIO
import Testing

@Suite("Migrator against real PostgreSQL")
struct MigratorTests {
    let migrations = try! Migration.load(from: TestDatabase.migrationsDirectory)

    @Test("the migrations apply to an empty database and a second run is a no-op")
    func appliesThenNoOp() async throws {
        let url = try await TestDatabase.createEmpty()
        try await TestDatabase.withClient(url) { client in
            let migrator = Migrator(migrations: migrations, database: client, logger: TestDatabase.logger)
            let before = try await migrator.status()
            #expect(before.applied.isEmpty)
            #expect(before.pending == migrations.map(\.name))

            let first = try await migrator.migrate()
            #expect(first == migrations.map(\.name))
            let second = try await migrator.migrate()
            #expect(second.isEmpty)
            try await migrator.requireCurrent()

            // The schema is real: the case-insensitive email index refuses a second spelling.
            try await client.query(
                """
                INSERT INTO users (local_id, email, created_at, tokens_valid_after, valid_since)
                VALUES ('u1', 'alice@example.com', now(), now(), 0)
                """
            )
            await #expect(throws: PSQLError.self) {
                try await client.query(
                    """
                    INSERT INTO users (local_id, email, created_at, tokens_valid_after, valid_since)
                    VALUES ('u2', lower('ALICE@example.COM'), now(), now(), 0)
                    """
                )
            }
        }
    }

    @Test("an applied migration that was edited is refused, naming the file")
    func editedMigrationDetected() async throws {
        let url = try await TestDatabase.createEmpty()
        let folder = try copyOfMigrations()
        try await TestDatabase.withClient(url) { client in
            try await Migrator(migrations: try Migration.load(from: folder), database: client, logger: TestDatabase.logger).migrate()
            let first = try #require(migrations.first)
            let edited = folder.appendingPathComponent(first.name)
            try (first.sql + "\n-- edited\n").write(to: edited, atomically: true, encoding: .utf8)
            let migrator = Migrator(migrations: try Migration.load(from: folder), database: client, logger: TestDatabase.logger)
            #expect(try await migrator.status().problem == .edited(first.name))
            await #expect(throws: MigrationError.edited(first.name)) { try await migrator.requireCurrent() }
            await #expect(throws: MigrationError.edited(first.name)) { try await migrator.migrate() }
        }
    }

    @Test("a new file is pending until migrated; a failing file rolls back whole")
    func pendingAndFailingMigrations() async throws {
        let url = try await TestDatabase.createEmpty()
        let folder = try copyOfMigrations()
        try await TestDatabase.withClient(url) { client in
            try await Migrator(migrations: try Migration.load(from: folder), database: client, logger: TestDatabase.logger).migrate()

            try "CREATE TABLE extra (id int);\nSELECT no_such_function();\n"
                .write(to: folder.appendingPathComponent("9001_add_broken.sql"), atomically: true, encoding: .utf8)
            let migrator = Migrator(migrations: try Migration.load(from: folder), database: client, logger: TestDatabase.logger)
            await #expect(throws: MigrationError.pending(["9001_add_broken.sql"])) { try await migrator.requireCurrent() }
            await #expect {
                try await migrator.migrate()
            } throws: { error in
                guard case MigrationError.failed(let name, _) = error else { return false }
                return name == "9001_add_broken.sql"
            }
            // Rolled back: the table from the file's first statement does not exist.
            let exists = try await client.query("SELECT to_regclass('extra') IS NOT NULL").first?.decode(Bool.self)
            #expect(exists == false)
            #expect(try await migrator.status().pending == ["9001_add_broken.sql"])
        }
    }

    @Test("two migrators racing on one database apply each file once")
    func concurrentMigrators() async throws {
        let url = try await TestDatabase.createEmpty()
        try await TestDatabase.withClient(url) { client in
            let results = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        try await Migrator(migrations: migrations, database: client, logger: TestDatabase.logger).migrate()
                    }
                }
                return try await group.reduce(into: [[String]]()) { $0.append($1) }
            }
            #expect(results.flatMap { $0 }.sorted() == migrations.map(\.name).sorted())
        }
    }

    @Test("file names must be NNNN_name.sql")
    func badFileName() {
        #expect(throws: MigrationError.badFileName("create.sql")) { try Migration(name: "create.sql", sql: "") }
        #expect(throws: (any Error).self) { try Migration(name: "0001-create.sql", sql: "") }
        let migration = try? Migration(name: "0042_add_thing.sql", sql: "")
        #expect(migration?.version == 42)
    }

    private func copyOfMigrations() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: TestDatabase.migrationsDirectory, to: folder)
        return folder
    }
}

@Suite("Readiness probe")
struct ReadinessProbeTests {
    @Test("not ready on an unmigrated database, ready once migrated, not ready when unreachable")
    func readiness() async throws {
        let migrations = try Migration.load(from: TestDatabase.migrationsDirectory)
        let url = try await TestDatabase.createEmpty()
        try await TestDatabase.withClient(url) { client in
            let migrator = Migrator(migrations: migrations, database: client, logger: TestDatabase.logger)
            // A budget no loaded machine runs out of: this test is about the answers, not the clock.
            let probe = PostgresReadinessProbe(migrator: migrator, database: client, timeout: .seconds(60))
            let before = await probe.check()
            guard case .notReady(let reason) = before else {
                Issue.record("an unmigrated database must not be ready")
                return
            }
            #expect(reason.contains("0001_create_schema.sql"))
            try await migrator.migrate()
            let after = await probe.check()
            #expect(after == .ready)
        }
        var unreachable = try TestDatabase.serverURL()
        unreachable.port = 1
        try await TestDatabase.withClient(unreachable) { client in
            let probe = PostgresReadinessProbe(
                migrator: Migrator(migrations: migrations, database: client, logger: TestDatabase.logger), database: client)
            let result = await probe.check()
            #expect(result == .notReady("database unreachable"))
        }
    }
}

@Suite("Splitting SQL files into statements")
struct SQLScriptTests {
    @Test("semicolons in comments, strings, identifiers and dollar quotes do not split")
    func splitting() {
        let sql = """
            -- a comment; with a semicolon
            CREATE TABLE "odd;name" (v text DEFAULT 'a;b''c');
            /* block; comment */
            CREATE FUNCTION f() RETURNS trigger AS $fn$ BEGIN PERFORM 1; RETURN NEW; END $fn$ LANGUAGE plpgsql;
            SELECT $$x;y$$;
            """
        let statements = SQLScript.statements(sql)
        #expect(statements.count == 3)
        #expect(statements[0].hasSuffix("DEFAULT 'a;b''c')"))
        #expect(statements[1].contains("PERFORM 1; RETURN NEW; END $fn$ LANGUAGE plpgsql"))
        #expect(statements[2] == "SELECT $$x;y$$")
    }
}

@Suite("Expired-row sweeper")
struct ExpiredRowSweeperTests {
    @Test("removes old spent codes, old revoked sessions and old delivered mail; keeps everything recent or live")
    func sweeps() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { client in
            try await client.query(
                """
                INSERT INTO action_codes (code_hash, kind, email, created_at, expires_at, used_at) VALUES
                  ('\\x01', 'VERIFY_EMAIL', 'a@example.com', now() - interval '20 days', now() - interval '10 days', NULL),
                  ('\\x02', 'VERIFY_EMAIL', 'a@example.com', now() - interval '2 days', now() + interval '1 day', now() - interval '1 day'),
                  ('\\x03', 'VERIFY_EMAIL', 'a@example.com', now(), now() + interval '1 day', NULL)
                """
            )
            try await client.query(
                """
                INSERT INTO sessions (session_id, local_id, created_at, auth_time, sign_in_provider, sign_in_method,
                    generation_issued_at, refresh_salt, refresh_key_id, revoked_at) VALUES
                  ('old', 'u', now(), 0, 'password', 'password', now(), '\\x00', 'k', now() - interval '31 days'),
                  ('new', 'u', now(), 0, 'password', 'password', now(), '\\x00', 'k', now() - interval '1 day'),
                  ('live', 'u', now(), 0, 'password', 'password', now(), '\\x00', 'k', NULL)
                """
            )
            try await client.query(
                """
                INSERT INTO email_outbox (kind, recipient, subject, status, created_at) VALUES
                  ('VERIFY_EMAIL', 'a@example.com', 's', 'sent', now() - interval '8 days'),
                  ('VERIFY_EMAIL', 'a@example.com', 's', 'pending', now() - interval '8 days')
                """
            )
            // Abuse limits: a full-again bucket and a stale failure count go; a live bucket, a recent
            // count and a count whose lock is in force stay.
            try await client.query(
                """
                INSERT INTO rate_limits (bucket, key, tat, expires_at) VALUES
                  ('mail_per_ip', '\\x01', now() - interval '2 hours', now() - interval '1 hour'),
                  ('mail_per_ip', '\\x02', now() + interval '1 minute', now() + interval '1 hour')
                """
            )
            try await client.query(
                """
                INSERT INTO password_failures (key, class, failures, last_failure_at, locked_until) VALUES
                  ('\\x01', 'unknown', 3, now() - interval '13 hours', NULL),
                  ('\\x02', 'unknown', 3, now() - interval '1 hour', NULL),
                  ('\\x03', 'unknown', 100, now() - interval '13 hours', 'infinity')
                """
            )
            // Custom tokens and IdP state: expired rows go, live ones stay.
            try await client.query(
                """
                INSERT INTO used_custom_tokens (token_hash, expires_at) VALUES ('\\x01', now() - interval '1 minute'), ('\\x02', now() + interval '1 hour')
                """
            )
            try await client.query(
                """
                INSERT INTO idp_used_nonces (nonce_key, expires_at) VALUES ('\\x01', now() - interval '1 minute'), ('\\x02', now() + interval '1 hour')
                """
            )
            try await client.query(
                """
                INSERT INTO idp_pending (token_hash, provider_id, assertion, created_at, expires_at) VALUES
                  ('\\x01', 'oidc.x', '{}', now() - interval '2 hours', now() - interval '1 hour'),
                  ('\\x02', 'oidc.x', '{}', now(), now() + interval '1 hour')
                """
            )
            try await client.query(
                """
                INSERT INTO idp_flows (state_hash, provider_id, session_id, redirect_uri, code_flow, created_at, expires_at) VALUES
                  ('\\x01', 'oidc.x', 's', 'https://a', false, now() - interval '2 days', now() - interval '2 days'),
                  ('\\x02', 'oidc.x', 's', 'https://a', false, now(), now() + interval '10 minutes')
                """
            )
            let removed = try await ExpiredRowSweeper(database: client, logger: TestDatabase.logger, failureReset: 12 * 3600).sweepOnce()
            #expect(removed == 9)
            var remaining: [Int] = []
            for table in ["used_custom_tokens", "idp_used_nonces", "idp_pending", "idp_flows"] {
                for n in try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM \(table)")).decode(Int.self) {
                    remaining.append(n)
                }
            }
            #expect(remaining == [1, 1, 1, 1])
            var limits: [String] = []
            for row in try await client.query(
                "SELECT 'r' || encode(key, 'hex') FROM rate_limits UNION ALL SELECT 'f' || encode(key, 'hex') FROM password_failures ORDER BY 1"
            ).decode(String.self) {
                limits.append(row)
            }
            #expect(limits == ["f02", "f03", "r02"])
            var sessions: [String] = []
            for id in try await client.query("SELECT session_id FROM sessions ORDER BY session_id").decode(String.self) {
                sessions.append(id)
            }
            #expect(sessions == ["live", "new"])
            var codes = 0
            for n in try await client.query("SELECT count(*)::int FROM action_codes").decode(Int.self) { codes = n }
            #expect(codes == 2)
        }
    }
}
