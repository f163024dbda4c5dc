import ArgumentParser
import Foundation

/// The operators' CLI. It talks to a running accountd over the admin RPC, so every change goes
/// through the server's rules and lands in its audit trail.
@main
struct AccountctlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accountctl",
        abstract: "Administer a running accountd: find users, sign them out, manage sessions, links, keys.",
        discussion: """
            Exit codes: 0 done, 64 usage, 65 rejected by the server (bad input), 66 not found, 69 server unreachable,
            70 server fault, 75 not ready, 77 not authorised (check the admin token).
            """,
        subcommands: [
            Users.self, Sessions.self, Links.self, Keys.self, CustomTokens.self, IdP.self, Config.self, Audit.self, Health.self,
            Status.self,
        ]
    )
}

/// Where the server is and how to authenticate, shared by every command.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "Base URL of accountd's admin listener (ACCOUNTD_ADMIN_URL, default \(defaultAdminURL)).")
    var url: String?
    @Option(name: .customLong("token-file"), help: "File holding the admin bearer token (else ACCOUNTD_ADMIN_TOKEN).")
    var tokenFile: String?
    @Option(help: "Project id (ACCOUNTD_PROJECT_ID, default demo-project).")
    var project: String?
    @Flag(help: "Print JSON instead of tables.")
    var json = false

    /// A client for the configured server.
    func client() throws -> AdminClient {
        let environment = ProcessInfo.processInfo.environment
        var token = environment["ACCOUNTD_ADMIN_TOKEN"]
        if let tokenFile {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
                throw CLIError.usage("cannot read --token-file \(tokenFile)")
            }
            token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let token, !token.isEmpty else {
            throw CLIError.usage("no admin token: pass --token-file FILE or set ACCOUNTD_ADMIN_TOKEN")
        }
        return AdminClient(
            baseURL: (url ?? environment["ACCOUNTD_ADMIN_URL"] ?? defaultAdminURL).trimmingCharacters(
                in: CharacterSet(charactersIn: "/")),
            project: project ?? environment["ACCOUNTD_PROJECT_ID"] ?? "demo-project",
            token: token
        )
    }
}

/// accountd's admin listener on this machine (`ACCOUNTD_ADMIN_HOST`/`ACCOUNTD_ADMIN_PORT` defaults).
let defaultAdminURL = "http://127.0.0.1:9098"

/// Runs a command body, turning failures into one line on stderr and a meaningful exit code.
func runCommand(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as CLIError {
        FileHandle.standardError.write(Data("accountctl: \(Output.safe(error.message))\n".utf8))
        throw ExitCode(error.exitCode)
    }
}
