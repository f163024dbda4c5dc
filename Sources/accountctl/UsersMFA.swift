import ArgumentParser
import Foundation

extension Users {
    /// `accountctl users mfa …`: a user's second factors (mfa-phone-tenants.md §B.13).
    struct MFA: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mfa", abstract: "Show or remove a user's second factors.", subcommands: [List.self, Remove.self])

        /// One line per factor: id, kind, name, phone.
        static func describe(_ record: [String: Any]) -> [String] {
            (record["mfaInfo"] as? [[String: Any]] ?? []).map { factor in
                let kind = factor["totpInfo"] != nil ? "totp" : "phone \(factor["phoneInfo"] as? String ?? "")"
                let name = (factor["displayName"] as? String).map { " \"\($0)\"" } ?? ""
                return "\(factor["mfaEnrollmentId"] as? String ?? "") \(kind)\(name) enrolled \(factor["enrolledAt"] as? String ?? "-")"
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List a user's second factors.")
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "uid, email or +phone") var user: String

            func run() async throws {
                try await runCommand {
                    let record = try await connection.client().findUser(user)
                    if connection.json { return Output.json(["mfaInfo": record["mfaInfo"] ?? []]) }
                    let lines = MFA.describe(record)
                    Output.say(lines.isEmpty ? "no second factors" : lines.joined(separator: "\n"))
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Remove one second factor (the user then signs in without it; their sessions stay). Audited as an admin update.")
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "uid, email or +phone") var user: String
            @Argument(help: "The factor's enrollment id (see `users mfa list`).") var enrollmentID: String

            func run() async throws {
                try await runCommand {
                    let client = try connection.client()
                    let record = try await client.findUser(user)
                    let uid = record["localId"] as? String ?? ""
                    let factors = record["mfaInfo"] as? [[String: Any]] ?? []
                    guard factors.contains(where: { $0["mfaEnrollmentId"] as? String == enrollmentID }) else {
                        throw CLIError.usage("\(uid) has no second factor \(enrollmentID)")
                    }
                    // The whole set minus the one: TOTP factors are kept by id (their secret stays).
                    let kept: [[String: Any]] = factors.filter { $0["mfaEnrollmentId"] as? String != enrollmentID }.map { factor in
                        var entry: [String: Any] = ["mfaEnrollmentId": factor["mfaEnrollmentId"] ?? ""]
                        if let name = factor["displayName"] { entry["displayName"] = name }
                        if let phone = factor["phoneInfo"] { entry["phoneInfo"] = phone } else { entry["totpInfo"] = [String: Any]() }
                        if let enrolled = factor["enrolledAt"] { entry["enrolledAt"] = enrolled }
                        return entry
                    }
                    let reply = try await client.call("update", ["localId": uid, "mfa": ["enrollments": kept]])
                    if connection.json { return Output.json(reply) }
                    Output.say("removed second factor \(enrollmentID) from \(uid); \(kept.count) left")
                }
            }
        }
    }
}
