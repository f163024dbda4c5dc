import AccountCore
import AccountPostgres
import AccountTesting
import Foundation
import Testing

/// The federated sign-in port (`FederationStore`, federation-and-limits.md §A.5, §A.6, §A.8, §A.9), against
/// PostgreSQL.
@Suite("FederationStore contract")
struct FederationStoreContractTests {
    let t0 = StoreContract.t0

    func assertion(_ sub: String, email: String? = nil, verified: Bool = false) -> IdPAssertion {
        IdPAssertion(providerID: "oidc.corp", rawID: sub, email: email, emailVerified: verified)
    }

    func use(
        _ assertion: IdPAssertion, trusted: Bool = false, nonce: [UInt8]? = nil, flow: [UInt8]? = nil, at instant: Date? = nil
    ) -> FederatedUse {
        FederatedUse(
            assertion: assertion, trusted: trusted, session: StoreContract.session(provider: "oidc.corp"),
            usedNonce: nonce.map { ($0, (instant ?? t0) + 3600) }, usedFlow: flow, pending: nil, now: instant ?? t0)
    }

    func signIn(_ store: any FederationStore, _ use: FederatedUse, id: String = "new-user", admitted: Bool = true) async throws
        -> FederatedSignInOutcome
    {
        try await store.signInFederated(FederatedSignIn(use: use, autoCreate: true, newLocalID: id, creationAdmitted: admitted))
    }

    @Test("flows and pending tokens are kept by hash until they expire")
    func flowsAndPending() async throws {
        try await StoreContract.withStore { store in
            let store: any FederationStore = store
            let flow = IdPFlow(
                providerID: "oidc.corp", sessionID: "s-1", redirectURI: "https://app.example.com/cb", context: "ctx", codeFlow: true,
                expiresAt: t0 + 600)
            try await store.createFlow(stateHash: [1, 1], flow: flow, now: t0)
            #expect(try await store.flow(stateHash: [1, 1]) == flow)
            #expect(try await store.flow(stateHash: [2, 2]) == nil)
            let kept = assertion("sub-1", email: "a@corp.example", verified: true)
            try await store.savePending(tokenHash: [9], assertion: kept, now: t0, expiresAt: t0 + 3600)
            #expect(try await store.pending(tokenHash: [9], now: t0 + 3599) == kept)
            #expect(try await store.pending(tokenHash: [9], now: t0 + 3600) == nil)
        }
    }

    @Test(
        "a first sign-in creates, once admitted; the next signs in the same account; a nonce and a flow are spent with the sign-in, once")
    func signInOnce() async throws {
        try await StoreContract.withStore { store in
            let store: any FederationStore = store
            guard case .creationNeedsAdmission = try await signIn(store, use(assertion("sub-1")), admitted: false) else {
                Issue.record("an unadmitted creation went ahead")
                return
            }
            #expect(try await store.isNonceUsed([7], now: t0) == false)
            let flow = IdPFlow(
                providerID: "oidc.corp", sessionID: "s", redirectURI: "https://a.example/cb", context: nil, codeFlow: false,
                expiresAt: t0 + 600)
            try await store.createFlow(stateHash: [3], flow: flow, now: t0)
            guard
                case .signedIn(let created, _, isNewUser: true, _) = try await signIn(store, use(assertion("sub-1"), nonce: [7], flow: [3]))
            else {
                Issue.record("no account created")
                return
            }
            #expect(created.localID == "new-user" && created.federated.map(\.rawID) == ["sub-1"])
            #expect(try await store.isNonceUsed([7], now: t0))
            #expect(try await store.flow(stateHash: [3])?.usedAt == t0)
            #expect(
                await StoreContract.refusal { _ = try await signIn(store, use(assertion("sub-1"), nonce: [7])) } == .missingOrInvalidNonce)
            #expect(await StoreContract.refusal { _ = try await signIn(store, use(assertion("sub-1"), flow: [3])) } == .invalidIDPResponse)
            guard
                case .signedIn(let again, _, isNewUser: false, _) = try await signIn(
                    store, use(assertion("sub-1"), nonce: [8]), id: "other")
            else {
                Issue.record("the returning identity did not sign in")
                return
            }
            #expect(again.localID == "new-user")
        }
    }

    @Test(
        "an account with the email: untrusted asks for confirmation and spends nothing; trusted links, stripping an unverified one; the stored verification follows trust"
    )
    func emailOwner() async throws {
        try await StoreContract.withStore { accounts in
            let store: any FederationStore = accounts
            _ = try await accounts.createUser(StoreContract.user("owner", email: "e@corp.example", password: true), session: nil, now: t0)
            let claim = assertion("sub-2", email: "e@corp.example", verified: true)
            guard case .needConfirmation(let owner) = try await signIn(store, use(claim, trusted: false, nonce: [1])) else {
                Issue.record("an untrusted assertion linked")
                return
            }
            #expect(owner.localID == "owner")
            #expect(try await store.isNonceUsed([1], now: t0) == false, "nothing consumed")
            guard case .signedIn(let linked, _, isNewUser: false, _) = try await signIn(store, use(claim, trusted: true)) else {
                Issue.record("a trusted assertion did not link")
                return
            }
            #expect(linked.localID == "owner" && linked.emailVerified && linked.password == nil, "THE RULE stripped the password")
            // A new account takes the assertion's email as verified only when the provider is trusted for it.
            guard
                case .signedIn(let untrusted, _, _, _) = try await signIn(
                    store, use(assertion("sub-3", email: "new@corp.example", verified: true), trusted: false), id: "u3")
            else {
                Issue.record("an untrusted assertion of a new email did not sign up")
                return
            }
            #expect(untrusted.email == "new@corp.example" && untrusted.emailVerified == false)
        }
    }

    @Test("linking refuses a provider already linked, an identity another account holds, an email another account owns")
    func linking() async throws {
        try await StoreContract.withStore { accounts in
            let store: any FederationStore = accounts
            let (user, ticket) = try await accounts.createUser(StoreContract.user("u1"), session: StoreContract.session(), now: t0)
            let guardSession = SessionGuard(
                sessionID: try #require(
                    try await accounts.sessions(
                        localID: "u1", includeRevoked: false, limit: 1, before: nil
                    ).first?.sessionID), issuedAt: ticket?.issuedAt ?? 0)
            _ = try await accounts.createUser(StoreContract.user("u2", email: "taken@corp.example"), session: nil, now: t0)
            _ = try await signIn(store, use(assertion("held")), id: "holder")
            func link(_ claim: IdPAssertion) async throws -> UserRecord {
                try await store.linkFederated(FederatedLink(use: use(claim), localID: user.localID, guardSession: guardSession)).0
            }
            #expect(await StoreContract.refusal { _ = try await link(assertion("held")) } == .federatedUserIDAlreadyLinked)
            #expect(await StoreContract.refusal { _ = try await link(assertion("s", email: "taken@corp.example")) } == .emailExists)
            let linked = try await link(assertion("mine", email: "mine@corp.example", verified: true))
            #expect(linked.federated.map(\.rawID) == ["mine"] && linked.email == "mine@corp.example" && !linked.emailVerified)
            #expect(await StoreContract.refusal { _ = try await link(assertion("another")) } == .providerAlreadyLinked)
        }
    }

    @Test("two first sign-ins of one identity at once make one account")
    func concurrentFirstSignIns() async throws {
        try await StoreContract.withStore { accounts in
            let store: any FederationStore = accounts
            let outcomes = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<4 {
                    group.addTask {
                        guard case .signedIn(let user, _, _, _) = try await signIn(store, use(assertion("race")), id: "racer-\(index)")
                        else {
                            return nil
                        }
                        return user.localID
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(outcomes.count == 4 && Set(outcomes).count == 1 && outcomes.first ?? nil != nil)
        }
    }
}
