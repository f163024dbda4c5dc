import AccountCore
import Foundation
import PostgresNIO

/// A row read by column name: `row(.email)` decodes the column ``UserColumn/email`` names, at the
/// position the select list gives it, so the SQL and the decoder cannot drift apart.
struct NamedRow<Column: RawRepresentable & CaseIterable> where Column.RawValue == Int {
    let cells: PostgresRandomAccessRow
    /// Where the columns start (after another entity's columns in a join).
    let first: Int

    init(_ row: PostgresRow, from first: Int = 0) {
        self.cells = row.makeRandomAccess()
        self.first = first
    }

    func callAsFunction<Value: PostgresDecodable>(_ column: Column, as type: Value.Type = Value.self) throws -> Value {
        try cells[first + column.rawValue].decode(Value.self)
    }
}

/// The user row's columns (over `users u`, `password_credentials p`), in select-list order.
enum UserColumn: Int, CaseIterable {
    case localID, email, emailVerified, emailLinkSignin, initialEmail, displayName, photoURL, phoneNumber, disabled
    case customAttributes, customAuth, createdAt, lastLoginAt, lastRefreshAt, validSince, tokensValidAfter, credentialVersion
    case anonymous
    case passwordAlgorithm, passwordHash, passwordSalt, passwordParameters, passwordUpdatedAt
    /// The federated links, a JSON array of `[provider, rawId, email, displayName, photoUrl, linkedAtMillis]`.
    case federated
    /// The second factors, a JSON array of `[enrollmentId, kind, displayName, phone, enrolledAtMicros, enrolledAtText]`.
    case factors

    var sql: String {
        switch self {
        case .localID: "u.local_id"
        case .email: "u.email"
        case .emailVerified: "u.email_verified"
        case .emailLinkSignin: "u.email_link_signin"
        case .initialEmail: "u.initial_email"
        case .displayName: "u.display_name"
        case .photoURL: "u.photo_url"
        case .phoneNumber: "u.phone_number"
        case .disabled: "u.disabled"
        case .customAttributes: "u.custom_attributes"
        case .customAuth: "u.custom_auth"
        case .createdAt: "u.created_at"
        case .lastLoginAt: "u.last_login_at"
        case .lastRefreshAt: "u.last_refresh_at"
        case .validSince: "u.valid_since"
        case .tokensValidAfter: "u.tokens_valid_after"
        case .credentialVersion: "u.credential_version"
        case .anonymous: "u.anonymous"
        case .passwordAlgorithm: "p.algorithm"
        case .passwordHash: "p.hash"
        case .passwordSalt: "p.salt"
        case .passwordParameters: "p.parameters::text"
        case .passwordUpdatedAt: "p.updated_at"
        case .federated:
            """
            (SELECT coalesce(json_agg(json_build_array(f.provider_id, f.raw_id, f.email, f.display_name, f.photo_url,
                     (extract(epoch FROM f.linked_at) * 1000)::bigint) ORDER BY f.linked_at), '[]')::text
               FROM federated_identities f WHERE f.tenant_id = u.tenant_id AND f.local_id = u.local_id)
            """
        case .factors:
            """
            (SELECT coalesce(json_agg(json_build_array(m.enrollment_id, m.kind, m.display_name, m.phone_number,
                     (extract(epoch FROM m.enrolled_at) * 1000000)::bigint, m.enrolled_at_text) ORDER BY m.enrolled_at, m.enrollment_id), '[]')::text
               FROM mfa_factors m WHERE m.tenant_id = u.tenant_id AND m.local_id = u.local_id)
            """
        }
    }
}

/// The session row's columns (over `sessions`), in select-list order.
enum SessionColumn: Int, CaseIterable {
    case sessionID, localID, createdAt, authTime, signInProvider, signInMethod, userAgent, ipAddress, lastRefreshAt
    case generation, generationIssuedAt, salt, keyID, lastMintAt, expiresAt, revokedAt, revokeReason, userDeleted, claimsOverlay,
        signInAttributes, secondFactor, secondFactorID

    var sql: String {
        switch self {
        case .sessionID: "session_id"
        case .localID: "local_id"
        case .createdAt: "created_at"
        case .authTime: "auth_time"
        case .signInProvider: "sign_in_provider"
        case .signInMethod: "sign_in_method"
        case .userAgent: "user_agent"
        case .ipAddress: "ip_address"
        case .lastRefreshAt: "last_refresh_at"
        case .generation: "refresh_generation"
        case .generationIssuedAt: "generation_issued_at"
        case .salt: "refresh_salt"
        case .keyID: "refresh_key_id"
        case .lastMintAt: "last_mint_at"
        case .expiresAt: "expires_at"
        case .revokedAt: "revoked_at"
        case .revokeReason: "revoke_reason"
        case .userDeleted: "user_deleted"
        case .claimsOverlay: "claims_overlay"
        case .signInAttributes: "sign_in_attributes"
        case .secondFactor: "second_factor"
        case .secondFactorID: "second_factor_id"
        }
    }
}

/// The rows the store reads, each decoded in one place.
extension PostgresAccountStore {
    /// The user row's select list, for ``decodeUser(_:)``.
    static let userSelectList = UserColumn.allCases.map(\.sql).joined(separator: ", ")

    /// The tables behind ``userSelectList``.
    static let userTables = "users u LEFT JOIN password_credentials p ON p.tenant_id = u.tenant_id AND p.local_id = u.local_id"

    /// The user row's columns and tables: `SELECT \(userColumns) WHERE …`.
    static let userColumns = "\(userSelectList) FROM \(userTables)"

    /// The session row's select list, for ``decodeSession(_:from:)``.
    static let sessionColumns = SessionColumn.allCases.map(\.sql).joined(separator: ", ")

    static func decodeUser(_ row: PostgresRow) throws -> UserRecord {
        let c = NamedRow<UserColumn>(row)
        var user = UserRecord(
            localID: try c(.localID),
            email: try c(.email),
            emailVerified: try c(.emailVerified),
            emailLinkSignin: try c(.emailLinkSignin),
            initialEmail: try c(.initialEmail),
            displayName: try c(.displayName),
            photoURL: try c(.photoURL),
            phoneNumber: try c(.phoneNumber),
            disabled: try c(.disabled),
            customAttributes: try c(.customAttributes),
            customAuth: try c(.customAuth),
            anonymous: try c(.anonymous),
            createdAt: try c(.createdAt),
            lastLoginAt: try c(.lastLoginAt),
            lastRefreshAt: try c(.lastRefreshAt),
            validSince: try c(.validSince),
            tokensValidAfter: try c(.tokensValidAfter),
            credentialVersion: try c(.credentialVersion)
        )
        if let algorithm = try c(.passwordAlgorithm, as: String?.self) {
            // Every user read (sign-in, refresh, lookup) comes through here: the project's parser, not JSONDecoder.
            let parameters =
                try c(.passwordParameters, as: String?.self).flatMap { try? JSONValue.parse($0).objectValue }?
                .compactMapValues(\.stringValue) ?? [:]
            user.password = PasswordCredential(
                stored: StoredPassword(
                    algorithm: algorithm,
                    hash: Array(try c(.passwordHash, as: Data.self)),
                    salt: try c(.passwordSalt, as: Data?.self).map(Array.init),
                    parameters: parameters
                ),
                updatedAt: try c(.passwordUpdatedAt)
            )
        }
        let links = try c(.federated, as: String.self)
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
        let factors = try c(.factors, as: String.self)
        if factors != "[]", case .array(let array)? = try? JSONValue.parse(factors) {
            user.factors = array.compactMap { element in
                guard case .array(let item) = element, item.count == 6, let id = item[0].stringValue,
                    let kind = item[1].stringValue.flatMap(MFAFactor.Kind.init(rawValue:))
                else { return nil }
                return MFAFactor(
                    enrollmentID: id, kind: kind, displayName: item[2].stringValue, phoneNumber: item[3].stringValue,
                    enrolledAt: Date(timeIntervalSince1970: Double(item[4].intValue ?? 0) / 1_000_000), enrolledAtText: item[5].stringValue)
            }
        }
        return user
    }

    /// A session from ``sessionColumns``, starting at column `first` (0 unless joined behind other columns).
    static func decodeSession(_ row: PostgresRow, from first: Int = 0) throws -> SessionRecord {
        let c = NamedRow<SessionColumn>(row, from: first)
        return SessionRecord(
            sessionID: try c(.sessionID),
            localID: try c(.localID),
            createdAt: try c(.createdAt),
            authTime: try c(.authTime),
            signInProvider: try c(.signInProvider),
            signInMethod: try c(.signInMethod),
            userAgent: try c(.userAgent),
            ipAddress: try c(.ipAddress),
            lastRefreshAt: try c(.lastRefreshAt),
            generation: try c(.generation),
            generationIssuedAt: try c(.generationIssuedAt),
            salt: Array(try c(.salt, as: Data.self)),
            keyID: try c(.keyID),
            lastMintAt: try c(.lastMintAt),
            expiresAt: try c(.expiresAt),
            revokedAt: try c(.revokedAt),
            revokeReason: try c(.revokeReason, as: String?.self).flatMap(RevokeReason.init(rawValue:)),
            userDeleted: try c(.userDeleted),
            claimsOverlay: try c(.claimsOverlay),
            signInAttributes: try c(.signInAttributes),
            secondFactor: try c(.secondFactor, as: String?.self).flatMap(MFAFactor.Kind.init(rawValue:)).flatMap { kind in
                try c(.secondFactorID, as: String?.self).map { SecondFactorClaim(kind: kind, enrollmentID: $0) }
            }
        )
    }
}
