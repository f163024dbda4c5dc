package import AccountCore
package import HTTPTypes

/// One operation of a route as the OpenAPI document describes it (``OpenAPIDocument``): its method
/// (for a route of one method, the route table's), where it is, what it reads and what it answers.
package struct OpenAPIOperation: Sendable {
    /// Where an operation of a resource collection is.
    package enum Target: Sendable, Equatable {
        /// The route's own path.
        case collection
        /// One resource of the collection: the route's path plus `/{id}` (``RPCCall/resource``).
        case resource
    }

    /// The method; nil for a route of one method, whose method the route table says.
    package var method: HTTPRequest.Method?
    /// The collection or one of its resources.
    package var target: Target
    /// One line saying what the operation does.
    package var summary: String
    /// The schema of the body; for a GET, of its query parameters (each property one parameter, as
    /// ``APIResponder`` reads a GET's fields from the query). Nil: no body.
    package var request: JSONValue?
    /// The media types the body may have (the token route takes a form or JSON; the action page's
    /// forms are forms).
    package var bodyTypes: [String]
    /// Query parameters beside the body, by name (`updateMask`, `pageSize`…).
    package var query: [String: JSONValue]
    /// The schema of a 200 answer; nil for a route that never succeeds (the refusals of methods
    /// Google has and this server does not).
    package var response: JSONValue?
    /// The 200 answer's media type.
    package var responseType: String
    /// The media type of error answers: the Firebase error shape, or the action page's HTML.
    package var errorType: String
    /// Answers without a body, by status (the action page's redirect).
    package var otherResponses: [String: String]

    /// Creates an operation.
    package init(
        method: HTTPRequest.Method? = nil,
        target: Target = .collection,
        summary: String,
        request: JSONValue? = nil,
        bodyTypes: [String] = [OpenAPISchemas.json],
        query: [String: JSONValue] = [:],
        response: JSONValue?,
        responseType: String = OpenAPISchemas.json,
        errorType: String = OpenAPISchemas.json,
        otherResponses: [String: String] = [:]
    ) {
        self.method = method
        self.target = target
        self.summary = summary
        self.request = request
        self.bodyTypes = bodyTypes
        self.query = query
        self.response = response
        self.responseType = responseType
        self.errorType = errorType
        self.otherResponses = otherResponses
    }

    /// An RPC of one method (the route table's): a JSON body (or query, for a GET) and a JSON answer.
    static func rpc(_ summary: String, request: JSONValue? = nil, response: JSONValue?) -> OpenAPIOperation {
        OpenAPIOperation(summary: summary, request: request, response: response)
    }
}

/// The catalogue the OpenAPI document is made from: for every RPC name the route table registers
/// (``APIRoutes/rpcs``), every fixed path (``APIRoutes/fixed``) and the token route, the operations
/// it serves with the schemas of their bodies and answers, as each handler reads and writes them.
///
/// The schemas are truthful but permissive: a request lists the fields its handler reads (unknown
/// fields are ignored, as Google's parser ignores them) and requires only what the server refuses to
/// go without; an answer never forbids members it does not list, and requires only members that are
/// always there. int64 values the server writes are JSON strings (`expiresIn`, `createdAt`), as
/// Google writes them; a request may send an int64 as a number or a decimal string.
///
/// The catalogue is split by area: `+Accounts` (the clients' RPCs), `+Admin` (the admins'), `+Fixed`
/// (fixed routes and the token route). ``documentedNames`` is what the suite compares with the
/// route table, so that no route goes without a schema and no schema outlives its route.
package enum OpenAPISchemas {
    /// `application/json`.
    package static let json = "application/json"
    /// `application/x-www-form-urlencoded`.
    package static let form = "application/x-www-form-urlencoded"
    /// The token route's path, its key in ``documentedNames``.
    package static let tokenPath = "/v1/token"

    /// The operations of each RPC, by route name (``APIPath``).
    package static let rpcs: [String: [OpenAPIOperation]] = {
        var entries = accounts
        for part in [clientConfiguration, secondFactors, admin, resources, unsupported] {
            entries.merge(part) { first, _ in first }
        }
        return entries
    }()

    /// Every name the catalogue documents: RPC names, fixed paths (a path holding the project id as
    /// a `{project}` pattern, ``fixedKey(for:)``) and ``tokenPath``.
    package static var documentedNames: Set<String> {
        Set(rpcs.keys).union(fixed.keys).union([tokenPath])
    }

    /// The catalogue's key of the fixed route at `path`: the path itself, or a pattern whose `{…}`
    /// segments each match one non-empty segment (`/emulator/v1/projects/{project}/verificationCodes`).
    package static func fixedKey(for path: String) -> String? {
        if fixed[path] != nil { return path }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        return fixed.keys.sorted().first(where: { key in
            let pattern = key.split(separator: "/", omittingEmptySubsequences: false)
            guard key.contains("{"), pattern.count == segments.count else { return false }
            return zip(pattern, segments).allSatisfy { part, segment in
                part.hasPrefix("{") && part.hasSuffix("}") ? !segment.isEmpty : part == segment
            }
        })
    }

    /// The refusals of methods Google has and this server does not (``UnsupportedRPC``): every
    /// method answers `OPERATION_NOT_ALLOWED`; documented as the POST the SDKs send.
    static let unsupported: [String: [OpenAPIOperation]] = {
        var entries: [String: [OpenAPIOperation]] = [:]
        for (name, display) in UnsupportedRPC.methods {
            let summary = "\(display): not supported by this server; every method answers OPERATION_NOT_ALLOWED."
            entries[name] = [OpenAPIOperation(method: .post, summary: summary, request: JSONSchema.anyObject, response: nil)]
        }
        return entries
    }()

    /// The shared shapes, `#/components/schemas/NAME`.
    package static let components: [String: JSONValue] = {
        typealias S = JSONSchema
        var schemas: [String: JSONValue] = [:]
        schemas["Error"] = S.object(
            [
                "error": S.object(
                    [
                        "code": S.integer("The HTTP status, repeated."),
                        "message": S.string("`CODE` or `CODE : detail` (EMAIL_EXISTS, INVALID_ID_TOKEN, …)."),
                        "status": S.string("The canonical status (INVALID_ARGUMENT, NOT_FOUND, …); v2 routes and transport errors."),
                        "errors": S.array(
                            S.object(["message": S.string, "domain": S.string, "reason": S.string]),
                            description: "v1 routes only."),
                    ], required: ["code", "message"])
            ], required: ["error"], description: "Firebase's error shape: v1 routes add `errors`, v2 routes a `status`.")
        schemas["ProviderUserInfo"] = S.object(
            [
                "providerId": S.string("`password`, `phone`, or the provider's id (`google.com`, `oidc.…`)."),
                "rawId": S.string("The account's id at the provider."), "federatedId": S.string, "email": S.string,
                "displayName": S.string, "photoUrl": S.string, "phoneNumber": S.string,
            ], required: ["providerId", "rawId"])
        schemas["MfaEnrollment"] = S.object(
            [
                "mfaEnrollmentId": S.string, "enrolledAt": S.string("RFC 3339."), "displayName": S.string,
                "phoneInfo": S.string("The factor's phone number (obfuscated in sign-in challenges)."),
                "totpInfo": S.object([:], description: "Present (empty) for a TOTP factor."),
            ], description: "A second factor: exactly one of phoneInfo and totpInfo.")
        schemas["UserInfo"] = S.object(
            [
                "localId": S.string, "email": S.string, "emailVerified": S.boolean, "emailLinkSignin": S.boolean,
                "displayName": S.string, "photoUrl": S.string, "phoneNumber": S.string, "disabled": S.boolean,
                "passwordHash": S.string("Redacted (UkVEQUNURUQ=) except in batchGet and downloadAccount."), "salt": S.string,
                "passwordUpdatedAt": S.integer("Milliseconds since the epoch, a number."),
                "validSince": S.decimal("Seconds since the epoch."), "createdAt": S.decimal("Milliseconds since the epoch."),
                "lastLoginAt": S.decimal("Milliseconds since the epoch."), "lastRefreshAt": S.dateTime,
                "customAttributes": S.string("The custom claims, a JSON object as a string."),
                "providerUserInfo": S.array(S.ref("ProviderUserInfo")), "initialEmail": S.string, "customAuth": S.boolean,
                "mfaInfo": S.array(S.ref("MfaEnrollment")),
            ], required: ["localId", "emailVerified", "validSince", "createdAt", "providerUserInfo"])
        schemas["Jwks"] = S.object(
            [
                "keys": S.array(
                    S.object(
                        [
                            "kty": S.string, "alg": S.string, "use": S.string, "kid": S.string, "n": S.string("The modulus, base64url."),
                            "e": S.string("The exponent, base64url."),
                        ], required: ["kty", "kid", "n", "e"]))
            ], required: ["keys"])
        schemas["X509Certificates"] = S.map(S.string, description: "Key id → PEM certificate.")
        return schemas.merging(adminComponents) { first, _ in first }
    }()
}

/// Builders of JSON Schema (2020-12, as OpenAPI 3.1 has it) values.
enum JSONSchema {
    /// `{"type": name}` plus `more`.
    static func typed(_ name: String, _ more: [String: JSONValue] = [:]) -> JSONValue {
        var members = more
        members["type"] = .string(name)
        return .object(members)
    }

    /// `schema` with a description.
    static func describe(_ schema: JSONValue, _ description: String) -> JSONValue {
        guard case .object(var members) = schema else { return schema }
        members["description"] = .string(description)
        return .object(members)
    }

    /// A string.
    static let string: JSONValue = typed("string")
    /// A boolean.
    static let boolean: JSONValue = typed("boolean")
    /// An integer (a JSON number).
    static let integer: JSONValue = typed("integer")
    /// Any object.
    static let anyObject: JSONValue = typed("object")
    /// Any value (a member stored and echoed as the admin sent it).
    static let anything: JSONValue = .object([:])
    /// An RFC 3339 instant.
    static let dateTime: JSONValue = typed("string", ["format": .string("date-time")])
    /// An int64 the server writes as a decimal string, as Google's JSON writes int64.
    static let decimal: JSONValue = typed("string", ["pattern": .string("^-?[0-9]+$")])
    /// An int64 a request may send as a JSON number or a decimal string (``RPCBody/int64(_:)``).
    static let int64: JSONValue = .object(["anyOf": .array([integer, decimal])])
    /// A list of strings.
    static let strings: JSONValue = array(string)
    /// A repeated string a request may send as a lone string (``RPCBody/strings(_:)``).
    static let stringOrStrings: JSONValue = .object(["anyOf": .array([string, strings])])
    /// A hash parameter: a number or a string.
    static let numberOrString: JSONValue = .object(["anyOf": .array([integer, string])])

    /// A string, described.
    static func string(_ description: String) -> JSONValue { describe(string, description) }
    /// A boolean, described.
    static func boolean(_ description: String) -> JSONValue { describe(boolean, description) }
    /// An integer, described.
    static func integer(_ description: String) -> JSONValue { describe(integer, description) }
    /// A decimal-string int64, described.
    static func decimal(_ description: String) -> JSONValue { describe(decimal, description) }
    /// A request's int64, described.
    static func int64(_ description: String) -> JSONValue { describe(int64, description) }

    /// A list of `items`.
    static func array(_ items: JSONValue, description: String? = nil) -> JSONValue {
        var members: [String: JSONValue] = ["items": items]
        if let description { members["description"] = .string(description) }
        return typed("array", members)
    }

    /// An object of `properties`; other members are allowed.
    static func object(_ properties: [String: JSONValue], required: [String] = [], description: String? = nil) -> JSONValue {
        var members: [String: JSONValue] = ["properties": .object(properties)]
        if !required.isEmpty { members["required"] = .array(required.map(JSONValue.string)) }
        if let description { members["description"] = .string(description) }
        return typed("object", members)
    }

    /// An object whose every member is a `values`.
    static func map(_ values: JSONValue, description: String? = nil) -> JSONValue {
        var members: [String: JSONValue] = ["additionalProperties": values]
        if let description { members["description"] = .string(description) }
        return typed("object", members)
    }

    /// One of `values`.
    static func enumeration(_ values: [String], description: String? = nil) -> JSONValue {
        var members: [String: JSONValue] = ["enum": .array(values.map(JSONValue.string))]
        if let description { members["description"] = .string(description) }
        return typed("string", members)
    }

    /// `#/components/schemas/NAME`.
    static func ref(_ name: String) -> JSONValue {
        .object(["$ref": .string("#/components/schemas/\(name)")])
    }

    /// The token bundle of a sign-in's answer.
    static let tokens: [String: JSONValue] = [
        "idToken": string("The ID token (a JWT)."), "refreshToken": string,
        "expiresIn": decimal("The ID token's lifetime, in seconds."),
    ]

    /// The members of a sign-in answered with a second-factor challenge instead of tokens
    /// (``MFAWire/pendingFields(_:)``): the account's `localId` and `email`, these two, no tokens.
    static let pending: [String: JSONValue] = [
        "mfaPendingCredential": string("Set when the account has a second factor: finish with mfaSignIn; no tokens then."),
        "mfaInfo": array(ref("MfaEnrollment"), description: "The factors to choose from, phone numbers obfuscated."),
    ]

    /// A sign-in's answer: `properties`, the token bundle, or a second-factor challenge.
    static func signIn(_ properties: [String: JSONValue], description: String? = nil) -> JSONValue {
        object(properties.merging(tokens) { own, _ in own }.merging(pending) { own, _ in own }, description: description)
    }
}
