package import AccountCore
import CoreMetrics
import Crypto
package import Foundation
import SwiftASN1
import Synchronization
import X509
package import _CryptoExtras

/// The service's RS256 signer (identity-toolkit.md §3.6): signs with the one `current` key, verifies with every
/// published key, and keeps the decrypted keys in memory. The keys live in the shared
/// ``SigningKeyStore``; the ring reloads them every `reloadInterval` and, at most once a second,
/// when a token names an unknown `kid`, so every replica converges on the one current key.
package actor RS256KeyRing: TokenSigner {
    /// Signing is impossible: no current key, or its private half cannot be unsealed with this
    /// server's key-encryption key.
    package struct KeyUnavailable: Error, CustomStringConvertible {
        /// What is missing, for the operator.
        package var description: String
    }

    /// A key as held in memory: the record plus its parsed halves.
    private struct LoadedKey: Sendable {
        var record: SigningKeyRecord
        let publicKey: _RSA.Signing.PublicKey
        /// Nil when the sealed private key does not open under this server's KEK.
        let privateKey: _RSA.Signing.PrivateKey?
        let published: PublishedKey
        /// base64url of `{"alg":"RS256","kid":…,"typ":"JWT"}`.
        let encodedHeader: String

        init?(_ record: SigningKeyRecord, sealer: KeySealer) {
            guard RS256KeyRing.kid(forPublicKeyDER: record.publicKeyDER) == record.kid,
                let publicKey = try? _RSA.Signing.PublicKey(derRepresentation: record.publicKeyDER),
                let primitives = try? publicKey.getKeyPrimitives()
            else { return nil }
            let privateKey = (try? sealer.open(record.sealedPrivateKey))
                .flatMap { try? _RSA.Signing.PrivateKey(derRepresentation: $0) }
            self.record = record
            self.publicKey = publicKey
            self.privateKey = privateKey.flatMap { Array($0.publicKey.derRepresentation) == record.publicKeyDER ? $0 : nil }
            self.published = PublishedKey(
                kid: record.kid,
                modulus: Base64URLStrict.encode(primitives.modulus),
                exponent: Base64URLStrict.encode(primitives.publicExponent),
                certificatePEM: record.certificatePEM
            )
            self.encodedHeader = Base64URLStrict.encode(Array(#"{"alg":"RS256","kid":"\#(record.kid)","typ":"JWT"}"#.utf8))
        }

        func isLive(at now: Date) -> Bool {
            record.removeAfter.map { $0 > now } ?? true
        }
    }

    /// What signing needs, taken out of the actor so RSA runs in parallel.
    private struct SigningKey: Sendable {
        let encodedHeader: String
        let privateKey: _RSA.Signing.PrivateKey
    }

    let store: any SigningKeyStore
    private let sealer: KeySealer
    let now: @Sendable () -> Date
    private let reloadInterval: TimeInterval
    /// Tokens whose signature was already checked; see ``VerifiedTokenCache``.
    nonisolated package let verifiedTokens: VerifiedTokenCache
    /// Lookups of ``verifiedTokens``: hits and misses.
    private nonisolated let cacheHits: Counter
    private nonisolated let cacheMisses: Counter
    /// Unknown-`kid` and retried reloads happen at most this often.
    private let minimumReloadSpacing: TimeInterval = 1

    private var currentKID: String?
    private var lastAttempt: Date?
    private var startedFetches = 0
    private var appliedFetch = 0
    private var creatingCurrentKey: Task<Void, any Error>?
    /// The keys as of the last reload and when it happened: the one copy, readable without a hop
    /// onto the actor, so verification (the hot path) reads it directly.
    private nonisolated let published = Mutex<(keys: [String: LoadedKey], loadedAt: Date)?>(nil)
    private var keys: [String: LoadedKey] { published.withLock { $0?.keys ?? [:] } }
    private var loadedAt: Date? { published.withLock { $0?.loadedAt } }

    /// Creates a ring over `store`; `sealer` opens the stored private keys, `now` is the clock.
    /// `verifiedTokenCapacity` bounds how many verified ID tokens are remembered (0: none).
    package init(
        store: any SigningKeyStore, sealer: KeySealer, now: @escaping @Sendable () -> Date, reloadInterval: TimeInterval = 30,
        verifiedTokenCapacity: Int = 10_000, telemetry: Telemetry = .off
    ) {
        cacheHits = Counter(label: MetricFamily.tokenCache.rawValue, dimensions: [("result", "hit")], factory: telemetry.factory)
        cacheMisses = Counter(label: MetricFamily.tokenCache.rawValue, dimensions: [("result", "miss")], factory: telemetry.factory)
        self.store = store
        self.sealer = sealer
        self.now = now
        self.reloadInterval = reloadInterval
        self.verifiedTokens = VerifiedTokenCache(capacity: verifiedTokenCapacity)
    }

    /// base64url (no padding) of the first 16 bytes of SHA-256 over a DER SubjectPublicKeyInfo.
    package static func kid(forPublicKeyDER der: [UInt8]) -> String {
        Base64URLStrict.encode(Array(SHA256.hash(data: der)).prefix(16))
    }

    // MARK: Life cycle

    /// Loads the keys and, if the store has no `current` key, creates one (RSA-2048, self-signed
    /// certificate). When another replica wins the race, its key is loaded instead.
    package func ensureCurrentKey() async throws {
        if let creatingCurrentKey { return try await creatingCurrentKey.value }
        let task = Task { try await self.createCurrentKeyIfMissing() }
        creatingCurrentKey = task
        defer { creatingCurrentKey = nil }
        try await task.value
    }

    /// Inserts a new `next` key (published, not signing) and returns its kid.
    @discardableResult
    package func addNextKey() async throws -> String {
        let record = try await Self.makeKey(state: .next, at: now(), sealer: sealer)
        try await store.insert(record)
        try await reload()
        return record.kid
    }

    /// Promotes the oldest `next` key published for at least `publishedFor` seconds to current; the
    /// previous current key stays published for `retiredLifetime` seconds.
    package func promoteDueKeys(publishedFor: TimeInterval, retiredLifetime: TimeInterval) async throws {
        try await reload()
        let instant = now()
        let due = keys.values.map(\.record)
            .filter { $0.state == .next && instant.timeIntervalSince($0.createdAt) >= publishedFor }
            .min { ($0.createdAt, $0.kid) < ($1.createdAt, $1.kid) }
        guard let due else { return }
        do {
            try await store.promote(kid: due.kid, at: instant, retiredRemoveAfter: instant + retiredLifetime)
        } catch is SigningKeyConflict {
            // Another replica promoted first; the reload shows its choice.
        }
        try await reload()
    }

    /// Adds a key and makes it current at once, skipping the publication delay (tests, and
    /// `accountctl keys rotate --now`). Returns the new kid.
    @discardableResult
    package func rotateNow(retiredLifetime: TimeInterval) async throws -> String {
        let kid = try await addNextKey()
        let instant = now()
        try await store.promote(kid: kid, at: instant, retiredRemoveAfter: instant + retiredLifetime)
        try await reload()
        return kid
    }

    // MARK: TokenSigner

    nonisolated package func sign(claims: [String: JSONValue]) async throws -> String {
        let key = try await signingKey()
        var payload: [UInt8] = []
        JSONValue.object(claims).write(into: &payload)
        let input = key.encodedHeader + "." + Base64URLStrict.encode(payload)
        let signature = try key.privateKey.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URLStrict.encode(signature.rawRepresentation)
    }

    nonisolated package func verify(_ token: String) async throws -> [String: JSONValue] {
        let invalid = AccountError(.invalidIDToken)
        // Bytes, not Characters: String.split walks grapheme clusters, which profiling showed
        // costing more than the JSON in this function.
        let bytes = Array(token.utf8)
        let seconds = Int64(now().timeIntervalSince1970.rounded(.down))
        let cacheKey = verifiedTokens.key(bytes)
        if let cacheKey, let hit = verifiedTokens.entry(cacheKey, now: seconds), publishedKey(kid: hit.kid) != nil {
            cacheHits.increment()
            return hit.payload
        }
        if cacheKey != nil { cacheMisses.increment() }
        guard let firstDot = bytes.firstIndex(of: UInt8(ascii: ".")),
            let secondDot = bytes[(firstDot + 1)...].firstIndex(of: UInt8(ascii: ".")),
            !bytes[(secondDot + 1)...].contains(UInt8(ascii: ".")),
            let headerBytes = Base64URLStrict.decode(utf8: bytes[..<firstDot]),
            let payloadBytes = Base64URLStrict.decode(utf8: bytes[(firstDot + 1)..<secondDot]),
            let signature = Base64URLStrict.decode(utf8: bytes[(secondDot + 1)...]),
            case .object(let header)? = try? JSONValue.parse(headerBytes),
            header["alg"] == .string("RS256"),
            let kid = header["kid"]?.stringValue
        else { throw invalid }
        var found = publishedKey(kid: kid)
        if found == nil { found = await verificationKey(kid: kid) }
        guard let publicKey = found else { throw invalid }
        guard
            publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: bytes[..<secondDot], padding: .insecurePKCS1v1_5
            ),
            case .object(let payload)? = try? JSONValue.parse(payloadBytes)
        else { throw invalid }
        if let cacheKey { verifiedTokens.store(cacheKey, kid: kid, payload: payload, bytes: bytes.count, now: seconds) }
        return payload
    }

    package func publishedKeys() async throws -> [PublishedKey] {
        try await refreshIfStale()
        let instant = now()
        return keys.values.filter { $0.isLive(at: instant) }
            .sorted { ($0.record.createdAt, $0.record.kid) < ($1.record.createdAt, $1.record.kid) }
            .map(\.published)
    }

    // MARK: Loading

    private func signingKey() async throws -> SigningKey {
        try await refreshIfStale()
        if currentKID == nil { try await ensureCurrentKey() }
        guard let kid = currentKID, let key = keys[kid] else {
            throw KeyUnavailable(description: "no current signing key")
        }
        guard let privateKey = key.privateKey else {
            throw KeyUnavailable(
                description: "signing key \(kid) is sealed under key-encryption key \(key.record.kekID), "
                    + "which is not this server's (\(sealer.kekID))"
            )
        }
        return SigningKey(encodedHeader: key.encodedHeader, privateKey: privateKey)
    }

    /// The live key `kid` from the last reload while that is fresh; nil sends the caller to the actor.
    private nonisolated func publishedKey(kid: String) -> _RSA.Signing.PublicKey? {
        let instant = now()
        return published.withLock { snapshot in
            guard let snapshot, !Self.isDue(since: snapshot.loadedAt, interval: reloadInterval, at: instant),
                let key = snapshot.keys[kid], key.isLive(at: instant)
            else { return nil }
            return key.publicKey
        }
    }

    private func verificationKey(kid: String) async -> _RSA.Signing.PublicKey? {
        try? await refreshIfStale()
        if let key = keys[kid], key.isLive(at: now()) { return key.publicKey }
        guard Self.isDue(since: lastAttempt, interval: minimumReloadSpacing, at: now()) else { return nil }
        try? await reload()
        guard let key = keys[kid], key.isLive(at: now()) else { return nil }
        return key.publicKey
    }

    /// Loads on first use and every `reloadInterval`. A failed periodic reload keeps the keys
    /// already held and is retried after `minimumReloadSpacing`.
    private func refreshIfStale() async throws {
        guard let loadedAt else { return try await reload() }
        let instant = now()
        guard Self.isDue(since: loadedAt, interval: reloadInterval, at: instant),
            Self.isDue(since: lastAttempt, interval: minimumReloadSpacing, at: instant)
        else { return }
        try? await reload()
    }

    /// Fetches the published keys and replaces the ones held, unless a fetch started later has
    /// already been applied. Keys already decrypted are kept, with their records updated.
    private func reload() async throws {
        let instant = now()
        lastAttempt = instant
        startedFetches += 1
        let fetch = startedFetches
        let records = try await store.publishedKeys(at: instant)
        guard fetch > appliedFetch else { return }
        appliedFetch = fetch
        var loaded: [String: LoadedKey] = [:]
        for record in records {
            if var key = keys[record.kid], key.record.publicKeyDER == record.publicKeyDER {
                key.record = record
                loaded[record.kid] = key
            } else if let key = LoadedKey(record, sealer: sealer) {
                loaded[record.kid] = key
            }
        }
        let current = loaded.values.map(\.record).filter { $0.state == .current }
        currentKID = current.max { ($0.activatedAt ?? $0.createdAt) < ($1.activatedAt ?? $1.createdAt) }?.kid
        published.withLock { $0 = (loaded, instant) }
    }

    private func createCurrentKeyIfMissing() async throws {
        try await reload()
        guard currentKID == nil else { return }
        let record = try await Self.makeKey(state: .current, at: now(), sealer: sealer)
        do {
            try await store.insert(record)
        } catch is SigningKeyConflict {
            // Another replica created the current key first; load it.
        }
        try await reload()
        guard currentKID != nil else { throw KeyUnavailable(description: "the store has no current signing key") }
    }

    private static func isDue(since: Date?, interval: TimeInterval, at instant: Date) -> Bool {
        guard let since else { return true }
        let elapsed = instant.timeIntervalSince(since)
        return elapsed >= interval || elapsed < 0
    }

    /// A new RSA-2048 private key, generated on a thread of its own: not a queue's, where one
    /// generation waits behind every other (the suite's servers start dozens at once), and not the
    /// cooperative pool's, which it would block.
    package static func generateOffPool() async throws -> _RSA.Signing.PrivateKey {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }) }
            thread.name = "accountd-rsa-keygen"
            thread.start()
        }
    }

    /// Generates an RSA-2048 key with a self-signed certificate and seals its private half. The
    /// generation runs on a thread of its own, off the actor and off Swift's cooperative pool: it
    /// takes tens of milliseconds, hundreds on a loaded machine, and every task of the process waits
    /// behind a blocked cooperative thread (the suite's dozens of servers starting at once stalled
    /// each other for seconds).
    private nonisolated static func makeKey(
        state: SigningKeyRecord.State, at instant: Date, sealer: KeySealer
    ) async throws -> SigningKeyRecord {
        let privateKey = try await generateOffPool()
        let publicKeyDER = Array(privateKey.publicKey.derRepresentation)
        let certificateKey = Certificate.PrivateKey(privateKey)
        let name = try DistinguishedName { CommonName("securetoken@accountd") }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: certificateKey.publicKey,
            notValidBefore: instant - 3600,
            notValidAfter: instant + 10 * 365 * 86400,
            issuer: name,
            subject: name,
            signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
            },
            issuerPrivateKey: certificateKey
        )
        return SigningKeyRecord(
            kid: kid(forPublicKeyDER: publicKeyDER),
            publicKeyDER: publicKeyDER,
            certificatePEM: try certificate.serializeAsPEM().pemString,
            sealedPrivateKey: try sealer.seal(Array(privateKey.derRepresentation)),
            kekID: sealer.kekID,
            state: state,
            createdAt: instant
        )
    }
}
