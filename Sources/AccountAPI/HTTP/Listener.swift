/// Which callers a listener serves (the admin plane; federation-and-limits.md decisions, issue 22).
/// As Kratos separates its admin port from its public one, admin RPCs have a listener of their
/// own, bound to loopback unless the operator says otherwise; a `demo-` project keeps the Firebase
/// emulator's convention of one host for everything.
package enum Listener: Sendable, Equatable {
    /// The public listener of a `demo-` project: apps and admins alike.
    case combined
    /// The public listener of a real project: apps only. Any bearer token is refused, and
    /// project-scoped routes with it; the token route and the action page are here.
    case publicOnly
    /// The admin listener: admin bearers only, no token route, no action page.
    case admin

    /// Whether admin bearers are served here.
    package var servesAdmins: Bool { self != .publicOnly }
    /// The listener as a metric label.
    package var metricLabel: String {
        switch self {
        case .combined: "combined"
        case .publicOnly: "public"
        case .admin: "admin"
        }
    }

    /// Whether apps (API keys) are served here.
    package var servesClients: Bool { self != .admin }
}
