import AccountCore
import Crypto
import Foundation
import _CryptoExtras

/// One key of an issuer's JWKS, read into the key type its `kty` names.
enum IssuerKey: Sendable {
    case rsa(_RSA.Signing.PublicKey)
    case p256(P256.Signing.PublicKey)
    case p384(P384.Signing.PublicKey)

    /// The key of a JWK; nil for a key type or curve not used by §A.4's algorithms, or a malformed one.
    init?(jwk: [String: JSONValue]) {
        func bytes(_ name: String) -> [UInt8]? { jwk[name]?.stringValue.flatMap(Base64URL.decode) }
        switch jwk["kty"]?.stringValue {
        case "RSA":
            guard let n = bytes("n"), let e = bytes("e"), let key = try? _RSA.Signing.PublicKey(n: n, e: e) else { return nil }
            self = .rsa(key)
        case "EC":
            guard let x = bytes("x"), let y = bytes("y") else { return nil }
            switch jwk["crv"]?.stringValue {
            case "P-256":
                guard let key = try? P256.Signing.PublicKey(rawRepresentation: x + y) else { return nil }
                self = .p256(key)
            case "P-384":
                guard let key = try? P384.Signing.PublicKey(rawRepresentation: x + y) else { return nil }
                self = .p384(key)
            default: return nil
            }
        default:
            return nil
        }
    }

    /// Whether `signature` over `input` verifies with this key under `algorithm` (§A.4 row 2's list).
    func verifies(_ signature: [UInt8], over input: [UInt8], algorithm: String) -> Bool {
        switch (self, algorithm) {
        case (.rsa(let key), "RS256"):
            key.isValidSignature(.init(rawRepresentation: signature), for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        case (.rsa(let key), "RS384"):
            key.isValidSignature(.init(rawRepresentation: signature), for: SHA384.hash(data: input), padding: .insecurePKCS1v1_5)
        case (.rsa(let key), "RS512"):
            key.isValidSignature(.init(rawRepresentation: signature), for: SHA512.hash(data: input), padding: .insecurePKCS1v1_5)
        case (.rsa(let key), "PS256"):
            key.isValidSignature(.init(rawRepresentation: signature), for: SHA256.hash(data: input), padding: .PSS)
        case (.p256(let key), "ES256"):
            (try? P256.Signing.ECDSASignature(rawRepresentation: signature)).map { key.isValidSignature($0, for: SHA256.hash(data: input)) }
                ?? false
        case (.p384(let key), "ES384"):
            (try? P384.Signing.ECDSASignature(rawRepresentation: signature)).map { key.isValidSignature($0, for: SHA384.hash(data: input)) }
                ?? false
        default:
            false
        }
    }
}
