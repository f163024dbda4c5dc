import AccountCore
import Foundation
import HTTPTypes

/// `accounts:batchGet` (identity-toolkit.md §4.10, admin, GET): users in `localId` order with real hashes.
enum BatchGetRPC {
    struct Response: Encodable, Sendable {
        var kind = "identitytoolkit#DownloadAccountResponse"
        var users: [UserInfoWire]?
        var nextPageToken: String?
    }

    static func endpoint(_ service: AdminService) -> RPCEndpoint {
        RPCEndpoint(method: .get, access: .adminOnly) { call in
            let limit = Int(min(max(try call.body.int64("maxResults") ?? 20, 1), 1000))
            var after: String?
            if let token = try call.body.nonEmptyString("nextPageToken") {
                guard let bytes = Base64URL.decode(token), let id = String(bytes: bytes, encoding: .utf8), LocalID.isValid(id) else {
                    throw AccountError(.invalidPageSelection)
                }
                after = id
            }
            let users = try await service.usersPage(after: after, limit: limit + 1)
            let page = Array(users.prefix(limit))
            let next = users.count > limit ? page.last.map { Base64URL.encode(Array($0.localID.utf8)) } : nil
            return try WireEncoding.response(Response(users: page.isEmpty ? nil : page.map(UserInfoWire.exported), nextPageToken: next))
        }
    }
}

extension UserInfoWire {
    /// The export form (identity-toolkit.md §2.2): the real hash and salt of native hashes, URL-safe base64
    /// padded; an imported hash not yet upgraded exports as "" without salt.
    static func exported(_ user: UserRecord) -> UserInfoWire {
        var wire = UserInfoWire(user)
        guard let stored = user.password?.stored else { return wire }
        guard stored.isNative else {
            wire.passwordHash = ""
            return wire
        }
        wire.passwordHash = paddedURLSafe(stored.hash)
        // The PHC string carries its salt: `$argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>`.
        let fields = String(decoding: stored.hash, as: UTF8.self).split(separator: "$")
        if fields.count >= 5, let salt = Base64URL.decode(String(fields[fields.count - 2])) {
            wire.salt = paddedURLSafe(salt)
        }
        return wire
    }

    static func paddedURLSafe(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }
}
