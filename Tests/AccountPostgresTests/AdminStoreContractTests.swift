import AccountCore
import AccountPostgres
import Foundation
import Testing

/// The admin ports (`AdminStore`, `UserImportStore`), against PostgreSQL.
@Suite("AdminStore and UserImportStore contract")
struct AdminStoreContractTests {
    let t0 = StoreContract.t0

    @Test("users page in local-id order; a query counts and pages, matches identifiers, and takes LIKE's wildcards literally")
    func pagesAndQueries() async throws {
        try await StoreContract.withStore { store in
            let accounts: any AccountStore = store
            let admin: any AdminStore = store
            for (id, email) in [("a", "x_1@example.com"), ("b", "xa1@example.com"), ("c", "y@example.com"), ("d", nil)] {
                _ = try await accounts.createUser(StoreContract.user(id, email: email), session: nil, now: t0)
            }
            #expect(try await admin.usersPage(after: nil, limit: 2).map(\.localID) == ["a", "b"])
            #expect(try await admin.usersPage(after: "b", limit: 10).map(\.localID) == ["c", "d"])

            var everyone = UserQuery()
            everyone.limit = 2
            everyone.offset = 1
            everyone.descending = true
            let (count, page) = try await admin.query(everyone)
            #expect(count == 4 && page.map(\.localID) == ["c", "b"])

            var prefix = UserQuery()
            prefix.emailPrefix = "X_"
            let (matches, users) = try await admin.query(prefix)
            #expect(matches == 1 && users.map(\.localID) == ["a"], "the underscore is not a wildcard")

            var identifiers = UserQuery()
            identifiers.emails = ["Y@example.com"]
            identifiers.localIDs = ["d"]
            #expect(try await admin.query(identifiers).users.map(\.localID) == ["c", "d"])
        }
    }

    @Test("the audit trail records revocations newest first; a session-cookie mint needs a live session")
    func auditAndMints() async throws {
        try await StoreContract.withStore { store in
            let accounts: any AccountStore = store
            let admin: any AdminStore = store
            let session = StoreContract.session()
            _ = try await accounts.createUser(StoreContract.user("u1"), session: session, now: t0)
            let ticket = try await admin.recordMint(sessionID: session.sessionID, localID: "u1", now: t0 + 1)
            #expect(ticket.authTime == Int64(t0.timeIntervalSince1970))
            _ = try await accounts.revokeSessions(localID: "u1", sessionIDs: nil, reason: .allSessionsRevoked, now: t0 + 2)
            let events = try await admin.auditEvents(localID: "u1", limit: 10)
            #expect(events.first?.action == "ALL_SESSIONS_REVOKED")
            #expect(
                await StoreContract.refusal { _ = try await admin.recordMint(sessionID: session.sessionID, localID: "u1", now: t0 + 3) }
                    != nil)
        }
    }

    @Test("an import writes every user or names the ones it refused; overwriting replaces an existing user")
    func importUsers() async throws {
        try await StoreContract.withStore { store in
            let accounts: any AccountStore = store
            let importer: any UserImportStore = store
            _ = try await accounts.createUser(StoreContract.user("taken", email: "taken@example.com"), session: nil, now: t0)
            let errors = try await importer.importUsers(
                [
                    (0, StoreContract.user("i1", email: "one@example.com", password: true)),
                    (1, StoreContract.user("taken", email: "t2@example.com")),
                ],
                allowOverwrite: false, now: t0)
            #expect(errors.keys.sorted() == [1])
            #expect(try await accounts.user(localID: "i1")?.password != nil)
            #expect(try await accounts.user(localID: "taken")?.email == "taken@example.com")
            let overwritten = try await importer.importUsers(
                [(0, StoreContract.user("taken", email: "t2@example.com"))], allowOverwrite: true, now: t0)
            #expect(overwritten.isEmpty)
            #expect(try await accounts.user(localID: "taken")?.email == "t2@example.com")
        }
    }
}
