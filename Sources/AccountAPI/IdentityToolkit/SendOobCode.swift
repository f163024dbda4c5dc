import AccountCore

/// `accounts:sendOobCode` (identity-toolkit.md §4.3).
enum SendOobCodeRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#GetOobConfirmationCodeResponse"
        var email: String
        var oobCode: String?
        var oobLink: String?
    }

    static func endpoint(_ service: ActionCodeService, access: AccessPolicy) -> RPCEndpoint {
        RPCEndpoint { call in
            let body = call.body
            var request = ActionCodeService.SendRequest(apiKey: call.apiKey(access))
            switch body.value("requestType") {
            case .int(let index)?: request.requestType = String(index)
            default: request.requestType = try body.string("requestType")
            }
            request.email = try body.nonEmptyString("email")
            request.newEmail = try body.nonEmptyString("newEmail")
            request.idToken = try body.nonEmptyString("idToken")
            request.returnOobLink = try body.bool("returnOobLink") ?? false
            request.isAdmin = call.caller.isAdmin
            request.ipAddress = call.limitedAddress
            request.lang = ActionLanguage.tag(call.locale) ?? "en"
            var settings = ActionCodeSettings()
            // An empty continueUrl is not an absent one: production answers INVALID_CONTINUE_URI.
            settings.continueURL = try body.string("continueUrl")
            settings.canHandleCodeInApp = try body.bool("canHandleCodeInApp") ?? false
            settings.iOSBundleID = try body.nonEmptyString("iOSBundleId") ?? body.nonEmptyString("iosBundleId")
            settings.iOSAppStoreID = try body.nonEmptyString("iOSAppStoreId") ?? body.nonEmptyString("iosAppStoreId")
            settings.androidPackageName = try body.nonEmptyString("androidPackageName")
            settings.androidInstallApp = try body.bool("androidInstallApp") ?? false
            settings.androidMinimumVersion =
                try body.nonEmptyString("androidMinimumVersion") ?? body.nonEmptyString("androidMinimumVersionCode")
            settings.dynamicLinkDomain = try body.nonEmptyString("dynamicLinkDomain")
            settings.linkDomain = try body.nonEmptyString("linkDomain")
            request.settings = settings
            let result = try await service.send(request)
            return try WireEncoding.response(Response(email: result.email, oobCode: result.oobCode, oobLink: result.oobLink))
        }
    }
}

extension RPCCall {
    /// The API key links carry: the caller's, or the project's first for admins.
    func apiKey(_ access: AccessPolicy) -> String {
        if case .client(let key) = caller { return key }
        return access.linkAPIKey
    }
}
