import ArgumentParser
import Foundation
import NIOHTTP1

/// `accountctl idp …`: the identity providers users sign in with (federation-and-limits.md §B.5).
/// Secrets come from files (or `-` for stdin), never from the command line.
struct IdP: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idp", abstract: "Identity providers: OIDC issuers, Google, Apple.",
        subcommands: [
            List.self, Show.self, AddOIDC.self, SetGoogle.self, SetApple.self, Enable.self, Disable.self, Remove.self, Test.self,
        ])

    /// `oauthIdpConfigs/…` or `defaultSupportedIdpConfigs/…` for a provider id.
    static func path(_ providerID: String) -> String {
        providerID.hasPrefix("oidc.") ? "oauthIdpConfigs/\(providerID)" : "defaultSupportedIdpConfigs/\(providerID)"
    }

    /// A secret read from a file, or stdin for `-`, trailing newline removed.
    static func secret(_ path: String) throws -> String {
        let data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: path)
        guard let data, let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty
        else { throw CLIError.usage("cannot read a secret from \(path)") }
        return text
    }

    static func say(_ config: [String: Any], json: Bool) {
        if json { return Output.json(config) }
        let name = (config["name"] as? String ?? "").split(separator: "/").last.map(String.init) ?? ""
        let options = config["accountdOptions"] as? [String: Any] ?? [:]
        let rows: [(String, String)] = [
            ("provider", name), ("enabled", "\(config["enabled"] as? Bool ?? false)"), ("client id", config["clientId"] as? String ?? "-"),
            ("issuer", config["issuer"] as? String ?? "(built in)"), ("display name", config["displayName"] as? String ?? "-"),
            ("flow", (config["responseType"] as? [String: Any])?["code"] as? Bool == true ? "code" : "id_token"),
            ("client secret", options["clientSecretSet"] as? Bool == true ? "set" : "-"),
            (
                "trusted email domains",
                (options["trustedEmailDomains"] as? [String]).map { $0.isEmpty ? "(none)" : $0.joined(separator: ", ") }
                    ?? (name.hasPrefix("oidc.") ? "(default: none)" : "(default)")
            ),
        ]
        Output.table(["field", "value"], rows.map { [$0.0, $0.1] })
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every configured provider.")
        @OptionGroup var connection: ConnectionOptions
        func run() async throws {
            try await runCommand {
                let client = try connection.client()
                let oidc = try await client.v2(.GET, "oauthIdpConfigs")["oauthIdpConfigs"] as? [[String: Any]] ?? []
                let builtIn =
                    try await client.v2(.GET, "defaultSupportedIdpConfigs")["defaultSupportedIdpConfigs"] as? [[String: Any]] ?? []
                if connection.json { return Output.json(["providers": builtIn + oidc]) }
                Output.table(
                    ["provider", "enabled", "client id", "issuer"],
                    (builtIn + oidc).map {
                        [
                            ($0["name"] as? String ?? "").split(separator: "/").last.map(String.init) ?? "",
                            "\($0["enabled"] as? Bool ?? false)",
                            $0["clientId"] as? String ?? "", $0["issuer"] as? String ?? "(built in)",
                        ]
                    })
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One provider (secrets are never shown).")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "oidc.<id>, google.com or apple.com") var providerID: String
        func run() async throws {
            try await runCommand { IdP.say(try await connection.client().v2(.GET, IdP.path(providerID)), json: connection.json) }
        }
    }

    /// Trust options shared by the add/set commands.
    struct Trust: ParsableArguments {
        @Option(name: .customLong("additional-client-id"), help: "Another accepted audience (repeatable).") var additionalClientIDs:
            [String] = []
        @Option(name: .customLong("trusted-domain"), help: "A domain whose verified emails this provider proves (repeatable).")
        var trustedDomains: [String] = []
        @Flag(name: .customLong("trust-any"), help: "Every verified email is proven.") var trustAny = false
        @Flag(name: .customLong("trust-none"), help: "No email is proven (links need confirmation).") var trustNone = false
        @Option(
            name: .customLong("trust-email-domains"),
            help: ArgumentHelp(
                "The domains whose verified emails this provider proves, comma-separated; * for any (OIDC providers prove none unless told).",
                valueName: "DOMAINS"))
        var trustEmailDomains: String?

        func options() throws -> [String: Any] {
            var options: [String: Any] = [:]
            if !additionalClientIDs.isEmpty { options["additionalClientIds"] = additionalClientIDs }
            guard [!trustedDomains.isEmpty, trustAny, trustNone, trustEmailDomains != nil].filter({ $0 }).count <= 1 else {
                throw CLIError.usage("give one of --trust-email-domains, --trusted-domain, --trust-any, --trust-none")
            }
            if let list = trustEmailDomains {
                options["trustedEmailDomains"] = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                    .filter { !$0.isEmpty }
            }
            if !trustedDomains.isEmpty { options["trustedEmailDomains"] = trustedDomains }
            if trustAny { options["trustedEmailDomains"] = ["*"] }
            if trustNone { options["trustedEmailDomains"] = [String]() }
            return options
        }
    }

    struct AddOIDC: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add-oidc", abstract: "Configure an OpenID Connect issuer.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "oidc.<id>") var providerID: String
        @Option(help: "The issuer URL (https).") var issuer: String
        @Option(name: .customLong("client-id"), help: "The client id (the tokens' aud).") var clientID: String
        @Option(name: .customLong("display-name")) var displayName: String?
        @Flag(help: "Enable it now.") var enabled = false
        @Flag(name: .customLong("code-flow"), help: "The authorization-code flow (needs --client-secret-file).") var codeFlow = false
        @Option(name: .customLong("client-secret-file"), help: "File holding the client secret (- for stdin).") var clientSecretFile:
            String?
        @OptionGroup var trust: Trust
        func run() async throws {
            try await runCommand {
                var body: [String: Any] = ["issuer": issuer, "clientId": clientID, "enabled": enabled]
                if let displayName { body["displayName"] = displayName }
                if codeFlow { body["responseType"] = ["code": true] }
                if let clientSecretFile { body["clientSecret"] = try IdP.secret(clientSecretFile) }
                let options = try trust.options()
                if !options.isEmpty { body["accountdOptions"] = options }
                let id = providerID.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union([".", "-", "_"])) ?? providerID
                IdP.say(
                    try await connection.client().v2(.POST, "oauthIdpConfigs?oauthIdpConfigId=\(id)", body: body), json: connection.json)
            }
        }
    }

    /// Creates the built-in provider, or updates it when it exists.
    static func upsert(_ connection: ConnectionOptions, _ providerID: String, _ body: [String: Any]) async throws {
        let client = try connection.client()
        do {
            say(try await client.v2(.POST, "defaultSupportedIdpConfigs?idpId=\(providerID)", body: body), json: connection.json)
        } catch let error as CLIError where error.message.hasPrefix("CONFIGURATION_EXISTS") {
            let mask = body.keys.sorted().joined(separator: ",")
            say(
                try await client.v2(.PATCH, "defaultSupportedIdpConfigs/\(providerID)?updateMask=\(mask)", body: body),
                json: connection.json)
        }
    }

    struct SetGoogle: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set-google", abstract: "Configure Sign in with Google.")
        @OptionGroup var connection: ConnectionOptions
        @Option(name: .customLong("client-id"), help: "The web client id.") var clientID: String
        @Option(name: .customLong("client-secret-file"), help: "The web client's secret, for the code flow.") var clientSecretFile: String?
        @Flag(name: .customLong("no-hosted-domain-trust"), help: "Do not trust a token's hd for its domain's emails.")
        var noHostedDomainTrust = false
        @Flag(help: "Enable it now.") var enabled = false
        @OptionGroup var trust: Trust
        func run() async throws {
            try await runCommand {
                var body: [String: Any] = ["clientId": clientID, "enabled": enabled]
                if let clientSecretFile { body["clientSecret"] = try IdP.secret(clientSecretFile) }
                var options = try trust.options()
                if noHostedDomainTrust { options["trustHostedDomain"] = false }
                if !options.isEmpty { body["accountdOptions"] = options }
                try await IdP.upsert(connection, "google.com", body)
            }
        }
    }

    struct SetApple: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set-apple", abstract: "Configure Sign in with Apple.")
        @OptionGroup var connection: ConnectionOptions
        @Option(name: .customLong("services-id"), help: "The Services ID (the web client id).") var servicesID: String
        @Option(name: .customLong("bundle-id"), help: "A native app's bundle id (repeatable).") var bundleIDs: [String] = []
        @Option(name: .customLong("team-id")) var teamID: String?
        @Option(name: .customLong("key-id")) var keyID: String?
        @Option(name: .customLong("private-key-file"), help: "The .p8 key, for the code flow (- for stdin).") var privateKeyFile: String?
        @Flag(help: "Enable it now.") var enabled = false
        func run() async throws {
            try await runCommand {
                var apple: [String: Any] = [:]
                if !bundleIDs.isEmpty { apple["bundleIds"] = bundleIDs }
                if teamID != nil || keyID != nil || privateKeyFile != nil {
                    guard let teamID, let keyID, let privateKeyFile else {
                        throw CLIError.usage("the code flow needs --team-id, --key-id and --private-key-file")
                    }
                    apple["codeFlowConfig"] = ["teamId": teamID, "keyId": keyID, "privateKey": try IdP.secret(privateKeyFile)]
                }
                var body: [String: Any] = ["clientId": servicesID, "enabled": enabled]
                if !apple.isEmpty { body["appleSignInConfig"] = apple }
                try await IdP.upsert(connection, "apple.com", body)
            }
        }
    }

    /// Turns sign-ins with a provider on or off (links stay either way).
    static func setEnabled(_ connection: ConnectionOptions, _ providerID: String, _ enabled: Bool) async throws {
        try await runCommand {
            say(
                try await connection.client().v2(.PATCH, path(providerID) + "?updateMask=enabled", body: ["enabled": enabled]),
                json: connection.json)
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Let users sign in with it.")
        @OptionGroup var connection: ConnectionOptions
        @Argument var providerID: String
        func run() async throws { try await IdP.setEnabled(connection, providerID, true) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Refuse sign-ins with it (links stay).")
        @OptionGroup var connection: ConnectionOptions
        @Argument var providerID: String
        func run() async throws { try await IdP.setEnabled(connection, providerID, false) }
    }

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check an ID token as a sign-in through the provider would; prints its claims and trust, touches no account.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "oidc.<id>, google.com or apple.com") var providerID: String
        @Option(name: .customLong("id-token-file"), help: "File holding the ID token (- for stdin).") var idTokenFile: String
        @Option(help: "The raw nonce the app sent, when the token carries its hash.") var nonce: String?
        func run() async throws {
            try await runCommand {
                var body: [String: Any] = ["providerId": providerID, "idToken": try IdP.secret(idTokenFile)]
                if let nonce { body["nonce"] = nonce }
                let reply = try await connection.client().resource(.POST, "idpConfigs:testCredential", body: body)
                if connection.json { return Output.json(reply) }
                let claims = reply["claims"] as? [String: Any] ?? [:]
                Output.say("valid token of \(claims["iss"] as? String ?? "?") for \(claims["sub"] as? String ?? "?")")
                Output.say(
                    "email \(reply["email"] as? String ?? "(none)"), verified \(reply["emailVerified"] as? Bool ?? false), "
                        + ((reply["trusted"] as? Bool ?? false)
                            ? "trusted: it would take over an unverified account with this email"
                            : "not trusted: an existing account with this email would need confirmation"))
                Output.table(["claim", "value"], claims.keys.sorted().map { [$0, "\(claims[$0] ?? "")"] })
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete the configuration (links stay, sign-ins are refused).")
        @OptionGroup var connection: ConnectionOptions
        @Argument var providerID: String
        func run() async throws {
            try await runCommand {
                _ = try await connection.client().v2(.DELETE, IdP.path(providerID))
                Output.say("removed \(providerID)")
            }
        }
    }
}

extension Users {
    struct Link: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Attach a federated identity to a user (nothing is revoked).")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "uid, email or +phone") var user: String
        @Option(help: "The provider id (oidc.corp, google.com, saml.partner…).") var provider: String
        @Option(name: .customLong("raw-id"), help: "The identity's id at the provider (its sub).") var rawID: String
        @Option var email: String?
        func run() async throws {
            try await runCommand {
                let client = try connection.client()
                let found = try await client.findUser(user)
                var link: [String: Any] = ["providerId": provider, "rawId": rawID]
                if let email { link["email"] = email }
                _ = try await client.call("update", ["localId": found["localId"] as? String ?? "", "linkProviderUserInfo": link])
                Output.say("linked \(provider) \(rawID) to \(found["localId"] as? String ?? "")")
            }
        }
    }

    struct Unlink: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Detach a provider from a user.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "uid, email or +phone") var user: String
        @Option var provider: String
        func run() async throws {
            try await runCommand {
                let client = try connection.client()
                let found = try await client.findUser(user)
                _ = try await client.call("update", ["localId": found["localId"] as? String ?? "", "deleteProvider": [provider]])
                Output.say("unlinked \(provider) from \(found["localId"] as? String ?? "")")
            }
        }
    }

    struct Find: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The user holding a federated identity.")
        @OptionGroup var connection: ConnectionOptions
        @Option var provider: String
        @Option(name: .customLong("raw-id")) var rawID: String
        func run() async throws {
            try await runCommand {
                let reply = try await connection.client().call("lookup", ["federatedUserId": [["providerId": provider, "rawId": rawID]]])
                guard let user = (reply["users"] as? [[String: Any]])?.first else {
                    throw CLIError.notFound("no user holds \(provider) \(rawID)")
                }
                if connection.json { return Output.json(user) }
                Output.say("\(user["localId"] as? String ?? "") \(user["email"] as? String ?? "")")
            }
        }
    }
}
