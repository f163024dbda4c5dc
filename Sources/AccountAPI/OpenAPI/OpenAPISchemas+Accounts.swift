import AccountCore

private typealias S = JSONSchema

/// The clients' RPCs (`IdentityToolkit/`, which admins call too), the client configuration and
/// the second-factor RPCs.
extension OpenAPISchemas {
    /// `returnSecureToken`, which the SDKs send: tokens are always returned.
    private static let returnSecureToken = S.boolean("Accepted and ignored: tokens are always returned.")

    /// Accounts, sign-in and email actions.
    static let accounts: [String: [OpenAPIOperation]] = {
        var entries: [String: [OpenAPIOperation]] = [:]
        entries["signUp"] = [
            .rpc(
                "Creates an account (anonymous, or with email and password); with idToken, adds email and password to that account; "
                    + "an admin creates any account.",
                request: S.object([
                    "email": S.string, "password": S.string, "displayName": S.string,
                    "idToken": S.string("The signed-in account to add email and password to."), "returnSecureToken": returnSecureToken,
                    "localId": S.string("Admin only: the new account's id."), "phoneNumber": S.string("Admin only."),
                    "photoUrl": S.string("Admin only."), "emailVerified": S.boolean("Admin only."), "disabled": S.boolean("Admin only."),
                    "mfaInfo": S.array(S.ref("MfaEnrollment"), description: "Admin only: second factors."),
                ]),
                response: S.signIn(
                    ["kind": S.string, "localId": S.string, "email": S.string, "displayName": S.string],
                    description: "An admin's create answers without tokens."))
        ]
        entries["signInWithPassword"] = [
            .rpc(
                "Signs in with email and password.",
                request: S.object(
                    ["email": S.string, "password": S.string, "returnSecureToken": returnSecureToken], required: ["email", "password"]),
                response: S.signIn([
                    "kind": S.string, "localId": S.string, "email": S.string, "displayName": S.string, "registered": S.boolean,
                ]))
        ]
        entries["lookup"] = [
            .rpc(
                "Reads the signed-in account (idToken); an admin looks accounts up by ids, emails, phone numbers or provider ids.",
                request: S.object([
                    "idToken": S.string, "localId": S.describe(S.stringOrStrings, "Admin only; at most 100."),
                    "email": S.describe(S.stringOrStrings, "Admin only; at most 100."),
                    "phoneNumber": S.describe(S.stringOrStrings, "Admin only; at most 100."),
                    "federatedUserId": S.array(
                        S.object(["providerId": S.string, "rawId": S.string], required: ["providerId", "rawId"]),
                        description: "Admin only; at most 100."),
                    "initialEmail": S.describe(S.stringOrStrings, "Admin only."),
                ]),
                response: S.object(["kind": S.string, "users": S.array(S.ref("UserInfo"))]))
        ]
        entries["delete"] = [
            .rpc(
                "Deletes the signed-in account (idToken); an admin deletes any (localId).",
                request: S.object(["idToken": S.string, "localId": S.string("Admin only.")]),
                response: S.object(["kind": S.string]))
        ]
        entries["verifyIdToken"] = [
            .rpc(
                "Verifies an ID token: signature and expiry, and with checkRevoked the account and session state.",
                request: S.object(["idToken": S.string, "checkRevoked": S.boolean]),
                response: S.object(["localId": S.string, "sessionId": S.string, "claims": S.anyObject]))
        ]
        entries["listSessions"] = [
            .rpc(
                "Lists an account's sessions, newest first.",
                request: S.object([
                    "localId": S.string, "includeRevoked": S.boolean, "maxResults": S.int64("1 to 1000; 100 by default."),
                    "nextPageToken": S.string,
                ]),
                response: S.object(["sessions": S.array(S.ref("Session")), "nextPageToken": S.string]))
        ]
        entries["revokeSessions"] = [
            .rpc(
                "Revokes an account's sessions: the ones named, or all.",
                request: S.object(["localId": S.string, "sessionIds": S.stringOrStrings]),
                response: S.object([
                    "localId": S.string, "revokedSessionIds": S.strings, "validSince": S.decimal("Seconds since the epoch."),
                ]))
        ]
        entries["sendOobCode"] = [
            .rpc(
                "Sends an email action (password reset, verification, sign-in link, email change); an admin's returnOobLink "
                    + "returns it instead.",
                request: S.object([
                    "requestType": .object([
                        "anyOf": .array([
                            S.enumeration(["PASSWORD_RESET", "VERIFY_EMAIL", "EMAIL_SIGNIN", "VERIFY_AND_CHANGE_EMAIL"]), S.integer,
                        ])
                    ]),
                    "email": S.string, "newEmail": S.string, "idToken": S.string, "returnOobLink": S.boolean("Admin only."),
                    "continueUrl": S.string, "canHandleCodeInApp": S.boolean, "iOSBundleId": S.string, "iOSAppStoreId": S.string,
                    "androidPackageName": S.string, "androidInstallApp": S.boolean, "androidMinimumVersion": S.string,
                    "dynamicLinkDomain": S.string, "linkDomain": S.string, "targetProjectId": S.string,
                ]),
                response: S.object([
                    "kind": S.string, "email": S.string, "oobCode": S.string("Admin with returnOobLink only."),
                    "oobLink": S.string("Admin with returnOobLink only."),
                ]))
        ]
        entries["signInWithEmailLink"] = [
            .rpc(
                "Signs in with an email link's code; with idToken, links the email to that account.",
                request: S.object(["email": S.string, "oobCode": S.string, "idToken": S.string, "returnSecureToken": returnSecureToken]),
                response: S.signIn(["kind": S.string, "localId": S.string, "email": S.string, "isNewUser": S.boolean]))
        ]
        entries["resetPassword"] = [
            .rpc(
                "Checks an email action code (no newPassword), or resets the password with it.",
                request: S.object(["oobCode": S.string, "newPassword": S.string]),
                response: S.object([
                    "kind": S.string, "requestType": S.string, "email": S.string, "newEmail": S.string,
                    "mfaInfo": S.describe(S.ref("MfaEnrollment"), "A revert code's factor, its phone obfuscated."),
                ]))
        ]
        entries["update"] = [
            .rpc(
                "Applies an email action code (oobCode), or changes the signed-in account (idToken); an admin changes any (localId).",
                request: S.object([
                    "oobCode": S.string, "idToken": S.string, "localId": S.string("Admin only."), "email": S.string,
                    "password": S.string, "displayName": S.string, "photoUrl": S.string,
                    "deleteAttribute": S.array(
                        S.enumeration(UpdateRPC.attributeNames.sorted())),
                    "deleteProvider": S.stringOrStrings, "validSince": S.int64("Admin: seconds since the epoch."),
                    "emailVerified": S.boolean("Admin only."), "disableUser": S.boolean("Admin only."),
                    "phoneNumber": S.string("Admin only."), "customAttributes": S.string("Admin only: a JSON object as a string."),
                    "createdAt": S.int64("Admin only: milliseconds."), "lastLoginAt": S.int64("Admin only: milliseconds."),
                    "linkProviderUserInfo": S.object(
                        [
                            "providerId": S.string, "rawId": S.string, "email": S.string, "displayName": S.string, "photoUrl": S.string,
                        ], description: "Admin only."),
                    "mfa": S.object(
                        ["enrollments": S.array(S.ref("MfaEnrollment"))], description: "Admin only: replaces the second factors."),
                    "returnSecureToken": returnSecureToken,
                ]),
                response: S.signIn([
                    "kind": S.string, "localId": S.string, "email": S.string, "displayName": S.string, "photoUrl": S.string,
                    "emailVerified": S.boolean, "providerUserInfo": S.array(S.ref("ProviderUserInfo")), "passwordHash": S.string,
                ]))
        ]
        entries["createAuthUri"] = [
            .rpc(
                "Discovers an identifier's sign-in methods; with a providerId, starts a provider's redirect flow.",
                request: S.object([
                    "identifier": S.string, "continueUri": S.string, "providerId": S.string, "sessionId": S.string,
                    "context": S.string, "oauthScope": S.string, "hostedDomain": S.string, "authFlowType": S.string,
                    "customParameter": S.map(S.string),
                ]),
                response: S.object([
                    "kind": S.string, "registered": S.boolean, "allProviders": S.strings, "signinMethods": S.strings,
                    "sessionId": S.string, "authUri": S.string("A redirect flow's."), "providerId": S.string("A redirect flow's."),
                ]))
        ]
        entries["signInWithIdp"] = [
            .rpc(
                "Signs in with a provider's credential (postBody) or a redirect's answer (requestUri); links with idToken.",
                request: S.object([
                    "requestUri": S.string, "postBody": S.string, "sessionId": S.string, "pendingToken": S.string,
                    "idToken": S.string, "returnIdpCredential": S.boolean, "returnRefreshToken": S.boolean, "autoCreate": S.boolean,
                    "returnSecureToken": returnSecureToken,
                ]),
                response: S.signIn([
                    "kind": S.string, "federatedId": S.string, "providerId": S.string, "rawUserInfo": S.string,
                    "pendingToken": S.string, "emailVerified": S.boolean, "email": S.string, "oauthIdToken": S.string,
                    "oauthAccessToken": S.string, "oauthExpireIn": S.integer, "oauthRefreshToken": S.string, "context": S.string,
                    "localId": S.string, "displayName": S.string, "fullName": S.string, "firstName": S.string, "lastName": S.string,
                    "photoUrl": S.string, "screenName": S.string, "originalEmail": S.string, "isNewUser": S.boolean,
                    "emailRecycled": S.boolean, "needConfirmation": S.boolean, "verifiedProvider": S.strings,
                    "errorMessage": S.string,
                ]))
        ]
        entries["signInWithCustomToken"] = [
            .rpc(
                "Signs in with a custom token.",
                request: S.object(["token": S.string, "returnSecureToken": returnSecureToken]),
                response: S.signIn(["kind": S.string, "isNewUser": S.boolean]))
        ]
        entries["sendVerificationCode"] = [
            .rpc(
                "Sends a sign-in code to a phone number; the app verification fields are accepted and ignored.",
                request: S.object([
                    "phoneNumber": S.string("E.164."), "autoRetrievalInfo": S.object(["appSignatureHash": S.string]),
                    "recaptchaToken": S.string, "playIntegrityToken": S.string, "iosReceipt": S.string, "iosSecret": S.string,
                ]),
                response: S.object(["sessionInfo": S.string]))
        ]
        entries["signInWithPhoneNumber"] = [
            .rpc(
                "Signs in with a phone code or a temporaryProof; reauthenticates (operation REAUTH) or links (idToken).",
                request: S.object([
                    "sessionInfo": S.string, "code": S.string, "phoneNumber": S.string, "temporaryProof": S.string,
                    "idToken": S.string, "operation": S.string("REAUTH to reauthenticate."),
                ]),
                response: S.signIn([
                    "localId": S.string, "isNewUser": S.boolean, "phoneNumber": S.string,
                    "temporaryProof": S.string("When the number belongs to another account."),
                    "temporaryProofExpiresIn": S.decimal("Seconds."),
                ]))
        ]
        return entries
    }()

    /// The configuration the SDKs fetch (GET).
    static let clientConfiguration: [String: [OpenAPIOperation]] = {
        var entries: [String: [OpenAPIOperation]] = [:]
        entries["v2/recaptchaConfig"] = [
            .rpc(
                "reCAPTCHA configuration: every provider OFF.",
                response: S.object([
                    "recaptchaKey": S.string,
                    "recaptchaEnforcementState": S.array(S.object(["provider": S.string, "enforcementState": S.string])),
                    "useSmsBotScore": S.boolean, "useSmsTollFraudProtection": S.boolean,
                ]))
        ]
        entries["v2/passwordPolicy"] = [
            .rpc(
                "The password policy the server enforces.",
                response: S.object([
                    "customStrengthOptions": S.object(["minPasswordLength": S.integer, "maxPasswordLength": S.integer]),
                    "allowedNonAlphanumericCharacters": S.strings, "enforcementState": S.enumeration(["ENFORCE", "OFF"]),
                    "forceUpgradeOnSignin": S.boolean, "schemaVersion": S.integer,
                ]))
        ]
        entries["v1/projects"] = [
            .rpc(
                "The project's number and authorized domains; admins also learn which sign-ins are allowed.",
                response: S.object([
                    "projectId": S.string("The project number."), "authorizedDomains": S.strings,
                    "allowPasswordUser": S.boolean("Admins only."), "enableAnonymousUser": S.boolean("Admins only."),
                ]))
        ]
        entries["v1/recaptchaParams"] = [
            .rpc("The reCAPTCHA site key.", response: S.object(["kind": S.string, "recaptchaSiteKey": S.string]))
        ]
        entries["v1/sessionCookiePublicKeys"] = [.rpc("The keys that sign session cookies (JWKS).", response: S.ref("Jwks"))]
        return entries
    }()

    /// The v2 second-factor RPCs (errors in the v2 shape).
    static let secondFactors: [String: [OpenAPIOperation]] = {
        let autoRetrieval = S.object(["appSignatureHash": S.string])
        let phoneVerification = S.object(["sessionInfo": S.string, "code": S.string])
        let totpVerification = S.object(["sessionInfo": S.string, "verificationCode": S.string])
        let tokens = S.object(["idToken": S.string, "refreshToken": S.string])
        var entries: [String: [OpenAPIOperation]] = [:]
        entries["v2/accounts/mfaEnrollment:start"] = [
            .rpc(
                "Starts enrolling a second factor: a phone (an SMS code is sent) or TOTP (a shared secret is returned).",
                request: S.object([
                    "idToken": S.string,
                    "phoneEnrollmentInfo": S.object(["phoneNumber": S.string, "autoRetrievalInfo": autoRetrieval]),
                    "totpEnrollmentInfo": S.anyObject,
                ]),
                response: S.object([
                    "phoneSessionInfo": S.object(["sessionInfo": S.string]),
                    "totpSessionInfo": S.object([
                        "sharedSecretKey": S.string, "verificationCodeLength": S.integer, "hashingAlgorithm": S.string,
                        "periodSec": S.integer, "sessionInfo": S.string, "finalizeEnrollmentTime": S.dateTime,
                    ]),
                ]))
        ]
        entries["v2/accounts/mfaEnrollment:finalize"] = [
            .rpc(
                "Finishes enrolling a second factor with its code.",
                request: S.object([
                    "idToken": S.string, "displayName": S.string, "phoneVerificationInfo": phoneVerification,
                    "totpVerificationInfo": totpVerification,
                ]),
                response: S.object(["idToken": S.string, "refreshToken": S.string, "totpAuthInfo": S.anyObject]))
        ]
        entries["v2/accounts/mfaEnrollment:withdraw"] = [
            .rpc(
                "Removes a second factor.", request: S.object(["idToken": S.string, "mfaEnrollmentId": S.string]), response: tokens)
        ]
        entries["v2/accounts/mfaSignIn:start"] = [
            .rpc(
                "Starts a second-factor sign-in: sends the phone factor's SMS code.",
                request: S.object([
                    "mfaPendingCredential": S.string, "mfaEnrollmentId": S.string,
                    "phoneSignInInfo": S.object(["autoRetrievalInfo": autoRetrieval]),
                ]),
                response: S.object(["phoneResponseInfo": S.object(["sessionInfo": S.string])]))
        ]
        entries["v2/accounts/mfaSignIn:finalize"] = [
            .rpc(
                "Finishes a second-factor sign-in with the factor's code.",
                request: S.object([
                    "mfaPendingCredential": S.string, "mfaEnrollmentId": S.string, "phoneVerificationInfo": phoneVerification,
                    "totpVerificationInfo": totpVerification,
                ]),
                response: tokens)
        ]
        return entries
    }()
}
