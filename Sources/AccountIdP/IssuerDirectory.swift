package import AccountCore
package import AsyncHTTPClient
import Crypto
import Foundation
package import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import Tracing

/// Issuers' signing keys, fetched and cached per federation-and-limits.md §B.4: discovery
/// (`{issuer}/.well-known/openid-configuration`, or the config's overrides), then the JWKS at its
/// `jwks_uri`, kept as long as `Cache-Control` says (clamped to 5 min–24 h); a token naming an
/// unknown `kid` forces one refetch per issuer per 60 s; after a failed refresh the stale keys
/// serve 24 h more. Fetches are HTTPS only (plain HTTP to loopback only when allowed, for `demo-`
/// projects), 5 s, at most 1 MiB, no redirects, never a URL taken from a token. Every document
/// (keys, discovery, a signer's `keysUrl`) is fetched once at a time however many requests want
/// it, and a fetch that failed with nothing cached is remembered for ``failureMemory``: no client
/// can make the server open outbound connections at will.
///
/// It also fetches the documents of custom-token signers' `keysUrl` (§C.2) under the same rules.
package actor IssuerDirectory: IdPSignatureVerifier, IdPFlowEndpoints, SignerKeyDocuments {
    private struct Entry {
        var keys: [(kid: String?, key: IssuerKey)]
        /// The document itself, for a signer's `keysUrl` (`document:` sources; `keys` is then empty).
        var document: [String: JSONValue] = [:]
        var freshUntil: Date
        var staleUntil: Date
        var lastForced: Date?
    }

    private let client: HTTPClient
    private let clock: any WallClock
    private let allowLoopbackHTTP: Bool
    private let logger: Logger
    /// How long one fetch may take (a token exchange twice that).
    private let fetchTimeout: Duration
    private var entries: [String: Entry] = [:]
    private var inFlight: [String: Task<Entry, any Error>] = [:]
    /// Sources whose last fetch failed with nothing usable cached, until when that answer stands.
    private var failedUntil: [String: Date] = [:]

    /// Where fetches are counted by outcome.
    private let telemetry: Telemetry

    static let minimumCache: TimeInterval = 300
    static let maximumCache: TimeInterval = 86400
    static let staleGrace: TimeInterval = 86400
    static let forcedRefetchInterval: TimeInterval = 60
    static let maximumBytes = 1 << 20
    /// How long a failed fetch (nothing cached) is the answer before the source is tried again.
    static let failureMemory: TimeInterval = 15

    /// Creates the directory over `client` (which must not follow redirects; see ``makeClient()``).
    package init(
        client: HTTPClient, clock: any WallClock, allowLoopbackHTTP: Bool, fetchTimeout: Duration = .seconds(5), logger: Logger,
        telemetry: Telemetry = .off
    ) {
        self.telemetry = telemetry
        self.client = client
        self.clock = clock
        self.allowLoopbackHTTP = allowLoopbackHTTP
        self.fetchTimeout = fetchTimeout
        self.logger = logger
    }

    /// An HTTP client as the directory needs it: no redirects followed; with `trustedCAFile`, the
    /// certificates in that PEM file are trusted beside the system's (an internal IdP's CA). A
    /// connection that cannot be made (refused, or a certificate not trusted) fails the fetch at
    /// once instead of being retried until the 5 s deadline: a user waits on it, and cached keys
    /// (stale for a day) cover a passing fault.
    package static func makeClient(trustedCAFile: String? = nil) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustedCAFile { tls.additionalTrustRoots = [.file(trustedCAFile)] }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    package func verifySignature(_ token: JWS, config: IdPConfig) async throws {
        guard let algorithm = token.algorithm else { throw IdPTokenRules.badSignature }
        let source = Self.source(config)
        var entry = try await keys(source, force: false)
        var candidates = Self.candidates(entry, kid: token.keyID)
        if candidates.isEmpty, token.keyID != nil, mayRefetch(source) {
            // A rotated key: refetch once, at most every 60 s per issuer.
            entry = try await keys(source, force: true)
            candidates = Self.candidates(entry, kid: token.keyID)
        }
        guard candidates.contains(where: { $0.verifies(token.signature, over: token.signingInput, algorithm: algorithm) }) else {
            throw IdPTokenRules.badSignature
        }
    }

    /// A signer's `keysUrl` document, cached as an issuer's keys are (one fetch at a time per URL;
    /// a `refresh` for an unknown kid at most once a minute, so a flood of made-up kids costs one
    /// fetch a minute). Throws the fetch's own error when nothing usable is cached.
    package func document(at url: String, refresh: Bool) async throws -> [String: JSONValue] {
        let source = "document:" + url
        return try await cached(source, force: refresh && mayRefetch(source)).document
    }

    /// Whether `source`, already held, may be refetched for an unknown kid now (at most once per
    /// ``forcedRefetchInterval``); if so, the refetch is counted at once, before any await, so
    /// concurrent requests do not all pass.
    private func mayRefetch(_ source: String) -> Bool {
        guard let entry = entries[source] else { return false }
        let now = clock.now()
        if let last = entry.lastForced, now.timeIntervalSince(last) < Self.forcedRefetchInterval { return false }
        entries[source]?.lastForced = now
        return true
    }

    /// A config's discovery document, cached as keys are (one fetch at a time, stale for a day
    /// after a failed refresh, a failure with nothing cached remembered briefly).
    private func discovery(_ config: IdPConfig) async throws -> [String: JSONValue] {
        do {
            return try await cached("document:" + Self.discoveryURL(config), force: false).document
        } catch {
            throw IdPTokenRules.unreachable
        }
    }

    package func authorizationEndpoint(_ config: IdPConfig) async throws -> String {
        if let endpoint = config.options.authorizationEndpoint { return endpoint }
        guard let endpoint = try await discovery(config)["authorization_endpoint"]?.stringValue else { throw IdPTokenRules.unreachable }
        return endpoint
    }

    package func exchangeCode(_ config: IdPConfig, form: [(String, String)]) async throws -> [String: JSONValue] {
        let endpoint: String
        if let configured = config.options.tokenEndpoint {
            endpoint = configured
        } else {
            guard let discovered = try await discovery(config)["token_endpoint"]?.stringValue else { throw IdPTokenRules.unreachable }
            endpoint = discovered
        }
        guard let components = URLComponents(string: endpoint), let host = components.host?.lowercased(),
            components.scheme?.lowercased() == "https"
                || (components.scheme?.lowercased() == "http" && allowLoopbackHTTP
                    && ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host))
        else { throw IdPTokenRules.unreachable }
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        var form = form
        if config.providerID == "apple.com", let apple = config.apple, let team = apple.teamID, let key = apple.keyID,
            let pem = apple.privateKey
        {
            form.append(
                ("client_secret", try Self.appleClientSecret(team: team, keyID: key, privateKeyPEM: pem, clientID: config.clientID)))
        }
        let body = form.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: body))
        for (name, value) in TraceContext.outgoingHeaders() { request.headers.replaceOrAdd(name: name, value: value) }
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await client.execute(request, timeout: Self.amount(fetchTimeout * 2))
            bytes = try await response.body.collect(upTo: Self.maximumBytes)
        } catch {
            throw IdPTokenRules.unreachable
        }
        switch response.status.code {
        case 200..<300: break
        case 400..<500: throw AccountError(.invalidIDPResponse, "The authorization code was rejected.")
        default: throw IdPTokenRules.unreachable
        }
        guard let object = (try? JSONValue.parse(Array(bytes.readableBytesView)))?.objectValue else { throw IdPTokenRules.unparsable }
        return object
    }

    /// Apple's client secret (§A.5): an ES256 JWT `{iss: team, sub: Services ID, aud: Apple, iat, exp}`
    /// signed with the configured key, valid for an hour.
    func appleClientSecret(team: String, keyID: String, privateKeyPEM: String, clientID: String) throws -> String {
        try Self.appleClientSecret(team: team, keyID: keyID, privateKeyPEM: privateKeyPEM, clientID: clientID, now: clock.now())
    }

    static func appleClientSecret(team: String, keyID: String, privateKeyPEM: String, clientID: String, now: Date = Date()) throws -> String
    {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM) else {
            throw AccountError(.invalidIDPResponse, "The Apple sign-in key is not a P-256 private key.")
        }
        let issuedAt = Int64(now.timeIntervalSince1970)
        let header = JSONValue.object(["alg": .string("ES256"), "kid": .string(keyID)]).serialized()
        let claims = JSONValue.object([
            "iss": .string(team), "sub": .string(clientID), "aud": .string("https://appleid.apple.com"), "iat": .int(issuedAt),
            "exp": .int(issuedAt + 3600),
        ]).serialized()
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let signature = try key.signature(for: SHA256.hash(data: Array(input.utf8)))
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    private static func discoveryURL(_ config: IdPConfig) -> String {
        config.options.discoveryURL
            ?? (config.primaryIssuer.hasSuffix("/") ? String(config.primaryIssuer.dropLast()) : config.primaryIssuer)
            + "/.well-known/openid-configuration"
    }

    private static func candidates(_ entry: Entry, kid: String?) -> [IssuerKey] {
        entry.keys.filter { kid == nil || $0.kid == kid }.map(\.key)
    }

    /// Where a config's keys come from: its `jwksUri`, else its discovery document.
    private static func source(_ config: IdPConfig) -> String {
        if let jwks = config.options.jwksURI { return "jwks:" + jwks }
        return "discovery:" + discoveryURL(config)
    }

    /// The keys of `source`, as ``cached(_:force:)`` has them; a fetch that fails with nothing
    /// usable cached is A.4's "error connecting".
    private func keys(_ source: String, force: Bool) async throws -> Entry {
        do {
            return try await cached(source, force: force)
        } catch {
            throw IdPTokenRules.unreachable
        }
    }

    /// The entry of `source`, fetched when missing, expired, or `force`d (one fetch at a time per
    /// source); the stale entry while a refresh fails, for a day; else the fetch's error.
    private func cached(_ source: String, force: Bool) async throws -> Entry {
        let now = clock.now()
        if !force, let entry = entries[source], now < entry.freshUntil { return entry }
        if inFlight[source] == nil, let until = failedUntil[source], now < until {
            // Failed a moment ago with nothing to fall back on: that is still the answer.
            if let stale = entries[source], now < stale.staleUntil { return stale }
            throw FetchError("the last fetch failed less than \(Int(Self.failureMemory)) s ago")
        }
        let task: Task<Entry, any Error>
        if let running = inFlight[source] {
            task = running
        } else {
            let client = self.client
            let allowLoopbackHTTP = self.allowLoopbackHTTP
            let clock = self.clock
            let timeout = self.fetchTimeout
            task = Task {
                try await Self.fetchKeys(source, client: client, allowLoopbackHTTP: allowLoopbackHTTP, timeout: timeout, clock: clock)
            }
            inFlight[source] = task
        }
        do {
            var fetched = try await task.value
            // Only the fetch that is still the source's own is forgotten: a late waiter of an older
            // one must not drop a newer (forced) fetch and let a second one start beside it.
            if inFlight[source] == task {
                inFlight[source] = nil
                telemetry.count(.idpKeyFetches, ["ok"])  // once per fetch, not per waiter
            }
            failedUntil[source] = nil
            fetched.lastForced = entries[source]?.lastForced
            entries[source] = fetched
            return fetched
        } catch {
            if inFlight[source] == task { inFlight[source] = nil }
            failedUntil[source] = clock.now() + Self.failureMemory
            logger.warning(
                "could not fetch an identity provider's keys",
                metadata: ["source": "\(source)", "error": "\(String(describing: error).prefix(300))"])
            if let stale = entries[source], now < stale.staleUntil {
                telemetry.count(.idpKeyFetches, ["failed_served_stale"])
                return stale
            }
            telemetry.count(.idpKeyFetches, ["failed"])
            throw error
        }
    }

    private static func fetchKeys(
        _ source: String, client: HTTPClient, allowLoopbackHTTP: Bool, timeout: Duration, clock: any WallClock
    ) async throws -> Entry {
        let now = clock.now()
        func lifetime(_ maxAge: TimeInterval?) -> TimeInterval { min(max(maxAge ?? minimumCache, minimumCache), maximumCache) }
        if source.hasPrefix("document:") {
            let (document, maxAge) = try await fetchJSON(
                String(source.dropFirst("document:".count)), client: client, allowLoopbackHTTP: allowLoopbackHTTP, timeout: timeout)
            return Entry(
                keys: [], document: document, freshUntil: now + lifetime(maxAge), staleUntil: now + lifetime(maxAge) + staleGrace)
        }
        var jwksURL = source
        if source.hasPrefix("discovery:") {
            let (discovery, _) = try await fetchJSON(
                String(source.dropFirst("discovery:".count)), client: client, allowLoopbackHTTP: allowLoopbackHTTP, timeout: timeout)
            guard let uri = discovery["jwks_uri"]?.stringValue else { throw FetchError("the discovery document has no jwks_uri") }
            jwksURL = uri
        } else {
            jwksURL = String(source.dropFirst("jwks:".count))
        }
        let (document, maxAge) = try await fetchJSON(jwksURL, client: client, allowLoopbackHTTP: allowLoopbackHTTP, timeout: timeout)
        guard case .array(let list)? = document["keys"] else { throw FetchError("the JWKS has no keys") }
        let keys = list.compactMap { value -> (kid: String?, key: IssuerKey)? in
            guard let jwk = value.objectValue, jwk["use"]?.stringValue ?? "sig" == "sig", let key = IssuerKey(jwk: jwk) else { return nil }
            return (jwk["kid"]?.stringValue, key)
        }
        return Entry(keys: keys, freshUntil: now + lifetime(maxAge), staleUntil: now + lifetime(maxAge) + staleGrace)
    }

    struct FetchError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// GETs a JSON object over HTTPS (or loopback HTTP when allowed); its `Cache-Control` max-age.
    static func fetchJSON(_ url: String, client: HTTPClient, allowLoopbackHTTP: Bool, timeout: Duration) async throws -> (
        [String: JSONValue], TimeInterval?
    ) {
        guard let components = URLComponents(string: url), let host = components.host?.lowercased() else { throw FetchError("not a URL") }
        let loopback = ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host)
        guard components.scheme?.lowercased() == "https" || (components.scheme?.lowercased() == "http" && loopback && allowLoopbackHTTP)
        else {
            throw FetchError("only https is fetched")
        }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        for (name, value) in TraceContext.outgoingHeaders() { request.headers.replaceOrAdd(name: name, value: value) }
        let response = try await withSpan("identity provider GET", ofKind: .client) { [request] _ in
            try await client.execute(request, timeout: amount(timeout))
        }
        guard response.status == .ok else { throw FetchError("HTTP \(response.status.code)") }
        let body = try await response.body.collect(upTo: maximumBytes)
        guard let object = (try? JSONValue.parse(Array(body.readableBytesView)))?.objectValue else { throw FetchError("not a JSON object") }
        return (object, maxAge(response.headers.first(name: "Cache-Control")))
    }

    /// A duration as NIO's `TimeAmount`.
    static func amount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// `max-age` of a `Cache-Control` value; nil without one (or with `no-store`/`no-cache`: the minimum then applies).
    static func maxAge(_ header: String?) -> TimeInterval? {
        guard let header else { return nil }
        for directive in header.lowercased().split(separator: ",") {
            let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.first == "max-age", parts.count == 2, let seconds = TimeInterval(parts[1]) { return seconds }
        }
        return nil
    }
}
