package import AccountCore
import Foundation
package import HTTPTypes
package import Hummingbird
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
        return response(bytes: try encoder.encode(value), status: status, headers: headers)
    }

    /// A JSON response built from a ``JSONValue``, written without `JSONEncoder`: the hot
    /// responses (token refresh, verifyIdToken) and every error use it.
    package static func response(json value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2048)
        value.write(into: &bytes)
        return response(bytes: bytes, status: status, headers: headers)
    }

    private static func response(bytes: some Sequence<UInt8>, status: HTTPResponse.Status, headers: HTTPFields) -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=UTF-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The Firebase error response for `error`.
    package static func response(for error: APIError) -> Response {
        response(json: errorJSON(error), status: error.httpStatus, headers: error.headers)
    }

    /// The Firebase error body for `error`, as bytes (for answers written below Hummingbird).
    package static func errorBody(_ error: APIError) -> [UInt8] {
        var bytes: [UInt8] = []
        errorJSON(error).write(into: &bytes)
        return bytes
    }

    private static func errorJSON(_ error: APIError) -> JSONValue {
        var body: [String: JSONValue] = [
            "code": .int(Int64(error.httpStatus.code)),
            "message": .string(error.message),
        ]
        if !error.v2 {
            body["errors"] = .array([
                .object(["message": .string(error.message), "domain": .string("global"), "reason": .string(error.reason)])
            ])
        }
        if let status = error.status { body["status"] = .string(status) }
        return .object(["error": .object(body)])
    }
}
