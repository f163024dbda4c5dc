import AccountCore
import AccountPostgres
import Foundation
import Testing

/// The accounts and sessions port (`AccountStore`), against PostgreSQL.
@Suite("AccountStore contract")
struct AccountStoreContractTests {
    let t0 = StoreContract.t0

    @Test("users are found by id, by email in any case, by phone; each once; unique email, phone and id are enforced")
    func usersAndUniqueness() async throws {
        try await StoreContract.withStore { store in
            let store: any AccountStore = store
            _ = try await store.createUser(StoreContract.user("u1", email: "ann@example.com", phone: "+15550001"), session: nil, now: t0)
            _ = try await store.createUser(StoreContract.user("u2", email: "bob@example.com"), session: nil, now: t0)
            #expect(try await store.user(localID: "u1")?.email == "ann@example.com")
            #expect(try await store.user(email: "ANN@example.com")?.localID == "u1")
            #expect(try await store.user(localID: "nobody") == nil)
            let found = try await store.users(localIDs: ["u2", "u1"], emails: ["ann@example.com"], phoneNumbers: ["+15550001"])
            #expect(found.map(\.localID) == ["u1", "u2"], "ids first (in id order), then the rest, each user once")
            #expect(
                await StoreContract.refusal {
                    _ = try await store.createUser(StoreContract.user("u3", email: "ann@example.com"), session: nil, now: t0)
                }
                    == .emailExists)
            #expect(
                await StoreContract.refusal {
                    _ = try await store.createUser(StoreContract.user("u3", phone: "+15550001"), session: nil, now: t0)
                }
                    == .phoneNumberExists)
            #expect(
                await StoreContract.refusal { _ = try await store.createUser(StoreContract.user("u1"), session: nil, now: t0) }
                    == .duplicateLocalID)
            #expect(try await store.user(localID: "u3") == nil, "a refused creation wrote nothing")
        }
    }

    @Test("a sign-in re-checks what the caller verified: the credential version, the account enabled, the account there")
    func startSession() async throws {
        try await StoreContract.withStore { store in
            let store: any AccountStore = store
            let (created, _) = try await store.createUser(
                StoreContract.user("u1", email: "ann@example.com", password: true), session: nil, now: t0)
            let (signedIn, ticket) = try await store.startSession(
                for: created, upgradedPassword: nil, session: StoreContract.session(), now: t0)
            #expect(signedIn.lastLoginAt == t0)
            #expect(ticket.issuedAt == Int64(t0.timeIntervalSince1970) && ticket.authTime == ticket.issuedAt)
            #expect(try await store.sessions(localID: "u1", includeRevoked: false, limit: 10, before: nil).count == 1)

            var stale = created
            stale.credentialVersion += 1
            #expect(
                await StoreContract.refusal {
                    _ = try await store.startSession(for: stale, upgradedPassword: nil, session: StoreContract.session(), now: t0)
                }
                    == .invalidPassword)
            var change = UserChange()
            change.disabled = true
            _ = try await store.update(localID: "u1", guardSession: nil, change: change, replacement: nil, now: t0)
            #expect(
                await StoreContract.refusal {
                    _ = try await store.startSession(for: created, upgradedPassword: nil, session: StoreContract.session(), now: t0)
                }
                    == .userDisabled)
            try await store.delete(localID: "u1", guardSession: nil, now: t0)
            #expect(
                await StoreContract.refusal {
                    _ = try await store.startSession(for: created, upgradedPassword: nil, session: StoreContract.session(), now: t0)
                }
                    == .userNotFound)
        }
    }

    @Test("sessions list newest first and page by (created, id); revoked ones only when asked")
    func sessionListing() async throws {
        try await StoreContract.withStore { store in
            let store: any AccountStore = store
            let (user, _) = try await store.createUser(StoreContract.user("u1", password: true), session: nil, now: t0)
            var ids: [String] = []
            for second in 0..<5 {
                let session = StoreContract.session()
                _ = try await store.startSession(for: user, upgradedPassword: nil, session: session, now: t0 + Double(second))
                ids.append(session.sessionID)
            }
            _ = try await store.revokeSessions(localID: "u1", sessionIDs: [ids[4]], reason: .adminRevoked, now: t0 + 10)
            let live = try await store.sessions(localID: "u1", includeRevoked: false, limit: 10, before: nil)
            #expect(live.map(\.sessionID) == ids[0..<4].reversed())
            let first = try await store.sessions(localID: "u1", includeRevoked: true, limit: 2, before: nil)
            #expect(first.map(\.sessionID) == [ids[4], ids[3]])
            let last = try #require(first.last)
            let next = try await store.sessions(
                localID: "u1", includeRevoked: true, limit: 10, before: SessionCursor(createdAt: last.createdAt, sessionID: last.sessionID))
            #expect(next.map(\.sessionID) == [ids[2], ids[1], ids[0]])
        }
    }

    @Test("refresh rotates, tolerates the previous token within the grace, revokes the session on reuse, refuses a bad MAC")
    func refresh() async throws {
        try await StoreContract.withStore { store in
            let store: any AccountStore = store
            let session = StoreContract.session()
            let (user, _) = try await store.createUser(StoreContract.user("u1", password: true), session: session, now: t0)
            _ = user
            guard
                case .refreshed(_, let rotated, let ticket) = try await store.refresh(
                    StoreContract.refresh(session.sessionID, generation: 0, now: t0 + 60))
            else { Issue.record("not refreshed"); return }
            #expect(rotated.generation == 1 && ticket.authTime == Int64(t0.timeIntervalSince1970))
            guard
                case .refreshed(_, let tolerated, _) = try await store.refresh(
                    StoreContract.refresh(session.sessionID, generation: 0, now: t0 + 65))
            else { Issue.record("a replay within the grace was not tolerated"); return }
            #expect(tolerated.generation == 1, "a tolerated replay does not rotate")
            #expect(
                await StoreContract.refusal {
                    _ = try await store.refresh(StoreContract.refresh(session.sessionID, generation: 1, now: t0 + 66, macValid: false))
                }
                    == .invalidRefreshToken)
            guard case .reused = try await store.refresh(StoreContract.refresh(session.sessionID, generation: 0, now: t0 + 120)) else {
                Issue.record("a replay after the grace was not reuse"); return
            }
            let state = try #require(try await store.sessionState(sessionID: session.sessionID))
            #expect(!state.sessionLive, "reuse revokes the session")
            #expect(
                await StoreContract.refusal {
                    _ = try await store.refresh(StoreContract.refresh(session.sessionID, generation: 1, now: t0 + 121))
                }
                    != nil, "the current token of a revoked session no longer refreshes")
        }
    }

    @Test("an update writes every field in one go, starts a new credential version with a new password, and revokes for it")
    func update() async throws {
        try await StoreContract.withStore { store in
            let store: any AccountStore = store
            let session = StoreContract.session()
            let (user, _) = try await store.createUser(
                StoreContract.user("u1", email: "ann@example.com", verified: true, phone: "+15550001", password: true), session: session,
                now: t0)
            var profile = UserChange()
            profile.displayName = .set("Ann")
            profile.photoURL = .set("https://example.com/a.png")
            profile.customAttributes = .set(#"{"role":"admin"}"#)
            let (named, _, _) = try await store.update(localID: "u1", guardSession: nil, change: profile, replacement: nil, now: t0)
            #expect(
                named.displayName == "Ann" && named.photoURL == "https://example.com/a.png"
                    && named.customAttributes == #"{"role":"admin"}"#)
            #expect(named.email == "ann@example.com" && named.emailVerified && named.phoneNumber == "+15550001", "kept fields are kept")
            #expect(try await store.sessionState(sessionID: session.sessionID)?.sessionLive == true, "a profile change revokes nothing")

            var rekey = UserChange()
            rekey.displayName = .clear
            rekey.email = .set("ann2@example.com")
            rekey.password = StoredPassword(algorithm: StoredPassword.argon2id, hash: [9])
            rekey.deleteProviders = ["phone"]
            let replacement = StoreContract.session()
            let (changed, ticket, _) = try await store.update(
                localID: "u1", guardSession: SessionGuard(sessionID: session.sessionID, issuedAt: 0), change: rekey,
                replacement: replacement,
                now: t0 + 5)
            #expect(changed.displayName == nil && changed.email == "ann2@example.com" && !changed.emailVerified)
            #expect(changed.initialEmail == "ann@example.com" && changed.phoneNumber == nil)
            #expect(changed.password?.stored.hash == [9] && changed.credentialVersion > user.credentialVersion)
            #expect(changed.validSince > user.validSince && ticket != nil)
            #expect(
                try await store.sessionState(sessionID: session.sessionID)?.sessionLive == false, "a new password revokes the old sessions")
            #expect(try await store.sessionState(sessionID: replacement.sessionID)?.sessionLive == true, "the replacement is created after")

            // The old session's guard no longer admits a change.
            #expect(
                await StoreContract.refusal {
                    _ = try await store.update(
                        localID: "u1", guardSession: SessionGuard(sessionID: session.sessionID, issuedAt: changed.validSince),
                        change: profile, replacement: nil, now: t0 + 6)
                } == .tokenExpired)
            var unlink = UserChange()
            unlink.deleteProviders = ["password"]
            let (unlinked, _, _) = try await store.update(localID: "u1", guardSession: nil, change: unlink, replacement: nil, now: t0 + 7)
            #expect(unlinked.password == nil && unlinked.credentialVersion == changed.credentialVersion + 1)
        }
    }

    @Test("revoking sessions: only the user's own (SESSION_NOT_FOUND otherwise), or all of them with validSince moved")
    func revokeSessions() async throws {
        try await StoreContract.withStore { store in
            let store: any AccountStore = store
            let mine = StoreContract.session()
            let theirs = StoreContract.session()
            _ = try await store.createUser(StoreContract.user("u1"), session: mine, now: t0)
            _ = try await store.createUser(StoreContract.user("u2"), session: theirs, now: t0)
            #expect(
                await StoreContract.refusal {
                    _ = try await store.revokeSessions(localID: "u1", sessionIDs: [theirs.sessionID], reason: .adminRevoked, now: t0)
                } == .sessionNotFound)
            #expect(try await store.sessionState(sessionID: theirs.sessionID)?.sessionLive == true)
            let (revoked, validSince) = try await store.revokeSessions(
                localID: "u1", sessionIDs: nil, reason: .allSessionsRevoked, now: t0 + 1)
            #expect(revoked == [mine.sessionID] && validSince > 0)
            #expect(try await store.user(localID: "u1")?.validSince == validSince)
            #expect(
                try await store.revokeSessions(localID: "u1", sessionIDs: [mine.sessionID], reason: .adminRevoked, now: t0 + 2).revoked
                    .isEmpty)
        }
    }

    @Test("deleting a user leaves its sessions as tombstones the token check reads as gone")
    func delete() async throws {
        try await StoreContract.withStore { store in
            let store: any AccountStore = store
            let session = StoreContract.session()
            _ = try await store.createUser(StoreContract.user("u1", email: "ann@example.com"), session: session, now: t0)
            try await store.delete(localID: "u1", guardSession: nil, now: t0)
            #expect(try await store.user(localID: "u1") == nil)
            let state = try #require(try await store.sessionState(sessionID: session.sessionID))
            #expect(!state.sessionLive && !state.userExists)
            #expect(await StoreContract.refusal { try await store.delete(localID: "u1", guardSession: nil, now: t0) } == .userNotFound)
            // The address is free again.
            _ = try await store.createUser(StoreContract.user("u9", email: "ann@example.com"), session: nil, now: t0)
        }
    }
}
