import AccountCore

/// `accounts:resetPassword` (identity-toolkit.md §4.8): check a code, or reset the password with it.
enum ResetPasswordRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#ResetPasswordResponse"
        var requestType: String
        var email: String?
        var newEmail: String?
        /// A revert code's factor (mfa-phone-tenants.md §B.12), its phone obfuscated.
        var mfaInfo: JSONValue?
    }

    static func endpoint(_ service: ActionCodeService) -> RPCEndpoint {
        RPCEndpoint { call in
            let (record, user) = try await service.resetPassword(
                code: try call.body.string("oobCode"), newPassword: try call.body.string("newPassword"), address: call.limitedAddress
            )
            let email: String? = record.kind == .emailSignIn ? nil : (user?.email ?? record.email)
            let newEmail = record.kind == .verifyAndChangeEmail || record.kind == .recoverEmail ? record.newEmail : nil
            let mfaInfo = record.factor.flatMap { MFAWire.entry($0, obfuscate: true) }
            return try WireEncoding.response(
                Response(requestType: record.kind.rawValue, email: email, newEmail: newEmail, mfaInfo: mfaInfo))
        }
    }
}

/// `accounts:update` with `oobCode` (applyActionCode, identity-toolkit.md §4.7 A).
enum ApplyActionCodeRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#SetAccountInfoResponse"
        var localId: String
        var email: String?
        var emailVerified: Bool
        var providerUserInfo: [ProviderUserInfoWire]
    }

    static func respond(_ service: ActionCodeService, call: RPCCall, code: String, access: AccessPolicy) async throws -> Response {
        let user = try await service.apply(code: code, apiKey: call.apiKey(access), address: call.limitedAddress)
        return Response(
            localId: user.localID, email: user.email, emailVerified: user.emailVerified,
            providerUserInfo: ProviderUserInfoWire.list(for: user))
    }
}
