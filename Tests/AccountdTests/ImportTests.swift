import AccountTesting
import Foundation
import Testing

@testable import accountd

/// identity-toolkit.md §7, checklist 17 and 75–79: imports in every hash format sign in, and are upgraded.
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
            #expect(String(decoding: TestBase64URL.decode(hash) ?? [], as: UTF8.self).hasPrefix("$argon2id$"))
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

    @Test("the rest of the Admin SDK's algorithms (digests, HMAC_MD5, PBKDF_SHA1, ARGON2 in both spellings) sign in and upgrade")
    func everyOtherAlgorithm() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            func user(_ id: String, salt: String, hash: String) -> [[String: any Sendable]] {
                [["localId": id, "email": "\(id)@example.com", "salt": salt, "passwordHash": hash]]
            }
            // Published vectors (RFC 1321, FIPS 180, RFC 2202, RFC 6070, phc-winner-argon2) and hashlib for the separator.
            let cases: [([String: any Sendable], String, String)] = [
                (
                    ["hashAlgorithm": "MD5", "rounds": 0, "users": user("md5", salt: "bWVzc2FnZSA=", hash: "+WtpfXy3k41SWi8xqvFh0A==")],
                    "md5", "digest"
                ),
                (
                    [
                        "hashAlgorithm": "SHA1", "rounds": 1, "passwordHashOrder": "PASSWORD_AND_SALT",
                        "users": user("sha1", salt: "Yw==", hash: "qZk+NkcGgWq6PiVxeFDCbJzQ2J0="),
                    ], "sha1", "ab"
                ),
                (
                    [
                        "hashAlgorithm": "SHA512", "rounds": "1", "saltSeparator": "Bw",
                        "users": user(
                            "sha512", salt: "TmFDbA==",
                            hash: "8hlgGTh8fj5hrZZzbI3e+PFdahpDeuKUlhipMGovCMhUM17lPkr4uxHzQ7p4EphpVI9UwY4P9bSH2QeHv6yc0w=="),
                    ], "sha512", "hunter2"
                ),
                (
                    [
                        "hashAlgorithm": "HMAC_MD5", "signerKey": "SmVmZQ",
                        "users": user("hmacmd5", salt: "IGZvciBub3RoaW5nPw==", hash: "dQx4PmqwtQPqqG4xCl23OA=="),
                    ], "hmacmd5", "what do ya want"
                ),
                (
                    [
                        "hashAlgorithm": "PBKDF_SHA1", "rounds": 4096,
                        "users": user("pbkdf", salt: "c2FsdA==", hash: "SwB5AbdlSJq+rUnZJvch0GWkKcE="),
                    ],
                    "pbkdf", "password"
                ),
                (
                    [
                        "hashAlgorithm": "ARGON2",
                        "argon2Parameters": [
                            "hashType": "ARGON2_D", "version": "VERSION_13", "iterations": 2, "memoryCostKib": 256, "parallelism": 1,
                            "hashLengthBytes": 32,
                        ] as [String: any Sendable],
                        "users": user("argon2d", salt: "c29tZXNhbHQ=", hash: "JcTui6RIBUtJ78gE5Hi52CO+H5vS6Z9R1uxAB6OhUB8="),
                    ], "argon2d", "password"
                ),
                (
                    // The Java Admin SDK's spelling: beside hashAlgorithm, the version as a number.
                    [
                        "hashAlgorithm": "ARGON2", "hashType": "ARGON2_I", "version": 16, "iterations": 2, "memoryCostKib": 256,
                        "parallelism": 1, "hashLengthBytes": 32,
                        "users": user("argon2i", salt: "c29tZXNhbHQ=", hash: "/U3YPXYsSb3q9XxHvc0MLxur+GP960kN9j7emXX8zwY="),
                    ], "argon2i", "password"
                ),
            ]
            for (body, id, password) in cases {
                let reply = try await Self.importUsers(api, body)
                #expect((reply.json["error"] as? [Any])?.isEmpty == true, "\(id): \(reply.json)")
                #expect(
                    try await api.client("signInWithPassword", ["email": "\(id)@example.com", "password": password + "x"]).errorCode
                        == "INVALID_PASSWORD", "\(id)")
                #expect(try await api.signIn("\(id)@example.com", password).localID == id, "\(id)")
            }
            // Each was upgraded to argon2id at its first sign-in.
            let exported = try await http.get("/v1/projects/demo-test/accounts:batchGet", headers: [API.admin])
            let hashes = (exported.json["users"] as? [[String: Any]] ?? []).map { $0["passwordHash"] as? String ?? "" }
            #expect(hashes.count == cases.count)
            #expect(hashes.allSatisfy { String(decoding: TestBase64URL.decode($0) ?? [], as: UTF8.self).hasPrefix("$argon2id$") })
            // Out-of-bounds ARGON2 parameters refuse the whole request.
            let fault = try await Self.importUsers(
                api,
                [
                    "hashAlgorithm": "ARGON2",
                    "argon2Parameters": [
                        "hashType": "ARGON2_ID", "iterations": 2, "memoryCostKib": 65536, "parallelism": 1, "hashLengthBytes": 32,
                    ]
                        as [String: any Sendable],
                    "users": user("toocostly", salt: "c29tZXNhbHQ=", hash: "AAAA"),
                ])
            #expect(fault.errorCode == "INVALID_HASH_MEMORY_COST")
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
            let stillGood = try await api.refresh(good.refreshToken)
            #expect(stillGood.status == 200)
            let taken = try await Self.importUsers(
                api, ["users": [["localId": "other", "email": "GOOD@example.com"] as [String: any Sendable]]])
            #expect((taken.json["error"] as? [[String: Any]])?.first?["message"] as? String == "email exists in other account in database")

            let replaced = try await Self.importUsers(
                api, ["users": [["localId": "good", "email": "good@example.com", "displayName": "New"] as [String: any Sendable]]])
            #expect((replaced.json["error"] as? [Any])?.isEmpty == true)
            // The current token (not the rotated one, which time alone could expire) dies with the overwrite.
            #expect(try await api.refresh(Session(stillGood).refreshToken).errorCode == "TOKEN_EXPIRED")
            let record = (try await api.admin("lookup", ["localId": ["good"]]).json["users"] as? [[String: Any]])?.first
            #expect(record?["displayName"] as? String == "New")
            #expect(record?["passwordHash"] == nil, "the whole record was replaced")
        }
    }

    @Test("a clean batch goes in set-based and reads back exactly as a user-by-user import does")
    func bulkMatchesPerUser() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            func user(_ id: String, _ n: Int) -> [String: any Sendable] {
                [
                    "localId": id, "email": "\(id)@example.com", "emailVerified": true, "displayName": "Name \"\(n)\" é",
                    "photoUrl": "https://example.com/\(n).png", "phoneNumber": "+1555000\(id.hasPrefix("a") ? "1" : "2")\(n)00",
                    "disabled": n == 2, "customAttributes": #"{"role":"admin","level":\#(n)}"#, "createdAt": "1600000000123",
                    "lastLoginAt": "1600000500456", "passwordHash": "aGFzaC1ieXRlcw==", "salt": "c2FsdA==",
                    "providerUserInfo": [["providerId": "google.com", "rawId": "\(id)-google", "email": "\(id)@gmail.com"]],
                ]
            }
            let hashing: [String: any Sendable] = ["hashAlgorithm": "HMAC_SHA256", "signerKey": "a2V5"]
            var clean = hashing
            clean["users"] = (1...3).map { user("a\($0)", $0) }
            #expect((try await Self.importUsers(api, clean).json["error"] as? [Any])?.isEmpty == true)
            // The same users plus one whose email is taken: the batch falls back to one savepoint per user.
            var conflicting = hashing
            conflicting["users"] = (1...3).map { user("b\($0)", $0) } + [["localId": "c", "email": "a1@example.com"]]
            let fallback = try await Self.importUsers(api, conflicting).json["error"] as? [[String: Any]] ?? []
            #expect(fallback.count == 1 && fallback.first?["index"] as? Int == 3)

            let found =
                try await api.admin("lookup", ["localId": ["a1", "a2", "a3", "b1", "b2", "b3"]]).json["users"] as? [[String: Any]] ?? []
            #expect(found.count == 6)
            let byID = Dictionary(uniqueKeysWithValues: found.map { ($0["localId"] as? String ?? "", $0) })
            for n in 1...3 {
                let bulk = try #require(byID["a\(n)"] as? NSDictionary)
                let single = try #require(byID["b\(n)"] as? NSDictionary)
                for key in [
                    "emailVerified", "displayName", "photoUrl", "disabled", "customAttributes", "createdAt", "lastLoginAt",
                    "passwordHash",
                ] {
                    if key != "disabled" || n == 2 { #expect(bulk[key] != nil, "\(key) present") }
                    #expect(bulk[key] as? NSObject == single[key] as? NSObject, "\(key) of user \(n)")
                }
                let providers = (bulk["providerUserInfo"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String }.sorted()
                #expect(providers == ["google.com", "password", "phone"])
                #expect(bulk["phoneNumber"] as? String == "+15550001\(n)00")
                #expect((bulk["validSince"] as? String).flatMap { Int64($0) } != nil)
            }
            let audit = try await api.admin("listAuditEvents", ["maxResults": 1000]).json["events"] as? [[String: Any]] ?? []
            let imported = audit.filter { $0["action"] as? String == "USER_IMPORTED" && $0["actorType"] as? String == "admin" }
            #expect(Set(imported.compactMap { $0["localId"] as? String }).isSuperset(of: ["a1", "a2", "a3", "b1", "b2", "b3"]))
        }
    }

    @Test("a full batch of 1000 users imports in one call")
    func fullBatch() async throws {
        try await withServer(database: try await TestDatabase.createMigrated()) { http in
            let api = API(http: http)
            let users: [[String: any Sendable]] = (0..<1000).map { ["localId": "u\($0)", "email": "u\($0)@example.com"] }
            #expect((try await Self.importUsers(api, ["users": users]).json["error"] as? [Any])?.isEmpty == true)
            let found = try await api.admin("lookup", ["email": ["u0@example.com", "u999@example.com"]]).json["users"] as? [[String: Any]]
            #expect(found?.count == 2)
            let again = try await Self.importUsers(
                api, ["users": Array(users.prefix(5)) + [["localId": "new", "email": "new@example.com"]]])
            #expect((again.json["error"] as? [Any])?.isEmpty == true, "existing users are overwritten, the new one added")
        }
    }
}
