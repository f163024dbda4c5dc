package import AsyncHTTPClient
package import Foundation
import NIOCore
package import NIOHTTP1

/// Real HTTP over loopback for API tests: JSON in, parsed JSON out.
package struct TestHTTPClient: Sendable {
    /// A response: status, headers, raw body and the body parsed as a JSON object (empty when not).
    package struct Reply: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
        package var body: Data
        /// The body as a JSON object.
        package var json: [String: Any] {
            ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:]
        }
        /// `error.message` of a Firebase error body.
        package var errorMessage: String? {
            (json["error"] as? [String: Any])?["message"] as? String
        }
        /// The part of `error.message` before " : ", as SDKs read it.
        package var errorCode: String? {
            errorMessage.map { String($0.split(separator: " ", maxSplits: 1).first ?? "") }
        }
        /// The first value of a response header.
        package func header(_ name: String) -> String? { headers.first(name: name) }
        /// A string field of the JSON body.
        package func string(_ key: String) -> String? { json[key] as? String }
    }

    /// Base URL, e.g. `http://127.0.0.1:PORT`.
    package let baseURL: String
    private let client: HTTPClient

    /// The server's loopback port.
    package let port: Int
    /// The same server's admin listener, when it has one apart from `port`.
    package let adminPort: Int?

    /// A client for a server on `port` whose admin listener, if any, is on `adminPort`.
    package init(port: Int, adminPort: Int? = nil, client: HTTPClient = .shared) {
        self.port = port
        self.adminPort = adminPort
        self.baseURL = "http://127.0.0.1:\(port)"
        self.client = client
    }

    /// A client for the same server's admin listener (this one when it has none apart).
    package var admin: TestHTTPClient {
        guard let adminPort else { return self }
        return TestHTTPClient(port: adminPort, client: client)
    }

    /// Sends a request with a raw body.
    package func send(
        _ method: HTTPMethod,
        _ path: String,
        body: Data? = nil,
        headers: [(String, String)] = []
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 32 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(buffer.readableBytesView))
    }

    /// POSTs a JSON object.
    package func post(_ path: String, _ json: [String: any Sendable] = [:], headers: [(String, String)] = []) async throws -> Reply {
        let data = try JSONSerialization.data(withJSONObject: json)
        return try await send(.POST, path, body: data, headers: [("Content-Type", "application/json")] + headers)
    }

    /// GETs a path.
    package func get(_ path: String, headers: [(String, String)] = []) async throws -> Reply {
        try await send(.GET, path, headers: headers)
    }
}
