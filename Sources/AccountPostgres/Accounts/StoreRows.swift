public import AccountCore
import Foundation
import PostgresNIO

/// The rows the store reads, each decoded in one place.
extension PostgresAccountStore {
    /// The user row's select list (over `users u`, `password_credentials p`), for ``decodeUser(_:)``.
    static let userSelectList = """
        u.local_id, u.email, u.email_verified, u.email_link_signin, u.initial_email, u.display_name, u.photo_url,
        u.phone_number, u.disabled, u.custom_attributes, u.custom_auth, u.created_at, u.last_login_at, u.last_refresh_at,
        u.valid_since, u.tokens_valid_after, u.credential_version,
        p.algorithm, p.hash, p.salt, p.parameters::text, p.updated_at,
        (SELECT coalesce(json_agg(json_build_array(f.provider_id, f.raw_id, f.email, f.display_name, f.photo_url,
                 (extract(epoch FROM f.linked_at) * 1000)::bigint) ORDER BY f.linked_at), '[]')::text
           FROM federated_identities f WHERE f.tenant_id = u.tenant_id AND f.local_id = u.local_id)
        """

    /// The tables behind ``userSelectList``.
    static let userTables = "users u LEFT JOIN password_credentials p ON p.tenant_id = u.tenant_id AND p.local_id = u.local_id"

    /// The user row's columns and tables: `SELECT \(userColumns) WHERE …`.
    static let userColumns = "\(userSelectList) FROM \(userTables)"

    static func decodeUser(_ row: PostgresRow) throws -> UserRecord {
        let c = row.makeRandomAccess()
        var user = UserRecord(
            localID: try c[0].decode(String.self),
            email: try c[1].decode(String?.self),
            emailVerified: try c[2].decode(Bool.self),
            emailLinkSignin: try c[3].decode(Bool.self),
            initialEmail: try c[4].decode(String?.self),
            displayName: try c[5].decode(String?.self),
            photoURL: try c[6].decode(String?.self),
            phoneNumber: try c[7].decode(String?.self),
            disabled: try c[8].decode(Bool.self),
            customAttributes: try c[9].decode(String?.self),
            customAuth: try c[10].decode(Bool.self),
            createdAt: try c[11].decode(Date.self),
            lastLoginAt: try c[12].decode(Date?.self),
            lastRefreshAt: try c[13].decode(Date?.self),
            validSince: try c[14].decode(Int64.self),
            tokensValidAfter: try c[15].decode(Date.self),
            credentialVersion: try c[16].decode(Int64.self)
        )
        if let algorithm = try c[17].decode(String?.self) {
            // Every user read (sign-in, refresh, lookup) comes through here: the project's parser, not JSONDecoder.
            let parameters =
                try c[20].decode(String?.self).flatMap { try? JSONValue.parse($0).objectValue }?.compactMapValues(\.stringValue) ?? [:]
            user.password = PasswordCredential(
                stored: StoredPassword(
                    algorithm: algorithm,
                    hash: Array(try c[18].decode(Data.self)),
                    salt: try c[19].decode(Data?.self).map(Array.init),
                    parameters: parameters
                ),
                updatedAt: try c[21].decode(Date.self)
            )
        }
        let links = try c[22].decode(String.self)
        if links != "[]", case .array(let array)? = try? JSONValue.parse(links) {
            user.federated = array.compactMap { element in
                guard case .array(let item) = element, item.count == 6, let provider = item[0].stringValue, let raw = item[1].stringValue
                else { return nil }
                return FederatedIdentity(
                    providerID: provider, rawID: raw, email: item[2].stringValue, displayName: item[3].stringValue,
                    photoURL: item[4].stringValue, linkedAt: Date(timeIntervalSince1970: Double(item[5].intValue ?? 0) / 1000)
                )
            }
        }
        return user
    }

    /// A session from ``sessionColumns``, starting at column `first` (0 unless joined behind other columns).
    static func decodeSession(_ row: PostgresRow, from first: Int = 0) throws -> SessionRecord {
        let c = row.makeRandomAccess()
        return SessionRecord(
            sessionID: try c[first].decode(String.self),
            localID: try c[first + 1].decode(String.self),
            createdAt: try c[first + 2].decode(Date.self),
            authTime: try c[first + 3].decode(Int64.self),
            signInProvider: try c[first + 4].decode(String.self),
            signInMethod: try c[first + 5].decode(String.self),
            userAgent: try c[first + 6].decode(String?.self),
            ipAddress: try c[first + 7].decode(String?.self),
            lastRefreshAt: try c[first + 8].decode(Date?.self),
            generation: try c[first + 9].decode(Int64.self),
            generationIssuedAt: try c[first + 10].decode(Date.self),
            salt: Array(try c[first + 11].decode(Data.self)),
            keyID: try c[first + 12].decode(String.self),
            lastMintAt: try c[first + 13].decode(Date?.self),
            expiresAt: try c[first + 14].decode(Date?.self),
            revokedAt: try c[first + 15].decode(Date?.self),
            revokeReason: try c[first + 16].decode(String?.self).flatMap(RevokeReason.init(rawValue:)),
            userDeleted: try c[first + 17].decode(Bool.self)
        )
    }

    static func binds(_ values: String...) -> PostgresBindings {
        var binds = PostgresBindings()
        for value in values { binds.append(value) }
        return binds
    }
}
