/// One notification on the revocation channel (`PostgresAccountStore.revocationChannel`): what
/// changed, for every replica's caches. One type encodes the payloads (``payload``) and parses them
/// (``init(payload:)``), so the four prefixes are spelled once.
package enum Invalidation: Sendable, Equatable {
    /// Every session of a user was revoked (`u:<localId>`).
    case user(String)
    /// One session was revoked (`s:<sessionId>`).
    case session(String)
    /// A provider configuration changed (`c:<providerId>`).
    case providerConfig(String)
    /// A service account's custom-token signers changed (`k:<email>`).
    case signers(String)
    /// A tenant's project configuration resource changed (`p:<tenant>`, `p:` for the project).
    case projectConfig(String)

    /// The caches the notifications besides revocations drop entries from.
    package enum Cache: Hashable, Sendable {
        case providerConfigs, signers, projectConfig
    }

    /// The notification's payload.
    package var payload: String {
        switch self {
        case .user(let localID): "u:" + localID
        case .session(let sessionID): "s:" + sessionID
        case .providerConfig(let providerID): "c:" + providerID
        case .signers(let email): "k:" + email
        case .projectConfig(let tenant): "p:" + tenant
        }
    }

    /// The notification a payload is; nil for one this version does not know.
    package init?(payload: String) {
        guard payload.count >= 2, let colon = payload.firstIndex(of: ":") else { return nil }
        let value = String(payload[payload.index(after: colon)...])
        switch payload[..<colon] {
        case "u": self = .user(value)
        case "s": self = .session(value)
        case "c": self = .providerConfig(value)
        case "k": self = .signers(value)
        case "p": self = .projectConfig(value)
        default: return nil
        }
    }
}
