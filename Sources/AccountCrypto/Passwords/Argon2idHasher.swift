package import AccountCore
import CSodium
import NIOCore
import NIOPosix
import Synchronization

/// argon2id through libsodium's `crypto_pwhash`, PHC strings out. Work runs on a dedicated thread
/// pool of fixed size, so a burst of sign-ins queues instead of blocking the event loops. Each
/// ``HashLane`` has a bounded queue (`queueLimit` running or waiting): past it a request is refused
/// at once with 503 `UNAVAILABLE` (`Retry-After: 1`) before any hashing starts, so a flood cannot
/// delay honest sign-ins without bound (federation-and-limits.md §E.6: transport overload, counted
/// nowhere). A free worker takes the `known` lane's next hash first.
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
    /// The hash an unknown account's sign-in is checked against, made on the pool.
    private let dummy = Mutex<[UInt8]?>(nil)
    private let workers: Int
    /// Who runs and who waits, per lane.
    private let lanes = Mutex(Lanes())
    /// The most hashes that may run or wait at once in each lane.
    package let queueLimit: Int
    /// Where refusals and waits are counted.
    private let telemetry: Telemetry
    /// Native verifications run, real or spent for timing (for tests and diagnostics).
    private let nativeVerifies = Atomic<Int>(0)
    /// Wrong passwords against cheap imported hashes whose answer was held back (for tests and diagnostics).
    private let paddings = Atomic<Int>(0)
    /// How long a native verification takes here, in seconds: measured at start, then a moving
    /// average of the real ones (nil until the first measurement).
    private let nativeSeconds = Mutex<Double?>(nil)

    private struct Lanes {
        /// Hashes running on a worker.
        var running = 0
        /// Hashes running or waiting, per lane.
        var admittedKnown = 0
        var admittedStandard = 0
        /// Waiting for a worker, in order, per lane.
        var known: [CheckedContinuation<Void, Never>] = []
        var standard: [CheckedContinuation<Void, Never>] = []
    }

    /// Creates a hasher with `threads` workers (at most that many hashes run at once) and room for
    /// `queueLimit` hashes running or waiting (default 32 per worker).
    package init(
        parameters: Parameters = .owasp, threads: Int = System.coreCount, queueLimit: Int? = nil, telemetry: Telemetry = .off
    ) {
        self.telemetry = telemetry
        precondition(sodium_init() >= 0, "libsodium failed to initialise")
        self.parameters = parameters
        self.queueLimit = max(1, queueLimit ?? 32 * max(1, threads))
        self.workers = max(1, threads)
        self.pool = NIOThreadPool(numberOfThreads: max(1, threads))
        self.pool.start()
        // The dummy hash and the first timing take two argon2id runs: made on the pool, never on
        // the caller's thread (a cooperative one, which every task in the process shares).
        pool.submit { [self] _ in _ = calibrated() }
    }

    /// The dummy hash and a native verification's time, made on first call; on a pool thread only.
    private func calibrated() -> (dummy: [UInt8], seconds: Double) {
        if let dummy = dummy.withLock({ $0 }), let seconds = nativeSeconds.withLock({ $0 }) { return (dummy, seconds) }
        let phc = Self.hashSync("accountd-dummy-password", parameters)
        let started = ContinuousClock.now
        _ = Self.verifySync("accountd-dummy-password", phc: phc)
        let elapsed = Self.seconds(ContinuousClock.now - started)
        let made = dummy.withLock { dummy in
            if dummy == nil { dummy = phc }
            return dummy!
        }
        let seconds = nativeSeconds.withLock { seconds in
            if seconds == nil { seconds = elapsed }
            return seconds!
        }
        return (made, seconds)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// One native verification on a pool thread, counted and folded into ``nativeSeconds``.
    private func timedNativeVerify(_ password: String, phc: [UInt8]) -> Bool {
        nativeVerifies.add(1, ordering: .relaxed)
        let started = ContinuousClock.now
        let matches = Self.verifySync(password, phc: phc)
        let elapsed = Self.seconds(ContinuousClock.now - started)
        nativeSeconds.withLock { $0 = $0.map { 0.9 * $0 + 0.1 * elapsed } ?? elapsed }
        return matches
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
    /// `ImportedHashVerifier`, which is as CPU-heavy and so shares the same bound. A wrong password against an
    /// imported hash cheaper than a native one is answered no sooner than a native verification would be (decision
    /// 16): the answer waits the difference, off the pool, so a guess at an account with an MD5 hash takes as long as
    /// one at an account that does not exist, and costs the pool no more than the hash.
    package func verify(_ password: String, against stored: StoredPassword, lane: HashLane) async throws -> Bool {
        guard stored.isNative else {
            let nativeWork = Double(parameters.memoryKiB * parameters.iterations)
            let work = ImportedHashVerifier.estimatedWorkKiB(stored) ?? 0
            let (matches, native) = try await run(lane) { [self] in
                (try ImportedHashVerifier.verify(password, against: stored), calibrated().seconds)
            }
            if !matches && work < nativeWork {
                paddings.add(1, ordering: .relaxed)
                let topUp = native * (1 - work / nativeWork)
                try await Task.sleep(for: .nanoseconds(Int64(topUp * 1e9)))
            }
            return matches
        }
        let phc = stored.hash
        return try await run(lane) { [self] in timedNativeVerify(password, phc: phc) }
    }

    package func dummyVerify(_ password: String) async throws -> Bool {
        _ = try await run { [self] in timedNativeVerify(password, phc: calibrated().dummy) }
        return false
    }

    /// How many native argon2id verifications have run, including those spent only for their time
    /// (an unknown account).
    package var nativeVerifications: Int { nativeVerifies.load(ordering: .relaxed) }

    /// How many wrong passwords against imported hashes cheaper than a native one were answered
    /// only once a native verification's time had passed.
    package var paddedVerifications: Int { paddings.load(ordering: .relaxed) }

    package func validateImport(algorithm: String, parameters: [String: String]) throws(AccountError) {
        do {
            try ImportedHashVerifier.validateParameters(algorithm: algorithm, parameters: parameters)
        } catch {
            throw AccountError(.importFault, error.code)
        }
    }

    package func importFault(_ stored: StoredPassword) -> String? {
        ImportedHashVerifier.userFault(stored)
    }

    /// Hashes running or waiting, per lane (the metrics scrape's queue depth).
    package var depth: (known: Int, standard: Int) {
        lanes.withLock { ($0.admittedKnown, $0.admittedStandard) }
    }

    /// Hashes waiting for a worker, per lane (for tests and diagnostics).
    package var waiting: (known: Int, standard: Int) {
        lanes.withLock { ($0.known.count, $0.standard.count) }
    }

    /// `work` on the pool, if there is room in `lane`'s queue (otherwise refused before it
    /// starts), once a worker is free for it: at most `workers` run at once, so the pool itself
    /// never queues and the order of the lanes is the order of the work.
    package func run<T: Sendable>(_ lane: HashLane = .standard, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        let admitted = lanes.withLock { lanes in
            switch lane {
            case .known:
                guard lanes.admittedKnown < queueLimit else { return false }
                lanes.admittedKnown += 1
            case .standard:
                guard lanes.admittedStandard < queueLimit else { return false }
                lanes.admittedStandard += 1
            }
            return true
        }
        let laneName = lane == .known ? "known" : "standard"
        guard admitted else {
            telemetry.count(.hashQueueRefusals, [laneName])
            throw AccountError(.unavailable, "Too many sign-ins at once, retry shortly.")
        }
        let queued = ContinuousClock.now
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let runNow = lanes.withLock { lanes in
                if lanes.running < workers {
                    lanes.running += 1
                    return true
                }
                if lane == .known { lanes.known.append(continuation) } else { lanes.standard.append(continuation) }
                return false
            }
            if runNow { continuation.resume() }
        }
        telemetry.record(.hashQueueWait, [laneName], ContinuousClock.now - queued)
        defer {
            // Hand the worker to the next waiter, known lane first, or give it back.
            let next = lanes.withLock { lanes -> CheckedContinuation<Void, Never>? in
                if lane == .known { lanes.admittedKnown -= 1 } else { lanes.admittedStandard -= 1 }
                if !lanes.known.isEmpty { return lanes.known.removeFirst() }
                if !lanes.standard.isEmpty { return lanes.standard.removeFirst() }
                lanes.running -= 1
                return nil
            }
            next?.resume()
        }
        return try await pool.runIfActive(work)
    }

    /// Whether `stored` is imported, or a PHC string made with other parameters than the current
    /// ones (libsodium compares memory and passes); the sign-in then stores a new hash.
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
