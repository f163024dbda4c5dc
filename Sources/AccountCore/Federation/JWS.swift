import Foundation

/// A compact JWS taken apart, not yet trusted.
package struct JWS: Sendable {
    package var header: [String: JSONValue]
    package var payload: [String: JSONValue]
    /// `header.payload` as sent.
    package var signingInput: [UInt8]
    package var signature: [UInt8]

    package var algorithm: String? { header["alg"]?.stringValue }
    package var keyID: String? { header["kid"]?.stringValue }
}
