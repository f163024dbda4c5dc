import ArgumentParser
import Foundation

extension Users {
    /// `accountctl users import FILE.jsonl`: one user per line in `batchCreate`'s user format.
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Import users from JSON lines (batchCreate format), 1000 per call.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "JSON-lines file") var file: String
        @Option(
            name: .customLong("hash-algorithm"),
            help: """
                SCRYPT, STANDARD_SCRYPT, BCRYPT, PBKDF2_SHA256, PBKDF_SHA1, HMAC_SHA512/256/SHA1/MD5, SHA512/256/1, MD5 \
                or ARGON2 (when lines carry passwordHash).
                """)
        var hashAlgorithm: String?
        @Option(name: .customLong("hash-key"), help: "Signer key, base64 (SCRYPT, HMAC_*).") var hashKey: String?
        @Option(name: .customLong("salt-separator"), help: "Salt separator, base64, appended to every salt.") var saltSeparator: String?
        @Option(help: "Rounds (SCRYPT, PBKDF*, SHA*, MD5).") var rounds: Int?
        @Option(name: .customLong("memory-cost"), help: "Memory cost (SCRYPT).") var memoryCost: Int?
        @Option(
            name: .customLong("hash-parameter"),
            help: """
                Any other parameter as NAME=VALUE, repeatable: passwordHashOrder=SALT_AND_PASSWORD, cpuMemCost, blockSize, \
                parallelization, dkLen, or ARGON2's hashType, version, iterations, memoryCostKib, parallelism, \
                hashLengthBytes, associatedData.
                """)
        var hashParameters: [String] = []

        func run() async throws {
            try await runCommand {
                let client = try connection.client()
                guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw CLIError.usage("cannot read \(file)") }
                var parameters: [String: String] = [:]
                for pair in hashParameters {
                    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                    guard parts.count == 2, !parts[0].isEmpty else {
                        throw CLIError.usage("--hash-parameter wants NAME=VALUE, not \(pair)")
                    }
                    parameters[parts[0]] = parts[1]
                }
                var users: [[String: Any]] = []
                for (number, line) in text.split(separator: "\n").enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                    guard let user = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                        throw CLIError(message: "\(file):\(number + 1): not a JSON object", exitCode: 65)
                    }
                    users.append(user)
                }
                var imported = 0
                var failures: [String] = []
                for start in stride(from: 0, to: users.count, by: 1000) {
                    var body: [String: Any] = ["users": Array(users[start..<min(start + 1000, users.count)])]
                    for (name, value) in parameters { body[name] = value }
                    if let hashAlgorithm { body["hashAlgorithm"] = hashAlgorithm }
                    if let hashKey { body["signerKey"] = hashKey }
                    if let saltSeparator { body["saltSeparator"] = saltSeparator }
                    if let rounds { body["rounds"] = rounds }
                    if let memoryCost { body["memoryCost"] = memoryCost }
                    let reply = try await client.call("batchCreate", body)
                    let errors = reply["error"] as? [[String: Any]] ?? []
                    for error in errors {
                        failures.append("line \(start + (error["index"] as? Int ?? 0) + 1): \(error["message"] as? String ?? "rejected")")
                    }
                    imported += min(1000, users.count - start) - errors.count
                    Output.progress("imported \(imported)/\(users.count)")
                }
                Output.progress("\n")
                if connection.json { return Output.json(["imported": imported, "failed": failures]) }
                Output.say("imported \(imported) of \(users.count) user(s)")
                failures.forEach { Output.say("  \($0)") }
                if !failures.isEmpty { throw ExitCode(65) }
            }
        }
    }

    /// `accountctl users export [--with-hashes]`: every user as JSON lines.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Export every user as JSON lines to stdout.")
        @OptionGroup var connection: ConnectionOptions
        @Flag(name: .customLong("with-hashes"), help: "Include password hashes and salts.") var withHashes = false

        func run() async throws {
            try await runCommand {
                let client = try connection.client()
                var token: String?
                var count = 0
                repeat {
                    var query = ["maxResults": "1000"]
                    if let token { query["nextPageToken"] = token }
                    let page = try await client.get("batchGet", query: query)
                    for var user in page["users"] as? [[String: Any]] ?? [] {
                        if !withHashes {
                            user.removeValue(forKey: "passwordHash")
                            user.removeValue(forKey: "salt")
                        }
                        let data = try JSONSerialization.data(withJSONObject: user, options: [.sortedKeys, .withoutEscapingSlashes])
                        print(Output.jsonSafe(String(decoding: data, as: UTF8.self)))
                        count += 1
                    }
                    token = page["nextPageToken"] as? String
                    Output.progress("exported \(count)")
                } while token != nil
                Output.progress("\n")
            }
        }
    }
}
