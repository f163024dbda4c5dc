import AccountTesting
import Foundation
import Testing

@testable import accountd

/// Reference §7, checklist 17 and 75–79: imports in every hash format sign in, and are upgraded.
@Suite("batchCreate imports")
struct ImportTests {
    static func importUsers(_ api: API, _ body: [String: any Sendable]) async throws -> TestHTTPClient.Reply {
        try await api.admin("batchCreate", body)
    }

    @Test("checklist 75: Firebase's public scrypt vector signs in; the wrong password does not; then it is upgraded")
    func firebaseScrypt() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let reply = try await Self.importUsers(
                api,
                [
                    "hashAlgorithm": "SCRYPT",
                    "signerKey": "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
                    "saltSeparator": "Bw==", "rounds": 8, "memoryCost": 14,
                    "users": [
                        [
                            "localId": "user1", "email": "user1@example.com",
                            "passwordHash": "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
                            "salt": "42xEC+ixf3L2lw==",
                        ] as [String: any Sendable]
                    ],
                ])
            #expect(reply.status == 200)
            #expect(reply.json["error"] as? [Any] != nil)
            #expect((reply.json["error"] as? [Any])?.isEmpty == true)
            #expect(
                try await api.client("signInWithPassword", ["email": "user1@example.com", "password": "user1passwordx"]).errorCode
                    == "INVALID_PASSWORD")
            let exported = try await http.get("/v1/projects/demo-test/accounts:batchGet", headers: [API.admin])
            #expect((exported.json["users"] as? [[String: Any]])?.first?["passwordHash"] as? String == "")
            #expect(try await api.signIn("user1@example.com", "user1password").localID == "user1")
            let upgraded = try await http.get("/v1/projects/demo-test/accounts:batchGet", headers: [API.admin])
            let hash = (upgraded.json["users"] as? [[String: Any]])?.first?["passwordHash"] as? String ?? ""
            #expect(String(decoding: Base64URLTest.decode(hash) ?? [], as: UTF8.self).hasPrefix("$argon2id$"))
            #expect(try await api.signIn("user1@example.com", "user1password").localID == "user1")
        }
    }

    @Test("checklist 17, 76: STANDARD_SCRYPT, BCRYPT, PBKDF2_SHA256, HMAC_SHA256 imports sign in")
    func otherAlgorithms() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let cases: [([String: any Sendable], String, String)] = [
                (
                    [
                        "hashAlgorithm": "STANDARD_SCRYPT", "cpuMemCost": 1024, "blockSize": 8, "parallelization": 1, "dkLen": 64,
                        "users": [
                            [
                                "localId": "s1", "email": "s1@example.com", "salt": "c2FsdHNhbHQ=",
                                "passwordHash": "dBYbSFTG6lCNmxTiT5+EQJtJ9Cwl2vZt1vfqSwQv0zDGfHUipz5jD+CCIoLHQjJVS6gJ6+5n7SXw3w0wcAMzAQ==",
                            ] as [String: any Sendable]
                        ],
                    ],
                    "s1@example.com", "standard-pw"
                ),
                (
                    [
                        "hashAlgorithm": "BCRYPT",
                        "users": [
                            [
                                "localId": "b1", "email": "b1@example.com",
                                "passwordHash": Data("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW".utf8)
                                    .base64EncodedString(),
                            ] as [String: any Sendable]
                        ],
                    ],
                    "b1@example.com", "U*U"
                ),
                (
                    [
                        "hashAlgorithm": "PBKDF2_SHA256", "rounds": 1000,
                        "users": [
                            [
                                "localId": "p1", "email": "p1@example.com", "salt": "c2FsdHNhbHQ=",
                                "passwordHash": "t/DXPqWWhcYDp/MKJQt5d9hUXP2hU11rHSgsNWaBXoU=",
                            ] as [String: any Sendable]
                        ],
                    ],
                    "p1@example.com", "pbkdf2-pw"
                ),
                (
                    [
                        "hashAlgorithm": "HMAC_SHA256", "signerKey": "aG1hYy1rZXk=",
                        "users": [
                            [
                                "localId": "h1", "email": "h1@example.com", "salt": "c2FsdHNhbHQ=",
                                "passwordHash": "vj7YOX9J1zXa6E8Hml63ThOI2pN9wxkL1bLYg/MLq0A=",
                            ] as [String: any Sendable]
                        ],
                    ],
                    "h1@example.com", "hmac-pw"
                ),
            ]
            for (body, email, password) in cases {
                let reply = try await Self.importUsers(api, body)
                #expect((reply.json["error"] as? [Any])?.isEmpty == true, "\(body["hashAlgorithm"] ?? "")")
                #expect(try await api.client("signInWithPassword", ["email": email, "password": password]).status == 200, "\(email)")
                #expect(
                    try await api.client("signInWithPassword", ["email": email, "password": password + "x"]).errorCode == "INVALID_PASSWORD"
                )
            }
        }
    }

    @Test("checklist 77–79: per-user errors, parameter faults, overwrite revokes sessions unless refused")
    func errorsAndOverwrite() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let mixed = try await Self.importUsers(
                api,
                [
                    "users": [
                        ["localId": "good", "email": "good@example.com", "rawPassword": "secret-pass"] as [String: any Sendable],
                        ["localId": "bad", "phoneNumber": "+0"],
                    ]
                ])
            let errors = mixed.json["error"] as? [[String: Any]] ?? []
            #expect(errors.count == 1)
            #expect(errors.first?["index"] as? Int == 1)
            let good = try await api.signIn("good@example.com")

            #expect(
                try await Self.importUsers(
                    api,
                    [
                        "hashAlgorithm": "SCRYPT", "signerKey": "a2V5", "rounds": 9, "memoryCost": 14,
                        "users": [["localId": "x", "passwordHash": "aGFzaA=="] as [String: any Sendable]],
                    ]
                ).errorCode
                    == "INVALID_HASH_ROUNDS")
            #expect(
                try await Self.importUsers(api, ["users": [["localId": "x", "passwordHash": "aGFzaA=="] as [String: any Sendable]]])
                    .errorCode
                    == "MISSING_HASH_ALGORITHM")
            #expect(try await Self.importUsers(api, ["users": [] as [String]]).errorCode == "MISSING_USER_ACCOUNT")
            #expect(
                try await Self.importUsers(
                    api, ["sanityCheck": true, "users": [["localId": "d"], ["localId": "d"]] as [[String: any Sendable]]]
                )
                .errorMessage == "DUPLICATE_LOCAL_ID : d")
            #expect(try await api.admin("lookup", ["localId": ["x", "d"]]).json["users"] == nil, "nothing imported")

            let refused = try await Self.importUsers(
                api, ["allowOverwrite": false, "users": [["localId": "good", "email": "good@example.com"] as [String: any Sendable]]])
            #expect((refused.json["error"] as? [[String: Any]])?.count == 1)
            #expect(try await api.refresh(good.refreshToken).status == 200)
            let taken = try await Self.importUsers(
                api, ["users": [["localId": "other", "email": "GOOD@example.com"] as [String: any Sendable]]])
            #expect((taken.json["error"] as? [[String: Any]])?.first?["message"] as? String == "email exists in other account in database")

            let replaced = try await Self.importUsers(
                api, ["users": [["localId": "good", "email": "good@example.com", "displayName": "New"] as [String: any Sendable]]])
            #expect((replaced.json["error"] as? [Any])?.isEmpty == true)
            #expect(try await api.refresh(good.refreshToken).errorCode == "TOKEN_EXPIRED")
            let record = (try await api.admin("lookup", ["localId": ["good"]]).json["users"] as? [[String: Any]])?.first
            #expect(record?["displayName"] as? String == "New")
            #expect(record?["passwordHash"] == nil, "the whole record was replaced")
        }
    }
}
