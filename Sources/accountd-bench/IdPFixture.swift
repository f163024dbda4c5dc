import AccountCore
import ArgumentParser
import Crypto
import Foundation
import _CryptoExtras

/// `accountd-bench idp-fixture`: an OpenID Connect issuer's static files and the ID tokens it
/// signed, for the federated sign-in workload: `DIR/.well-known/openid-configuration` and
/// `DIR/jwks.json` (served by any static HTTP server at `--issuer`), and `DIR/tokens.txt`, one RS256
/// token per line for `--users` distinct subjects (no nonce: a returning user's token may be sent
/// again until it expires, an hour on).
struct BenchIdPFixture: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idp-fixture", abstract: "Write an OIDC issuer's discovery document, JWKS and signed ID tokens.")

    @Option(help: "Directory to write into.") var directory: String
    @Option(help: "The issuer URL the files will be served at.") var issuer: String
    @Option(help: "The audience (client id).") var audience = "bench-client"
    @Option(help: "Distinct users (subjects).") var users = 100

    func run() throws {
        let root = URL(fileURLWithPath: directory)
        try FileManager.default.createDirectory(at: root.appendingPathComponent(".well-known"), withIntermediateDirectories: true)
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try key.publicKey.getKeyPrimitives()
        let discovery = JSONValue.object([
            "issuer": .string(issuer), "jwks_uri": .string(issuer + "/jwks.json"),
            "authorization_endpoint": .string(issuer + "/authorize"), "token_endpoint": .string(issuer + "/token"),
        ])
        try Data(discovery.serialized().utf8).write(to: root.appendingPathComponent(".well-known/openid-configuration"))
        let jwks = JSONValue.object([
            "keys": .array([
                .object([
                    "kty": .string("RSA"), "kid": .string("bench-1"), "alg": .string("RS256"), "use": .string("sig"),
                    "n": .string(Base64URL.encode(Array(primitives.modulus))),
                    "e": .string(Base64URL.encode(Array(primitives.publicExponent))),
                ])
            ])
        ])
        try Data(jwks.serialized().utf8).write(to: root.appendingPathComponent("jwks.json"))
        let now = Int64(Date().timeIntervalSince1970)
        let header = Base64URL.encode(Array(JSONValue.object(["alg": .string("RS256"), "kid": .string("bench-1")]).serialized().utf8))
        var lines: [String] = []
        for index in 0..<users {
            let claims = JSONValue.object([
                "iss": .string(issuer), "aud": .string(audience), "sub": .string("bench-idp-\(index)"), "iat": .int(now),
                "exp": .int(now + 3600), "email": .string("bench-idp-\(index)@idp.example"), "email_verified": .bool(true),
            ])
            let input = header + "." + Base64URL.encode(Array(claims.serialized().utf8))
            let signature = try key.signature(for: SHA256.hash(data: Array(input.utf8)), padding: .insecurePKCS1v1_5)
            lines.append(input + "." + Base64URL.encode(Array(signature.rawRepresentation)))
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: root.appendingPathComponent("tokens.txt"))
        print("{\"tokens\": \(lines.count)}")
    }
}
