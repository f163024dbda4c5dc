package import AccountCore
import Crypto
import Synchronization

/// Refresh tokens of identity-toolkit.md §3.3, under a per-session key K_s = HKDF-SHA256(master key,
/// salt: the session's 16-byte random salt, info "accountd refresh v1").
///
/// Version 2 (issued): base64url (no padding) of 2 ‖ the 16 session-id bytes ‖ the generation (8
/// bytes, big-endian) ‖ the salt ‖ a 2-byte tag of the master key's id ‖ HMAC-SHA256(K_s, those 43
/// bytes). 100 characters. The token carries what its MAC key is derived from, so a forged or
/// altered token is refused before any database read (the second review's finding); the store then
/// only checks that the salt and key are the session's. The salt is not secret: the master key is.
///
/// Version 1 (accepted while ``acceptsVersion1``): 1 ‖ session id ‖ generation ‖
/// HMAC-SHA256(K_s, utf8(sessionID) ‖ generation), 76 characters. Its MAC needs the session's salt,
/// so it is checked after reading the session; a session refreshed once holds a version 2 token.
package struct HMACRefreshTokenCodec: RefreshTokenCodec {
    /// Whether version 1 tokens are refreshed: set at start (``set(_:)``) once the server knows
    /// whether any live session still holds one (`ACCOUNTD_REFRESH_ACCEPT_V1=auto`).
    package final class VersionOneAcceptance: Sendable {
        private let accepted: Atomic<Bool>

        /// Starts as `accepted`.
        package init(_ accepted: Bool) { self.accepted = Atomic(accepted) }

        /// Whether version 1 tokens are refreshed now.
        package var isAccepted: Bool { accepted.load(ordering: .relaxed) }

        /// Accepts version 1 tokens, or stops.
        package func set(_ value: Bool) { accepted.store(value, ordering: .relaxed) }
    }

    /// Why a token could not be made.
    package enum Failure: Error, Equatable {
        /// The session id is not base64url of 16 bytes (22 characters).
        case malformedSessionID
        /// No master key has this id.
        case unknownKeyID(String)
        /// The salt is not 16 bytes.
        case malformedSalt
    }

    package let currentKeyID: String
    /// Whether version 1 tokens (issued before version 2) are still refreshed.
    package let versionOne: VersionOneAcceptance
    /// Whether version 1 tokens are refreshed now.
    package var acceptsVersion1: Bool { versionOne.isAccepted }
    private let masterKeys: [String: SymmetricKey]
    /// Master key ids by their 2-byte tag.
    private let keyIDsByTag: [UInt16: String]

    private static let sessionIDByteCount = 16
    private static let saltByteCount = 16
    private static let macByteCount = 32
    private static let v1ByteCount = 1 + sessionIDByteCount + 8 + macByteCount
    private static let v2BodyCount = 1 + sessionIDByteCount + 8 + saltByteCount + 2
    private static let v2ByteCount = v2BodyCount + macByteCount

    /// Creates a codec over the refresh master keys by id; new sessions use `currentKeyID`. Two key
    /// ids whose tags collide cannot be told apart in a token: the init refuses them.
    package init(masterKeys: [String: [UInt8]], currentKeyID: String, acceptsVersion1: Bool = true) {
        precondition(masterKeys[currentKeyID] != nil, "the current refresh key id names no master key")
        self.masterKeys = masterKeys.mapValues { SymmetricKey(data: $0) }
        self.currentKeyID = currentKeyID
        self.versionOne = VersionOneAcceptance(acceptsVersion1)
        var tags: [UInt16: String] = [:]
        for id in masterKeys.keys {
            precondition(tags.updateValue(id, forKey: Self.tag(id)) == nil, "two refresh master key ids share a tag")
        }
        self.keyIDsByTag = tags
    }

    package func token(sessionID: String, generation: Int64, salt: [UInt8], keyID: String) throws -> String {
        guard let idBytes = Base64URLStrict.decode(sessionID), idBytes.count == Self.sessionIDByteCount else {
            throw Failure.malformedSessionID
        }
        guard salt.count == Self.saltByteCount else { throw Failure.malformedSalt }
        guard let masterKey = masterKeys[keyID] else { throw Failure.unknownKeyID(keyID) }
        let tag = Self.tag(keyID)
        let body = [2] + idBytes + Self.bytes(of: generation) + salt + [UInt8(tag >> 8), UInt8(tag & 0xFF)]
        let mac = HMAC<SHA256>.authenticationCode(for: body, using: Self.sessionKey(masterKey, salt: salt))
        return Base64URLStrict.encode(body + Array(mac))
    }

    /// A version 1 token, as sessions were given before version 2: for tests of the transition.
    package func versionOneToken(sessionID: String, generation: Int64, salt: [UInt8], keyID: String) throws -> String {
        guard let idBytes = Base64URLStrict.decode(sessionID), idBytes.count == Self.sessionIDByteCount else {
            throw Failure.malformedSessionID
        }
        guard let masterKey = masterKeys[keyID] else { throw Failure.unknownKeyID(keyID) }
        let counter = Self.bytes(of: generation)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(sessionID.utf8) + counter, using: Self.sessionKey(masterKey, salt: salt))
        return Base64URLStrict.encode([1] + idBytes + counter + Array(mac))
    }

    package func decode(_ token: String) -> DecodedRefreshToken? {
        guard let parsed = parse(token) else { return nil }
        switch parsed {
        case .v1(let sessionID, let generation, _):
            return acceptsVersion1 ? DecodedRefreshToken(sessionID: sessionID, generation: generation, verified: false) : nil
        case .v2(let sessionID, let generation, let salt, let keyID, let body, let mac):
            // The MAC, checked here, before anything reads the database.
            guard let masterKey = masterKeys[keyID],
                HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: body, using: Self.sessionKey(masterKey, salt: salt))
            else { return nil }
            return DecodedRefreshToken(sessionID: sessionID, generation: generation, verified: true)
        }
    }

    package func verify(_ token: String, salt: [UInt8], keyID: String) -> Bool {
        switch parse(token) {
        case nil: return false
        case .v1(let sessionID, let generation, let mac)?:
            guard acceptsVersion1, let masterKey = masterKeys[keyID] else { return false }
            return HMAC<SHA256>.isValidAuthenticationCode(
                mac, authenticating: Array(sessionID.utf8) + Self.bytes(of: generation), using: Self.sessionKey(masterKey, salt: salt))
        case .v2(_, _, let tokenSalt, let tokenKeyID, let body, let mac)?:
            // The token must name this session's salt and key, and (again) carry a good MAC.
            guard ConstantTime.equal(tokenSalt, salt), tokenKeyID == keyID, let masterKey = masterKeys[keyID] else { return false }
            return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: body, using: Self.sessionKey(masterKey, salt: salt))
        }
    }

    private enum Parsed {
        case v1(sessionID: String, generation: Int64, mac: [UInt8])
        case v2(sessionID: String, generation: Int64, salt: [UInt8], keyID: String, body: [UInt8], mac: [UInt8])
    }

    private func parse(_ token: String) -> Parsed? {
        let length = token.utf8.count
        guard length == (Self.v1ByteCount / 3) * 4 || length == (Self.v2ByteCount / 3) * 4, let bytes = Base64URLStrict.decode(token)
        else { return nil }
        let idEnd = 1 + Self.sessionIDByteCount
        func generation() -> Int64 {
            Int64(bitPattern: bytes[idEnd..<idEnd + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        }
        let sessionID = Base64URLStrict.encode(bytes[1..<idEnd])
        switch (bytes[0], bytes.count) {
        case (1, Self.v1ByteCount):
            return .v1(sessionID: sessionID, generation: generation(), mac: Array(bytes[(idEnd + 8)...]))
        case (2, Self.v2ByteCount):
            let saltEnd = idEnd + 8 + Self.saltByteCount
            let tag = UInt16(bytes[saltEnd]) << 8 | UInt16(bytes[saltEnd + 1])
            guard let keyID = keyIDsByTag[tag] else { return nil }
            return .v2(
                sessionID: sessionID, generation: generation(), salt: Array(bytes[(idEnd + 8)..<saltEnd]), keyID: keyID,
                body: Array(bytes[..<Self.v2BodyCount]), mac: Array(bytes[Self.v2BodyCount...]))
        default:
            return nil
        }
    }

    /// The 2 bytes that name a master key in a version 2 token.
    private static func tag(_ keyID: String) -> UInt16 {
        let digest = Array(SHA256.hash(data: Array(keyID.utf8)))
        return UInt16(digest[0]) << 8 | UInt16(digest[1])
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
