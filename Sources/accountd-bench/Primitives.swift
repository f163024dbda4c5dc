import AccountCore
import AccountCrypto
import AccountTesting
import ArgumentParser
import Foundation

/// `accountd-bench primitives`: the raw rates the service is compared with in `scripts/bench`,
/// measured with the service's own code and parameters on this machine: argon2id hashes per
/// second on every core, RS256 signs and verifies per second. argon2id verifies come last, so that
/// the sign-in run the bench starts next follows them directly; `--argon2id-verify-only` measures
/// them alone (the bench's second bracket, right after the sign-in run).
struct BenchPrimitives: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "primitives",
        abstract: "Measure raw argon2id and RS256 rates with the service's parameters (prints JSON).",
    )

    @Option(help: "Seconds per measurement.") var seconds = 5.0
    @Option(help: "Concurrent workers (default: the number of cores).") var workers = ProcessInfo.processInfo.activeProcessorCount
    @Flag(help: "Measure only argon2id verifies.") var argon2idVerifyOnly = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let parameters = Argon2idHasher.Parameters(
            memoryKiB: Int(environment["ACCOUNTD_ARGON2_MEMORY_KIB"] ?? "") ?? 19 * 1024,
            iterations: Int(environment["ACCOUNTD_ARGON2_ITERATIONS"] ?? "") ?? 2
        )
        let hasher = Argon2idHasher(parameters: parameters, threads: workers)
        var result: [String: Any] = [
            "workers": workers, "argon2idMemoryKiB": parameters.memoryKiB, "argon2idIterations": parameters.iterations,
        ]
        if !argon2idVerifyOnly {
            result["argon2idHashesPerSecond"] = try await rate(seconds: seconds, workers: workers) {
                _ = try await hasher.hash("benchmark-password")
            }
            // No verified-token cache: every verify below checks the signature, as a first sight of a token does.
            let ring = RS256KeyRing(
                store: MemorySigningKeyStore(), sealer: KeySealer(keyEncryptionKey: Array(repeating: 1, count: 32)),
                now: { Date() }, verifiedTokenCapacity: 0)
            try await ring.ensureCurrentKey()
            let claims: [String: JSONValue] = [
                "sub": .string("benchmark-user"), "iat": .int(1_700_000_000), "exp": .int(1_700_003_600),
            ]
            result["rs256SignsPerSecond"] = try await rate(seconds: seconds, workers: workers) {
                _ = try await ring.sign(claims: claims)
            }
            let token = try await ring.sign(claims: claims)
            result["rs256VerifiesPerSecond"] = try await rate(seconds: seconds, workers: workers) {
                _ = try await ring.verify(token)
            }
        }
        // Last, next to the sign-in run the bench starts right after.
        let stored = try await hasher.hash("benchmark-password")
        result["argon2idVerifiesPerSecond"] = try await rate(seconds: seconds, workers: workers) {
            _ = try await hasher.verify("benchmark-password", against: stored)
        }
        let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }

    /// Operations per second of `body` run by `workers` concurrent loops for `seconds`, to 0.1.
    private func rate(seconds: Double, workers: Int, _ body: @escaping @Sendable () async throws -> Void) async throws -> Double {
        (try await BenchSQL.measure(seconds: seconds, workers: workers, body).perSecond * 10).rounded() / 10
    }
}
