import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The operators' CLI. It talks to a running accountd over HTTP, so every change goes through the
/// server's rules and audit trail.
@main
struct AccountctlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accountctl",
        abstract: "Administer a running accountd.",
        subcommands: [Health.self]
    )
}

/// Where the server is.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "Base URL of accountd (ACCOUNTD_URL, default http://127.0.0.1:9099).")
    var url: String?

    var baseURL: String {
        url ?? ProcessInfo.processInfo.environment["ACCOUNTD_URL"] ?? "http://127.0.0.1:9099"
    }
}

/// Exit codes that mean something to a script.
enum ExitStatus {
    /// The server could not be reached.
    static let unreachable = ExitCode(69)  // EX_UNAVAILABLE
    /// The server answered that it is not ready.
    static let notReady = ExitCode(75)  // EX_TEMPFAIL
}

/// `accountctl health`: is the server up and ready?
struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check that accountd is up and its database ready.")

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let client = HTTPClient.shared
        for path in ["/healthz", "/readyz"] {
            let response: HTTPClientResponse
            do {
                response = try await client.execute(
                    HTTPClientRequest(url: connection.baseURL + path),
                    timeout: .seconds(5)
                )
            } catch {
                print("accountd at \(connection.baseURL) is unreachable: \(error). Is it running? Check --url.")
                throw ExitStatus.unreachable
            }
            let body = try await response.body.collect(upTo: 64 * 1024)
            print("\(path): \(response.status.code) \(String(buffer: body))")
            if response.status != .ok { throw ExitStatus.notReady }
        }
    }
}
