import AccountCore
import AccountPostgres
import Foundation
import Testing

/// The email-action port (`ActionCodeStore`), against PostgreSQL.
@Suite("ActionCodeStore contract")
struct ActionCodeStoreContractTests {
    let t0 = StoreContract.t0

    @Test("a code is found by its text, spent once, refused when expired, and retired by a newer one of its kind")
    func codes() async throws {
        try await StoreContract.withStore { store in
            let accounts: any AccountStore = store
            let codes: any ActionCodeStore = store
            _ = try await accounts.createUser(StoreContract.user("u1", email: "ann@example.com"), session: nil, now: t0)
            let first = StoreContract.code(.verifyEmail, localID: "u1", email: "ann@example.com")
            try await codes.store(first, precondition: nil)
            let record = try #require(try await codes.code(first.code.code))
            #expect(record.kind == .verifyEmail && record.email == "ann@example.com" && record.usedAt == nil)
            #expect(try await codes.code("not-a-code") == nil)

            let second = StoreContract.code(.verifyEmail, localID: "u1", email: "ann@example.com")
            try await codes.store(second, precondition: nil)
            #expect(try await codes.code(first.code.code)?.usedAt != nil, "a newer code of the same kind retires the older")
            #expect(await StoreContract.refusal { _ = try await codes.apply(first.code.code, recover: nil, now: t0) } == .invalidOOBCode)

            let late = t0 + ActionCodeLifetimes().verifyEmail + 1
            #expect(await StoreContract.refusal { _ = try await codes.apply(second.code.code, recover: nil, now: late) } == .expiredOOBCode)
            #expect(try await codes.code(second.code.code)?.usedAt == nil, "a refused code is not spent")
            let verified = try await codes.apply(second.code.code, recover: nil, now: t0 + 1)
            #expect(verified.emailVerified)
            #expect(
                await StoreContract.refusal { _ = try await codes.apply(second.code.code, recover: nil, now: t0 + 2) } == .invalidOOBCode)
        }
    }

    @Test("a code for a user is written only if what it was decided on still holds under the user's lock")
    func precondition() async throws {
        try await StoreContract.withStore { store in
            let accounts: any AccountStore = store
            let codes: any ActionCodeStore = store
            let (user, _) = try await accounts.createUser(
                StoreContract.user("u1", email: "ann@example.com", password: true), session: nil, now: t0)
            let code = StoreContract.code(.passwordReset, localID: "u1", email: "ann@example.com")
            let stale = IssuePrecondition(
                localID: "u1", session: nil, credentialVersion: user.credentialVersion + 1, email: "ann@example.com")
            #expect(await StoreContract.refusal { try await codes.store(code, precondition: stale) } == .unavailable)
            #expect(try await codes.code(code.code.code) == nil, "nothing was written")
            let current = IssuePrecondition(
                localID: "u1", session: nil, credentialVersion: user.credentialVersion, email: "ann@example.com")
            try await codes.store(code, precondition: current)
            #expect(try await codes.code(code.code.code) != nil)
        }
    }

    @Test("a password reset on an unverified account strips what was attached unproven, keeps the new password, revokes every session")
    func resetStrips() async throws {
        try await StoreContract.withStore { store in
            let accounts: any AccountStore = store
            let codes: any ActionCodeStore = store
            let squatter = StoreContract.session()
            _ = try await accounts.createUser(
                StoreContract.user("u1", email: "ann@example.com", phone: "+15550001", password: true), session: squatter, now: t0)
            let reset = StoreContract.code(.passwordReset, localID: "u1", email: "ann@example.com")
            try await codes.store(reset, precondition: nil)
            let user = try await codes.resetPassword(
                reset.code.code, password: StoredPassword(algorithm: StoredPassword.argon2id, hash: [7]), now: t0 + 1)
            #expect(user.emailVerified && user.phoneNumber == nil && user.password?.stored.hash == [7])
            #expect(try await accounts.sessionState(sessionID: squatter.sessionID)?.sessionLive == false)
            #expect(
                await StoreContract.refusal {
                    _ = try await codes.resetPassword(
                        reset.code.code, password: StoredPassword(algorithm: StoredPassword.argon2id, hash: [8]), now: t0 + 2)
                } == .invalidOOBCode, "a reset code is single-use")
        }
    }

    @Test("email-link completion: only with the address sent to; creates the account, or strips an unverified one (THE RULE), or links")
    func emailLink() async throws {
        try await StoreContract.withStore { store in
            let accounts: any AccountStore = store
            let codes: any ActionCodeStore = store
            func complete(_ code: OutgoingCode, email: String, linkTo: (String, SessionGuard)? = nil) async throws -> (
                UserRecord, MintTicket?, isNewUser: Bool
            ) {
                try await codes.completeEmailLink(
                    EmailLinkCompletion(
                        code: code.code.code, email: email, newLocalID: "new1", linkTo: linkTo,
                        session: StoreContract.session(provider: "password"),
                        recover: nil, now: t0 + 1))
            }
            // A new address: the account is created, verified.
            let fresh = StoreContract.code(.emailSignIn, localID: nil, email: "new@example.com")
            try await codes.store(fresh, precondition: nil)
            #expect(await StoreContract.refusal { _ = try await complete(fresh, email: "other@example.com") } == .invalidEmail)
            let (created, _, isNew) = try await complete(fresh, email: "new@example.com")
            #expect(isNew && created.localID == "new1" && created.emailVerified && created.emailLinkSignin)
            #expect(
                await StoreContract.refusal { _ = try await complete(fresh, email: "new@example.com") } == .invalidOOBCode, "single use")

            // A squatter's unverified account with a password: the mailbox's owner takes it over.
            let squatter = StoreContract.session()
            _ = try await accounts.createUser(
                StoreContract.user("u1", email: "ann@example.com", password: true), session: squatter, now: t0)
            let link = StoreContract.code(.emailSignIn, localID: "u1", email: "ann@example.com")
            try await codes.store(link, precondition: nil)
            let (owner, _, ownerIsNew) = try await complete(link, email: "ann@example.com")
            #expect(!ownerIsNew && owner.localID == "u1" && owner.emailVerified && owner.password == nil)
            #expect(try await accounts.sessionState(sessionID: squatter.sessionID)?.sessionLive == false)

            // Linking to a signed-in user needs its session live.
            let bobSession = StoreContract.session()
            _ = try await accounts.createUser(StoreContract.user("bob", password: true), session: bobSession, now: t0)
            let bobLink = StoreContract.code(.emailSignIn, localID: nil, email: "bob@example.com")
            try await codes.store(bobLink, precondition: nil)
            #expect(
                await StoreContract.refusal {
                    _ = try await complete(
                        bobLink, email: "bob@example.com", linkTo: ("bob", SessionGuard(sessionID: "not-a-session", issuedAt: 0)))
                } == .tokenExpired)
            let (bob, _, bobIsNew) = try await complete(
                bobLink, email: "bob@example.com", linkTo: ("bob", SessionGuard(sessionID: bobSession.sessionID, issuedAt: 0)))
            #expect(!bobIsNew && bob.email == "bob@example.com" && bob.emailVerified && bob.password != nil, "linking strips nothing")
        }
    }
}
