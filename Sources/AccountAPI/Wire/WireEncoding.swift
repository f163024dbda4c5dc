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
        var body: [String: JSONValue] = [
            "code": .int(Int64(error.httpStatus.code)),
            "message": .string(error.message),
            "errors": .array([
                .object(["message": .string(error.message), "domain": .string("global"), "reason": .string(error.reason)])
            ]),
        ]
        if let status = error.status { body["status"] = .string(status) }
        var response = response(json: .object(["error": .object(body)]), status: error.httpStatus)
        for field in error.headers { response.headers.append(field) }
        return response
    }
}
