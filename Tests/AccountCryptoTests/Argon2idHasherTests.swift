import AccountCore
import AccountCrypto
import AccountTesting
import Foundation
import Synchronization
import Testing

@Suite("argon2id through libsodium")
struct Argon2idHasherTests {
    let hasher = Argon2idHasher(parameters: .init(memoryKiB: 1024, iterations: 1), threads: 2)

    @Test("hashes to a PHC string that verifies only the right password")
    func roundTrip() async throws {
        let stored = try await hasher.hash("correct horse")
        let phc = String(decoding: stored.hash, as: UTF8.self)
        #expect(phc.hasPrefix("$argon2id$v=19$m=1024,t=1,p=1$"))
        #expect(try await hasher.verify("correct horse", against: stored))
        #expect(try await hasher.verify("correct horsf", against: stored) == false)
        #expect(try await hasher.dummyVerify("x") == false)
        // Two hashes of one password differ (random salt).
        #expect(try await hasher.hash("correct horse").hash != stored.hash)
    }

    @Test("the default parameters are at least OWASP's and weaker hashes ask for a rehash")
    func parameters() async throws {
        #expect(Argon2idHasher.Parameters.owasp.memoryKiB >= 19 * 1024)
        #expect(Argon2idHasher.Parameters.owasp.iterations >= 2)
        let weak = try await hasher.hash("pw")
        let strong = Argon2idHasher(parameters: .owasp, threads: 1)
        #expect(strong.needsRehash(weak))
        #expect(strong.needsRehash(StoredPassword(algorithm: "BCRYPT", hash: [1])))
    }

    @Test("lanes: a known network's hash runs before the standard lane's waiters, and a full standard lane refuses only its own")
    func lanes() async throws {
        let hasher = Argon2idHasher(parameters: .init(memoryKiB: 1024, iterations: 1), threads: 1, queueLimit: 2)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let order = Recorder()
        // The one worker is busy until the gate opens.
        let blocker = Task {
            try await hasher.run(.standard) {
                started.signal()
                gate.wait()
                order.append("first")
            }
        }
        await Task.detached { started.wait() }.value
        let standard = Task { try await hasher.run(.standard) { order.append("standard") } }
        #expect(try await eventually(interval: .milliseconds(5)) { hasher.waiting.standard >= 1 })
        // The standard lane holds its limit (one running, one waiting): a third is refused at once,
        await #expect(throws: AccountError.self) { try await hasher.run(.standard) { order.append("refused") } }
        // while a known network's sign-in is admitted, and served first when the worker frees up.
        let known = Task { try await hasher.run(.known) { order.append("known") } }
        #expect(try await eventually(interval: .milliseconds(5)) { hasher.waiting.known >= 1 })
        gate.signal()
        try await blocker.value
        try await standard.value
        try await known.value
        #expect(order.entries == ["first", "known", "standard"])
        #expect(hasher.waiting.known == 0 && hasher.waiting.standard == 0)
        // Everything released: both lanes admit again.
        #expect(try await hasher.verify("pw", against: try await hasher.hash("pw"), lane: .known))
    }
}

/// What ran, in order, from any thread.
final class Recorder: Sendable {
    private let list = Mutex<[String]>([])
    func append(_ entry: String) { list.withLock { $0.append(entry) } }
    var entries: [String] { list.withLock { $0 } }
}
