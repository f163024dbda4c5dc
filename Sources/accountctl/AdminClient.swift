import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A failure said in one line, with the exit code that tells a script what happened.
struct CLIError: Error {
    var message: String
    var exitCode: Int32

    static func usage(_ message: String) -> CLIError { CLIError(message: message, exitCode: 64) }
    static func notFound(_ message: String) -> CLIError { CLIError(message: message, exitCode: 66) }
}

/// The admin RPC over HTTP.
final class AdminClient {
    let baseURL: String
    let project: String
    let token: String
    /// Whether the server answered a quick probe (AsyncHTTPClient retries refused connections
    /// until a request's deadline, so an unreachable server is detected with a short one first).
    private var reachable = false

    init(baseURL: String, project: String, token: String) {
        self.baseURL = baseURL
        self.project = project
        self.token = token
    }

    /// POSTs `body` to `/v1/projects/{p}/accounts:RPC` and returns the JSON object answered.
    func call(_ rpc: String, _ body: [String: Any] = [:]) async throws -> [String: Any] {
        try await send(.POST, "/v1/projects/\(project)/accounts:\(rpc)", body: body)
    }

    /// GETs a project-scoped RPC with query parameters.
    func get(_ rpc: String, query: [String: String]) async throws -> [String: Any] {
        var components = URLComponents()
        components.queryItems = query.map { URLQueryItem(name: $0.key, value: $0.value) }
        let suffix = query.isEmpty ? "" : "?" + (components.percentEncodedQuery ?? "")
        return try await send(.GET, "/v1/projects/\(project)/accounts:\(rpc)\(suffix)", body: nil)
    }

    /// An Identity Toolkit v2 resource of the project: `path` after `/v2/projects/{p}/`.
    func v2(_ method: HTTPMethod, _ path: String, body: [String: Any]? = nil) async throws -> [String: Any] {
        try await send(method, "/v2/projects/\(project)/\(path)", body: body)
    }

    /// A project's resource collection (`customTokenSigners`), or one of its resources.
    func resource(_ method: HTTPMethod, _ collection: String, id: String? = nil, body: [String: Any]? = nil) async throws -> [String: Any] {
        let encoded = id.map { "/" + ($0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? $0) } ?? ""
        return try await send(method, "/v1/projects/\(project)/\(collection)\(encoded)", body: body)
    }

    private func send(_ method: HTTPMethod, _ path: String, body: [String: Any]?) async throws -> [String: Any] {
        if !reachable {
            do {
                // Generous: a busy server is slow, not unreachable, and the message would say it was.
                _ = try await HTTPClient.shared.execute(HTTPClientRequest(url: baseURL + "/healthz"), timeout: .seconds(15))
                reachable = true
            } catch {
                throw CLIError(message: "cannot reach accountd at \(baseURL) (\(error)); is it running? check --url", exitCode: 69)
            }
        }
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        }
        let response: HTTPClientResponse
        let data: ByteBuffer
        do {
            response = try await HTTPClient.shared.execute(request, timeout: .seconds(300))
            data = try await response.body.collect(upTo: 64 << 20)
        } catch {
            throw CLIError(message: "cannot reach accountd at \(baseURL) (\(error)); is it running? check --url", exitCode: 69)
        }
        let json = (try? JSONSerialization.jsonObject(with: Data(data.readableBytesView))) as? [String: Any] ?? [:]
        guard response.status == .ok else {
            let message = ((json["error"] as? [String: Any])?["message"] as? String) ?? "HTTP \(response.status.code)"
            switch response.status.code {
            case 401, 403: throw CLIError(message: "not authorised: \(message); check the admin token and --project", exitCode: 77)
            case 500...: throw CLIError(message: "server error: \(message)", exitCode: 70)
            default:
                let code = message.split(separator: " ").first.map(String.init) ?? message
                if ["USER_NOT_FOUND", "EMAIL_NOT_FOUND", "SESSION_NOT_FOUND", "CONFIGURATION_NOT_FOUND"].contains(code) {
                    throw CLIError.notFound(message)
                }
                throw CLIError(message: message, exitCode: 65)
            }
        }
        return json
    }

    /// Finds one user by uid, email (has `@`) or phone (starts with `+`).
    func findUser(_ identifier: String) async throws -> [String: Any] {
        let field = identifier.contains("@") ? "email" : identifier.hasPrefix("+") ? "phoneNumber" : "localId"
        let reply = try await call("lookup", [field: [identifier]])
        guard let user = (reply["users"] as? [[String: Any]])?.first else {
            throw CLIError.notFound("no user with \(field == "localId" ? "uid" : field) \(identifier)")
        }
        return user
    }
}

/// Output helpers: aligned tables for people, JSON for scripts.
enum Output {
    static func json(_ value: Any) {
        if let data = try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) {
            print(jsonSafe(String(decoding: data, as: UTF8.self)))
        }
    }

    /// Server data made safe to write to a terminal: every C0 and C1 control character and DEL
    /// (an ESC or CSI in a display name would otherwise drive the operator's terminal) written
    /// as a visible `\u{…}` escape. Newlines between lines are the caller's own.
    static func safe(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// JSON text with DEL and the C1 controls (which JSONSerialization leaves raw) as `\u00XX`
    /// escapes, still valid JSON meaning the same; C0 controls it escapes itself.
    static func jsonSafe(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) && scalar.value >= 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// One line of output, its server data escaped (``safe(_:)``).
    static func say(_ text: String) {
        print(safe(text))
    }

    static func table(_ headers: [String], _ rawRows: [[String]]) {
        let rows = rawRows.map { $0.map(safe) }
        let widths = headers.indices.map { column in
            max(headers[column].count, rows.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0)
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        print(line(headers))
        for row in rows { print(line(row)) }
    }

    /// Milliseconds (as the wire sends them) as a UTC timestamp.
    static func time(_ value: Any?) -> String {
        guard let text = value as? String, let ms = Double(text) else { return "-" }
        return Date(timeIntervalSince1970: ms / 1000).formatted(.iso8601)
    }

    /// Progress on a terminal only.
    static func progress(_ text: String) {
        guard isatty(STDERR_FILENO) != 0 else { return }
        FileHandle.standardError.write(Data("\r\(text)".utf8))
    }
}
