package import AccountCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

extension APIRoutes {
    /// The default email action handler (identity-toolkit.md §1.6, issue 7): `GET /__/auth/action` checks the
    /// link's code through ``ActionCodeService`` and renders a page that says what the link will do,
    /// spending nothing (mail scanners fetch every link); `POST /__/auth/action/apply` applies a
    /// verify, change or recover code; `POST /__/auth/action/resetPassword` sets the new password and
    /// `POST /__/auth/action/sendPasswordReset` sends a reset email after an email recovery. Both
    /// forms carry a CSRF token bound to what they act on, signed under `csrfKey`.
    package mutating func addActionHandler(
        service: ActionCodeService,
        access: AccessPolicy,
        csrfKey: [UInt8],
        productName: String? = nil,
        logoURL: String? = nil,
        templatesDirectory: String? = nil
    ) throws {
        let handler = ActionHandler(
            service: service,
            access: access,
            csrf: ActionPageCSRF(key: csrfKey),
            renderer: try ActionPageRenderer(
                productName: productName ?? service.settings.productName, logoURL: logoURL, templatesDirectory: templatesDirectory
            )
        )
        fixed[ActionHandler.path] = FixedRoute(method: .get) { request, context in
            await handler.show(request, from: handler.address(request, context), logger: context.logger)
        }
        fixed[ActionHandler.path + "/apply"] = FixedRoute(method: .post) { request, context in
            await handler.submitApply(request, from: handler.address(request, context), logger: context.logger)
        }
        fixed[ActionHandler.path + "/resetPassword"] = FixedRoute(method: .post) { request, context in
            await handler.submitReset(request, from: handler.address(request, context), logger: context.logger)
        }
        fixed[ActionHandler.path + "/sendPasswordReset"] = FixedRoute(method: .post) { request, context in
            await handler.submitSendReset(request, from: handler.address(request, context), logger: context.logger)
        }
    }
}

/// The action page's handlers. Every outcome is an HTML page (or, for `signIn`, a redirect); the
/// code itself only ever appears in the reset form's hidden field. The page is a client like the
/// RPCs: a wrong or expired code counts against the visitor's address and the mail it sends
/// counts per recipient and address (federation-and-limits.md §E.5), so the page is no way
/// around the limits.
struct ActionHandler: Sendable {
    static let path = "/__/auth/action"
    static let modes: [String: ActionCodeKind] = Dictionary(uniqueKeysWithValues: ActionCodeKind.allCases.map { ($0.mode, $0) })

    let service: ActionCodeService
    let access: AccessPolicy
    let csrf: ActionPageCSRF
    let renderer: ActionPageRenderer

    /// The parameters a link or form carries.
    struct Parameters {
        var fields: [String: String]
        var lang: String
        var rawLang: String
        var continueURL: String?
        var apiKey: String

        subscript(_ name: String) -> String? { fields[name].flatMap { $0.isEmpty ? nil : $0 } }
    }

    /// The visitor's address, as the RPCs see a client's (``AccessPolicy/clientAddress(peer:forwardedFor:)``).
    func address(_ request: Request, _ context: AccountRequestContext) -> String? {
        access.clientAddress(peer: context.remoteAddress, forwardedFor: request.headers[values: HTTPField.Name("X-Forwarded-For")!])
    }

    /// Runs `body`, which judges a code, as the RPCs do: refused while `address` has no code
    /// failures left, a wrong or expired code counted against it.
    func countingCodeFailures<T>(_ address: String?, _ body: () async throws -> T) async throws -> T {
        try await service.environment.limiter.countingCodeFailures(address: address, body)
    }

    // MARK: GET

    func show(_ request: Request, from address: String?, logger: Logger) async -> Response {
        let parameters = await parse(Self.formFields(request.uri.query ?? ""))
        let lang = parameters.lang
        guard let mode = parameters["mode"], let kind = Self.modes[mode] else { return failure("error.mode", 400, lang) }
        guard let code = parameters["oobCode"] else { return failure("error.missing", 400, lang) }
        if parameters.fields["continueUrl"] != nil && parameters.continueURL == nil || kind == .emailSignIn && parameters.continueURL == nil
        {
            return failure("error.continue", 400, lang)
        }
        // A HEAD (link scanners, previews) must not spend the code.
        if request.method == .head { return renderer.page(status: .ok, lang: lang, title: renderer.productName, content: "") }
        do {
            return try await countingCodeFailures(address) {
                guard let record = try await service.peek(code: code), record.kind == kind else { throw AccountError(.invalidOOBCode) }
                switch kind {
                case .verifyEmail, .verifyAndChangeEmail, .recoverEmail, .revertSecondFactorAddition:
                    // Only a person's click applies it (the POST below, with this page's CSRF token):
                    // a GET is what link scanners and previews send, and no script submits the form.
                    try service.requireUsable(record, kinds: [kind])
                    return confirmForm(kind: kind, code: code, email: record.newEmail ?? record.email, parameters)
                case .passwordReset:
                    _ = try await service.resetPassword(code: code, newPassword: nil)
                    return resetForm(code: code, email: record.email, error: nil, parameters)
                case .emailSignIn:
                    try service.requireUsable(record, kinds: [.emailSignIn])
                    return ActionPageRenderer.redirect(to: signInTarget(code: code, parameters))
                }
            }
        } catch {
            return failure(error, lang, logger)
        }
    }

    // MARK: POST

    /// Runs `body` with a code form's fields and code once its CSRF token (for `purpose`) and its
    /// continue URL check out; otherwise answers the page that refuses it.
    func withCodeForm(_ request: Request, purpose: String, _ body: (Parameters, String) async -> Response) async -> Response {
        let parameters = await parse(await Self.formBody(request))
        let lang = parameters.lang
        guard let code = parameters["oobCode"] else { return failure("error.missing", 400, lang) }
        guard csrf.verify(parameters["csrf"], purpose: purpose, value: code) else { return failure("error.csrf", 403, lang) }
        if parameters.fields["continueUrl"] != nil && parameters.continueURL == nil { return failure("error.continue", 400, lang) }
        return await body(parameters, code)
    }

    func submitApply(_ request: Request, from address: String?, logger: Logger) async -> Response {
        await withCodeForm(request, purpose: "apply") { parameters, code in
            await applyConfirmed(code: code, parameters, from: address, logger: logger)
        }
    }

    func applyConfirmed(code: String, _ parameters: Parameters, from address: String?, logger: Logger) async -> Response {
        let lang = parameters.lang
        do {
            let record = try await countingCodeFailures(address) {
                guard let record = try await service.peek(code: code) else { throw AccountError(.invalidOOBCode) }
                return record
            }
            let user = try await service.apply(code: code, apiKey: parameters.apiKey, address: address)
            switch record.kind {
            case .verifyEmail, .verifyAndChangeEmail:
                let prefix = record.kind == .verifyEmail ? "verifyEmail" : "change"
                return done("\(prefix).title", body: text("\(prefix).body", lang, email: user.email ?? record.email), parameters)
            case .revertSecondFactorAddition:
                return done("revert.title", body: text("revert.body", lang, email: user.email ?? record.email), parameters)
            default:
                return recovered(email: user.email ?? record.newEmail ?? record.email, parameters)
            }
        } catch {
            return failure(error, lang, logger)
        }
    }

    func submitReset(_ request: Request, from address: String?, logger: Logger) async -> Response {
        await withCodeForm(request, purpose: "resetPassword") { parameters, code in
            await resetConfirmed(code: code, parameters, from: address, logger: logger)
        }
    }

    func resetConfirmed(code: String, _ parameters: Parameters, from address: String?, logger: Logger) async -> Response {
        let lang = parameters.lang
        do {
            let (record, user) = try await service.resetPassword(
                code: code, newPassword: parameters.fields["newPassword"] ?? "", address: address)
            return done(
                "reset.done.title", body: text("reset.done.body", lang, email: user?.email ?? record.email), parameters
            )
        } catch let error as AccountError where [.weakPassword, .passwordTooShort, .passwordTooLong].contains(error.code) {
            do {
                let (record, _) = try await service.resetPassword(code: code, newPassword: nil)
                let policy = service.settings.passwordPolicy
                let message = renderer.messages.text(
                    error.code == .passwordTooLong ? "reset.tooLong" : "reset.weak", lang,
                    ["min": "\(policy.minimumLength)", "max": "\(policy.maximumLength)"]
                )
                return resetForm(code: code, email: record.email, error: message, parameters, status: .badRequest)
            } catch {
                return failure(error, lang, logger)
            }
        } catch {
            return failure(error, lang, logger)
        }
    }

    func submitSendReset(_ request: Request, from address: String?, logger: Logger) async -> Response {
        let parameters = await parse(await Self.formBody(request))
        let lang = parameters.lang
        guard let email = parameters["email"] else { return failure("error.missing", 400, lang) }
        guard csrf.verify(parameters["csrf"], purpose: "sendPasswordReset", value: email) else { return failure("error.csrf", 403, lang) }
        do {
            var send = ActionCodeService.SendRequest(apiKey: parameters.apiKey)
            send.requestType = ActionCodeKind.passwordReset.rawValue
            send.email = email
            send.lang = lang
            send.ipAddress = address
            _ = try await service.send(send)
            return done("recover.sent.title", body: text("recover.sent.body", lang, email: email), parameters, icon: "info")
        } catch {
            return failure(error, lang, logger)
        }
    }

    // MARK: Pages

    /// `text` with `{email}` set in bold; the result is HTML.
    func text(_ key: String, _ lang: String, email: String) -> String {
        let marker = "\u{1}"
        let plain = renderer.messages.text(key, lang, ["email": marker, "product": renderer.productName])
        return ActionPageRenderer.escape(plain).replacingOccurrences(
            of: marker, with: "<span class=\"email\">\(ActionPageRenderer.escape(email))</span>"
        )
    }

    func continueButton(_ parameters: Parameters) -> String {
        guard let url = parameters.continueURL else { return "" }
        return
            "<a class=\"button\" href=\"\(ActionPageRenderer.escape(url))\">\(ActionPageRenderer.escape(renderer.messages.text("continue", parameters.lang)))</a>"
    }

    func heading(_ title: String, icon: String) -> String {
        let symbol = ["ok": "✓", "error": "!", "info": "i"][icon] ?? ""
        return
            "<div class=\"icon \(icon)\" aria-hidden=\"true\">\(symbol)</div>\n<h1 id=\"page-title\">\(ActionPageRenderer.escape(title))</h1>\n"
    }

    func done(_ titleKey: String, body: String, _ parameters: Parameters, icon: String = "ok") -> Response {
        let title = renderer.messages.text(titleKey, parameters.lang)
        let content = heading(title, icon: icon) + "<p>\(body)</p>\n" + continueButton(parameters)
        return renderer.page(status: .ok, lang: parameters.lang, title: title, content: content)
    }

    func recovered(email: String, _ parameters: Parameters) -> Response {
        let lang = parameters.lang
        let title = renderer.messages.text("recover.title", lang)
        let e = ActionPageRenderer.escape
        let content =
            heading(title, icon: "ok") + """
                <p>\(text("recover.body", lang, email: email))</p>
                <p>\(e(renderer.messages.text("recover.advice", lang)))</p>
                <form method="post" action="\(Self.path)/sendPasswordReset">
                <input type="hidden" name="email" value="\(e(email))">
                <input type="hidden" name="csrf" value="\(e(csrf.token(purpose: "sendPasswordReset", value: email)))">
                <input type="hidden" name="lang" value="\(e(parameters.rawLang))">
                \(hiddenContinue(parameters))<button type="submit">\(e(renderer.messages.text("recover.submit", lang)))</button>
                </form>

                """
        return renderer.page(status: .ok, lang: lang, title: title, content: content)
    }

    /// What a verify, change or recover link will do, and the button that does it.
    func confirmForm(kind: ActionCodeKind, code: String, email: String, _ parameters: Parameters) -> Response {
        let lang = parameters.lang
        let e = ActionPageRenderer.escape
        let prefix =
            ["VERIFY_EMAIL": "verifyEmail", "VERIFY_AND_CHANGE_EMAIL": "change", "REVERT_SECOND_FACTOR_ADDITION": "revert"][kind.rawValue]
            ?? "recover"
        let title = renderer.messages.text("\(prefix).confirm.title", lang)
        let content =
            heading(title, icon: "info") + """
                <p>\(text("\(prefix).confirm.body", lang, email: email))</p>
                <form method="post" action="\(Self.path)/apply">
                \(hiddenCodeFields(code: code, purpose: "apply", parameters))<button type="submit">\(e(renderer.messages.text("\(prefix).confirm.submit", lang)))</button>
                </form>

                """
        return renderer.page(status: .ok, lang: lang, title: title, content: content)
    }

    func resetForm(code: String, email: String, error: String?, _ parameters: Parameters, status: HTTPResponse.Status = .ok) -> Response {
        let lang = parameters.lang
        let e = ActionPageRenderer.escape
        let title = renderer.messages.text("reset.title", lang)
        let policy = service.settings.passwordPolicy
        let hint = renderer.messages.text("reset.policy", lang, ["min": "\(policy.minimumLength)", "max": "\(policy.maximumLength)"])
        let alert = error.map { "<p class=\"alert\" role=\"alert\" id=\"password-error\">\(e($0))</p>\n" } ?? ""
        let described = error == nil ? "password-hint" : "password-error password-hint"
        let content =
            heading(title, icon: "info") + """
                <p>\(text("reset.body", lang, email: email))</p>
                <form method="post" action="\(Self.path)/resetPassword">
                \(hiddenCodeFields(code: code, purpose: "resetPassword", parameters))<input type="text" name="username" value="\(e(email))" autocomplete="username" hidden>
                <label for="new-password">\(e(renderer.messages.text("reset.label", lang)))</label>
                \(alert)<input id="new-password" name="newPassword" type="password" required minlength="\(policy.minimumLength)" maxlength="\(policy.maximumLength)" autocomplete="new-password" autofocus aria-describedby="\(described)"\(error == nil ? "" : " aria-invalid=\"true\"")>
                <p class="hint" id="password-hint">\(e(hint))</p>
                <button type="submit">\(e(renderer.messages.text("reset.submit", lang)))</button>
                </form>

                """
        return renderer.page(status: status, lang: lang, title: title, content: content)
    }

    /// The hidden fields of a form that acts on `code`: the code, its CSRF token for `purpose`, the
    /// link's key, language and continue URL. Each ends its line.
    func hiddenCodeFields(code: String, purpose: String, _ parameters: Parameters) -> String {
        let e = ActionPageRenderer.escape
        return """
            <input type="hidden" name="oobCode" value="\(e(code))">
            <input type="hidden" name="csrf" value="\(e(csrf.token(purpose: purpose, value: code)))">
            <input type="hidden" name="apiKey" value="\(e(parameters.apiKey))">
            <input type="hidden" name="lang" value="\(e(parameters.rawLang))">

            """ + hiddenContinue(parameters)
    }

    func hiddenContinue(_ parameters: Parameters) -> String {
        guard let url = parameters.continueURL else { return "" }
        return "<input type=\"hidden\" name=\"continueUrl\" value=\"\(ActionPageRenderer.escape(url))\">\n"
    }

    func failure(_ key: String, _ status: Int, _ lang: String) -> Response {
        let title = renderer.messages.text("\(key).title", lang)
        let body = renderer.messages.text("\(key).body", lang, ["product": renderer.productName])
        let content = heading(title, icon: "error") + "<p>\(ActionPageRenderer.escape(body))</p>\n"
        return renderer.page(status: HTTPResponse.Status(code: status), lang: lang, title: title, content: content)
    }

    func failure(_ error: any Error, _ lang: String, _ logger: Logger) -> Response {
        guard let error = error as? AccountError else {
            logger.error("action page failed", metadata: ["error": "\(String(reflecting: error))"])
            return failure("error.unavailable", 500, lang)
        }
        switch error.code {
        case .invalidOOBCode, .emailNotFound, .userNotFound: return failure("error.invalid", 400, lang)
        case .missingOOBCode: return failure("error.missing", 400, lang)
        case .expiredOOBCode: return failure("error.expired", 410, lang)
        case .userDisabled: return failure("error.disabled", 403, lang)
        case .emailExists: return failure("error.emailExists", 409, lang)
        case .passwordLoginDisabled: return failure("error.passwordDisabled", 403, lang)
        case .unauthorizedDomain, .invalidContinueURI: return failure("error.continue", 400, lang)
        case .tooManyAttempts, .resetPasswordExceedLimit, .quotaExceeded:
            var response = failure("error.tooMany", 429, lang)
            if let retryAfter = error.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            return response
        default:
            logger.warning("action page refused", metadata: ["error": "\(error)"])
            return failure("error.unavailable", error.code == .unavailable ? 503 : 400, lang)
        }
    }

    /// `continueUrl` with the parameters the SDKs read appended (`mode`, `oobCode`, `apiKey`, `lang`).
    func signInTarget(code: String, _ parameters: Parameters) -> String {
        let target = parameters.continueURL!
        var components = URLComponents(string: target)!
        var items = components.percentEncodedQueryItems ?? []
        for (name, value) in [("mode", "signIn"), ("oobCode", code), ("apiKey", parameters.apiKey), ("lang", parameters.rawLang)] {
            items.removeAll { $0.name == name }
            items.append(URLQueryItem(name: name, value: ActionCodeSettings.formEncode(value)))
        }
        components.percentEncodedQueryItems = items
        return components.string ?? target
    }

    // MARK: Parsing

    /// A continue URL is offered only on a domain authorized now; when the list cannot be read,
    /// none is.
    func parse(_ fields: [String: String]) async -> Parameters {
        let rawLang = ActionLanguage.tag(fields["lang"]) ?? "en"
        var continueURL: String?
        if let raw = fields["continueUrl"], !raw.isEmpty, let host = ActionCodeSettings.httpHost(raw),
            let domains = try? await service.environment.authorizedDomains(), ProjectSettings.isAuthorized(host: host, in: domains)
        {
            continueURL = raw
        }
        let key = fields["apiKey"].flatMap { access.accepts(apiKey: $0) ? $0 : nil } ?? access.linkAPIKey
        return Parameters(
            fields: fields, lang: renderer.messages.language(for: rawLang), rawLang: rawLang, continueURL: continueURL, apiKey: key
        )
    }

    /// Decodes `application/x-www-form-urlencoded` (also query strings); the first value of a name wins.
    static func formFields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        // Malformed: the text with its plus signs as spaces, as this page always read it.
        let pairs = FormEncoding.pairs(text[...].utf8) { Substring($0).replacingOccurrences(of: "+", with: " ") }
        for (name, value) in pairs where fields[name] == nil { fields[name] = value }
        return fields
    }

    static func formBody(_ request: Request) async -> [String: String] {
        guard let buffer = try? await request.body.collect(upTo: 64 << 10) else { return [:] }
        return formFields(String(buffer: buffer))
    }
}
