import ArgumentParser
import Foundation
import NIOHTTP1
import _CryptoExtras

/// `accountctl custom-tokens …`: the public keys that verify the custom tokens a backend mints
/// (federation-and-limits.md §C.2). A service-account file's private key is read here only to
/// derive its public key; it never leaves the machine.
struct CustomTokens: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "custom-tokens", abstract: "Signers of custom tokens (the Admin SDK's create_custom_token).",
        subcommands: [AddSigner.self, ListSigners.self, RemoveSigner.self])

    struct AddSigner: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-signer",
            abstract: "Trust a service account's key: --service-account-file, or --service-account with one key source.")
        @OptionGroup var connection: ConnectionOptions
        @Option(
            name: .customLong("service-account-file"), help: "A service-account JSON key file (client_email, private_key_id, private_key).")
        var serviceAccountFile: String?
        @Option(name: .customLong("service-account"), help: "The service account's email (the tokens' iss).") var serviceAccount: String?
        @Option(name: .customLong("public-key-file"), help: "A PEM public key.") var publicKeyFile: String?
        @Option(name: .customLong("certificate-file"), help: "A PEM X.509 certificate.") var certificateFile: String?
        @Option(name: .customLong("jwks-file"), help: "A JSON Web Key Set.") var jwksFile: String?
        @Option(
            name: .customLong("keys-url"),
            help: "Where the keys are published (a JWKS, or Google's x509 metadata for keys it manages), fetched on use.")
        var keysURL: String?
        @Option(name: .customLong("key-id"), help: "Only tokens with this kid are verified by the key.") var keyID: String?

        func run() async throws {
            try await runCommand {
                var body: [String: Any] = [:]
                if let serviceAccountFile {
                    guard serviceAccount == nil, publicKeyFile == nil, certificateFile == nil, jwksFile == nil, keysURL == nil else {
                        throw CLIError.usage("--service-account-file carries the email and the key: give nothing else but --key-id")
                    }
                    let (email, keyID, publicKey) = try Self.fromServiceAccountFile(serviceAccountFile)
                    body = ["serviceAccountEmail": email, "publicKeyPem": publicKey]
                    if let keyID = self.keyID ?? keyID { body["keyId"] = keyID }
                } else {
                    guard let serviceAccount else {
                        throw CLIError.usage("give --service-account-file, or --service-account EMAIL with a key")
                    }
                    let sources = [("publicKeyPem", publicKeyFile), ("x509Certificate", certificateFile), ("jwks", jwksFile)]
                        .compactMap { name, path in path.map { (name, $0) } }
                    guard sources.count + (keysURL == nil ? 0 : 1) == 1 else {
                        throw CLIError.usage("give exactly one of --public-key-file, --certificate-file, --jwks-file, --keys-url")
                    }
                    if let keysURL {
                        body = ["serviceAccountEmail": serviceAccount, "keysUrl": keysURL]
                    } else if let (field, path) = sources.first {
                        body = ["serviceAccountEmail": serviceAccount, field: try Self.read(path)]
                    }
                    if let keyID { body["keyId"] = keyID }
                }
                let reply = try await connection.client().resource(.POST, "customTokenSigners", body: body)
                if connection.json { return Output.json(reply) }
                let signers = reply["signers"] as? [[String: Any]] ?? [reply]
                for signer in signers {
                    Output.say(
                        "trusted \(signer["serviceAccountEmail"] as? String ?? "") key \(signer["keyId"] as? String ?? "(any kid)"): "
                            + "signer \(signer["signerId"] as? String ?? ""), SHA-256 \(signer["fingerprint"] as? String ?? "")")
                }
            }
        }

        static func read(_ path: String) throws -> String {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw CLIError.usage("cannot read \(path)") }
            return text
        }

        /// The email, key id and public key (PEM) of a service-account JSON key file.
        static func fromServiceAccountFile(_ path: String) throws -> (String, String?, String) {
            guard let data = FileManager.default.contents(atPath: path),
                let file = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
                let email = file["client_email"] as? String, let privateKey = file["private_key"] as? String
            else { throw CLIError.usage("\(path) is not a service-account key file (client_email, private_key)") }
            do {
                let key = try _RSA.Signing.PrivateKey(pemRepresentation: privateKey)
                return (email, file["private_key_id"] as? String, key.publicKey.pemRepresentation)
            } catch {
                throw CLIError.usage("the private_key of \(path) is not an RSA key of 2048 bits or more")
            }
        }
    }

    struct ListSigners: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list-signers", abstract: "The trusted keys.")
        @OptionGroup var connection: ConnectionOptions
        func run() async throws {
            try await runCommand {
                let reply = try await connection.client().resource(.GET, "customTokenSigners")
                if connection.json { return Output.json(reply) }
                Output.table(
                    ["signer", "service account", "kid", "source", "SHA-256", "added"],
                    (reply["signers"] as? [[String: Any]] ?? []).map {
                        [
                            $0["signerId"] as? String ?? "", $0["serviceAccountEmail"] as? String ?? "", $0["keyId"] as? String ?? "",
                            $0["source"] as? String ?? "", String(($0["fingerprint"] as? String ?? "").prefix(16)) + "…",
                            $0["createdAt"] as? String ?? "",
                        ]
                    })
            }
        }
    }

    struct RemoveSigner: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove-signer", abstract: "Stop trusting a key.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The signer id (list-signers).") var signerID: String
        func run() async throws {
            try await runCommand {
                _ = try await connection.client().resource(.DELETE, "customTokenSigners", id: signerID)
                Output.say("removed signer \(signerID)")
            }
        }
    }
}
