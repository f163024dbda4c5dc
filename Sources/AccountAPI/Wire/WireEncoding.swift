package import AccountCore
public import Foundation
public import HTTPTypes
public import Hummingbird
import NIOCore

/// The one place responses are serialised: JSON, no escaped slashes, absent values omitted.
package enum WireEncoding {
    /// Encodes `value` as a JSON response with `status`.
    package static func response(
        _ value: some Encodable,
        status: HTTPResponse.Status = .ok,
        headers: HTTPFields = [:]
    ) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        let data = try encoder.encode(value)
        var fields = headers
        fields[.contentType] = "application/json; charset=UTF-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A JSON response built from a ``JSONValue``, written without `JSONEncoder`: the hot
    /// responses (token refresh, verifyIdToken) use it.
    package static func response(json value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2048)
        value.write(into: &bytes)
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=UTF-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The Firebase error body for `error`.
    package static func response(for error: APIError) -> Response {
        let body = ErrorEnvelope(
            error: .init(
                code: Int(error.httpStatus.code),
                message: error.message,
                errors: [.init(message: error.message, domain: "global", reason: error.reason)],
                status: error.status
            )
        )
        // Encoding this fixed shape cannot fail; fall back to a literal to be certain.
        return (try? response(body, status: error.httpStatus, headers: error.headers))
            ?? Response(status: .internalServerError)
    }

    private struct ErrorEnvelope: Encodable {
        struct Body: Encodable {
            struct Item: Encodable {
                var message: String
                var domain: String
                var reason: String
            }
            var code: Int
            var message: String
            var errors: [Item]
            var status: String?
        }
        var error: Body
    }
}
