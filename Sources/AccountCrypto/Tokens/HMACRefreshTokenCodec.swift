import AccountCore
import Crypto

/// Refresh tokens of identity-toolkit.md §3.3: base64url (no padding) of version 1 ‖ the 16 session-id bytes ‖
/// the generation (8 bytes, big-endian) ‖ HMAC-SHA256(K_s, utf8(sessionID) ‖ generation), where
/// K_s = HKDF-SHA256(master key, salt: the session's salt, info "accountd refresh v1"). 76 characters.
package struct HMACRefreshTokenCodec: RefreshTokenCodec {
    /// Why a token could not be made.
    package enum Failure: Error, Equatable {
        /// The session id is not base64url of 16 bytes (22 characters).
        case malformedSessionID
        /// No master key has this id.
        case unknownKeyID(String)
    }

    package let currentKeyID: String
    private let masterKeys: [String: SymmetricKey]

    private static let version: UInt8 = 1
    private static let sessionIDByteCount = 16
    private static let macByteCount = 32
    private static let tokenByteCount = 1 + sessionIDByteCount + 8 + macByteCount

    /// Creates a codec over the refresh master keys by id; new sessions use `currentKeyID`.
    package init(masterKeys: [String: [UInt8]], currentKeyID: String) {
        precondition(masterKeys[currentKeyID] != nil, "the current refresh key id names no master key")
        self.masterKeys = masterKeys.mapValues { SymmetricKey(data: $0) }
        self.currentKeyID = currentKeyID
    }

    package func token(sessionID: String, generation: Int64, salt: [UInt8], keyID: String) throws -> String {
        guard let idBytes = Base64URLStrict.decode(sessionID), idBytes.count == Self.sessionIDByteCount else {
            throw Failure.malformedSessionID
        }
        guard let masterKey = masterKeys[keyID] else { throw Failure.unknownKeyID(keyID) }
        let counter = Self.bytes(of: generation)
        let mac = HMAC<SHA256>.authenticationCode(
            for: Array(sessionID.utf8) + counter,
            using: Self.sessionKey(masterKey, salt: salt)
        )
        return Base64URLStrict.encode([Self.version] + idBytes + counter + Array(mac))
    }

    package func decode(_ token: String) -> (sessionID: String, generation: Int64)? {
        guard let bytes = Self.parse(token) else { return nil }
        return (bytes.sessionID, bytes.generation)
    }

    package func verify(_ token: String, salt: [UInt8], keyID: String) -> Bool {
        guard let bytes = Self.parse(token), let masterKey = masterKeys[keyID] else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            bytes.mac,
            authenticating: Array(bytes.sessionID.utf8) + Self.bytes(of: bytes.generation),
            using: Self.sessionKey(masterKey, salt: salt)
        )
    }

    private static func parse(_ token: String) -> (sessionID: String, generation: Int64, mac: [UInt8])? {
        guard token.utf8.count == (tokenByteCount / 3) * 4,
            let bytes = Base64URLStrict.decode(token),
            bytes.count == tokenByteCount,
            bytes[0] == version
        else { return nil }
        let idEnd = 1 + sessionIDByteCount
        let generation = bytes[idEnd..<idEnd + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (Base64URLStrict.encode(bytes[1..<idEnd]), Int64(bitPattern: generation), Array(bytes[(idEnd + 8)...]))
    }

    private static func sessionKey(_ masterKey: SymmetricKey, salt: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: masterKey, salt: salt, info: Array("accountd refresh v1".utf8), outputByteCount: 32
        )
    }

    private static func bytes(of generation: Int64) -> [UInt8] {
        withUnsafeBytes(of: UInt64(bitPattern: generation).bigEndian, Array.init)
    }
}
