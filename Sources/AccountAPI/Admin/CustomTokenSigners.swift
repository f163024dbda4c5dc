import AccountCore
import Foundation
import HTTPTypes

/// `/v1/projects/{p}/customTokenSigners[/{signerId}]` (federation-and-limits.md §C.2): the keys
/// that verify this project's custom tokens. Admin only; POST registers, GET lists, DELETE removes.
enum CustomTokenSignersRPC {
    struct Signer: Encodable, Sendable {
        var signerId: String
        var serviceAccountEmail: String
        var keyId: String?
        /// SHA-256 of the key's SubjectPublicKeyInfo (of the URL for a `keysUrl` signer), hex.
        var fingerprint: String
        var source: String
        var keysUrl: String?
        var createdAt: String
    }

    struct Created: Encodable, Sendable {
        var signer: Signer
        /// Every key of the registration (a JWKS may hold several), when more than one.
        var signers: [Signer]?

        func encode(to encoder: any Encoder) throws {
            try signer.encode(to: encoder)
            if let signers {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(signers, forKey: .signers)
            }
        }

        enum Key: String, CodingKey { case signers }
    }

    struct Listed: Encodable, Sendable {
        var signers: [Signer]
    }

    static func endpoint(_ service: CustomTokenService) -> RPCEndpoint {
        RPCEndpoint(anyMethod: true, access: .adminOnly) { call in
            func wire(_ signer: CustomTokenSigner) -> Signer {
                Signer(
                    signerId: signer.signerID, serviceAccountEmail: signer.email, keyId: signer.keyID,
                    fingerprint: service.fingerprint(signer), source: signer.source, keysUrl: signer.keysURL,
                    createdAt: ISO8601DateFormatter().string(from: signer.createdAt))
            }
            switch (call.method, call.resource) {
            case (.post, nil):
                let created = try await service.addSigner(
                    CustomTokenService.Registration(
                        serviceAccountEmail: try call.body.string("serviceAccountEmail"),
                        publicKeyPEM: try call.body.string("publicKeyPem"), certificatePEM: try call.body.string("x509Certificate"),
                        jwks: try Self.jwks(call.body), keysURL: try call.body.string("keysUrl"), keyID: try call.body.string("keyId")))
                return try WireEncoding.response(
                    Created(signer: wire(created[0]), signers: created.count > 1 ? created.map(wire) : nil))
            case (.get, nil):
                return try WireEncoding.response(Listed(signers: try await service.listSigners().map(wire)))
            case (.delete, let signerID?):
                try await service.removeSigner(signerID)
                return try WireEncoding.response([String: String]())
            default:
                throw APIError.notFound
            }
        }
    }

    /// `jwks` as a JSON object or as a string holding one.
    private static func jwks(_ body: RPCBody) throws -> String? {
        switch body.fields["jwks"] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let value?: return value.serialized()
        }
    }
}
