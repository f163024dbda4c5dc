import ServiceLifecycle

/// Opens once the schema is known to be current, so background services that read tables do not
/// race the migration at start-up.
actor StartupGate {
    private var open = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Lets every waiter (and later caller) through.
    func openGate() {
        open = true
        waiters.forEach { $0.resume() }
        waiters.removeAll()
    }

    /// Returns once the gate is open.
    func wait() async {
        if open { return }
        await withCheckedContinuation { waiters.append($0) }
    }
}

/// Runs `inner` once the gate opens; ends quietly if shut down before.
struct GatedService: Service {
    let gate: StartupGate
    let inner: any Service

    func run() async throws {
        let opened: Bool =
            await cancelWhenGracefulShutdown {
                await gate.wait()
                return true
            } ?? false
        guard opened, !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
        try await inner.run()
    }
}
