import Foundation

/// A custom token as the Admin SDK mints it (federation-and-limits.md §C.1), taken apart but not
/// yet trusted.
package struct CustomToken: Sendable {
    /// The JOSE header.
    package var header: [String: JSONValue]
    /// The claims.
    package var payload: [String: JSONValue]
    /// `header.payload` as sent: what the signature covers.
    package var signingInput: [UInt8]
    /// The decoded third segment (empty for an unsigned token).
    package var signature: [UInt8]

    /// Whether the token says it is unsigned (`alg: none`, the Admin SDK's emulator mode).
    package var isUnsigned: Bool { header["alg"]?.stringValue == "none" }
    /// The signer the token names (`iss`, which must equal `sub`).
    package var issuer: String? { payload["iss"]?.stringValue }
    /// The key the token names (`kid`), when it names one.
    package var keyID: String? { header["kid"]?.stringValue }
}
