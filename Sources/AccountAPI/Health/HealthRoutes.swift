public import AccountCore

/// `GET /healthz` (the process answers) and `GET /readyz` (the database answers and the schema is
/// current; 503 otherwise).
extension APIRoutes {
    /// Adds the two probes.
    package mutating func addHealth(readiness: any ReadinessProbe) {
        fixed["/healthz"] = FixedRoute { _, _ in
            try WireEncoding.response(["status": "ok"])
        }
        fixed["/readyz"] = FixedRoute { _, _ in
            switch await readiness.check() {
            case .ready:
                return try WireEncoding.response(["status": "ready"])
            case .notReady(let reason):
                return WireEncoding.response(for: .unavailable("not ready: \(reason)"))
            }
        }
    }
}
