import AccountTesting
import Foundation
import Testing

@testable import accountd

/// identity-toolkit.md §7 admin lines: paging, batch delete, query, session cookies, audit, keys.
@Suite("Admin RPC")
struct AdminTests {
    @Test("checklist 74: batchGet pages by localId without duplicates; real hashes only for password users")
    func batchGetPaging() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            for index in 0..<4 { _ = try await api.signUp("u\(index)@example.com") }
            _ = try await api.admin("signUp", ["email": "nopass@example.com"])
            var seen: [String] = []
            var token: String?
            var pages = 0
            repeat {
                let path = "/v1/projects/demo-test/accounts:batchGet?maxResults=2" + (token.map { "&nextPageToken=\($0)" } ?? "")
                let page = try await http.get(path, headers: [API.admin])
                #expect(page.status == 200)
                let users = page.json["users"] as? [[String: Any]] ?? []
                for user in users {
                    seen.append(user["localId"] as? String ?? "")
                    let hasPassword = user["email"] as? String != "nopass@example.com"
                    #expect((user["passwordHash"] as? String).map { !$0.isEmpty && $0 != "UkVEQUNURUQ=" } == (hasPassword ? true : nil))
                    #expect((user["salt"] != nil) == hasPassword)
                }
                token = page.string("nextPageToken")
                pages += 1
            } while token != nil && pages < 10
            #expect(pages == 3)
            #expect(seen.count == 5)
            #expect(Set(seen).count == 5)
            #expect(seen == seen.sorted())
            let bad = try await http.get("/v1/projects/demo-test/accounts:batchGet?nextPageToken=%%%", headers: [API.admin])
            #expect(bad.errorCode == "INVALID_PAGE_SELECTION")
            #expect(try await http.post("/v1/projects/demo-test/accounts:batchGet", [:], headers: [API.admin]).status == 404)
        }
    }

    @Test("checklist 80: batchDelete keeps enabled users without force; limits; unknown ids count as deleted")
    func batchDelete() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let a = try await api.signUp("a@example.com")
            let b = try await api.signUp("b@example.com")
            _ = try await api.admin("update", ["localId": b.localID, "disableUser": true])
            let reply = try await api.admin("batchDelete", ["localIds": [a.localID, b.localID, "ghost"]])
            let errors = reply.json["errors"] as? [[String: Any]] ?? []
            #expect(errors.count == 1)
            #expect(errors.first?["index"] as? Int == 0)
            #expect((errors.first?["message"] as? String)?.hasPrefix("NOT_DISABLED") == true)
            let left = try await api.admin("lookup", ["localId": [a.localID, b.localID]])
            #expect((left.json["users"] as? [[String: Any]])?.map { $0["localId"] as? String } == [a.localID])
            #expect(try await api.admin("batchDelete", ["localIds": [a.localID], "force": true]).json["errors"] == nil)
            #expect(
                try await api.admin("batchDelete", ["localIds": (0...1000).map { "id\($0)" }]).errorCode == "LOCAL_ID_LIST_EXCEEDS_LIMIT")
        }
    }

    @Test("accounts:query counts and filters; session cookies verify and die with their session; audit records admin changes")
    func queryCookiesAudit() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let alice = try await api.signUp("alice@example.com")
            _ = try await api.signUp("bob@example.com")
            let all = try await api.admin("query", [:])
            #expect(all.string("recordsCount") == "2")
            let one = try await api.admin("query", ["expression": [["email": "BOB@example.com"]]])
            #expect(one.string("recordsCount") == "1")
            #expect((one.json["userInfo"] as? [[String: Any]])?.first?["email"] as? String == "bob@example.com")

            let cookie = try await api.admin("createSessionCookie", ["idToken": alice.idToken, "validDuration": "3600"])
            let value = try #require(cookie.string("sessionCookie"))
            let claims = Session(["idToken": value]).claims
            #expect(claims["iss"] as? String == "https://session.firebase.google.com/demo-test")
            #expect((claims["exp"] as? Int ?? 0) - (claims["iat"] as? Int ?? 0) == 3600)
            #expect(claims["sid"] as? String == alice.claims["sid"] as? String)
            #expect(
                try await api.admin("createSessionCookie", ["idToken": alice.idToken, "validDuration": "10"]).errorCode
                    == "INVALID_DURATION")

            _ = try await api.admin("update", ["localId": alice.localID, "displayName": "Alice"])
            _ = try await api.admin("revokeSessions", ["localId": alice.localID])
            let audit = try await api.admin("listAuditEvents", ["localId": alice.localID])
            let events = audit.json["events"] as? [[String: Any]] ?? []
            #expect(events.map { $0["action"] as? String } == ["ALL_SESSIONS_REVOKED", "USER_UPDATED"])
            #expect(events.allSatisfy { $0["actor"] as? String == "ops" && $0["actorType"] as? String == "admin" })
            #expect(try await api.admin("createSessionCookie", ["idToken": alice.idToken]).errorCode == "TOKEN_EXPIRED")
        }
    }

    @Test("checklist 89: an immediate key rotation signs new tokens with the new kid; old tokens still verify")
    func keyRotation() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let before = try await api.signUp("alice@example.com")
            let listed = try await api.admin("listSigningKeys", [:])
            #expect((listed.json["keys"] as? [[String: Any]])?.count == 1)
            let rotated = try await api.admin("rotateSigningKeys", ["immediately": true])
            let kid = try #require(rotated.string("kid"), "\(String(decoding: rotated.body, as: UTF8.self))")
            let after = try await api.signIn("alice@example.com")
            #expect(Self.kid(after.idToken) == kid)
            #expect(Self.kid(before.idToken) != kid)
            #expect(try await api.admin("verifyIdToken", ["idToken": before.idToken]).status == 200)
            let jwks = try await http.get("/.well-known/jwks.json").json["keys"] as? [[String: Any]]
            #expect(jwks?.count == 2)
            // A scheduled rotation publishes first and does not sign yet.
            let next = try await api.admin("rotateSigningKeys", [:])
            let scheduled = try #require(next.string("kid"))
            #expect(Self.kid(try await api.signIn("alice@example.com").idToken) == kid)
            let states = (try await api.admin("listSigningKeys", [:]).json["keys"] as? [[String: Any]] ?? [])
                .reduce(into: [String: String]()) { $0[$1["kid"] as? String ?? ""] = $1["state"] as? String }
            #expect(states[scheduled] == "next")
            #expect(states[kid] == "current")
        }
    }

    static func kid(_ token: String) -> String? {
        guard let header = TestBase64URL.decode(String(token.split(separator: ".")[0])) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(header)) as? [String: Any])?["kid"] as? String
    }
}
