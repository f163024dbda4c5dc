package import AccountCore

/// `GET /healthz` (the process answers) and `GET /readyz` (the database answers and the schema is
/// current; 503 otherwise).
extension APIRoutes {
    /// Adds the two probes.
    package mutating func addHealth(readiness: any ReadinessProbe) {
        // The JSON writer, not JSONEncoder: this is the bench's trivial route, and an encoder
        // instance per probe was 8% of it.
        fixed["/healthz"] = FixedRoute { _, _ in
            WireEncoding.response(json: .object(["status": .string("ok")]))
        }
        fixed["/readyz"] = FixedRoute { _, _ in
            switch await readiness.check() {
            case .ready:
                return WireEncoding.response(json: .object(["status": .string("ready")]))
            case .notReady(let reason):
                return WireEncoding.response(for: .unavailable("not ready: \(reason)"))
            }
        }
    }
}
