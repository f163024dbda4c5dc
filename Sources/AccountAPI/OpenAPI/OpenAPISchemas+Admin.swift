import AccountCore
import HTTPTypes

private typealias S = JSONSchema

/// The admins' RPCs (`Admin/`) and resource collections.
extension OpenAPISchemas {
    /// The admins' shapes.
    static let adminComponents: [String: JSONValue] = {
        var schemas: [String: JSONValue] = [:]
        schemas["Session"] = S.object([
            "sessionId": S.string, "localId": S.string, "signInProvider": S.string, "signInMethod": S.string,
            "createdAt": S.decimal("Milliseconds since the epoch."), "authTime": S.decimal("Seconds since the epoch."),
            "lastRefreshAt": S.decimal("Milliseconds since the epoch."), "expiresAt": S.decimal("Milliseconds since the epoch."),
            "userAgent": S.string, "ipAddress": S.string, "revokedAt": S.decimal("Milliseconds since the epoch."),
            "revokeReason": S.string,
        ])
        schemas["ImportedUser"] = S.object([
            "localId": S.string, "email": S.string, "emailVerified": S.boolean, "displayName": S.string, "photoUrl": S.string,
            "phoneNumber": S.string, "disabled": S.boolean, "customAttributes": S.string("A JSON object as a string."),
            "createdAt": S.int64("Milliseconds."), "lastLoginAt": S.int64("Milliseconds."),
            "passwordHash": S.string("base64 (URL-safe or standard)."), "salt": S.string("base64 (URL-safe or standard)."),
            "rawPassword": S.string, "mfaInfo": S.array(S.ref("MfaEnrollment")),
            "providerUserInfo": S.array(
                S.object([
                    "providerId": S.string, "rawId": S.string, "email": S.string, "displayName": S.string, "photoUrl": S.string,
                ])),
        ])
        schemas["CustomTokenSigner"] = S.object([
            "signerId": S.string, "serviceAccountEmail": S.string, "keyId": S.string,
            "fingerprint": S.string("SHA-256 of the key's SubjectPublicKeyInfo (of the URL for a keysUrl signer), hex."),
            "source": S.string, "keysUrl": S.string, "createdAt": S.dateTime,
        ])
        schemas["IdpConfig"] = S.object(
            [
                "name": S.string("Output only: projects/{number}/oauthIdpConfigs/{id} or …/defaultSupportedIdpConfigs/{id}."),
                "clientId": S.string, "clientSecret": S.string("Input only: never returned."), "displayName": S.string,
                "enabled": S.boolean, "issuer": S.string("OpenID Connect providers."),
                "responseType": S.object(["code": S.boolean, "idToken": S.boolean], description: "OpenID Connect providers."),
                "appleSignInConfig": S.object([
                    "bundleIds": S.strings,
                    "codeFlowConfig": S.object([
                        "teamId": S.string, "keyId": S.string, "privateKey": S.string("Input only: never returned."),
                    ]),
                ]),
                "accountdOptions": S.object(
                    [
                        "additionalClientIds": S.strings, "trustedEmailDomains": S.strings, "trustHostedDomain": S.boolean,
                        "scopes": S.strings, "discoveryUrl": S.string, "jwksUri": S.string, "authorizationEndpoint": S.string,
                        "tokenEndpoint": S.string, "clientSecretSet": S.boolean("Output only."),
                    ], description: "accountd's own options."),
            ], description: "A provider's configuration; output in proto3 JSON (false and empty members omitted).")
        // The stored members are echoed as the admin sent them: only the ones the server builds or
        // checks have a type here.
        var configMembers: [String: JSONValue] = [
            "name": S.string("Output only."), "signIn": S.anyObject, "client": S.anyObject, "emailPrivacyConfig": S.anyObject,
            "authorizedDomains": S.strings,
        ]
        for member in [
            "notification", "quota", "monitoring", "multiTenant", "subtype", "mfa", "blockingFunctions", "recaptchaConfig",
            "smsRegionConfig", "autodeleteAnonymousUsers", "passwordPolicyConfig", "mobileLinksConfig", "defaultHostingSite",
            "hostingSite",
        ] {
            configMembers[member] = S.anything
        }
        schemas["ProjectConfig"] = S.object(
            configMembers, description: "The project configuration resource; a PATCH body names only these members.")
        return schemas
    }()

    /// The body of `batchCreate` and `uploadAccount`.
    private static let importRequest: [String: JSONValue] = [
        "hashAlgorithm": S.string("HMAC_SHA256, SCRYPT, STANDARD_SCRYPT, BCRYPT, PBKDF2_SHA256, ARGON2, MD5, SHA256…"),
        "signerKey": S.string("base64."), "saltSeparator": S.string("base64."), "rounds": S.numberOrString,
        "memoryCost": S.numberOrString, "cpuMemCost": S.numberOrString, "blockSize": S.numberOrString,
        "parallelization": S.numberOrString, "dkLen": S.numberOrString, "passwordHashOrder": S.string,
        "argon2Parameters": S.object([
            "hashType": S.numberOrString, "version": S.numberOrString, "iterations": S.numberOrString,
            "memoryCostKib": S.numberOrString, "parallelism": S.numberOrString, "hashLengthBytes": S.numberOrString,
            "associatedData": S.string,
        ]),
        "allowOverwrite": S.boolean, "sanityCheck": S.boolean, "users": S.array(S.ref("ImportedUser"), description: "At most 1000."),
    ]

    /// The answer of `batchCreate` and `uploadAccount`: the users refused, by index.
    private static let importResponse = S.object([
        "kind": S.string, "error": S.array(S.object(["index": S.integer, "message": S.string])),
    ])

    /// The page of `batchGet` and `downloadAccount`.
    private static let usersPage: [String: JSONValue] = [
        "maxResults": S.int64("1 to 1000; 20 by default."), "nextPageToken": S.string,
    ]

    /// The answer of `batchGet` and `downloadAccount`: real password hashes.
    private static let usersPageResponse = S.object([
        "kind": S.string, "users": S.array(S.ref("UserInfo")), "nextPageToken": S.string,
    ])

    /// The admins' RPCs of one method.
    static let admin: [String: [OpenAPIOperation]] = {
        var entries: [String: [OpenAPIOperation]] = [:]
        entries["batchGet"] = [
            .rpc("Pages through every account, with real password hashes.", request: S.object(usersPage), response: usersPageResponse)
        ]
        entries["v3/downloadAccount"] = [
            .rpc(
                "Legacy batchGet, the project named in the body.",
                request: S.object(usersPage.merging(["targetProjectId": S.string]) { own, _ in own }, required: ["targetProjectId"]),
                response: usersPageResponse)
        ]
        entries["batchCreate"] = [
            .rpc("Imports up to 1000 accounts; answers the ones refused.", request: S.object(importRequest), response: importResponse)
        ]
        entries["v3/uploadAccount"] = [
            .rpc(
                "Legacy batchCreate, the project named in the body.",
                request: S.object(importRequest.merging(["targetProjectId": S.string]) { own, _ in own }, required: ["targetProjectId"]),
                response: importResponse)
        ]
        entries["batchDelete"] = [
            .rpc(
                "Deletes accounts; without force, only disabled ones.",
                request: S.object(["localIds": S.stringOrStrings, "force": S.boolean]),
                response: S.object([
                    "errors": S.array(S.object(["index": S.integer, "localId": S.string, "message": S.string]))
                ]))
        ]
        entries["query"] = [
            .rpc(
                "Counts and lists accounts by email, id or phone number.",
                request: S.object([
                    "expression": S.array(S.object(["email": S.string, "userId": S.string, "phoneNumber": S.string])),
                    "emailPrefix": S.string, "limit": S.int64("1 to 500; 500 by default."), "offset": S.int64,
                    "sortBy": S.enumeration(["USER_ID", "CREATED_AT", "LAST_LOGIN_AT", "USER_EMAIL", "NAME"]),
                    "order": S.enumeration(["ASC", "DESC"]), "returnUserInfo": S.boolean,
                ]),
                response: S.object(["recordsCount": S.decimal, "userInfo": S.array(S.ref("UserInfo"))]))
        ]
        entries["createSessionCookie"] = [
            .rpc(
                "Makes a session cookie from an ID token.",
                request: S.object(["idToken": S.string, "validDuration": S.int64("Seconds: 5 minutes to 2 weeks.")]),
                response: S.object(["sessionCookie": S.string]))
        ]
        entries["listAuditEvents"] = [
            .rpc(
                "The audit trail, newest first, of one account or all.",
                request: S.object(["localId": S.string, "maxResults": S.int64("1 to 1000; 100 by default.")]),
                response: S.object([
                    "events": S.array(
                        S.object([
                            "occurredAt": S.decimal("Milliseconds since the epoch."), "actorType": S.string, "actor": S.string,
                            "action": S.string, "localId": S.string, "details": S.string,
                        ]))
                ]))
        ]
        entries["listSigningKeys"] = [
            .rpc(
                "The token-signing keys and their states.",
                request: S.anyObject,
                response: S.object([
                    "keys": S.array(
                        S.object([
                            "kid": S.string, "state": S.string, "createdAt": S.decimal("Milliseconds since the epoch."),
                            "activatedAt": S.decimal, "retiredAt": S.decimal, "removeAfter": S.decimal,
                        ]))
                ]))
        ]
        entries["rotateSigningKeys"] = [
            .rpc(
                "Adds a signing key; immediately makes it current at once.", request: S.object(["immediately": S.boolean]),
                response: S.object(["kid": S.string]))
        ]
        entries["getSession"] = [
            .rpc(
                "The account a session belongs to.", request: S.object(["sessionId": S.string]),
                response: S.object(["localId": S.string, "sessionId": S.string]))
        ]
        entries["unlock"] = [
            .rpc(
                "Clears an address's password lockout.", request: S.object(["email": S.string, "localId": S.string]),
                response: S.object(["email": S.string, "cleared": S.boolean]))
        ]
        entries["v1/idpConfigs:testCredential"] = [
            .rpc(
                "Checks a provider's ID token as a sign-in would, touching no account.",
                request: S.object(["providerId": S.string, "idToken": S.string, "nonce": S.string]),
                response: S.object(["claims": S.anyObject, "trusted": S.boolean, "email": S.string, "emailVerified": S.boolean]))
        ]
        entries["v2/defaultSupportedIdps"] = [
            .rpc(
                "The providers accountd verifies as default-supported.",
                response: S.object(["defaultSupportedIdps": S.array(S.object(["idpId": S.string]))]))
        ]
        return entries
    }()

    /// The resource collections, whose handlers read the method and the resource id.
    static let resources: [String: [OpenAPIOperation]] = {
        var entries: [String: [OpenAPIOperation]] = [:]
        let signer = S.ref("CustomTokenSigner")
        entries["v1/customTokenSigners"] = [
            OpenAPIOperation(
                method: .post, summary: "Registers a key that verifies custom tokens: a PEM key, a certificate, a JWKS or a keys URL.",
                request: S.object([
                    "serviceAccountEmail": S.string, "publicKeyPem": S.string, "x509Certificate": S.string,
                    "jwks": .object(["anyOf": .array([S.anyObject, S.string])]), "keysUrl": S.string, "keyId": S.string,
                ]),
                response: S.object(
                    [
                        "signerId": S.string, "serviceAccountEmail": S.string, "keyId": S.string, "fingerprint": S.string,
                        "source": S.string, "keysUrl": S.string, "createdAt": S.dateTime,
                        "signers": S.array(signer, description: "Every key of the registration, when more than one."),
                    ], description: "The (first) signer registered.")),
            OpenAPIOperation(method: .get, summary: "Lists the signers.", response: S.object(["signers": S.array(signer)])),
            OpenAPIOperation(method: .delete, target: .resource, summary: "Removes a signer.", response: S.anyObject),
        ]
        entries["v2/oauthIdpConfigs"] = idpConfigOperations(
            kind: "an OpenID Connect provider", list: "oauthIdpConfigs", idParameter: "oauthIdpConfigId")
        entries["v2/defaultSupportedIdpConfigs"] = idpConfigOperations(
            kind: "a default-supported provider", list: "defaultSupportedIdpConfigs", idParameter: "idpId")
        let config = S.ref("ProjectConfig")
        entries["v2/config"] = [
            OpenAPIOperation(method: .get, summary: "The project configuration.", response: config),
            OpenAPIOperation(
                method: .patch, summary: "Changes the project configuration: the members updateMask names, or every stored one.",
                request: config, query: ["updateMask": S.string("Comma-separated member paths.")], response: config),
        ]
        return entries
    }()

    /// The operations of a provider-configuration collection (`oauthIdpConfigs`, `defaultSupportedIdpConfigs`).
    private static func idpConfigOperations(kind: String, list: String, idParameter: String) -> [OpenAPIOperation] {
        let config = S.ref("IdpConfig")
        return [
            OpenAPIOperation(
                method: .post, summary: "Creates \(kind)'s configuration.", request: config,
                query: [idParameter: S.string("The provider's id.")], response: config),
            OpenAPIOperation(
                method: .get, summary: "Lists the configurations.",
                query: ["pageSize": S.integer("1 to 100."), "pageToken": S.string],
                response: S.object([list: S.array(config), "nextPageToken": S.string])),
            OpenAPIOperation(method: .get, target: .resource, summary: "Reads \(kind)'s configuration.", response: config),
            OpenAPIOperation(
                method: .patch, target: .resource, summary: "Changes the members updateMask names.", request: config,
                query: ["updateMask": S.string("Comma-separated member paths.")], response: config),
            OpenAPIOperation(method: .delete, target: .resource, summary: "Deletes \(kind)'s configuration.", response: S.anyObject),
        ]
    }
}
