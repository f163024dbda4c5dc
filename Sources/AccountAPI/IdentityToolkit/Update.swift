import AccountCore
import Foundation

/// `accounts:update` with an ID token (client) or a `localId` (admin), identity-toolkit.md §4.7 B.
enum UpdateRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#SetAccountInfoResponse"
        var localId: String
        var email: String?
        var displayName: String?
        var photoUrl: String?
        var emailVerified: Bool
        var providerUserInfo: [ProviderUserInfoWire]
        var passwordHash: String?

        init(_ user: UserRecord) {
            let wire = UserInfoWire(user)
            localId = user.localID
            email = user.email
            displayName = user.displayName
            photoUrl = user.photoURL
            emailVerified = user.emailVerified
            providerUserInfo = wire.providerUserInfo
            passwordHash = wire.passwordHash
        }
    }

    /// Fields only an admin may send (§4.7 B step 2).
    static let adminOnlyFields = [
        "emailVerified", "disableUser", "phoneNumber", "customAttributes", "createdAt", "lastLoginAt", "linkProviderUserInfo", "mfa",
    ]

    /// `deleteAttribute`'s enum (only `DISPLAY_NAME` and `PHOTO_URL` can be deleted).
    static let attributeNames: Set<String> = [
        "USER_ATTRIBUTE_NAME_UNSPECIFIED", "EMAIL", "DISPLAY_NAME", "PROVIDER", "PHOTO_URL", "PASSWORD", "RAW_USER_INFO",
    ]

    /// `update` with an `oobCode` applies the code (``ApplyActionCodeRPC``); without one it changes
    /// the account.
    static func endpoint(_ actionCodes: ActionCodeService, access: AccessPolicy) -> RPCEndpoint {
        let update = endpoint(actionCodes.accounts)
        return RPCEndpoint { call in
            if let code = try call.body.nonEmptyString("oobCode") {
                // A token sent along must verify: a caller that sends one and gets a code applied
                // despite it being forged or revoked would take the refusal for a success.
                if let idToken = try call.body.nonEmptyString("idToken") { _ = try await actionCodes.accounts.authenticate(idToken) }
                return try WireEncoding.response(try await ApplyActionCodeRPC.respond(actionCodes, call: call, code: code, access: access))
            }
            return try await update.handler(call)
        }
    }

    static func endpoint(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint { call in
            let body = call.body
            var input = AccountService.UpdateInput()
            let isAdmin = call.caller.isAdmin && !body.has("idToken")
            if !isAdmin {
                guard body.has("idToken") else { throw AccountError(.missingIDToken) }
                if let field = adminOnlyFields.first(where: body.has) { throw AccountError(.insufficientPermission, field) }
            }
            input.email = try body.string("email")
            input.password = try body.string("password")
            input.displayName = try body.string("displayName")
            input.photoURL = try body.string("photoUrl")
            input.deleteAttributes = try body.strings("deleteAttribute") ?? []
            // An enum field (identity-toolkit.md §1.2): a name outside Identity Toolkit's enum is a type error.
            if let (index, name) = input.deleteAttributes.enumerated().first(where: { !attributeNames.contains($0.element) }) {
                throw APIError.invalidJSON(
                    "Invalid value at 'delete_attribute[\(index)]' (type.googleapis.com/google.cloud.identitytoolkit.v1.SetAccountInfoRequest.UserAttributeName), \"\(name.prefix(64))\""
                )
            }
            input.deleteProviders = try body.strings("deleteProvider") ?? []
            input.validSince = try body.int64("validSince")
            input.emailVerified = try body.bool("emailVerified")
            input.disableUser = try body.bool("disableUser")
            input.phoneNumber = try body.string("phoneNumber")
            input.customAttributes = try body.string("customAttributes")
            input.createdAt = try body.int64("createdAt")
            input.lastLoginAt = try body.int64("lastLoginAt")
            if isAdmin, let link = body.fields["linkProviderUserInfo"], link != .null {
                guard let object = link.objectValue else { throw AccountError(.invalidProviderID) }
                input.linkProvider = FederatedIdentity(
                    providerID: object["providerId"]?.stringValue ?? "", rawID: object["rawId"]?.stringValue ?? "",
                    email: object["email"]?.stringValue.flatMap(EmailAddress.normalize), displayName: object["displayName"]?.stringValue,
                    photoURL: object["photoUrl"]?.stringValue, linkedAt: Date())
            }
            if isAdmin, let mfa = body.fields["mfa"], mfa != .null {
                // `mfa:{}` or `enrollments:[]` clears (Node sends `mfa:{}` for null and []).
                guard let object = mfa.objectValue, object.keys.allSatisfy({ $0 == "enrollments" }) else {
                    throw MFAService.invalidArgument
                }
                input.mfaEnrollments = try MFAWire.adminFactors(object["enrollments"])
            }
            if isAdmin {
                let user = try await service.adminUpdate(localID: try body.string("localId"), input: input)
                return try WireEncoding.response(Response(user))
            }
            let updated = try await service.update(idToken: try body.string("idToken"), input: input, client: call.client)
            return try WireEncoding.response(
                WithTokens(
                    base: Response(updated.user),
                    tokens: updated.tokens.map { TokenBundleWire($0, lifetime: service.settings.idTokenLifetimeSeconds) }
                )
            )
        }
    }
}
