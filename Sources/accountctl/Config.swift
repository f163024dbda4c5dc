import ArgumentParser
import Foundation
import NIOHTTP1

/// `accountctl config`: the project configuration resource (`v2/projects/{p}/config`,
/// mfa-phone-tenants.md §0.4), where phone sign-in and its test numbers are turned on.
struct Config: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or change the project configuration (phone sign-in, SMS regions, MFA).", subcommands: [Get.self, Set.self])

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the configuration as JSON.")
        @OptionGroup var connection: ConnectionOptions
        func run() async throws {
            try await runCommand { Output.json(try await connection.client().v2(.GET, "config")) }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change members, each PATH=JSON (signIn.phoneNumber.enabled=true); only the named members change.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "PATH=VALUE pairs; VALUE is JSON, or text when it does not parse as JSON.") var assignments: [String]
        func run() async throws {
            try await runCommand {
                var body: [String: Any] = [:]
                var mask: [String] = []
                for assignment in assignments {
                    guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                        throw CLIError.usage("expected PATH=VALUE, got \(Output.safe(assignment))")
                    }
                    let path = String(assignment[..<equals])
                    let raw = String(assignment[assignment.index(after: equals)...])
                    let value = (try? JSONSerialization.jsonObject(with: Data(raw.utf8), options: [.fragmentsAllowed])) ?? raw
                    body = Self.setting(body, path.split(separator: ".").map(String.init)[...], to: value)
                    mask.append(path)
                }
                let encoded = mask.joined(separator: ",").addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? ""
                let reply = try await connection.client().v2(.PATCH, "config?updateMask=\(encoded)", body: body)
                if connection.json { return Output.json(reply) }
                Output.say("updated \(mask.joined(separator: ", "))")
            }
        }

        static func setting(_ object: [String: Any], _ path: ArraySlice<String>, to value: Any) -> [String: Any] {
            var object = object
            guard let key = path.first else { return object }
            if path.count == 1 {
                object[key] = value
            } else {
                object[key] = setting(object[key] as? [String: Any] ?? [:], path.dropFirst(), to: value)
            }
            return object
        }
    }
}
