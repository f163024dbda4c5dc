import ArgumentParser
import Foundation

/// `accountctl users …`
struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find, list and change users.",
        subcommands: [
            Get.self, List.self, SignOut.self, Unlock.self, Disable.self, Enable.self, Delete.self, Import.self, Export.self, Link.self,
            Unlink.self, Find.self, MFA.self,
        ]
    )

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one user in full (no secrets).")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "uid, email or +phone") var user: String

        func run() async throws {
            try await runCommand {
                var record = try await connection.client().findUser(user)
                record.removeValue(forKey: "passwordHash")
                record.removeValue(forKey: "salt")
                if connection.json { return Output.json(record) }
                let providers = (record["providerUserInfo"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String }
                let claims = record["customAttributes"] as? String ?? "-"
                let rows: [(String, String)] = [
                    ("uid", record["localId"] as? String ?? ""), ("email", record["email"] as? String ?? "-"),
                    ("email verified", "\(record["emailVerified"] as? Bool ?? false)"), ("phone", record["phoneNumber"] as? String ?? "-"),
                    ("display name", record["displayName"] as? String ?? "-"), ("disabled", "\(record["disabled"] as? Bool ?? false)"),
                    ("providers", providers.joined(separator: ", ")),
                    ("sign-in methods", Self.methods(record).joined(separator: ", ")),
                    ("created", Output.time(record["createdAt"])), ("last sign-in", Output.time(record["lastLoginAt"])),
                    (
                        "valid since",
                        (record["validSince"] as? String).flatMap(Double.init).map {
                            Date(timeIntervalSince1970: $0).formatted(.iso8601)
                        } ?? "-"
                    ),
                    ("custom claims", claims),
                    ("second factors", MFA.describe(record).joined(separator: "; ")),
                ]
                Output.table(["field", "value"], rows.map { [$0.0, $0.1] })
            }
        }

        static func methods(_ record: [String: Any]) -> [String] {
            var methods: [String] = []
            if record["passwordHash"] != nil { methods.append("password") }
            if record["emailLinkSignin"] as? Bool == true { methods.append("emailLink") }
            return methods
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users, optionally by email prefix.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "Email prefix to match.") var query: String?
        @Option(help: "At most this many users.") var limit = 100

        func run() async throws {
            try await runCommand {
                let client = try connection.client()
                var users: [[String: Any]] = []
                var total = 0
                while users.count < limit {
                    var body: [String: Any] = ["limit": min(500, limit - users.count), "offset": users.count, "sortBy": "USER_EMAIL"]
                    if let query { body["emailPrefix"] = query }
                    let page = try await client.call("query", body)
                    total = Int(page["recordsCount"] as? String ?? "0") ?? 0
                    let batch = page["userInfo"] as? [[String: Any]] ?? []
                    users += batch
                    if batch.isEmpty || users.count >= total { break }
                }
                if connection.json { return Output.json(["recordsCount": total, "users": users]) }
                Output.table(
                    ["uid", "email", "verified", "disabled", "created"],
                    users.map {
                        [
                            $0["localId"] as? String ?? "", $0["email"] as? String ?? "-", "\($0["emailVerified"] as? Bool ?? false)",
                            "\($0["disabled"] as? Bool ?? false)", Output.time($0["createdAt"]),
                        ]
                    }
                )
                if total > users.count { Output.say("(\(users.count) of \(total); raise --limit for more)") }
            }
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "sign-out", abstract: "Revoke every session of a user.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "uid, email or +phone") var user: String

        func run() async throws {
            try await runCommand {
                let client = try connection.client()
                let uid = try await client.findUser(user)["localId"] as? String ?? ""
                let reply = try await client.call("revokeSessions", ["localId": uid])
                let count = (reply["revokedSessionIds"] as? [String])?.count ?? 0
                if connection.json { return Output.json(reply) }
                Output.say("signed out \(uid): \(count) session(s) revoked")
            }
        }
    }

    struct Unlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear the password lockout of a user or an email address (after many failed sign-ins).")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "uid, email or +phone") var user: String

        func run() async throws {
            try await runCommand {
                let client = try connection.client()
                // An address is unlocked as it is, account or not; anything else names a user.
                let body: [String: Any] =
                    user.contains("@") ? ["email": user] : ["localId": try await client.findUser(user)["localId"] as? String ?? ""]
                let reply = try await client.call("unlock", body)
                if connection.json { return Output.json(reply) }
                let email = reply["email"] as? String ?? user
                Output.say((reply["cleared"] as? Bool ?? false) ? "unlocked \(email)" : "\(email) was not locked")
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a user (revokes their sessions).")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "uid, email or +phone") var user: String
        func run() async throws { try await setDisabled(connection, user, true) }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled user.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "uid, email or +phone") var user: String
        func run() async throws { try await setDisabled(connection, user, false) }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a user.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "uid, email or +phone") var user: String
        @Flag(help: "Do not ask for confirmation.") var yes = false

        func run() async throws {
            try await runCommand {
                let client = try connection.client()
                let record = try await client.findUser(user)
                let uid = record["localId"] as? String ?? ""
                if !yes {
                    FileHandle.standardError.write(
                        Data(Output.safe("delete \(uid) (\(record["email"] as? String ?? "no email"))? type yes: ").utf8))
                    guard readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else {
                        throw CLIError.usage("not deleted (confirm with yes, or pass --yes)")
                    }
                }
                _ = try await client.call("delete", ["localId": uid])
                Output.say("deleted \(uid)")
            }
        }
    }

    static func setDisabled(_ connection: ConnectionOptions, _ user: String, _ disabled: Bool) async throws {
        try await runCommand {
            let client = try connection.client()
            let uid = try await client.findUser(user)["localId"] as? String ?? ""
            _ = try await client.call("update", ["localId": uid, "disableUser": disabled])
            Output.say("\(disabled ? "disabled" : "enabled") \(uid)")
        }
    }
}
