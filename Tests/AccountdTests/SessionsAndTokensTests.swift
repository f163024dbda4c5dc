import AccountPostgres
import AccountTesting
import Foundation
import JWTKit
import NIOHTTP1
import PostgresNIO
import Testing

@testable import accountd

/// identity-toolkit.md §7: Secure Token, sessions, verify and keys lines; update and delete lines.
@Suite("Sessions, refresh rotation, revocation and keys")
struct SessionsAndTokensTests {
    struct Payload: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var aud: AudienceClaim
        var iss: IssuerClaim
        var sid: String
        func verify(using algorithm: some JWTAlgorithm) async throws {
            try exp.verifyNotExpired()
        }
    }

    @Test("checklist 88: ID tokens verify with the published JWKS (JWTKit); the x509 map lists the same kids, cacheable")
    func publishedKeysVerify() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let alice = try await API(http: http).signUp("alice@example.com")
            let jwks = try await http.get("/.well-known/jwks.json")
            #expect(jwks.header("Cache-Control") == "public, max-age=3600")
            let keys = JWTKeyCollection()
            try await keys.add(jwksJSON: String(decoding: jwks.body, as: UTF8.self))
            let payload = try await keys.verify(alice.idToken, as: Payload.self)
            #expect(payload.sub.value == alice.localID)
            #expect(payload.aud.value == ["demo-test"])
            #expect(payload.iss.value == "https://securetoken.google.com/demo-test")
            let x509 = try await http.get("/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com")
            let kids = Set(((jwks.json["keys"] as? [[String: Any]]) ?? []).compactMap { $0["kid"] as? String })
            #expect(Set(x509.json.keys) == kids)
            #expect((x509.json.values.first as? String)?.hasPrefix("-----BEGIN CERTIFICATE-----") == true)
            // A tampered token fails JWTKit too.
            var parts = alice.idToken.split(separator: ".").map(String.init)
            parts[1] = parts[1].replacingOccurrences(of: "A", with: "B")
            await #expect(throws: (any Error).self) { try await keys.verify(parts.joined(separator: "."), as: Payload.self) }
        }
    }

    @Test("checklist 53–55: lookup shape, admin lookup miss, bad ID tokens")
    func lookup() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let reply = try await api.client("lookup", ["idToken": alice.idToken])
            let user = try #require((reply.json["users"] as? [[String: Any]])?.first)
            #expect(user["localId"] as? String == alice.localID)
            #expect((user["createdAt"] as? String)?.allSatisfy(\.isNumber) == true)
            #expect(user["validSince"] as? String == String(alice.claims["iat"] as? Int ?? -1))
            #expect(user["passwordHash"] as? String == "UkVEQUNURUQ=")
            #expect(user["salt"] == nil)
            #expect(user["emailLinkSignin"] == nil)
            #expect((user["providerUserInfo"] as? [[String: Any]])?.first?["providerId"] as? String == "password")
            // One identifier of a kind (single-value statements) and several (list statements) find
            // the same records; a user found twice is listed once.
            let bob = try await api.signUp("bob@example.com")
            #expect(try await api.admin("update", ["localId": bob.localID, "phoneNumber": "+15551234567"]).status == 200)
            func found(_ body: [String: any Sendable]) async throws -> [String] {
                ((try await api.admin("lookup", body)).json["users"] as? [[String: Any]] ?? []).compactMap { $0["localId"] as? String }
            }
            for body: [String: any Sendable] in [
                ["email": ["BOB@example.com"]], ["phoneNumber": ["+15551234567"]], ["localId": [bob.localID]],
            ] {
                #expect(try await found(body) == [bob.localID], "\(body)")
            }
            let both = try await found([
                "email": ["alice@example.com", "bob@example.com"], "phoneNumber": ["+15551234567", "+15550000000"],
                "localId": [alice.localID],
            ])
            #expect(both.sorted() == [alice.localID, bob.localID].sorted())
            let adminView = try #require(
                (try await api.admin("lookup", ["email": ["alice@example.com"]]).json["users"] as? [[String: Any]])?.first)
            func canonical(_ record: [String: Any]) throws -> Data {
                try JSONSerialization.data(withJSONObject: record, options: .sortedKeys)
            }
            #expect(try canonical(adminView) == canonical(user), "the admin and the client read one record alike")

            let miss = try await api.admin("lookup", ["localId": ["nobody"]])
            #expect(miss.status == 200)
            #expect(miss.json["users"] == nil)
            #expect(miss.string("kind") == "identitytoolkit#GetAccountInfoResponse")

            #expect(try await api.client("lookup", [:]).errorCode == "MISSING_ID_TOKEN")
            #expect(try await api.client("lookup", ["idToken": "garbage"]).errorCode == "INVALID_ID_TOKEN")
            var parts = alice.idToken.split(separator: ".").map(String.init)
            let original = parts[1]
            parts[1] = String(original.dropLast(2)) + (original.hasSuffix("AA") ? "BB" : "AA")
            #expect(try await api.client("lookup", ["idToken": parts.joined(separator: ".")]).errorCode == "INVALID_ID_TOKEN")
            let none = TestBase64URL.encode(#"{"alg":"none","typ":"JWT"}"#) + "." + original + "."
            #expect(try await api.client("lookup", ["idToken": none]).errorCode == "INVALID_ID_TOKEN")
            let unknownKid = TestBase64URL.encode(#"{"alg":"RS256","kid":"nope","typ":"JWT"}"#) + "." + original + "." + parts[2]
            #expect(try await api.client("lookup", ["idToken": unknownKid]).errorCode == "INVALID_ID_TOKEN")
        }
    }

    @Test("checklist 81–84: refresh rotates; the previous token is tolerated inside the grace window; reuse later revokes")
    func refreshRotation() async throws {
        let clock = ShiftedClock()
        try await withServer(database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let first = try await api.refresh(alice.refreshToken)
            #expect(first.status == 200)
            #expect(first.string("access_token") == first.string("id_token"))
            #expect(first.string("expires_in") == "3600")
            #expect(first.string("token_type") == "Bearer")
            #expect(first.string("user_id") == alice.localID)
            #expect(first.string("project_id") == "demo-test")
            let rotated = try #require(first.string("refresh_token"))
            #expect(rotated != alice.refreshToken)
            #expect(Session(first).claims["auth_time"] as? Int == alice.claims["auth_time"] as? Int)

            // Replay of the previous token inside the grace window: the same current token back.
            let replay = try await api.refresh(alice.refreshToken)
            #expect(replay.status == 200)
            #expect(replay.string("refresh_token") == rotated)

            // JSON with camelCase works as the form does.
            let json = try await http.post("/v1/token?key=test-api-key", ["grantType": "refresh_token", "refreshToken": rotated])
            #expect(json.status == 200)
            let third = try #require(json.string("refresh_token"))

            // Later than the grace window, the old token is reuse: the session dies, the holder of the current one too.
            clock.advance(61)
            #expect(try await api.refresh(alice.refreshToken).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.refresh(third).errorCode == "TOKEN_EXPIRED")
            let sessions = try await api.admin("listSessions", ["localId": alice.localID, "includeRevoked": true])
            #expect((sessions.json["sessions"] as? [[String: Any]])?.first?["revokeReason"] as? String == "REFRESH_TOKEN_REUSE")

            #expect(try await api.refresh("garbage").errorCode == "INVALID_REFRESH_TOKEN")
            let wrongGrant = try await http.post("/v1/token?key=test-api-key", ["grant_type": "password", "refresh_token": third])
            #expect(wrongGrant.errorCode == "INVALID_GRANT_TYPE")
            #expect(try await http.post("/v1/token?key=test-api-key", ["grant_type": "refresh_token"]).errorCode == "MISSING_REFRESH_TOKEN")
            #expect(try await http.post("/v1/token?key=test-api-key", ["refresh_token": "x"]).errorCode == "MISSING_GRANT_TYPE")
            #expect(try await http.post("/v1/token", ["grant_type": "refresh_token", "refresh_token": "x"]).status == 403)
            // A forged MAC over a real session id is INVALID_REFRESH_TOKEN and revokes nothing.
            let bob = try await api.signUp("bob@example.com")
            var bytes = try #require(TestBase64URL.decode(bob.refreshToken))
            bytes[bytes.count - 1] ^= 1
            #expect(try await api.refresh(TestBase64URL.encode(bytes)).errorCode == "INVALID_REFRESH_TOKEN")
            #expect(try await api.refresh(bob.refreshToken).status == 200)
        }
    }

    @Test(
        "a database that lost rotations (a failover to an asynchronous standby): the client's later token rotates on, nothing is revoked, older ones stay reuse"
    )
    func lostRotations() async throws {
        let clock = ShiftedClock()
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database, clock: clock) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let first = try #require(try await api.refresh(alice.refreshToken).string("refresh_token"))
            let second = try #require(try await api.refresh(first).string("refresh_token"))
            // The promoted standby never saw the last two rotations.
            try await TestDatabase.withClient(database) { client in
                try await client.query("UPDATE sessions SET refresh_generation = refresh_generation - 2")
            }
            clock.advance(61)
            let caughtUp = try await api.refresh(second)
            #expect(caughtUp.status == 200, "\(String(decoding: caughtUp.body, as: UTF8.self))")
            let next = try #require(caughtUp.string("refresh_token"))
            #expect(next != second && next != first)
            #expect(try await api.refresh(next).status == 200)
            let sessions = try await api.admin("listSessions", ["localId": alice.localID, "includeRevoked": true])
            #expect((sessions.json["sessions"] as? [[String: Any]])?.first?["revokeReason"] == nil)
            // The rules hold from the new generation: a token two behind is reuse.
            clock.advance(61)
            #expect(try await api.refresh(second).errorCode == "TOKEN_EXPIRED")
        }
    }

    @Test("after lost rotations, four concurrent refreshes of the client's later token: all 200 with one new token, nothing revoked")
    func lostRotationsConcurrently() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let later = try #require(try await api.refresh(alice.refreshToken).string("refresh_token"))
            try await TestDatabase.withClient(database) { client in
                try await client.query("UPDATE sessions SET refresh_generation = refresh_generation - 1")
            }
            let replies = try await withThrowingTaskGroup(of: TestHTTPClient.Reply.self) { group in
                for _ in 0..<4 { group.addTask { try await api.refresh(later) } }
                return try await group.reduce(into: [TestHTTPClient.Reply]()) { $0.append($1) }
            }
            #expect(replies.allSatisfy { $0.status == 200 }, "\(replies.map(\.status))")
            #expect(Set(replies.compactMap { $0.string("refresh_token") }).count == 1)
            let sessions = try await api.admin("listSessions", ["localId": alice.localID, "includeRevoked": true])
            #expect((sessions.json["sessions"] as? [[String: Any]])?.first?["revokeReason"] == nil)
        }
    }

    @Test("eight concurrent refreshes of one token all succeed with the same new token (one rotates, the rest are tolerated)")
    func concurrentRefreshes() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let replies = try await withThrowingTaskGroup(of: TestHTTPClient.Reply.self) { group in
                for _ in 0..<8 { group.addTask { try await api.refresh(alice.refreshToken) } }
                return try await group.reduce(into: [TestHTTPClient.Reply]()) { $0.append($1) }
            }
            #expect(replies.map(\.status) == Array(repeating: 200, count: 8))
            let tokens = Set(replies.compactMap { $0.string("refresh_token") })
            #expect(tokens.count == 1)
            #expect(try await api.refresh(try #require(tokens.first)).status == 200)
        }
    }

    @Test("a refresh whose write finds the session or its owner changed since its read reads again and answers from what it finds")
    func refreshLosesItsWrite() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            func refresh(_ token: String, of localID: String, across change: String) async throws -> TestHTTPClient.Reply {
                try await whileUserLocked(localID, in: database, run: { try await api.refresh(token) }, thenCommit: change)
            }

            // Revoked in between: the write does not apply; read again, the session is dead.
            let alice = try await api.signUp("alice@example.com")
            let revoked = try await refresh(
                alice.refreshToken, of: alice.localID,
                across: "UPDATE sessions SET revoked_at = now(), revoke_reason = 'ADMIN_REVOKED' WHERE local_id = '\(alice.localID)'")
            #expect(revoked.errorCode == "TOKEN_EXPIRED")

            // Disabled in between: the owner no longer qualifies; read again, USER_DISABLED.
            let bob = try await api.signUp("bob@example.com")
            let disabled = try await refresh(
                bob.refreshToken, of: bob.localID, across: "UPDATE users SET disabled = true WHERE local_id = '\(bob.localID)'")
            #expect(disabled.errorCode == "USER_DISABLED")

            // Rotated by another refresh in between: read again, the token is the tolerated previous
            // one, and the answer is the session's current token, which refreshes in turn.
            let carol = try await api.signUp("carol@example.com")
            let rotated = try await refresh(
                carol.refreshToken, of: carol.localID,
                across: """
                    UPDATE sessions SET refresh_generation = refresh_generation + 1, generation_issued_at = now()
                    WHERE local_id = '\(carol.localID)'
                    """)
            #expect(rotated.status == 200, "\(rotated.json)")
            let current = try #require(rotated.string("refresh_token"))
            #expect(current != carol.refreshToken)
            let next = try await api.refresh(current)
            #expect(next.status == 200)
            #expect(next.string("refresh_token") != current)
        }
    }

    @Test(
        "a password sign-in whose write finds the user changed since its read answers from the locked row: new password, disabled, revoked")
    func signInLosesItsWrite() async throws {
        let database = try await TestDatabase.createMigrated()
        try await withServer(database: database) { http in
            let api = API(http: http)
            func signIn(_ email: String, of localID: String, across change: String) async throws -> TestHTTPClient.Reply {
                try await whileUserLocked(
                    localID, in: database,
                    run: {
                        try await api.client("signInWithPassword", ["email": email, "password": "secret-pass", "returnSecureToken": true])
                    },
                    thenCommit: change)
            }
            func sessions(of localID: String) async throws -> Int? {
                let listed = try await api.admin("listSessions", ["localId": localID, "includeRevoked": true])
                return (listed.json["sessions"] as? [[String: Any]])?.count
            }

            // The password changed after it was verified: the verified one is no longer the
            // user's, so no session, and the sign-in is refused as a wrong password.
            let alice = try await api.signUp("alice@example.com")
            let changed = try await signIn(
                "alice@example.com", of: alice.localID,
                across: "UPDATE users SET credential_version = credential_version + 1 WHERE local_id = '\(alice.localID)'")
            #expect(changed.errorCode == "INVALID_PASSWORD", "\(changed.json)")
            #expect(try await sessions(of: alice.localID) == 1)

            // Disabled in between: USER_DISABLED, no session.
            let bob = try await api.signUp("bob@example.com")
            let disabled = try await signIn(
                "bob@example.com", of: bob.localID, across: "UPDATE users SET disabled = true WHERE local_id = '\(bob.localID)'")
            #expect(disabled.errorCode == "USER_DISABLED", "\(disabled.json)")
            #expect(try await sessions(of: bob.localID) == 1)

            // Every session revoked in between, V moved past now: the sign-in happens after the
            // revocation, so its token is issued at the new V and passes the revocation check (a
            // token minted from the stale V would be TOKEN_REVOKED).
            let carol = try await api.signUp("carol@example.com")
            let revoked = try await signIn(
                "carol@example.com", of: carol.localID,
                across: "UPDATE users SET valid_since = extract(epoch FROM now())::bigint + 1 WHERE local_id = '\(carol.localID)'")
            #expect(revoked.status == 200, "\(revoked.json)")
            let token = try #require(revoked.string("idToken"))
            let verified = try await api.admin("verifyIdToken", ["idToken": token, "checkRevoked": true])
            #expect(verified.status == 200, "\(verified.json)")
            #expect(try await sessions(of: carol.localID) == 2)
        }
    }

    @Test("a refresh behind another transaction's lock on the user answers 503 busy after the pool's lock timeout, rotating nothing")
    func refreshLockTimeout() async throws {
        let database = try await TestDatabase.createMigrated()
        var configuration = testConfiguration()
        configuration.database.pool.lockTimeoutSeconds = 1
        try await withServer(configuration, database: database) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let started = ContinuousClock.now
            let blocked = try await whileUserLocked(
                alice.localID, in: database, run: { try await api.refresh(alice.refreshToken) }, answeredFirst: true)
            let waited = ContinuousClock.now - started
            #expect(blocked.status == 503, "\(blocked.json)")
            #expect(blocked.errorCode == "UNAVAILABLE")
            // It gave up on its own, after the timeout: the lock is held until it returns, so an
            // unbounded wait would never get here. (A loaded machine may add seconds.)
            #expect(waited >= .milliseconds(900), "waited \(waited)")
            // Nothing rotated: the same token still refreshes, once the lock is gone.
            let after = try await api.refresh(alice.refreshToken)
            #expect(after.status == 200)
            #expect(after.string("refresh_token") != alice.refreshToken)
        }
    }

    @Test("checklist 85–87: revoke one session; another user's id is SESSION_NOT_FOUND; verifyIdToken sees it")
    func revokeOneSession() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let s1 = try await api.signUp("alice@example.com")
            let s2 = try await api.signIn("alice@example.com")
            let other = try await api.signUp("bob@example.com")
            let sid1 = try #require(s1.claims["sid"] as? String)
            let verified = try await api.admin("verifyIdToken", ["idToken": s1.idToken, "checkRevoked": true])
            #expect(verified.status == 200)
            #expect((verified.json["claims"] as? [String: Any])?["sid"] as? String == sid1)
            #expect(verified.string("sessionId") == sid1)

            let foreign = try await api.admin(
                "revokeSessions", ["localId": s1.localID, "sessionIds": [sid1, other.claims["sid"] as? String ?? ""]])
            #expect(foreign.errorCode == "SESSION_NOT_FOUND")
            #expect(try await api.refresh(s1.refreshToken).status == 200)

            let before = try await api.client("lookup", ["idToken": s2.idToken])
            let validSince = (before.json["users"] as? [[String: Any]])?.first?["validSince"] as? String
            let revoked = try await api.admin("revokeSessions", ["localId": s1.localID, "sessionIds": [sid1]])
            #expect(revoked.json["revokedSessionIds"] as? [String] == [sid1])
            #expect(revoked.string("validSince") == validSince)
            #expect(try await api.refresh(s1.refreshToken).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.refresh(s2.refreshToken).status == 200)
            #expect(try await api.admin("verifyIdToken", ["idToken": s1.idToken, "checkRevoked": true]).errorCode == "ID_TOKEN_REVOKED")
            #expect(try await api.admin("verifyIdToken", ["idToken": s1.idToken]).status == 200)
            #expect(try await api.client("lookup", ["idToken": s1.idToken]).errorCode == "TOKEN_EXPIRED")
            let listed = try await api.admin("listSessions", ["localId": s1.localID, "includeRevoked": true])
            let rows = (listed.json["sessions"] as? [[String: Any]]) ?? []
            #expect(rows.count == 2)
            #expect(rows.first { $0["sessionId"] as? String == sid1 }?["revokeReason"] as? String == "ADMIN_REVOKED")
            #expect(try await api.client("verifyIdToken", ["idToken": s2.idToken]).errorCode == "INSUFFICIENT_PERMISSION")
        }
    }

    @Test("checklist 62 and §3.5: revoke-all in the same second as a mint still revokes that token; a new sign-in works at once")
    func revokeAllSameSecond() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let iat = try #require(alice.claims["iat"] as? Int)
            let revoked = try await api.admin("update", ["localId": alice.localID, "validSince": "0"])
            #expect(revoked.status == 200)
            let lookup = try await api.admin("lookup", ["localId": [alice.localID]])
            let validSince = Int((lookup.json["users"] as? [[String: Any]])?.first?["validSince"] as? String ?? "") ?? 0
            // The Admin SDK's rule (iat < validSince → revoked) holds even within one second.
            #expect(iat < validSince)
            #expect(try await api.refresh(alice.refreshToken).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.admin("verifyIdToken", ["idToken": alice.idToken, "checkRevoked": true]).errorCode == "ID_TOKEN_REVOKED")
            let again = try await api.signIn("alice@example.com")
            #expect((again.claims["iat"] as? Int ?? 0) >= validSince)
            #expect(try await api.admin("verifyIdToken", ["idToken": again.idToken, "checkRevoked": true]).status == 200)
        }
    }

    @Test("checklist 56–57, 59–61, 64: profile updates, password change with replacement, claims, deleteProvider")
    func updates() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let s1 = try await api.signUp("alice@example.com")
            let s2 = try await api.signIn("alice@example.com")
            let named = try await api.client("update", ["idToken": s1.idToken, "displayName": "Alice"])
            #expect(named.string("displayName") == "Alice")
            #expect(named.string("idToken") == nil)
            #expect(try await api.refresh(s2.refreshToken).status == 200)

            #expect(
                try await api.client("update", ["idToken": s1.idToken, "customAttributes": "{}"]).errorCode == "INSUFFICIENT_PERMISSION")
            #expect(try await api.client("update", ["idToken": s1.idToken, "password": "123"]).errorCode == "WEAK_PASSWORD")

            let changed = try await api.client("update", ["idToken": s1.idToken, "password": "new-secret"])
            #expect(changed.status == 200)
            let replacement = Session(changed)
            #expect(!replacement.refreshToken.isEmpty)
            #expect(try await api.refresh(s1.refreshToken).errorCode == "TOKEN_EXPIRED")
            // Keep the rotated token: a replay of the old one is tolerated only inside the grace window.
            let rotated = try await api.refresh(replacement.refreshToken)
            #expect(rotated.status == 200)
            #expect(
                try await api.client("signInWithPassword", ["email": "alice@example.com", "password": "secret-pass"]).errorCode
                    == "INVALID_PASSWORD")
            _ = try await api.signIn("alice@example.com", "new-secret")

            for (claims, code) in [
                (#"{"sub":1}"#, "FORBIDDEN_CLAIM"), (#"{"sid":1}"#, "FORBIDDEN_CLAIM"), ("[1]", "INVALID_CLAIMS"),
                ("{\"a\":\"\(String(repeating: "x", count: 1000))\"}", "CLAIMS_TOO_LARGE"),
            ] {
                #expect(try await api.admin("update", ["localId": s1.localID, "customAttributes": claims]).errorCode == code)
            }
            #expect(try await api.admin("update", ["localId": s1.localID, "customAttributes": #"{"role":"x"}"#]).status == 200)
            let refreshed = Session(try await api.refresh(Session(rotated).refreshToken))
            #expect(refreshed.claims["role"] as? String == "x")

            _ = try await api.admin("update", ["localId": s1.localID, "deleteProvider": ["password"]])
            let discovery = try await api.client("createAuthUri", ["identifier": "alice@example.com", "continueUri": "http://localhost"])
            #expect(discovery.json["signinMethods"] as? [String] == [])
            #expect(discovery.json["registered"] as? Bool == true)
            let user = (try await api.admin("lookup", ["localId": [s1.localID]]).json["users"] as? [[String: Any]])?.first
            #expect(user?["email"] as? String == "alice@example.com")
        }
    }

    @Test("checklist 58: a password change needs a recent sign-in")
    func recentLogin() async throws {
        var configuration = testConfiguration()
        configuration.accounts.recentLoginSeconds = 1
        try await withServer(configuration, database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            try await tick()
            try await tick()
            #expect(
                try await api.client("update", ["idToken": alice.idToken, "password": "new-secret"]).errorCode
                    == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            #expect(try await api.client("delete", ["idToken": alice.idToken]).errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
        }
    }

    @Test("a token verified before is checked again on every call: disable, revocation and expiry still refuse it")
    func verifiedTokenRechecked() async throws {
        let clock = ShiftedClock()
        try await withServer(database: try await TestDatabase.createMigrated(), clock: clock) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            let first = try await api.admin("verifyIdToken", ["idToken": alice.idToken, "checkRevoked": true])
            #expect(first.status == 200)
            // The second call takes the remembered signature and answers the same.
            let second = try await api.admin("verifyIdToken", ["idToken": alice.idToken, "checkRevoked": true])
            #expect(second.status == 200)
            #expect(NSDictionary(dictionary: second.json) == NSDictionary(dictionary: first.json))
            #expect(try await api.client("lookup", ["idToken": alice.idToken]).status == 200)

            _ = try await api.admin("update", ["localId": alice.localID, "disableUser": true])
            #expect(try await api.admin("verifyIdToken", ["idToken": alice.idToken, "checkRevoked": true]).errorCode == "USER_DISABLED")
            #expect(try await api.admin("verifyIdToken", ["idToken": alice.idToken]).status == 200)
            #expect(try await api.client("lookup", ["idToken": alice.idToken]).errorCode == "USER_DISABLED")
            _ = try await api.admin("update", ["localId": alice.localID, "disableUser": false])

            let bob = try await api.signUp("bob@example.com")
            #expect(try await api.admin("verifyIdToken", ["idToken": bob.idToken, "checkRevoked": true]).status == 200)
            _ = try await api.admin("revokeSessions", ["localId": bob.localID])
            #expect(try await api.admin("verifyIdToken", ["idToken": bob.idToken, "checkRevoked": true]).errorCode == "ID_TOKEN_REVOKED")

            let carol = try await api.signUp("carol@example.com")
            #expect(try await api.admin("verifyIdToken", ["idToken": carol.idToken, "checkRevoked": true]).status == 200)
            clock.advance(3600)
            #expect(try await api.admin("verifyIdToken", ["idToken": carol.idToken]).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.client("lookup", ["idToken": carol.idToken]).errorCode == "INVALID_ID_TOKEN")
        }
    }

    @Test("checklist 63, 73: disable then enable; delete leaves tombstones that answer USER_NOT_FOUND")
    func disableAndDelete() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            _ = try await api.admin("update", ["localId": alice.localID, "disableUser": true])
            #expect(try await api.refresh(alice.refreshToken).errorCode == "USER_DISABLED")
            #expect(try await api.client("lookup", ["idToken": alice.idToken]).errorCode == "USER_DISABLED")
            _ = try await api.admin("update", ["localId": alice.localID, "disableUser": false])
            #expect(try await api.refresh(alice.refreshToken).errorCode == "TOKEN_EXPIRED")

            let bob = try await api.signUp("bob@example.com")
            let deleted = try await api.client("delete", ["idToken": bob.idToken])
            #expect(deleted.string("kind") == "identitytoolkit#DeleteAccountResponse")
            #expect(try await api.client("lookup", ["idToken": bob.idToken]).errorCode == "USER_NOT_FOUND")
            #expect(try await api.refresh(bob.refreshToken).errorCode == "USER_NOT_FOUND")
            // The email is free at once.
            #expect(try await api.client("signUp", ["email": "bob@example.com", "password": "secret-pass"]).status == 200)
        }
    }

    @Test("checklist 50–52: createAuthUri discovery")
    func discovery() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            _ = try await api.signUp("alice@example.com")
            let known = try await api.client("createAuthUri", ["identifier": "Alice@example.com", "continueUri": "http://localhost"])
            #expect(known.json["registered"] as? Bool == true)
            #expect(known.json["signinMethods"] as? [String] == ["password"])
            #expect(known.json["allProviders"] as? [String] == ["password"])
            let unknown = try await api.client("createAuthUri", ["identifier": "who@example.com", "continueUri": "http://localhost"])
            #expect(unknown.json["registered"] as? Bool == false)
            #expect(unknown.json["signinMethods"] as? [String] == [])
            #expect(unknown.string("sessionId")?.count == 27)
            #expect(try await api.client("createAuthUri", ["identifier": "who@example.com"]).errorCode == "MISSING_CONTINUE_URI")
            #expect(
                try await api.client("createAuthUri", ["identifier": "x", "continueUri": "http://localhost"]).errorCode
                    == "INVALID_IDENTIFIER")
            #expect(try await api.client("createAuthUri", ["continueUri": "http://localhost"]).errorCode == "MISSING_IDENTIFIER")
        }
    }

    @Test("a password change racing a refresh: no token minted before the change survives it")
    func passwordChangeRacesRefresh() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let s1 = try await api.signUp("alice@example.com")
            let s2 = try await api.signIn("alice@example.com")
            async let refresh = api.refresh(s2.refreshToken)
            async let change = api.client("update", ["idToken": s1.idToken, "password": "new-secret"])
            let (refreshed, changed) = try await (refresh, change)
            #expect(changed.status == 200)
            if refreshed.status == 200 {
                // The refresh committed first: the change revoked what it minted.
                let minted = Session(refreshed)
                #expect(try await api.refresh(minted.refreshToken).errorCode == "TOKEN_EXPIRED")
                #expect(
                    try await api.admin("verifyIdToken", ["idToken": minted.idToken, "checkRevoked": true]).errorCode == "ID_TOKEN_REVOKED")
            } else {
                #expect(refreshed.errorCode == "TOKEN_EXPIRED")
            }
        }
    }
}
