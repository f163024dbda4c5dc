package import AccountCore
import Foundation

/// The user record on the wire (identity-toolkit.md §2.1–2.3). Domain records are never encoded directly:
/// this is where redaction happens.
package struct UserInfoWire: Encodable, Sendable {
    var localId: String
    var email: String?
    var emailVerified: Bool
    var emailLinkSignin: Bool?
    var displayName: String?
    var photoUrl: String?
    var phoneNumber: String?
    var disabled: Bool?
    var passwordHash: String?
    var salt: String?
    var passwordUpdatedAt: Int64?
    var validSince: String
    var createdAt: String
    var lastLoginAt: String?
    var lastRefreshAt: String?
    var customAttributes: String?
    var providerUserInfo: [ProviderUserInfoWire]
    var initialEmail: String?
    var customAuth: Bool?
    /// Second factors (mfa-phone-tenants.md §B.2), absent when none; never a secret.
    var mfaInfo: JSONValue?

    /// base64 of `REDACTED`, what every read but `batchGet` shows for a password hash.
    package static let redactedHash = "UkVEQUNURUQ="

    /// The wire record of `user`, with the password hash redacted.
    package init(_ user: UserRecord) {
        localId = user.localID
        email = user.email
        emailVerified = user.emailVerified
        emailLinkSignin = user.emailLinkSignin ? true : nil
        displayName = user.displayName
        photoUrl = user.photoURL
        phoneNumber = user.phoneNumber
        disabled = user.disabled ? true : nil
        passwordHash = user.password == nil ? nil : Self.redactedHash
        passwordUpdatedAt = user.password.map { Self.milliseconds($0.updatedAt) }
        validSince = String(user.validSince)
        createdAt = String(max(1, Self.milliseconds(user.createdAt)))
        lastLoginAt = user.lastLoginAt.map { String(Self.milliseconds($0)) }
        lastRefreshAt = user.lastRefreshAt.map(Self.rfc3339)
        customAttributes = user.customAttributes
        providerUserInfo = ProviderUserInfoWire.list(for: user)
        initialEmail = user.initialEmail
        customAuth = user.customAuth ? true : nil
        mfaInfo = user.factors.isEmpty ? nil : MFAWire.info(user.factors, obfuscate: false)
    }

    /// The record as JSON, absent fields omitted. This is the one definition of its keys: lookup
    /// writes it directly (no `JSONEncoder` on that hot path) and `encode(to:)` goes through it.
    package var json: JSONValue {
        var fields: [String: JSONValue] = [
            "localId": .string(localId), "emailVerified": .bool(emailVerified), "validSince": .string(validSince),
            "createdAt": .string(createdAt), "providerUserInfo": .array(providerUserInfo.map(\.json)),
        ]
        let optional: [(String, JSONValue?)] = [
            ("email", email.map(JSONValue.string)), ("emailLinkSignin", emailLinkSignin.map(JSONValue.bool)),
            ("displayName", displayName.map(JSONValue.string)), ("photoUrl", photoUrl.map(JSONValue.string)),
            ("phoneNumber", phoneNumber.map(JSONValue.string)), ("disabled", disabled.map(JSONValue.bool)),
            ("passwordHash", passwordHash.map(JSONValue.string)), ("salt", salt.map(JSONValue.string)),
            ("passwordUpdatedAt", passwordUpdatedAt.map(JSONValue.int)), ("lastLoginAt", lastLoginAt.map(JSONValue.string)),
            ("lastRefreshAt", lastRefreshAt.map(JSONValue.string)), ("customAttributes", customAttributes.map(JSONValue.string)),
            ("initialEmail", initialEmail.map(JSONValue.string)), ("customAuth", customAuth.map(JSONValue.bool)),
        ]
        for case let (key, value?) in optional { fields[key] = value }
        if let mfaInfo { fields["mfaInfo"] = mfaInfo }
        return .object(fields)
    }

    package func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    static func rfc3339(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
            .replacingOccurrences(of: "+0000", with: "Z")
    }
}

/// One `providerUserInfo` entry.
package struct ProviderUserInfoWire: Encodable, Sendable {
    var providerId: String
    var rawId: String
    var federatedId: String?
    var email: String?
    var displayName: String?
    var photoUrl: String?
    var phoneNumber: String?

    /// The entry as JSON, absent fields omitted.
    var json: JSONValue {
        var fields: [String: JSONValue] = ["providerId": .string(providerId), "rawId": .string(rawId)]
        let optional: [(String, String?)] = [
            ("federatedId", federatedId), ("email", email), ("displayName", displayName), ("photoUrl", photoUrl),
            ("phoneNumber", phoneNumber),
        ]
        for case let (key, value?) in optional { fields[key] = .string(value) }
        return .object(fields)
    }

    package func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    /// Order: `password`, `phone`, federated links by link time (identity-toolkit.md §2.3).
    static func list(for user: UserRecord) -> [ProviderUserInfoWire] {
        var list: [ProviderUserInfoWire] = []
        if user.hasPasswordProvider, let email = user.email {
            list.append(
                .init(
                    providerId: "password", rawId: email, federatedId: email, email: email, displayName: user.displayName,
                    photoUrl: user.photoURL))
        }
        if let phone = user.phoneNumber {
            list.append(.init(providerId: "phone", rawId: phone, phoneNumber: phone))
        }
        for link in user.federated {
            list.append(
                .init(
                    providerId: link.providerID, rawId: link.rawID, federatedId: link.rawID, email: link.email,
                    displayName: link.displayName, photoUrl: link.photoURL)
            )
        }
        return list
    }
}

/// Helpers every RPC file shares.
extension RPCCall {
    /// The client info sessions record.
    package var client: AccountService.Client {
        AccountService.Client(userAgent: userAgent, ipAddress: ipAddress)
    }
}

/// The token bundle fields of a response.
package struct TokenBundleWire: Encodable, Sendable {
    var idToken: String
    var refreshToken: String
    var expiresIn: String

    init(_ tokens: AccountService.TokenBundle, lifetime: Int64) {
        idToken = tokens.idToken
        refreshToken = tokens.refreshToken
        expiresIn = String(lifetime)
    }
}

/// Encodes `base` and, when present, the token bundle's fields into one JSON object.
package struct WithTokens<Base: Encodable & Sendable>: Encodable, Sendable {
    var base: Base
    var tokens: TokenBundleWire?

    package func encode(to encoder: any Encoder) throws {
        try base.encode(to: encoder)
        try tokens?.encode(to: encoder)
    }
}
