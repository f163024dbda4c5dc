import AccountCore

/// `accounts:batchCreate` (identity-toolkit.md §4.11, admin): import up to 1000 users with per-user errors.
enum BatchCreateRPC {
    struct Item: Encodable, Sendable {
        var index: Int
        var message: String
    }

    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#UploadAccountResponse"
        var error: [Item]
    }

    static let parameterNames = [
        "signerKey", "saltSeparator", "rounds", "memoryCost", "cpuMemCost", "blockSize", "parallelization", "dkLen", "passwordHashOrder",
    ]

    /// `ARGON2`'s parameters: nested in `argon2Parameters` (the REST API) or beside `hashAlgorithm` (the Java Admin
    /// SDK's spelling).
    static let argon2ParameterNames = [
        "hashType", "version", "iterations", "memoryCostKib", "parallelism", "hashLengthBytes", "associatedData",
    ]

    /// The hash parameters of an import request as strings, numbers in decimal.
    static func hashParameters(_ body: RPCBody) -> [String: String] {
        var parameters: [String: String] = [:]
        func collect(_ names: [String], from source: RPCBody) {
            for name in names {
                switch source.value(name) {
                case .int(let number)?: parameters[name] = String(number)
                case .string(let text)? where !text.isEmpty: parameters[name] = text
                default: break
                }
            }
        }
        collect(parameterNames, from: body)
        if case .object(let nested)? = body.value("argon2Parameters") {
            collect(argon2ParameterNames, from: RPCBody(fields: nested))
        } else {
            collect(argon2ParameterNames, from: body)
        }
        return parameters
    }

    static func endpoint(
        _ service: AdminService, store: any UserImportStore
    ) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly, maxBodyBytes: 16 << 20) { call in
            let body = call.body
            var request = ImportRequest()
            request.hashAlgorithm = try body.nonEmptyString("hashAlgorithm")
            request.hashParameters = hashParameters(body)
            request.allowOverwrite = try body.bool("allowOverwrite") ?? true
            request.sanityCheck = try body.bool("sanityCheck") ?? false
            for item in try body.objects("users") ?? [] {
                var user = ImportedUser()
                user.localID = try item.string("localId")
                user.email = try item.string("email")
                user.emailVerified = try item.bool("emailVerified") ?? false
                user.displayName = try item.string("displayName")
                user.photoURL = try item.string("photoUrl")
                user.phoneNumber = try item.nonEmptyString("phoneNumber")
                user.disabled = try item.bool("disabled") ?? false
                user.customAttributes = try item.string("customAttributes")
                user.createdAt = try item.int64("createdAt")
                user.lastLoginAt = try item.int64("lastLoginAt")
                for (name, raw) in [("passwordHash", try item.nonEmptyString("passwordHash")), ("salt", try item.nonEmptyString("salt"))] {
                    guard let raw else { continue }
                    guard let bytes = Base64URL.decode(raw) else {
                        user.fault = user.fault ?? "\(name) is not valid base64"
                        continue
                    }
                    if name == "passwordHash" { user.passwordHash = bytes } else { user.salt = bytes }
                }
                user.rawPassword = try item.nonEmptyString("rawPassword")
                user.factors = try MFAWire.adminFactors(item.value("mfaInfo"))
                for provider in try item.objects("providerUserInfo") ?? [] {
                    guard let id = try provider.string("providerId"), let raw = try provider.string("rawId") else { continue }
                    user.providers.append(
                        FederatedIdentity(
                            providerID: id, rawID: raw, email: try provider.string("email"),
                            displayName: try provider.string("displayName"),
                            photoURL: try provider.string("photoUrl"), linkedAt: service.now()
                        )
                    )
                }
                request.users.append(user)
            }
            let errors = try await service.importUsers(request, store: store)
            return try WireEncoding.response(Response(error: errors.map { Item(index: $0.index, message: $0.message) }))
        }
    }
}
