/// The project's multi-factor configuration (mfa-phone-tenants.md §B.1), read from the
/// configuration resource's `mfa`.
package struct MFAConfig: Sendable, Equatable {
    package enum State: String, Sendable {
        case disabled = "DISABLED"
        case enabled = "ENABLED"
        /// Accepted and echoed; behaves as `ENABLED` (decision 3).
        case mandatory = "MANDATORY"
    }

    package var state = State.disabled
    /// `PHONE_SMS` listed in `enabledProviders`.
    package var smsListed = false
    /// A `totpProviderConfig` entry with state `ENABLED`.
    package var totpListed = false
    /// TOTP's window: codes of this many 30 s steps either side are accepted (0–10; 5 when a TOTP
    /// config is given without it).
    package var adjacentIntervals = 5

    package init(state: State = .disabled, smsListed: Bool = false, totpListed: Bool = false, adjacentIntervals: Int = 5) {
        self.state = state
        self.smsListed = smsListed
        self.totpListed = totpListed
        self.adjacentIntervals = adjacentIntervals
    }

    /// The configuration a stored `mfa` member describes (checked when it was stored).
    package init(_ value: JSONValue?) {
        guard let value else { return }
        state = value.value(at: "state")?.stringValue.flatMap(State.init(rawValue:)) ?? .disabled
        if case .array(let providers)? = value.value(at: "enabledProviders") {
            smsListed = providers.contains(.string("PHONE_SMS"))
        }
        if case .array(let configs)? = value.value(at: "providerConfigs") {
            for config in configs {
                guard let totp = config.value(at: "totpProviderConfig") else { continue }
                totpListed = config.value(at: "state")?.stringValue == "ENABLED"
                adjacentIntervals = Int(totp.value(at: "adjacentIntervals")?.intValue ?? 5)
            }
        }
    }

    /// SMS second factors are on: state ENABLED or MANDATORY and `PHONE_SMS` listed.
    package var smsEnabled: Bool { state != .disabled && smsListed }
    /// TOTP second factors are on: state ENABLED or MANDATORY and a TOTP entry ENABLED.
    package var totpEnabled: Bool { state != .disabled && totpListed }
}
