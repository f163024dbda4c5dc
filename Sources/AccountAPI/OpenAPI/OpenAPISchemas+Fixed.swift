import AccountCore
import HTTPTypes

private typealias S = JSONSchema

/// The fixed routes (health, keys, the action page, the emulator's inbox, the document itself,
/// metrics) and the token route.
extension OpenAPISchemas {
    /// `text/html`.
    static let html = "text/html"
    /// The OpenAPI document's path.
    package static let documentPath = "/openapi.json"
    /// The metrics scrape's path (the admin listener's).
    package static let metricsPath = "/metrics"

    /// The token route (`POST /v1/token`): a form, as the JS SDK sends it, or JSON.
    static let token = OpenAPIOperation(
        method: .post, summary: "Exchanges a refresh token for a new ID token and a new refresh token (rotation).",
        request: S.object(
            [
                "grant_type": S.enumeration(["refresh_token"]), "refresh_token": S.string,
            ], required: ["grant_type", "refresh_token"], description: "grantType and refreshToken are accepted too."),
        bodyTypes: [form, json],
        response: S.object([
            "access_token": S.string("The ID token."), "expires_in": S.decimal("Seconds."), "token_type": S.string,
            "refresh_token": S.string, "id_token": S.string, "user_id": S.string, "project_id": S.string("The project number."),
        ]))

    /// The fixed routes by path; a path that holds the project id has a `{project}` segment.
    package static let fixed: [String: [OpenAPIOperation]] = {
        var entries: [String: [OpenAPIOperation]] = [:]
        entries["/healthz"] = [
            OpenAPIOperation(
                method: .get, summary: "Liveness: the process answers.", response: S.object(["status": S.enumeration(["ok"])]))
        ]
        entries["/readyz"] = [
            OpenAPIOperation(
                method: .get, summary: "Readiness: the database answers and its schema is current (503 otherwise).",
                response: S.object(["status": S.enumeration(["ready"])]))
        ]
        let jwks = OpenAPIOperation(method: .get, summary: "The keys that sign ID tokens, as JWKS.", response: S.ref("Jwks"))
        entries["/.well-known/jwks.json"] = [jwks]
        entries["/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"] = [jwks]
        let certificates = OpenAPIOperation(
            method: .get, summary: "The keys that sign ID tokens, as X.509 certificates by key id.", response: S.ref("X509Certificates"))
        entries["/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"] = [certificates]
        entries["/identitytoolkit/v3/relyingparty/publicKeys"] = [certificates]
        entries[documentPath] = [
            OpenAPIOperation(
                method: .get, summary: "This document: the routes this listener serves.",
                response: S.object(["openapi": S.string, "info": S.anyObject, "paths": S.anyObject], required: ["openapi", "paths"]))
        ]
        entries[metricsPath] = [
            OpenAPIOperation(
                method: .get, summary: "The Prometheus exposition (text format 0.0.4).", response: S.string, responseType: "text/plain")
        ]
        entries["/emulator/v1/projects/{project}/verificationCodes"] = [
            OpenAPIOperation(
                method: .get, summary: "A demo project's test inbox: the phone codes sent.",
                response: S.object([
                    "verificationCodes": S.array(S.object(["phoneNumber": S.string, "sessionInfo": S.string, "code": S.string]))
                ]))
        ]
        for (path, operation) in actionPage { entries[path] = [operation] }
        return entries
    }()

    /// The email action page (``APIRoutes/addActionHandler(service:access:csrfKey:productName:logoURL:templatesDirectory:)``):
    /// HTML pages and forms, no credentials.
    private static let actionPage: [String: OpenAPIOperation] = {
        let link: [String: JSONValue] = [
            "apiKey": S.string("The link's API key (the project's first key when absent or not accepted)."),
            "lang": S.string("The page's language."), "continueUrl": S.string("On an authorized domain."),
        ]
        let form = link.merging(["oobCode": S.string, "csrf": S.string("The page's token for this form.")]) { own, _ in own }
        var query = link
        query["mode"] = S.enumeration(ActionHandler.modes.keys.sorted())
        query["oobCode"] = S.string
        var pages: [String: OpenAPIOperation] = [:]
        pages[ActionHandler.path] = OpenAPIOperation(
            method: .get,
            summary: "An email link's page: says what the link will do and spends nothing; an email sign-in link redirects.",
            query: query, response: S.string, responseType: html, errorType: html,
            otherResponses: ["303": "An email sign-in link: to continueUrl with the code."])
        pages[ActionHandler.path + "/apply"] = action("Applies a verify, change or recover code.", S.object(form))
        pages[ActionHandler.path + "/resetPassword"] = action(
            "Sets the new password with a reset code.", S.object(form.merging(["newPassword": S.string]) { own, _ in own }))
        var sendReset = link
        sendReset["email"] = S.string
        sendReset["csrf"] = S.string("The page's token for this address.")
        pages[ActionHandler.path + "/sendPasswordReset"] = action("Sends a password reset after an email recovery.", S.object(sendReset))
        return pages
    }()

    /// One of the action page's forms.
    private static func action(_ summary: String, _ fields: JSONValue) -> OpenAPIOperation {
        OpenAPIOperation(
            method: .post, summary: summary, request: fields, bodyTypes: [OpenAPISchemas.form], response: S.string, responseType: html,
            errorType: html)
    }
}
