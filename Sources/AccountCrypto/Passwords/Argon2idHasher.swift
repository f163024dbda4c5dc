package import AccountCore
import CSodium
import NIOCore
import NIOPosix
import Synchronization

/// argon2id through libsodium's `crypto_pwhash`, PHC strings out. Work runs on a dedicated thread
/// pool of fixed size, so a burst of sign-ins queues there instead of blocking the event loops. The
/// queue is bounded (`queueLimit`): past it a request is refused at once with 503 `UNAVAILABLE`
/// (`Retry-After: 1`) before any hashing starts, so a flood cannot delay honest sign-ins without
/// bound (federation-and-limits.md §E.6: transport overload, counted nowhere).
package final class Argon2idHasher: PasswordHasher {
    /// Cost parameters. libsodium's argon2id always runs with parallelism 1.
    package struct Parameters: Sendable, Equatable {
        /// Memory in KiB (OWASP: 19 MiB = 19456).
        package var memoryKiB: Int
        /// Passes over memory (OWASP: 2).
        package var iterations: Int

        /// OWASP's minimum recommendation for argon2id: m=19 MiB, t=2, p=1.
        package static let owasp = Parameters(memoryKiB: 19 * 1024, iterations: 2)

        /// Creates parameters.
        package init(memoryKiB: Int, iterations: Int) {
            self.memoryKiB = memoryKiB
            self.iterations = iterations
        }
    }

    /// The parameters new hashes use.
    package let parameters: Parameters
    private let pool: NIOThreadPool
    private let dummy: [UInt8]
    /// Hashes running or waiting for a worker.
    private let admitted = Atomic<Int>(0)
    /// The most hashes that may run or wait at once.
    package let queueLimit: Int

    /// Creates a hasher with `threads` workers (at most that many hashes run at once) and room for
    /// `queueLimit` hashes running or waiting (default 32 per worker).
    package init(parameters: Parameters = .owasp, threads: Int = System.coreCount, queueLimit: Int? = nil) {
        precondition(sodium_init() >= 0, "libsodium failed to initialise")
        self.parameters = parameters
        self.queueLimit = max(1, queueLimit ?? 32 * max(1, threads))
        self.pool = NIOThreadPool(numberOfThreads: max(1, threads))
        self.pool.start()
        self.dummy = Self.hashSync("accountd-dummy-password", parameters)
    }

    deinit {
        pool.shutdownGracefully { _ in }
    }

    package func hash(_ password: String) async throws -> StoredPassword {
        let parameters = self.parameters
        let phc = try await run { Self.hashSync(password, parameters) }
        return StoredPassword(algorithm: StoredPassword.argon2id, hash: phc)
    }

    /// Verifies on the pool: native PHC strings through libsodium, imported hashes (`SCRYPT`, `BCRYPT`, …) through
    /// `ImportedHashVerifier`, which is as CPU-heavy and so shares the same bound.
    package func verify(_ password: String, against stored: StoredPassword) async throws -> Bool {
        guard stored.isNative else {
            return try await run { try ImportedHashVerifier.verify(password, against: stored) }
        }
        let phc = stored.hash
        return try await run { Self.verifySync(password, phc: phc) }
    }

    package func dummyVerify(_ password: String) async throws -> Bool {
        let phc = dummy
        _ = try await run { Self.verifySync(password, phc: phc) }
        return false
    }

    /// `work` on the pool, if there is room in the queue; otherwise refused before it starts.
    private func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        guard admitted.add(1, ordering: .relaxed).newValue <= queueLimit else {
            admitted.subtract(1, ordering: .relaxed)
            throw AccountError(.unavailable, "Too many sign-ins at once, retry shortly.")
        }
        defer { admitted.subtract(1, ordering: .relaxed) }
        return try await pool.runIfActive(work)
    }

    /// Whether a stored PHC string used weaker parameters than the current ones.
    package func needsRehash(_ stored: StoredPassword) -> Bool {
        guard stored.isNative else { return true }
        var phc = stored.hash + [0]
        return phc.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                crypto_pwhash_str_needs_rehash(
                    chars.baseAddress!,
                    UInt64(parameters.iterations),
                    Int(parameters.memoryKiB) * 1024
                ) != 0
            }
        }
    }

    /// Hashes synchronously (the benchmark's raw rate uses this directly).
    package static func hashSync(_ password: String, _ parameters: Parameters) -> [UInt8] {
        var output = [CChar](repeating: 0, count: Int(crypto_pwhash_STRBYTES))
        let bytes = Array(password.utf8) + [0]  // never empty, so the pointer is never nil
        let result = bytes.withUnsafeBufferPointer { input in
            input.withMemoryRebound(to: CChar.self) { chars in
                crypto_pwhash_str_alg(
                    &output,
                    chars.baseAddress!,
                    UInt64(bytes.count - 1),
                    UInt64(parameters.iterations),
                    Int(parameters.memoryKiB) * 1024,
                    crypto_pwhash_ALG_ARGON2ID13
                )
            }
        }
        precondition(result == 0, "argon2id ran out of memory")
        let length = output.firstIndex(of: 0) ?? output.count
        return output[..<length].map { UInt8(bitPattern: $0) }
    }

    /// Verifies synchronously against a PHC string.
    package static func verifySync(_ password: String, phc: [UInt8]) -> Bool {
        var terminated = phc.map { CChar(bitPattern: $0) } + [0]
        let bytes = Array(password.utf8) + [0]
        return bytes.withUnsafeBufferPointer { input in
            input.withMemoryRebound(to: CChar.self) { chars in
                crypto_pwhash_str_verify(&terminated, chars.baseAddress!, UInt64(bytes.count - 1)) == 0
            }
        }
    }
}
